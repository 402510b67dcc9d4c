// Package ownersession reads and writes an owner's own Claude Code
// sessions — the ones claude keeps for the person who runs it in a
// terminal — so that a chat may continue one and hand it back (issue 77,
// docs/continue.md).
//
// claude 2.1.330 keeps a session's transcript at
// <config dir>/projects/<cwd with every character but [A-Za-z0-9] replaced
// by "-">/<session id>.jsonl (observed: /tmp/x/my_work.space is
// "-tmp-x-my-work-space"), one JSON record a line, appended to and never
// rewritten. The records read here: "user" (a prompt, or a tool result
// going back to the model), "custom-title" (customTitle: --name or
// /rename), "ai-title" (aiTitle), "summary" (summary) — for each of the
// three the last one wins, as in claude's own /resume picker.
//
// It is a leaf: files and bytes in, values out. Who may call it, and
// where a copy lands, is the caller's (core/gateway, behind
// access.Policy.OwnersOnlyChat).
package ownersession

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ProjectName is the directory name claude gives the project of cwd under
// <config dir>/projects: every character but an ASCII letter or digit
// replaced by "-" — per UTF-16 code unit, as claude's JavaScript replaces
// them (é is one "-", a character beyond the BMP two).
func ProjectName(cwd string) string {
	var b strings.Builder
	for _, c := range filepath.Clean(cwd) {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			b.WriteRune(c)
		case c > 0xFFFF:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ProjectDir is where claude with config directory configDir keeps the
// transcripts of the sessions it ran in cwd.
func ProjectDir(configDir, cwd string) string {
	return filepath.Join(configDir, "projects", ProjectName(cwd))
}

// idForm is a claude session id (a uuid); a file name of another form is
// no session's.
var idForm = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// ValidID reports whether id has the form of a claude session id.
func ValidID(id string) bool { return idForm.MatchString(id) }

// Summary is what a transcript says of its session.
type Summary struct {
	// Title is claude's own title: the last custom title (--name,
	// /rename), else the last AI title, else the last summary; "" none.
	Title string
	// FirstPrompt is the text of the session's first prompt, trimmed.
	FirstPrompt string
	// Turns counts the prompts the user wrote (tool results going back to
	// the model, sub-agents' records and claude's own meta messages are
	// not turns).
	Turns int
}

// record is one transcript line, the parts read.
type record struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	CustomTitle string `json:"customTitle"`
	AITitle     string `json:"aiTitle"`
	Summary     string `json:"summary"`
	Message     *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// maxLine bounds one transcript line (an attachment record of claude's
// may be large; a longer one is skipped, not an error).
const maxLine = 16 << 20

// Parse reads a transcript. A line that is not JSON (a torn last line of
// a running claude) is skipped.
func Parse(r io.Reader) (Summary, error) {
	var s Summary
	var custom, ai, sum string
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			var rec record
			if json.Unmarshal(line, &rec) == nil {
				switch rec.Type {
				case "custom-title":
					custom = strings.TrimSpace(rec.CustomTitle)
				case "ai-title":
					ai = strings.TrimSpace(rec.AITitle)
				case "summary":
					sum = strings.TrimSpace(rec.Summary)
				case "user":
					if text, ok := prompt(rec); ok {
						s.Turns++
						if s.FirstPrompt == "" {
							s.FirstPrompt = text
						}
					}
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s, err
		}
	}
	s.Title = firstOf(custom, ai, sum)
	return s, nil
}

// readLine is the next line of br without its newline; a line longer than
// maxLine is read through and returned empty.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			out = append(out, chunk...)
			if len(out) > maxLine {
				out, long = nil, true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(out), err
	}
}

// prompt is the user's text of a "user" record, when it is a prompt the
// user wrote: not a sub-agent's, not claude's meta message, not only tool
// results, and not a slash command's output.
func prompt(rec record) (string, bool) {
	if rec.IsSidechain || rec.IsMeta || rec.Message == nil {
		return "", false
	}
	var text string
	if json.Unmarshal(rec.Message.Content, &text) != nil {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(rec.Message.Content, &blocks) != nil {
			return "", false
		}
		for _, b := range blocks {
			if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<") {
				text = b.Text
				break
			}
		}
	}
	text = strings.TrimSpace(text)
	if text == "" || strings.HasPrefix(text, "<command-") || strings.HasPrefix(text, "<local-command") {
		return "", false
	}
	return text, true
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Session is one of an owner's sessions of a project.
type Session struct {
	Summary
	ID       string
	Path     string
	Modified time.Time
	// Live: the session looks open in a terminal right now (see [List]).
	Live bool
}

// Label is how the session is named to the owner: claude's title, else
// its first prompt, at most 60 characters.
func (s Session) Label() string {
	l := firstOf(s.Title, s.FirstPrompt, "(no prompt)")
	l = strings.Join(strings.Fields(l), " ")
	if r := []rune(l); len(r) > 60 {
		l = string(r[:59]) + "…"
	}
	return l
}

// LiveWindow is how recently a transcript must have been written for its
// session to look live when no running claude is known to hold it.
const LiveWindow = 2 * time.Minute

// List returns the sessions of the project cwd in configDir, the most
// recently written first, at most limit (0: all). A session looks live
// when its transcript was written within LiveWindow of now, or when a
// claude process that runs now registered it under <configDir>/sessions
// (a <pid>.json naming the session id, as claude writes while it runs).
// A missing project directory is no session, not an error.
func List(configDir, cwd string, now time.Time, limit int) ([]Session, error) {
	dir := ProjectDir(configDir, cwd)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	running := runningSessions(configDir)
	var out []Session
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !ValidID(id) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, Session{ID: id, Path: filepath.Join(dir, e.Name()), Modified: fi.ModTime()})
	}
	slices.SortFunc(out, func(a, b Session) int { return b.Modified.Compare(a.Modified) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		s := &out[i]
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, err
		}
		s.Summary, err = Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", s.Path, err)
		}
		s.Live = now.Sub(s.Modified) < LiveWindow || running[s.ID]
	}
	return out, nil
}

