package memtrim

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// SettleAlloc is how much a process must have allocated since the last
// Settle that freed for the next one to free again: a burst worth giving
// back. Below it the heap the next burst would fault back in costs more
// than the memory is worth.
const SettleAlloc = 32 << 20

// Settle returns the freed heap to the kernel when the process allocated
// SettleAlloc or more since the last time it did; the caller calls it when
// a burst of work ended (the host: when it goes back to one processor,
// core/internal/procpace). A process that lets its heap grow to a multiple
// of what is live (the host at GOGC=400) keeps a burst's garbage resident
// up to the heap goal the burst raised, 40–50 MB after 300 new chats
// against 15 MB live, until the first idle collection (Idle), minutes later.
// Settle leaves the binary's pages alone (Trim drops them): a busy spell
// just used them, and the next turn would fault them back in.
func Settle() { settler.settle() }

var settler = &settle{allocated: heapAllocated, free: debug.FreeOSMemory}

// settle is Settle's state, with its parts given for tests.
type settle struct {
	allocated func() uint64 // bytes allocated since the start
	free      func()

	mu   sync.Mutex // one at a time; a second caller returns at once
	last uint64     // allocated at the last free
}

func (s *settle) settle() {
	if !s.mu.TryLock() {
		return
	}
	defer s.mu.Unlock()
	if a := s.allocated(); a-s.last >= SettleAlloc {
		s.free()
		s.last = a
	}
}

// heapAllocated is the bytes the process allocated on the heap since its
// start.
func heapAllocated() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}
