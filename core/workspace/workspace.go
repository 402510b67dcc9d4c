// Package workspace is what clawhost puts in an agent's workspace and reads
// back from it: the bootstrap files a new workspace gets (MEMORY.md for
// notes that outlive a conversation, HEARTBEAT.md for what the heartbeat
// checks; the seeds' ensureAgentWorkspace), and whether HEARTBEAT.md asks
// for anything (an empty one costs no heartbeat turn).
package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The bootstrap files.
const (
	MemoryFile    = "MEMORY.md"
	HeartbeatFile = "HEARTBEAT.md"
)

// MemoryTemplate and HeartbeatTemplate are the files a new workspace gets.
// HeartbeatTemplate has only headings and comments: until someone writes
// what to check, the heartbeat does not run claude.
const (
	MemoryTemplate = `# Memory

Notes that should outlive a conversation: who the people here are, what
they prefer, decisions taken, work in progress. claude reads this file
when earlier work matters and keeps it current; you may edit it too.
Dated notes from before a conversation was compacted are in memory/.
`
	HeartbeatTemplate = `# Heartbeat

<!-- What the heartbeat should check, one item per line, e.g.
- Is the nightly build green? If not, say which job failed.
While this file has only headings and comments, the heartbeat costs no
claude turn. -->
`
)

// Bootstrap makes dir and, when it is new or empty, writes the bootstrap
// files into it; an existing file is never overwritten, and a workspace
// that already holds something (a repository) gets nothing. It returns
// the files it wrote.
func Bootstrap(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case len(ents) > 0:
		return nil, nil
	}
	var wrote []string
	for _, f := range []struct{ name, text string }{{MemoryFile, MemoryTemplate}, {HeartbeatFile, HeartbeatTemplate}} {
		path := filepath.Join(dir, f.name)
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return wrote, err
		}
		_, werr := fh.WriteString(f.text)
		if cerr := fh.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return wrote, werr
		}
		wrote = append(wrote, path)
	}
	return wrote, nil
}

// HeartbeatEmpty reports whether the workspace's HEARTBEAT.md exists and
// asks for nothing: only headings, HTML comments, empty list items and
// white space (OpenClaw skips the heartbeat then). A missing file is not
// empty: the prompt may not need one.
func HeartbeatEmpty(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, HeartbeatFile))
	if err != nil {
		return false
	}
	return Blank(string(b))
}

// Blank reports whether markdown text holds only headings, HTML comments,
// empty list items and white space.
func Blank(text string) bool {
	for {
		i := strings.Index(text, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(text[i:], "-->")
		if j < 0 {
			text = text[:i]
			break
		}
		text = text[:i] + text[i+j+3:]
	}
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "", strings.HasPrefix(l, "#"):
		case strings.Trim(l, "-*+[] xX") == "":
		default:
			return false
		}
	}
	return true
}
