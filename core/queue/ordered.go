package queue

import "sync"

// Ordered runs functions in submission order per key, one goroutine per
// busy key; keys without work hold no goroutine. The composer runs the
// arrival stage of each conversation through it.
type Ordered struct {
	mu     sync.Mutex
	queues map[string][]func()
	wg     sync.WaitGroup
}

// NewOrdered returns an empty Ordered.
func NewOrdered() *Ordered { return &Ordered{queues: map[string][]func(){}} }

// Do runs f after every function submitted earlier under key.
func (s *Ordered) Do(key string, f func()) {
	s.mu.Lock()
	q, busy := s.queues[key]
	s.queues[key] = append(q, f)
	if !busy {
		s.wg.Add(1)
		go s.run(key)
	}
	s.mu.Unlock()
}

func (s *Ordered) run(key string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		q := s.queues[key]
		if len(q) == 0 {
			delete(s.queues, key)
			s.mu.Unlock()
			return
		}
		f := q[0]
		q[0] = nil
		s.queues[key] = q[1:]
		s.mu.Unlock()
		f()
	}
}

// Wait blocks until every submitted function has run.
func (s *Ordered) Wait() { s.wg.Wait() }
