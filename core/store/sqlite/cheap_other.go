//go:build !(linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm) && !libc.membrk && !libc.memgrind)

package sqlite

// trimCHeap does nothing here: libc's allocator on this platform is not
// the one cheap_linux.go reaches.
func trimCHeap() error { return nil }
