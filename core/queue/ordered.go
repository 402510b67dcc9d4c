package queue

import (
	"sync"

	"github.com/clawhost/clawhost/core/sessionkey"
)

// Ordered runs functions in submission order per key, one goroutine per
// busy key; keys without work hold no goroutine. The composer runs the
// arrival stage of each conversation through it.
type Ordered struct {
	mu     sync.Mutex
	queues map[sessionkey.Key][]func()
	wg     sync.WaitGroup
}

// NewOrdered returns an empty Ordered.
func NewOrdered() *Ordered { return &Ordered{queues: map[sessionkey.Key][]func(){}} }

// Do runs f after every function submitted earlier under key.
func (s *Ordered) Do(key sessionkey.Key, f func()) {
	s.mu.Lock()
	q, busy := s.queues[key]
	s.queues[key] = append(q, f)
	if !busy {
		s.wg.Add(1)
		go s.run(key)
	}
	s.mu.Unlock()
}

func (s *Ordered) run(key sessionkey.Key) {
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

// Locks is a mutex per key: core/delivery takes a session's lock around
// its sends, so two replies (or a reply and a notice) of one session never
// interleave. The zero value is ready to use.
type Locks struct {
	mu    sync.Mutex
	locks map[sessionkey.Key]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

// Lock takes key's lock and returns its unlock; unused keys hold no memory.
func (k *Locks) Lock(key sessionkey.Key) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[sessionkey.Key]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
