package gateway

import (
	"slices"
	"sync"
)

// hookWork is what the lifecycle hooks last did for each session, a line per stage
// ("received": the message_received hooks' steps, "sending": message_sending's), for
// /status. In memory only: a restart forgets it. At most hookWorkKeys sessions are
// kept; the oldest entry goes first.
type hookWork struct {
	mu    sync.Mutex
	order []string
	m     map[string]map[string]string
}

// hookWorkKeys bounds the sessions hookWork remembers.
const hookWorkKeys = 1024

// set records line as stage's last work for the session key.
func (w *hookWork) set(key, stage, line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]map[string]string{}
	}
	if w.m[key] == nil {
		if len(w.order) >= hookWorkKeys {
			delete(w.m, w.order[0])
			w.order = w.order[1:]
		}
		w.order = append(w.order, key)
		w.m[key] = map[string]string{}
	}
	w.m[key][stage] = line
}

// lines is what the hooks last did for key: the message_received line first.
func (w *hookWork) lines(key string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, stage := range []string{"received", "sending"} {
		if l := w.m[key][stage]; l != "" {
			out = append(out, l)
		}
	}
	return slices.Clip(out)
}
