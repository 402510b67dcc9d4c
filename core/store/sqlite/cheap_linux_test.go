//go:build linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm) && !libc.membrk && !libc.memgrind

package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// TestTrimCHeapReturnsFreedMemory: the page cache of a closed connection
// (8 MB read into it) stays resident in libc's allocator until trimCHeap
// hands it back. Not parallel: it reads the process's resident set.
func TestTrimCHeapReturnsFreedMemory(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "big.db")+"?_pragma=cache_size(-16384)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TABLE t (b BLOB)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO t SELECT randomblob(4000) FROM n`,
		`SELECT sum(length(b)) FROM t`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil { // frees the page cache into libc's pool
		t.Fatal(err)
	}
	before := rssAnonKB(t)
	if err := trimCHeap(); err != nil {
		t.Fatal(err)
	}
	after := rssAnonKB(t)
	t.Logf("RssAnon %d → %d kB", before, after)
	if before-after < 2048 {
		t.Fatalf("trimCHeap returned %d kB, want ≥ 2048 (libc retains up to 4 MB of freed regions)", before-after)
	}
}

// rssAnonKB is this process's anonymous resident memory after the Go
// heap's freed pages went back to the kernel.
func rssAnonKB(t *testing.T) int64 {
	t.Helper()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	_, rest, ok := bytes.Cut(b, []byte("RssAnon:"))
	if !ok {
		t.Skip("no RssAnon in /proc/self/status")
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(" kB"))), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCHeapLinkedLibcVersion: trimCHeap reaches two unexported variables of
// modernc.org/libc by name, which the linker checks only for their names,
// not their types. Upgrading libc must come with a look at them: in its
// libc_musl.go, `allocator memory.Allocator` and `allocatorMu sync.Mutex`,
// the lock its malloc and free take (mem_musl.go). Then update the version
// here.
func TestCHeapLinkedLibcVersion(t *testing.T) {
	const checked = "v1.77.1"
	mod, err := os.ReadFile(filepath.Join("..", "..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "modernc.org/libc" {
			if f[1] != checked {
				t.Fatalf("go.mod requires modernc.org/libc %s; trimCHeap's linknames were checked against %s (see this test's doc)", f[1], checked)
			}
			return
		}
	}
	t.Fatal("go.mod does not require modernc.org/libc: trimCHeap's linknames name nothing")
}
