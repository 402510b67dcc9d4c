package wire

import (
	"sync"

	"github.com/clawhost/clawhost/sdk/status"
)

// Status is a status.Reporter that keeps the latest report and wakes the
// WatchStatus streams on each change. The zero value is ready.
type Status struct {
	mu      sync.Mutex
	st      status.Status
	changed chan struct{}
}

var _ status.Reporter = (*Status)(nil)

// Report implements status.Reporter. An identical report wakes nobody.
func (s *Status) Report(st status.Status) {
	if st.State == "" {
		st.State = status.Ready
	}
	if st.Attention != nil {
		a := *st.Attention
		st.Attention = &a
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.st
	if cur.State == "" {
		cur.State = status.Ready
	}
	if equal(cur, st) {
		return
	}
	s.st = st
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// current returns the latest report and a channel closed at the next change.
func (s *Status) current() (status.Status, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	st := s.st
	if st.State == "" {
		st.State = status.Ready
	}
	return st, s.changed
}

func equal(a, b status.Status) bool {
	if a.State != b.State || a.Message != b.Message || (a.Attention == nil) != (b.Attention == nil) {
		return false
	}
	return a.Attention == nil || *a.Attention == *b.Attention
}
