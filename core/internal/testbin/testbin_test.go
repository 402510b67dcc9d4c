package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestRemoveLeftovers: the directory of an exited process and an old one
// without an owner go; this process's and a fresh unnamed one stay.
func TestRemoveLeftovers(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, owner int, age time.Duration) string {
		d := filepath.Join(tmp, "clawhost-bin-"+name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner > 0 {
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(strconv.Itoa(owner)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(d, at, at); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := mk("dead", gone.Process.Pid, 0)
	mine := mk("mine", os.Getpid(), 0)
	old := mk("old", 0, 2*time.Hour)
	fresh := mk("fresh", 0, 0)
	other := filepath.Join(tmp, "unrelated")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	removeLeftovers()
	for d, want := range map[string]bool{dead: false, mine: true, old: false, fresh: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
