package memtrim

import "testing"

func TestSettleFreesAfterABurstsWorth(t *testing.T) {
	t.Parallel()
	var allocated uint64
	freed := 0
	s := &settle{allocated: func() uint64 { return allocated }, free: func() { freed++ }}
	for _, c := range []struct {
		alloc uint64 // allocated since the previous step
		freed int    // frees so far
	}{
		{SettleAlloc - 1, 0}, // a start's worth: kept
		{1, 1},               // together SettleAlloc
		{SettleAlloc / 2, 1}, // counted from the last free
		{SettleAlloc / 2, 2},
		{0, 2},
		{10 * SettleAlloc, 3},
	} {
		allocated += c.alloc
		s.settle()
		if freed != c.freed {
			t.Fatalf("after %d bytes more: freed %d times, want %d", c.alloc, freed, c.freed)
		}
	}
}

func TestHeapAllocatedGrows(t *testing.T) {
	before := heapAllocated()
	sink = make([]byte, 1<<20)
	if got := heapAllocated() - before; got < 1<<20 {
		t.Fatalf("a 1 MiB allocation counted as %d bytes", got)
	}
}

var sink []byte
