// Package export writes a chat's session as Markdown (/export): a header
// from the store's session (when it started, turns, cost, model), then the
// conversation from the host's journal — each message with its sender and
// time (the ones refused before claude saw them marked as such) and the
// reply recorded for it — merged by time with the tool steps of claude's
// own transcript of the session. Without a transcript the file still has
// the messages and replies; with a transcript but nothing in the journal
// (pruned after its retention) the conversation is the transcript's:
// each prompt as claude read it, each answer, each tool step. claude keeps
// the transcript at <config dir>/projects/<working directory,
// dashed>/<session id>.jsonl.
package export

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Session is what the header says.
type Session struct {
	Key, ClaudeSessionID, Model string
	Started                     time.Time
	Turns                       int64
	CostUSD                     float64
}

// ErrNoTranscript: no transcript of the session was found.
var ErrNoTranscript = errors.New("claude's transcript of this session was not found")

// FindTranscript looks for session id's transcript under each of claude's
// config directories (its projects/*/<id>.jsonl), or under the chats'
// own config directories one level down (<dir>/<chat>/projects/*/<id>.jsonl:
// the sandbox gives each chat its own).
func FindTranscript(dirs []string, id string) (string, error) {
	if id == "" || strings.ContainsAny(id, "/*?[\\") {
		return "", ErrNoTranscript
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		for _, pattern := range []string{filepath.Join(d, "projects", "*", id+".jsonl"), filepath.Join(d, "*", "projects", "*", id+".jsonl")} {
			if m, _ := filepath.Glob(pattern); len(m) > 0 {
				return m[0], nil
			}
		}
	}
	return "", ErrNoTranscript
}

// line is one line of the transcript, the parts read.
type line struct {
	Type        string    `json:"type"`
	IsSidechain bool      `json:"isSidechain"`
	Timestamp   time.Time `json:"timestamp"`
	Message     *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type block struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// maxLine bounds one transcript line (a tool result can be large).
const maxLine = 64 << 20

// header writes the session's header.
func header(w io.Writer, s Session, loc *time.Location) {
	fmt.Fprintf(w, "# Session %s\n\n", s.Key)
	fmt.Fprintf(w, "- claude session: `%s`\n", s.ClaudeSessionID)
	if !s.Started.IsZero() {
		fmt.Fprintf(w, "- started: %s\n", s.Started.In(loc).Format("2006-01-02 15:04 MST"))
	}
	fmt.Fprintf(w, "- turns: %d, cost $%.2f as claude reported it", s.Turns, s.CostUSD)
	if s.Model != "" {
		fmt.Fprintf(w, ", model %s", s.Model)
	}
	fmt.Fprint(w, "\n")
}

// writeTranscript writes the conversation from the transcript at path
// alone ("" none: the file says so). It returns how many prompts it wrote.
func writeTranscript(w io.Writer, path string, loc *time.Location) (int, error) {
	fmt.Fprint(w, "\n")
	if path == "" {
		_, err := fmt.Fprintf(w, "_%s._\n", ErrNoTranscript)
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	prompts := 0
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.IsSidechain || l.Message == nil {
			continue
		}
		at := ""
		if !l.Timestamp.IsZero() {
			at = " · " + l.Timestamp.In(loc).Format("15:04")
		}
		switch l.Type {
		case "user":
			text := userText(l.Message.Content)
			if text == "" {
				continue // a tool result
			}
			prompts++
			fmt.Fprintf(w, "## Message%s\n\n%s\n\n", at, text)
		case "assistant":
			var blocks []block
			if json.Unmarshal(l.Message.Content, &blocks) != nil {
				continue
			}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if t := strings.TrimSpace(b.Text); t != "" {
						fmt.Fprintf(w, "**claude**%s\n\n%s\n\n", at, t)
					}
				case "tool_use":
					fmt.Fprintf(w, "- 🔧 %s%s\n\n", b.Name, gist(b.Input))
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return prompts, fmt.Errorf("read the transcript: %w", err)
	}
	return prompts, nil
}

// userText is a user line's text: its string content or text blocks
// (none for a tool result), without claude's system reminders.
func userText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
			parts = append(parts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}

// gist is the telling part of a tool's input: a command, a path, a
// pattern, a URL.
func gist(raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description"} {
		if v, ok := in[k].(string); ok && v != "" {
			v = strings.ReplaceAll(v, "`", "'")
			if len(v) > 300 {
				v = strings.ToValidUTF8(v[:300], "") + "…"
			}
			return ": `" + strings.ReplaceAll(v, "\n", " ") + "`"
		}
	}
	return ""
}
