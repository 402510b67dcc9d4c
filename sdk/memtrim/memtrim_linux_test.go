//go:build linux

package memtrim

import (
	"bytes"
	"os"
	"testing"
)

func TestReadOnlyMapping(t *testing.T) {
	const exe = "/opt/claw host/bin/clawhost"
	for _, c := range []struct {
		line       string
		start, end uintptr
		ok         bool
	}{
		{"00400000-01150000 r-xp 00000000 fe:00 9981843                            /opt/claw host/bin/clawhost", 0x400000, 0x1150000, true},
		{"01150000-01f72000 r--p 00d50000 fe:00 9981843    /opt/claw host/bin/clawhost", 0x1150000, 0x1f72000, true},
		// The data segment: writable, must never be dropped.
		{"01f72000-0206e000 rw-p 01b72000 fe:00 9981843    /opt/claw host/bin/clawhost", 0, 0, false},
		// A shared mapping: dropping it is not what this is for.
		{"01f72000-0206e000 r--s 01b72000 fe:00 9981843    /opt/claw host/bin/clawhost", 0, 0, false},
		{"7f0000000000-7f0000001000 r--p 00000000 fe:00 12    /usr/lib/libc.so.6", 0, 0, false},
		{"7f0000000000-7f0000001000 r--p 00000000 fe:00 12    /opt/claw host/bin/clawhost.old", 0, 0, false},
		{"31b908800000-31b909400000 rw-p 00000000 00:00 0 ", 0, 0, false},
		{"7ffd1c3fe000-7ffd1c400000 r-xp 00000000 00:00 0                          [vdso]", 0, 0, false},
		{"", 0, 0, false},
		{"zz-01150000 r-xp 00000000 fe:00 9981843 /opt/claw host/bin/clawhost", 0, 0, false},
	} {
		s, e, ok := readOnlyMapping([]byte(c.line), exe)
		if s != c.start || e != c.end || ok != c.ok {
			t.Errorf("%q: %x-%x %v, want %x-%x %v", c.line, s, e, ok, c.start, c.end, c.ok)
		}
	}
	// A binary replaced while it runs: both the link and the maps say so.
	const gone = "/usr/bin/clawhost (deleted)"
	if _, _, ok := readOnlyMapping([]byte("00400000-00500000 r-xp 00000000 fe:00 1 /usr/bin/clawhost (deleted)"), gone); !ok {
		t.Error("the text of a replaced binary is not dropped")
	}
}

// initialized lives in the data segment, a writable mapping of the
// executable. Dropping that mapping would put back the file's value.
var initialized = []int{1, 2, 3}

func TestTrimDropsTheBinaryAndKeepsVariables(t *testing.T) {
	initialized[1] = 42
	pm := openPagemap(t)
	before := pm.present()
	if before == 0 {
		t.Fatal("no page of the executable is mapped before the trim")
	}
	n, err := dropBinary()
	after := pm.present() // as little code as possible between the two
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pages of the executable mapped: %d before, %d after; %d KiB of mappings dropped", before, after, n>>10)
	if n == 0 {
		t.Fatal("no mapping dropped")
	}
	if after > before/2 {
		t.Errorf("pages of the executable mapped: %d before the trim, %d after; want at most half (fault-around maps 64 KiB back around each page the code after the drop touches)", before, after)
	}
	if initialized[1] != 42 {
		t.Fatalf("a variable was reset by the trim: %v", initialized)
	}
	// The code runs on after a trim (its pages come back from the file),
	// and Trim frees the heap as well.
	if _, err := Trim(); err != nil {
		t.Fatal(err)
	}
}

// pagemap counts the mapped pages of the executable's read-only mappings
// from /proc/self/pagemap (bit 63 of a page's entry: present), with the
// file opened and the buffer allocated beforehand so that counting touches
// little code of its own.
type pagemap struct {
	f      *os.File
	ranges [][2]uintptr
	buf    []byte
}

func openPagemap(t *testing.T) *pagemap {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	pm := &pagemap{}
	size := uintptr(0)
	for _, line := range bytes.Split(maps, []byte("\n")) {
		if s, e, ok := readOnlyMapping(line, exe); ok {
			pm.ranges = append(pm.ranges, [2]uintptr{s, e})
			size = max(size, e-s)
		}
	}
	if pm.f, err = os.Open("/proc/self/pagemap"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pm.f.Close() })
	pm.buf = make([]byte, size/uintptr(os.Getpagesize())*8)
	return pm
}

func (pm *pagemap) present() int {
	page := uintptr(os.Getpagesize())
	n := 0
	for _, r := range pm.ranges {
		b := pm.buf[:(r[1]-r[0])/page*8]
		if _, err := pm.f.ReadAt(b, int64(r[0]/page*8)); err != nil {
			return -1
		}
		for i := 0; i < len(b); i += 8 {
			if b[i+7]&0x80 != 0 {
				n++
			}
		}
	}
	return n
}
