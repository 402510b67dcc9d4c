//go:build linux

package memtrim

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// dropBinary advises MADV_DONTNEED on every mapping of /proc/self/exe that
// is not writable: the text and the read-only data. For a private file
// mapping that no write has copied, the kernel unmaps the pages and maps
// the file's again on the next access. A writable mapping (the data
// segment: the program's initialized variables) would be reset to the
// file's contents, so those are left alone.
func dropBinary() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var dropped int64
	for _, line := range bytes.Split(maps, []byte("\n")) {
		start, end, ok := readOnlyMapping(line, exe)
		if !ok {
			continue
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_DONTNEED); errno != 0 {
			return dropped, fmt.Errorf("madvise %x-%x: %w", start, end, errno)
		}
		dropped += int64(end - start)
	}
	return dropped, nil
}

// readOnlyMapping parses one line of /proc/self/maps ("start-end perms
// offset dev inode path") and reports the range when it maps the file exe
// without write permission.
func readOnlyMapping(line []byte, exe string) (start, end uintptr, ok bool) {
	var f [5][]byte
	rest := line
	for i := range f {
		rest = bytes.TrimLeft(rest, " ")
		var found bool
		if f[i], rest, found = bytes.Cut(rest, []byte(" ")); !found {
			return 0, 0, false
		}
	}
	// The path is the rest of the line: it may contain spaces, and a
	// replaced binary's ends in " (deleted)", as does the link's.
	path := string(bytes.TrimLeft(rest, " "))
	perms := f[1]
	if path != exe || len(perms) < 4 || perms[1] != '-' || perms[3] != 'p' {
		return 0, 0, false
	}
	lo, hi, found := bytes.Cut(f[0], []byte("-"))
	if !found {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(string(lo), 16, 64)
	e, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}
