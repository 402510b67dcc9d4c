package fakeclaude

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// PrintEnvVar, set to "1", makes a claude started with -p (--print) and
// without stream-json input a one-shot print run (printMain), as a
// gateway that starts claude per message runs it. Opt-in: clawhost's own
// print runs (its doctor's probe) keep the fake's earlier answer.
const PrintEnvVar = "CLAWHOST_FAKE_CLAUDE_PRINT"

// printMode reports whether this process is such a print run.
func printMode(args []string) bool {
	if os.Getenv(PrintEnvVar) != "1" || !slices.Contains(args, "-p") && !slices.Contains(args, "--print") {
		return false
	}
	i := slices.Index(args, "--input-format")
	return i < 0 || i+1 >= len(args) || args[i+1] != "stream-json"
}

// printMain answers a print run: the prompt is the whole of stdin (a
// caller that sends its conversation as "User: …" / "Assistant: …" lines
// is answered on its pending user lines, pendingUser), and the one result is written as
// claude writes it with --output-format json (stream-json: the result
// line) before the process exits. The run log gets "proc", "start" and
// "result" as in a stream-json run.
func printMain() {
	sid := sessionID(os.Args)
	logRun(RunEvent{Event: "proc"})
	in, err := io.ReadAll(os.Stdin)
	read := time.Now()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeclaude: read the prompt:", err) // no result: the caller fails to read one
		return
	}
	text := pendingUser(string(in))
	marks := directives(text, "mark")
	logRun(RunEvent{Event: "start", Marks: marks, At: read.UnixNano()})
	act(text)
	total := 0.0
	wrote := time.Now()
	_ = json.NewEncoder(os.Stdout).Encode(resultEvent("echo: "+text, sid, text, &total))
	logRun(RunEvent{Event: "result", Marks: marks, At: wrote.UnixNano()})
}

// pendingUser is what a conversation sent as "User: …" / "Assistant: …"
// entries asks now: its user entries after the last assistant one, one a
// line (a gateway that queued several messages of a chat sends them in one
// call); the prompt as it is when it has no such entries.
func pendingUser(prompt string) string {
	p := "\n" + strings.TrimSpace(prompt)
	if i := strings.LastIndex(p, "\nAssistant: "); i >= 0 {
		rest := p[i+1:]
		j := strings.Index(rest, "\nUser: ")
		if j < 0 {
			return ""
		}
		p = rest[j:]
	}
	if !strings.HasPrefix(p, "\nUser: ") {
		return strings.TrimSpace(p)
	}
	return strings.TrimSpace(strings.ReplaceAll(p, "\nUser: ", "\n"))
}
