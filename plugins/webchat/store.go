package webchat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// historyFile is the name of the history file in the instance's data dir.
const historyFile = "history.json"

// record is one stored message. The rendered HTML is not stored: it is
// rendered again when loaded, so a stricter sanitizer applies to old
// history too.
type record struct {
	ID       string         `json:"id"`
	Seq      uint64         `json:"seq"`
	Role     string         `json:"role"`
	Text     string         `json:"text"`
	Format   channel.Format `json:"format,omitempty"`
	Status   string         `json:"status,omitempty"`
	Edited   bool           `json:"edited,omitempty"`
	Time     time.Time      `json:"time"`
	Buttons  [][]Button     `json:"buttons,omitempty"`
	Pressed  string         `json:"pressed,omitempty"`
	Files    []File         `json:"files,omitempty"`
	clientID string
	html     string
}

// storedChat is one conversation in the history file.
type storedChat struct {
	Seq        uint64    `json:"seq"`
	LastActive time.Time `json:"last_active"`
	Messages   []record  `json:"messages"`
}

// storedHistory is the content of the history file.
type storedHistory struct {
	Version int                    `json:"version"`
	Chats   map[string]*storedChat `json:"chats"`
}

// store keeps the history in one JSON file (0600), written whole and
// atomically (temp file + rename). The directory is the host's (it creates
// data dirs 0700); an empty dir means memory only.
type store struct {
	dir string
}

func (s store) path() string { return filepath.Join(s.dir, historyFile) }

// load reads the history file; a missing file is an empty history. A
// corrupt file is moved aside to history.json.bad and reported.
func (s store) load() (map[string]*storedChat, error) {
	if s.dir == "" {
		return nil, nil
	}
	b, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load history: %w", err)
	}
	var h storedHistory
	if err := json.Unmarshal(b, &h); err != nil {
		bad := s.path() + ".bad"
		if rerr := os.Rename(s.path(), bad); rerr != nil {
			return nil, fmt.Errorf("load history: %w (and moving it aside: %v)", err, rerr)
		}
		return nil, fmt.Errorf("load history: %w (moved to %s, starting empty)", err, bad)
	}
	return h.Chats, nil
}

// save writes chats as the whole history.
func (s store) save(chats map[string]*storedChat) error {
	if s.dir == "" {
		return nil
	}
	b, err := json.Marshal(storedHistory{Version: 1, Chats: chats})
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	f, err := os.CreateTemp(s.dir, historyFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("save history: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("save history: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	if err := os.Rename(tmp, s.path()); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	return nil
}
