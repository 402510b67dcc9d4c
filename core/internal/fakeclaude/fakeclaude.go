// Package fakeclaude is a stand-in for the claude CLI in tests: a test binary
// calls Main from TestMain when EnvVar is set, and the runner is pointed at
// the test executable. It speaks the stream-json protocol on stdin/stdout,
// or, started with -p (--print), answers the prompt on its stdin once
// (print.go).
package fakeclaude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// EnvVar, when set in the environment, makes a test binary act as claude.
const EnvVar = "CLAWHOST_FAKE_CLAUDE"

// Main is the fake claude. Every user message is answered with
// "echo: <text>", unless the text carries directives (anywhere in the
// prompt, so they survive the envelope):
//
//	#sleep=<duration>   wait before answering (a run /stop can interrupt)
//	#wait=<path>        wait before answering until the file at path exists
//	                    (at most waitLimit), so a test decides when the turn
//	                    ends instead of guessing how long it takes; the file
//	                    <path>.waiting says the wait began
//	#blocks=<n>         answer with n assistant messages of ~900 characters,
//	                    "block <i>: ..." each, #gap=<duration> apart
//	#error=<kind>       answer with an error result: overloaded, too_long
//	#silent             answer NO_REPLY
//	#heartbeat-ok       answer HEARTBEAT_OK (nothing to say, for a heartbeat)
//	#spawn=<path>       start `sleep 86400` as a tool would (in claude's
//	                    process group) and write its pid to path, before
//	                    anything else; a test checks it dies with the host
//	                    (it outlives any test's deadline by itself)
//	#mark=<id>          names the message for RunLogEnvVar's log (several
//	                    allowed, one per message of the prompt)
//	#parts=<n>          answer with n paragraphs "mark <id> part <i>/<n>"
//	                    (the first #mark's id) of ~120 characters each, so
//	                    a small text_limit puts each in a chunk of its own
//	                    and a test can count every chunk a chat shows
//	#sh=<command>       run the command (query-escaped: "+" is a space) with
//	                    sh -c in claude's working directory, as a tool would,
//	                    and answer "sh: " and what it wrote (stdout and
//	                    stderr) and, when it failed, its error
//	#stream=<n>         stream the answer as claude does with
//	                    --include-partial-messages: n text deltas
//	                    ("word<i> "), #gap=<duration> apart, in one text
//	                    block, then the assistant message and the result;
//	                    the run log gets a "delta" event at the first
//	#ask=<n>            use Bash n times ("touch f<i>"), each needing
//	                    permission: started with --permission-prompt-tool
//	                    stdio it asks the host (a can_use_tool control
//	                    request) and reads the control response, as claude
//	                    does; a tool allowed "always" is not asked again in
//	                    this process; without the flag every use is denied.
//	                    The reply lists the outcomes: "asked: allow, deny"
//	#cost=<usd>         the result reports usd as the turn's own cost
//	                    (model_usage_since_last_result, as claude 2.1.330
//	                    does) and total_cost_usd as the process's running
//	                    total; without it every result says $0.0125
//	#limit=<path>       when the file at path holds a Unix time (seconds)
//	                    still ahead, answer as claude does at a
//	                    subscription's usage limit: a rejected
//	                    rate_limit_event resetting then and a 429 error
//	                    result, nothing else (until 200 ms before the
//	                    reset)
//	#sendfile=<name>    write <name> (its text: "file <name>") in the
//	                    working directory and send it with claude's
//	                    send_file tool, before thinking (#sleep)
//	#react=<emoji>      react with claude's react tool, before thinking
//	#note=<text>        call the plugin tool whoami__note (the whoami-tool
//	                    example on instance "whoami") with text, before
//	                    thinking
//
// The tools are called as claude calls them: the MCP server the host's
// --mcp-config names (clawhost mcp-schedule) is started with that
// config's command and environment, and asked over MCP.
//
// When RunLogEnvVar names a file, the fake appends one JSON line
// ([RunEvent]) to it when the process starts, when a turn starts and
// after a turn's result was written to stdout. "start" is logged when the
// prompt's line was read: the moment claude read the prompt.
//
// When HoldEnvVar names a file, the fake waits while that file exists
// before it reads anything from stdin (a claude slow to start: a host
// killed meanwhile launched it, but it never read the prompt).
func Main() {
	if printMode(os.Args) {
		printMain()
		return
	}
	sid := sessionID(os.Args)
	out := json.NewEncoder(os.Stdout)
	logRun(RunEvent{Event: "proc"})
	holdWhile(os.Getenv(HoldEnvVar))
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	turn := 0
	asks := slices.Contains(os.Args, "--permission-prompt-tool")
	always := map[string]bool{}
	total := 0.0 // the running total of #cost turns
	for sc.Scan() {
		read := time.Now()
		if answerControl(out, sc.Bytes()) {
			continue
		}
		text, ok := userText(sc.Bytes())
		if !ok {
			continue
		}
		turn++
		marks := directives(text, "mark")
		logRun(RunEvent{Event: "start", Marks: marks, At: read.UnixNano()})
		_ = out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": sid})
		if path, _ := directive(text, "limit"); path != "" {
			if reset := limitReset(path); !reset.IsZero() {
				usageLimit(out, sid, reset)
				continue
			}
		}
		act(text)
		assistant := func(s string) {
			_ = out.Encode(map[string]any{"type": "assistant", "session_id": sid, "message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": s}}}})
		}
		result := func(s string) {
			wrote := time.Now()
			_ = out.Encode(resultEvent(s, sid, text, &total))
			logRun(RunEvent{Event: "result", Marks: marks, At: wrote.UnixNano()})
		}
		if kind, ok := directive(text, "error"); ok {
			writeAPIError(out, sid, kind)
			continue
		}
		if token, ok := tokenReply(text); ok {
			assistant(token)
			result(token)
			continue
		}
		if n, ok := directive(text, "blocks"); ok {
			count, _ := strconv.Atoi(n)
			gap := time.Duration(0)
			if g, ok := directive(text, "gap"); ok {
				gap, _ = time.ParseDuration(g)
			}
			result(writeBlocks(assistant, count, gap))
			continue
		}
		if n, ok := directive(text, "stream"); ok {
			gap := time.Duration(0)
			if g, ok := directive(text, "gap"); ok {
				gap, _ = time.ParseDuration(g)
			}
			reply := streamDeltas(out, sid, atoi(n), gap, marks)
			assistant(reply)
			result(reply)
			continue
		}
		if n, ok := directive(text, "ask"); ok {
			var outcomes []string
			for i := 1; i <= atoi(n); i++ {
				outcomes = append(outcomes, ask(out, sc, asks, always, i))
			}
			reply := "asked: " + strings.Join(outcomes, ", ")
			assistant(reply)
			result(reply)
			continue
		}
		if c, ok := directive(text, "sh"); ok {
			reply := "sh: " + shell(c)
			assistant(reply)
			result(reply)
			continue
		}
		if n, ok := directive(text, "parts"); ok && len(marks) > 0 {
			reply := Parts(marks[0], atoi(n))
			assistant(reply)
			result(reply)
			continue
		}
		reply := fmt.Sprintf("echo: %s", text)
		assistant(reply)
		result(reply)
	}
}

