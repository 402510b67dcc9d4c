// Package pluginstderr reads what a plugin process writes to stderr as
// go-plugin's host does: the levels of its lines (Level), the last lines
// kept for an error (Log), and the guard that keeps a line go-plugin would
// misread from reaching it (Guard). The supervisor and `clawhost plugin
// test` share it, so there is one place that knows a plugin's stderr.
package pluginstderr

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// Log keeps what a plugin process wrote to stderr, line by line, and
// reads each line as go-plugin's host does (Level): the one place that
// knows a plugin's stderr. The supervisor keeps one per process so that a
// start-up failure or a crash can say what the plugin itself said (String);
// `clawhost plugin test` asks which lines the host would log at WARN or ERROR
// (Since, Level). Safe for concurrent use; the zero value is ready.
type Log struct {
	mu      sync.Mutex
	lines   []string // the last maxStderrLines lines, oldest first
	seen    int      // lines seen in all, kept or not
	partial []byte
}

const (
	maxStderrLines = 10000
	tailLines      = 5
	tailLineMax    = 300
)

// Write implements io.Writer.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.add(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) > 4*tailLineMax {
		l.add(string(l.partial))
		l.partial = l.partial[:0]
	}
	return len(p), nil
}

func (l *Log) add(line string) {
	l.seen++
	l.lines = append(l.lines, line)
	if len(l.lines) > maxStderrLines {
		l.lines = l.lines[len(l.lines)-maxStderrLines/2:]
	}
}

// Mark returns the number of whole lines seen so far, for Since.
func (l *Log) Mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen
}

// Since returns the lines seen after mark that are still kept, oldest first.
func (l *Log) Since(mark int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(max(l.seen-mark, 0), len(l.lines))
	return append([]string(nil), l.lines[len(l.lines)-n:]...)
}

// Tail returns the last n lines as written, joined by newlines.
func (l *Log) Tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}

// String returns the last few lines, each reduced to its message (an hclog
// JSON line) and cut to a readable length, with an unfinished last line,
// joined with " | ", oldest first: what an error about the process quotes.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if line = stderrMessage(line); line != "" {
			out = append(out, line)
		}
	}
	out = out[max(0, len(out)-tailLines):]
	if p := stderrMessage(string(l.partial)); p != "" {
		out = append(out, p)
	}
	return strings.Join(out, " | ")
}

// stderrMessage is a line as a person reads it: an hclog JSON line becomes
// its message (and its error), the rest is trimmed and cut at tailLineMax.
func stderrMessage(line string) string {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		var m struct {
			Message string `json:"@message"`
			Error   string `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Message != "" {
			line = m.Message
			if m.Error != "" {
				line += ": " + m.Error
			}
		}
	}
	if r := []rune(line); len(r) > tailLineMax {
		line = string(r[:tailLineMax]) + "…"
	}
	return line
}

// Level is the level go-plugin's host logs a plugin's stderr line at:
// an hclog JSON line's @level (debug when it has none), WARN or ERROR for a
// plain line that starts with [WARN] or [ERROR], ERROR for a Go panic or
// fatal error, and debug for every other line.
func Level(line string) hclog.Level {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) == nil {
		if lv, ok := m["@level"].(string); ok {
			if l := hclog.LevelFromString(lv); l != hclog.NoLevel {
				return l
			}
		}
		return hclog.Debug
	}
	switch {
	case strings.HasPrefix(line, "[WARN]"):
		return hclog.Warn
	case strings.HasPrefix(line, "[ERROR]"), strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "fatal error: "):
		return hclog.Error
	}
	return hclog.Debug
}

// Guard sits between a plugin's stderr and go-plugin's log reader.
// go-plugin parses every stderr line that is JSON as an hclog entry and
// type-asserts "@message", "@level" and "@timestamp" to strings without
// checking: a plugin (in any language, by mistake or on purpose) writing
// {"@message":1} would panic the host's reader goroutine and end the host.
// The guard rewrites such a line — a non-string message or level becomes its
// JSON text, a non-string timestamp is dropped — and passes every other byte
// through unchanged, in order.
//
// It also keeps integers readable: go-plugin decodes every JSON number as a
// float64, which hclog prints as 1e+09 or 5.00000009e+08 (a duration in
// nanoseconds, a message id). An integer field is handed on as its decimal
// text instead.
type Guard struct {
	r       *bufio.Reader
	pending []byte
	err     error
}

func NewGuard(r io.Reader) *Guard { return &Guard{r: bufio.NewReader(r)} }

// Read implements io.Reader.
func (g *Guard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.r.ReadBytes('\n')
		g.pending, g.err = guardLine(line), err
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// guardLine returns line with its hclog fields made safe for go-plugin; a
// line that needs nothing is returned as is.
func guardLine(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' || !bytes.Contains(trimmed, []byte(`"@`)) {
		return line
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(trimmed, &m) != nil {
		return line
	}
	changed := false
	for k, v := range m {
		if !strings.HasPrefix(k, "@") && isInteger(v) {
			m[k], _ = json.Marshal(string(v))
			changed = true
		}
	}
	for _, k := range []string{"@message", "@level", "@timestamp"} {
		v, ok := m[k]
		if !ok || (len(v) > 0 && v[0] == '"') {
			continue
		}
		changed = true
		if k == "@timestamp" {
			delete(m, k)
			continue
		}
		s, _ := json.Marshal(string(v))
		m[k] = s
	}
	if !changed {
		return line
	}
	out, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return append(out, '\n')
}

// isInteger reports whether v is a JSON number without fraction or
// exponent.
func isInteger(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	for i, c := range v {
		if c == '-' && i == 0 && len(v) > 1 {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
