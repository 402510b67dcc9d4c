package voice

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Mode is a chat's voice reply setting.
type Mode string

// Modes of /voice.
const (
	ModeOff  Mode = "off"  // text only
	ModeOn   Mode = "on"   // every reply also as a voice note
	ModeAuto Mode = "auto" // a voice note when the person's last message was one
)

// parseMode reads a mode as written in /voice or default_mode.
func parseMode(s string) (Mode, bool) {
	switch m := Mode(s); m {
	case ModeOff, ModeOn, ModeAuto:
		return m, true
	}
	return "", false
}

// chat is what the plugin remembers of one conversation.
type chat struct {
	// Mode is the chat's /voice setting; "" the default_mode.
	Mode Mode `json:"mode,omitempty"`
	// Spoke is set when the last message the agent got carried audio.
	Spoke bool `json:"spoke,omitempty"`
	// Shown are lines to show above the next reply: transcripts
	// (show_transcript) and a failed transcription's notice.
	Shown []shown `json:"shown,omitempty"`
	// TTSDown is set after a voice reply failed and the chat was told;
	// cleared by the next one that succeeds, so an outage is told once.
	TTSDown bool `json:"tts_down,omitempty"`
	// STTDown is the same for transcription.
	STTDown bool `json:"stt_down,omitempty"`
	// Last is the answer to the chat's last message_sending call, given
	// again when the host repeats the call (same call id).
	Last *answer `json:"last,omitempty"`
}

// shown is a line for the chat from the message_received call Call.
type shown struct {
	Call string `json:"call"`
	Text string `json:"text"`
}

// answer is a message_sending answer as kept: the voice note's audio is
// in the file Audio (relative to the data directory), or in memory
// without one.
type answer struct {
	Call    string `json:"call"`
	Rewrite bool   `json:"rewrite,omitempty"`
	Text    string `json:"text,omitempty"`
	Media   string `json:"media,omitempty"` // the voice note's file name, "" for none
	Audio   string `json:"audio,omitempty"`
	// Step is the answer's Step line, the same for a repeated call.
	Step string `json:"step,omitempty"`
}

// store keeps the chats' state in one JSON file, written on each change
// (a temporary file renamed over it). A nil *store, or one without a
// path, keeps state in memory only.
type store struct {
	mu    sync.Mutex
	path  string
	chats map[string]*chat
}

// openStore reads path's state; a missing file is an empty state.
func openStore(path string) (*store, error) {
	s := &store{path: path, chats: map[string]*chat{}}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("read voice state: %w", err)
	}
	if err := json.Unmarshal(b, &s.chats); err != nil {
		return nil, fmt.Errorf("read voice state %s: %w", path, err)
	}
	if s.chats == nil {
		s.chats = map[string]*chat{}
	}
	return s, nil
}

// update runs fn on key's state under the lock and saves the result; what
// fn returns is returned. The state is changed in memory even when saving
// fails (the error says so).
func (s *store) update(key string, fn func(c *chat)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[key]
	if c == nil {
		c = &chat{}
		s.chats[key] = c
	}
	fn(c)
	if c.Mode == "" && !c.Spoke && len(c.Shown) == 0 && !c.TTSDown && !c.STTDown && c.Last == nil {
		delete(s.chats, key)
	}
	return s.save()
}

// get returns a copy of key's state.
func (s *store) get(key string) chat {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[key]; c != nil {
		return *c
	}
	return chat{}
}

// save writes the state file; called with mu held.
func (s *store) save() error {
	if s.path == "" {
		return nil
	}
	b, err := json.Marshal(s.chats)
	if err != nil {
		return fmt.Errorf("save voice state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".state-*")
	if err != nil {
		return fmt.Errorf("save voice state: %w", err)
	}
	_, werr := tmp.Write(b)
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), s.path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("save voice state: %w", werr)
	}
	return nil
}