// act does what a message's directives ask before the reply: start a
// tool process (#spawn), call claude's send_file and react tools
// (#sendfile, #react), sleep (#sleep) or wait for a file (#wait).
func act(text string) {
	if path, _ := directive(text, "spawn"); path != "" {
		spawnTool(path)
	}
	if name, _ := directive(text, "sendfile"); name != "" {
		if err := os.WriteFile(name, []byte("file "+name), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "fakeclaude: sendfile:", err)
		}
		abs, _ := filepath.Abs(name)
		callTool("send_file", map[string]any{"path": abs})
	}
	if emoji, _ := directive(text, "react"); emoji != "" {
		callTool("react", map[string]any{"emoji": emoji})
	}
	if note, _ := directive(text, "note"); note != "" {
		callTool("whoami__note", map[string]any{"text": note})
	}
	if d, ok := directive(text, "sleep"); ok {
		dur, _ := time.ParseDuration(d)
		time.Sleep(dur)
	}
	if path, _ := directive(text, "wait"); path != "" {
		waitFile(path)
	}
}

// resultEvent is the result line of a turn that answered s: a fixed
// cost, or the message's #cost (total is the running total of the run's
// #cost turns, as claude reports it).
func resultEvent(s, sid, text string, total *float64) map[string]any {
	res := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": s, "session_id": sid, "num_turns": 1,
		"total_cost_usd": 0.0125, "usage": map[string]any{"input_tokens": 10, "output_tokens": 2},
		"modelUsage": map[string]any{"claude-fake-1": map[string]any{"inputTokens": 10, "outputTokens": 2, "contextWindow": 200000}}}
	if c, ok := directive(text, "cost"); ok {
		usd, _ := strconv.ParseFloat(c, 64)
		*total += usd
		res["total_cost_usd"] = *total
		res["model_usage_since_last_result"] = map[string]any{"claude-fake-1": map[string]any{"inputTokens": 10, "outputTokens": 2, "costUSD": usd}}
	}
	return res
}

