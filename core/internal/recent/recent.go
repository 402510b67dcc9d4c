// Package recent is a map of bounded size for what the core keeps per
// session in memory (how the last turn got to claude, the session's queue
// mode): the sessions active lately, not every session a long-running
// daemon ever served.
package recent

import "sync"

// Map holds at most its bound of entries; adding a key to a full map
// evicts another one, any one (the sessions that matter are found again in
// the store, or are the ones written lately). The zero value is not
// usable: call New. Safe for concurrent use.
type Map[K comparable, V any] struct {
	mu    sync.Mutex
	bound int
	m     map[K]V
}

// New returns a Map holding at most bound entries.
func New[K comparable, V any](bound int) *Map[K, V] {
	return &Map[K, V]{bound: max(bound, 1), m: map[K]V{}}
}

// Get returns key's value.
func (r *Map[K, V]) Get(key K) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	return v, ok
}

// Put sets key's value, evicting another key when the map is full.
func (r *Map[K, V]) Put(key K, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[key]; !ok && len(r.m) >= r.bound {
		for k := range r.m { // any one: the map's order is random
			delete(r.m, k)
			break
		}
	}
	r.m[key] = v
}

// Len is the number of entries.
func (r *Map[K, V]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}
