package procmem

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	u, heap := Self()
	if u.RSS < 1<<20 || heap <= 0 {
		t.Fatalf("Self: %+v, heap %d", u, heap)
	}
	// The Go heap is private memory; the binary's mapped pages are not.
	if u.Private < heap/2 || u.Private >= u.RSS {
		t.Fatalf("Self: private %d of resident %d, heap %d", u.Private, u.RSS, heap)
	}
	// Memory this process writes is private: 32 MiB more of it.
	big := make([]byte, 32<<20)
	for i := range big {
		big[i] = 1
	}
	after, _ := Self()
	if grew := after.Private - u.Private; grew < 30<<20 {
		t.Errorf("private memory grew by %d after writing 32 MiB", grew)
	}
	runtime.KeepAlive(big)
	// A child: its own figure, and none once it is gone.
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	if c, ok := Read(cmd.Process.Pid); !ok || c.RSS <= 0 || c.RSS >= after.RSS || c.Private > c.RSS {
		t.Errorf("Read(sleep) = %+v, %v", c, ok)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, ok := Read(cmd.Process.Pid); ok {
		t.Error("Read of an ended process")
	}
	for _, pid := range []int{0, -1} {
		if _, ok := Read(pid); ok {
			t.Errorf("Read(%d) reported", pid)
		}
	}
	if s, ok := Read(os.Getpid()); !ok || s.RSS < 1<<20 {
		t.Errorf("Read(self) = %+v, %v", s, ok)
	}
}

func TestTree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// The child is in this process's tree as soon as it was forked.
	if !slices.Contains(children(os.Getpid()), cmd.Process.Pid) {
		t.Fatalf("children of %d: %v, want %d among them", os.Getpid(), children(os.Getpid()), cmd.Process.Pid)
	}
	// Compared once sleep sleeps: while it still execs and faults its pages
	// in, its Pss changes between the two reads (seen under load).
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
		if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "S") && strings.Contains(string(b), "(sleep)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleep never slept: %s", b)
		}
		runtime.Gosched()
	}
	leaf, ok := Tree(cmd.Process.Pid)
	own, ok2 := pss(cmd.Process.Pid)
	if !ok || !ok2 || leaf <= 0 || leaf != own {
		t.Fatalf("Tree(sleep) = %d, %v; its own Pss %d, %v", leaf, ok, own, ok2)
	}
	if self, ok := Tree(os.Getpid()); !ok || self < 1<<20 {
		t.Fatalf("Tree(self) = %d, %v", self, ok)
	}
	for _, pid := range []int{0, -1} {
		if _, ok := Tree(pid); ok {
			t.Errorf("Tree(%d) reported", pid)
		}
	}
	if MemTotal() < 64<<20 {
		t.Errorf("MemTotal = %d", MemTotal())
	}
}
