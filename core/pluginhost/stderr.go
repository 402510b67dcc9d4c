package pluginhost

import (
	"bytes"
	"encoding/json"
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