// runningSessions are the session ids named by <configDir>/sessions/<pid>.json
// files whose process runs.
func runningSessions(configDir string) map[string]bool {
	out := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(configDir, "sessions", "*.json"))
	for _, f := range files {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), ".json"))
		if err != nil || pid <= 0 || !processRuns(pid) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil || len(b) > 1<<20 {
			continue
		}
		var v struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(b, &v) == nil && v.SessionID != "" {
			out[v.SessionID] = true
		}
	}
	return out
}

// Find picks the session arg names among list (as [List] returned it): its
// number in the list (1 = the first; at most three digits), its id or a prefix of it (at least 4
// characters), or the start of its label (case ignored). A bare "" picks
// the only session. It fails when none or several match.
func Find(list []Session, arg string) (Session, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		if len(list) == 1 {
			return list[0], nil
		}
		return Session{}, fmt.Errorf("%d sessions: name one", len(list))
	}
	if n, err := strconv.Atoi(arg); err == nil && len(arg) <= 3 {
		if n < 1 || n > len(list) {
			return Session{}, fmt.Errorf("there is no session %d (%d listed)", n, len(list))
		}
		return list[n-1], nil
	}
	var hits []Session
	for _, s := range list {
		low := strings.ToLower(arg)
		if len(arg) >= 4 && strings.HasPrefix(s.ID, low) || strings.HasPrefix(strings.ToLower(s.Label()), low) ||
			strings.HasPrefix(strings.ToLower(s.Title), low) || strings.HasPrefix(strings.ToLower(s.FirstPrompt), low) {
			hits = append(hits, s)
		}
	}
	switch len(hits) {
	case 0:
		return Session{}, fmt.Errorf("no session matches %q", arg)
	case 1:
		return hits[0], nil
	}
	return Session{}, fmt.Errorf("%d sessions match %q: use its number", len(hits), arg)
}
