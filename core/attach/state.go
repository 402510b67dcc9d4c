package attach

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
)

// StateFileName is the file in data_dir that keeps the attachments across
// a restart.
const StateFileName = "attached.json"

// DefaultGrace is how long after a restart a chat's turns wait for the
// terminal that was attached to come back (clawhost channel reconnects
// every second).
const DefaultGrace = 15 * time.Second

// stored is the state file's content.
type stored struct {
	Links []Link `json:"links"`
}

// load reads the attachments the host had when it stopped.
func (h *Hub) load() []Link {
	if h.opts.StateFile == "" {
		return nil
	}
	b, err := os.ReadFile(h.opts.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var st stored
	if err != nil || json.Unmarshal(b, &st) != nil {
		return nil // unreadable: no terminal is awaited, the chats answer as their own
	}
	return st.Links
}

// save writes the live and awaited attachments (h.mu held). A failed
// write costs only the wait for a terminal after a crash.
func (h *Hub) save() {
	if h.opts.StateFile == "" {
		return
	}
	st := stored{Links: []Link{}}
	for _, l := range h.links {
		st.Links = append(st.Links, l.Link)
	}
	for _, a := range h.awaited {
		st.Links = append(st.Links, a.link)
	}
	b, err := json.Marshal(st)
	if err == nil {
		_ = atomicfile.Write(h.opts.StateFile, b)
	}
}
