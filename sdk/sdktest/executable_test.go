package sdktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// TestWriteExecutableNotBusy writes and at once runs scripts while other
// goroutines start processes without pause: the race that made a parallel
// test's freshly written hook fail with "text file busy". Each script is
// tried once, so a busy machine changes only how often the race is run.
func TestWriteExecutableNotBusy(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("/bin/true").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for i := range 300 {
		p := filepath.Join(dir, "s"+strconv.Itoa(i))
		WriteExecutable(t, p, []byte("#!/bin/sh\nexit 0\n"), 0o700)
		if err := exec.Command(p).Run(); err != nil {
			t.Fatalf("script %d: %v", i, err) // "text file busy" without the lock
		}
		_ = os.Remove(p)
	}
}

// TestShellScript: the script is named as asked, private to its owner,
// and runs body with /bin/sh.
func TestShellScript(t *testing.T) {
	p := ShellScript(t, "engine.sh", `printf '%s' "$1"`)
	if filepath.Base(p) != "engine.sh" {
		t.Errorf("path %s", p)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("stat: %v %v", fi, err)
	}
	out, err := exec.Command(p, "spoken").Output()
	if err != nil || string(out) != "spoken" {
		t.Fatalf("ran: %q %v", out, err)
	}
}