// sessionID is the session of the run: --session-id's or --resume's.
func sessionID(args []string) string {
	sid := "00000000-0000-4000-8000-000000000000"
	for i, a := range args {
		if (a == "--session-id" || a == "--resume") && i+1 < len(args) {
			sid = args[i+1]
		}
	}
	return sid
}

// writeAPIError writes the result of a turn the API refused (the #error
// directive): overloaded (529), or too_long (400).
func writeAPIError(out *json.Encoder, sid, kind string) {
	msg, status := "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}", 529
	if kind == "too_long" {
		msg, status = "Prompt is too long", 400
	}
	_ = out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": true, "result": msg, "api_error_status": status, "session_id": sid, "num_turns": 1})
}

// tokenReply is the whole answer #silent and #heartbeat-ok ask for.
func tokenReply(text string) (string, bool) {
	if _, ok := directive(text, "silent"); ok {
		return "NO_REPLY", true
	}
	if _, ok := directive(text, "heartbeat-ok"); ok {
		return "HEARTBEAT_OK", true
	}
	return "", false
}

// answerControl answers line when it is a control request — a spare's
// initialize and get_context_usage (core/runner/spare.go) — with a
// control_response of success, as claude does before any turn (a turn
// never sees it), and reports whether it was one.
func answerControl(out *json.Encoder, line []byte) bool {
	id, ok := controlRequest(line)
	if ok {
		_ = out.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id}})
	}
	return ok
}

// controlRequest is the request id of a control request; false for any
// other line.
func controlRequest(line []byte) (string, bool) {
	var in struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(line, &in) != nil || in.Type != "control_request" {
		return "", false
	}
	return in.RequestID, true
}

// userText is the text of a user message line of the stream-json input
// (a string or text blocks); false for a line that is no message.
func userText(line []byte) (string, bool) {
	var in struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &in) != nil {
		return "", false
	}
	var text string
	if json.Unmarshal(in.Message.Content, &text) != nil {
		var blocks []struct{ Text string }
		_ = json.Unmarshal(in.Message.Content, &blocks)
		for _, b := range blocks {
			text += b.Text
		}
	}
	return text, true
}

// writeBlocks writes count assistant messages of about 900 characters,
// gap apart (the #blocks directive), and returns the last.
func writeBlocks(assistant func(string), count int, gap time.Duration) string {
	var last string
	for i := 1; i <= count; i++ {
		last = fmt.Sprintf("block %d: %s", i, strings.Repeat("lorem ipsum ", 75))
		assistant(last)
		if i < count {
			time.Sleep(gap)
		}
	}
	return last
}

var directiveRE = regexp.MustCompile(`#(sleep|wait|blocks|gap|error|silent|heartbeat-ok|spawn|mark|parts|ask|sh|stream|cost|limit|sendfile|react|note)(?:=([^\s\]]+))?`)

// ask is one Bash use needing permission (#ask): its outcome, "allow",
// "always", "deny" or "auto" (allowed by an earlier always).
func ask(out *json.Encoder, sc *bufio.Scanner, asks bool, always map[string]bool, i int) string {
	if !asks {
		return "deny"
	}
	if always["Bash"] {
		return "auto"
	}
	id := fmt.Sprintf("req-%d-%d", os.Getpid(), i)
	_ = out.Encode(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "can_use_tool",
		"tool_name": "Bash", "input": map[string]any{"command": fmt.Sprintf("touch f%d", i), "description": fmt.Sprintf("create f%d", i)}, "tool_use_id": fmt.Sprintf("toolu_%d", i)}})
	for sc.Scan() {
		var cr struct {
			Type     string `json:"type"`
			Response struct {
				RequestID string `json:"request_id"`
				Response  struct {
					Behavior           string            `json:"behavior"`
					UpdatedPermissions []json.RawMessage `json:"updatedPermissions"`
				} `json:"response"`
			} `json:"response"`
		}
		if json.Unmarshal(sc.Bytes(), &cr) != nil || cr.Type != "control_response" || cr.Response.RequestID != id {
			continue // not the answer (a steered message is dropped here)
		}
		if len(cr.Response.Response.UpdatedPermissions) > 0 {
			always["Bash"] = true
			return "always"
		}
		return cr.Response.Response.Behavior
	}
	return "eof"
}

