package channel

import "sync"

// firstSeenMax is how many keys a FirstSeen holds.
const firstSeenMax = 4096

// FirstSeen tells the first time a key is seen from the later ones, for
// what a plugin process does once per key, such as attaching a thread's
// earlier messages to the first of its messages it passes on (the host
// uses them on the thread session's first turn only). It holds at most
// 4096 keys; when full it starts again empty, so a key may then count as
// new once more. The zero value is ready to use; a FirstSeen is safe for
// concurrent use.
type FirstSeen struct {
	mu   sync.Mutex
	seen map[string]bool
}

// First reports whether key was not seen yet, and marks it seen.
func (s *FirstSeen) First(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[key] {
		return false
	}
	if s.seen == nil || len(s.seen) >= firstSeenMax {
		s.seen = map[string]bool{}
	}
	s.seen[key] = true
	return true
}
