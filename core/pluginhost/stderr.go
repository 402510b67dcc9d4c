package pluginhost

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
)

// stderrTail keeps the last lines a plugin process wrote to stderr, so a
// start-up failure or a crash can say what the plugin itself said (go-plugin
// only logs them, on another line). hclog JSON lines are reduced to their
// message. Safe for concurrent use.
type stderrTail struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

const (
	tailLines   = 5
	tailLineMax = 300
)

// Write implements io.Writer.
func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.add(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 4*tailLineMax {
		t.add(string(t.partial))
		t.partial = t.partial[:0]
	}
	return len(p), nil
}

func (t *stderrTail) add(line string) {
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
	if line == "" {
		return
	}
	if r := []rune(line); len(r) > tailLineMax {
		line = string(r[:tailLineMax]) + "…"
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// String returns the kept lines joined with " | ", oldest first.
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if p := strings.TrimSpace(string(t.partial)); p != "" {
		lines = append(append([]string(nil), lines...), p)
	}
	return strings.Join(lines, " | ")
}

// logGuard sits between a plugin's stderr and go-plugin's log reader.
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
type logGuard struct {
	r       *bufio.Reader
	pending []byte
	err     error
}

func newLogGuard(r io.Reader) *logGuard { return &logGuard{r: bufio.NewReader(r)} }

// Read implements io.Reader.
func (g *logGuard) Read(p []byte) (int, error) {
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