// streamDeltas writes a text block of n deltas, gap apart, as
// stream_event lines, and returns its text.
func streamDeltas(out *json.Encoder, sid string, n int, gap time.Duration, marks []string) string {
	event := func(ev map[string]any) {
		_ = out.Encode(map[string]any{"type": "stream_event", "session_id": sid, "event": ev})
	}
	event(map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			time.Sleep(gap)
		}
		w := fmt.Sprintf("word%d ", i)
		b.WriteString(w)
		if i == 1 {
			logRun(RunEvent{Event: "delta", Marks: marks})
		}
		event(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": w}})
	}
	event(map[string]any{"type": "content_block_stop", "index": 0})
	return strings.TrimSpace(b.String())
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// spawnTool starts a long-lived tool process and writes its pid to path.
func spawnTool(path string) {
	bin := "/bin/sleep"
	if _, err := os.Stat(bin); err != nil {
		bin = "sleep"
	}
	cmd := exec.Command(bin, "86400")
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeclaude: spawn:", err)
		return
	}
	_ = os.WriteFile(path+".tmp", []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
	_ = os.Rename(path+".tmp", path)
	go func() { _ = cmd.Wait() }()
}

// waitLimit bounds #wait: a test that never releases the turn gets an
// answer (and its own failure) rather than a hung agent.
const waitLimit = time.Minute

// waitFile returns once the file at path exists, or after waitLimit; it
// first writes path.waiting, so a test knows claude holds the turn.
func waitFile(path string) {
	_ = os.WriteFile(path+".waiting", nil, 0o600)
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// directives returns the values of every occurrence of name, in order.
func directives(text, name string) []string {
	var out []string
	for _, m := range directiveRE.FindAllStringSubmatch(text, -1) {
		if m[1] == name {
			out = append(out, m[2])
		}
	}
	return out
}

func directive(text, name string) (string, bool) {
	for _, m := range directiveRE.FindAllStringSubmatch(text, -1) {
		if m[1] == name {
			return m[2], true
		}
	}
	return "", false
}

// shell runs a query-escaped command with sh -c in the working directory
// and returns what it wrote, and its error when it failed.
func shell(escaped string) string {
	c, err := url.QueryUnescape(escaped)
	if err != nil {
		return err.Error()
	}
	out, err := exec.Command("sh", "-c", c).CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		s += " (" + err.Error() + ")"
	}
	return s
}

// limitReset is the reset time the #limit file at path holds, when it is
// still ahead (zero otherwise: no limit).
func limitReset(path string) time.Time {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	// The limit ends a little before the reset: the host, which resumes
	// at the reset, finds it gone.
	if err != nil || time.Unix(sec, 0).Add(-limitMargin).Before(time.Now()) {
		return time.Time{}
	}
	return time.Unix(sec, 0)
}

// limitMargin: #limit's limit ends this long before its reset.
const limitMargin = 200 * time.Millisecond

// usageLimit answers a turn as claude does when a subscription's usage
// limit refused its request (core/runner's doc: measured with 2.1.330).
func usageLimit(out *json.Encoder, sid string, reset time.Time) {
	_ = out.Encode(map[string]any{"type": "rate_limit_event", "session_id": sid, "rate_limit_info": map[string]any{
		"status": "rejected", "resetsAt": reset.Unix(), "rateLimitType": "five_hour", "isUsingOverage": false}})
	msg := "You've hit your 5-hour limit · resets " + reset.UTC().Format("3:04pm") + " (UTC)"
	_ = out.Encode(map[string]any{"type": "assistant", "session_id": sid, "message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": msg}}}})
	_ = out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": true, "result": msg, "api_error_status": 429,
		"api_error_type": "rate_limit_error", "terminal_reason": "api_error", "session_id": sid, "num_turns": 1})
}
