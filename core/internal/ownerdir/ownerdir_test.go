package ownerdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestRemoveLeftovers: the directory of an exited process and an old
// unnamed one go; this process's, a fresh unnamed one, a file and another
// name stay.
func TestRemoveLeftovers(t *testing.T) {
	tmp := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, owner int, age time.Duration) string {
		d := filepath.Join(tmp, "x-"+name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner > 0 {
			if err := os.WriteFile(filepath.Join(d, File), []byte(strconv.Itoa(owner)), 0o644); err != nil {
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
	mine, err := Make(tmp, "x-mine")
	if err != nil {
		t.Fatal(err)
	}
	old := mk("old", 0, 2*time.Hour)
	fresh := mk("fresh", 0, 0)
	file := filepath.Join(tmp, "x-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(tmp, "unrelated")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	RemoveLeftovers(tmp, "x-*", time.Hour)
	for d, want := range map[string]bool{dead: false, mine: true, old: false, fresh: true, file: true, other: true} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
	// Without the unnamed bound an old unnamed directory stays.
	old = mk("old2", 0, 2*time.Hour)
	RemoveLeftovers(tmp, "x-*", 0)
	if _, err := os.Stat(old); err != nil {
		t.Errorf("an unnamed directory went without the bound: %v", err)
	}
}
