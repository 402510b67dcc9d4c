package fakeclaude

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// The run log: what the fake did, for the tests to judge by.

// HoldEnvVar names a file while which exists the fake waits before it
// reads its prompt (see Main).
const HoldEnvVar = "CLAWHOST_FAKE_CLAUDE_HOLD"

// holdWhile returns once no file is at path (at once for ""), or after
// waitLimit.
func holdWhile(path string) {
	if path == "" {
		return
	}
	for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err != nil {
			return
		}
	}
}

// RunLogEnvVar names the file the fake appends its [RunEvent]s to.
const RunLogEnvVar = "CLAWHOST_FAKE_CLAUDE_LOG"

// RunEvent is one line of the run log.
type RunEvent struct {
	// Event is "proc" (the process started), "start" (a turn started),
	// "delta" (a #stream turn's first text delta is being written) or
	// "result" (the turn's result was written to stdout).
	Event string `json:"event"`
	// PID is the fake's process id (also its process group: claude's
	// tools live in it).
	PID int `json:"pid"`
	// Proc is the At of the process's "proc" event: which process logged
	// the event where pids say nothing (every sandboxed fake has the same
	// pid in its own PID namespace).
	Proc int64 `json:"proc"`
	// Marks are the #mark ids of the turn's prompt.
	Marks []string `json:"marks,omitempty"`
	// At is the wall clock, in Unix nanoseconds: for "start" when the
	// prompt's line had been read from stdin, for "result" when the
	// result line's write began (latency benchmarks measure from there),
	// for "proc" when the event was logged.
	At int64 `json:"at"`
}

// Parts is the reply #parts=n gives for mark: n paragraphs
// "mark <id> part <i>/<n> xxx…" of about 120 characters, a blank line
// apart.
func Parts(mark string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString("\n\n")
		}
		p := fmt.Sprintf("%s %s ", PartLabel(mark, i, n), strings.Repeat("x", 90))
		b.WriteString(p)
	}
	return b.String()
}

// PartLabel is how part i of n of mark's reply starts.
func PartLabel(mark string, i, n int) string {
	return fmt.Sprintf("mark %s part %d/%d", mark, i, n)
}

// procAt is the At of this process's "proc" event.
var procAt int64

// logRun appends ev to the run log, if there is one. Each event is one
// write on a file opened with O_APPEND, so the lines of concurrent fakes
// do not mix.
func logRun(ev RunEvent) {
	path := os.Getenv(RunLogEnvVar)
	if path == "" {
		return
	}
	ev.PID = os.Getpid()
	if ev.At == 0 {
		ev.At = time.Now().UnixNano()
	}
	if ev.Event == "proc" {
		procAt = ev.At
	}
	ev.Proc = procAt
	b, _ := json.Marshal(ev)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	_ = f.Close()
}
