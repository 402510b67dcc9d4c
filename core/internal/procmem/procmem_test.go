package procmem

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

func TestRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	rss, heap := Self()
	if rss < 1<<20 || heap <= 0 {
		t.Fatalf("Self: rss %d, heap %d", rss, heap)
	}
	// A child: its own figure, and none once it is gone.
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	if n, ok := RSS(cmd.Process.Pid); !ok || n <= 0 || n >= rss*4 {
		t.Errorf("RSS(sleep) = %d, %v", n, ok)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, ok := RSS(cmd.Process.Pid); ok {
		t.Error("RSS of an ended process")
	}
	for _, pid := range []int{0, -1} {
		if _, ok := RSS(pid); ok {
			t.Errorf("RSS(%d) reported", pid)
		}
	}
	if n, ok := RSS(os.Getpid()); !ok || n != rss && n < 1<<20 {
		t.Errorf("RSS(self) = %d, %v", n, ok)
	}
}
