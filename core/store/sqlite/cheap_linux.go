//go:build linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm) && !libc.membrk && !libc.memgrind

package sqlite

import (
	"sync"
	_ "unsafe" // go:linkname

	"modernc.org/memory"
)

// libc's allocator and its lock: modernc's libc (the C library SQLite is
// compiled against) serves malloc from one memory.Allocator, always under
// allocatorMu (mem_musl.go of modernc.org/libc, on these platforms). The
// allocator keeps the regions SQLite frees for reuse, up to 4 MB per size
// class resident, and libc exports no malloc_trim to hand them back; its
// Trim does. Should libc rename them, the build fails to link, loudly.
//
//go:linkname libcAllocator modernc.org/libc.allocator
var libcAllocator memory.Allocator

//go:linkname libcAllocatorMu modernc.org/libc.allocatorMu
var libcAllocatorMu sync.Mutex

// trimCHeap unmaps libc's empty regions (memory.Allocator.Trim: regions
// with a live allocation stay).
func trimCHeap() error {
	libcAllocatorMu.Lock()
	defer libcAllocatorMu.Unlock()
	return libcAllocator.Trim()
}
