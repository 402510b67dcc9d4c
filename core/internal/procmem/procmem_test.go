package procmem

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	// Two reads a moment apart: a shared page's share moves as other
	// processes map or drop it (seen beside two CPU burners: 320 vs 311 kB),
	// so a leaf's tree is its own Pss within a tenth.
	leaf, ok := Tree(cmd.Process.Pid)
	own, ok2 := pss(cmd.Process.Pid)
	if !ok || !ok2 || leaf <= 0 || leaf*10 < own*9 || leaf*9 > own*10 {
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

// TestThreadChildren: a thread's children are read under its own
// /proc/<tid>, not under its process's /proc/<pid>/task (see
// threadChildren), and the lists cover children forked by any thread.
func TestThreadChildren(t *testing.T) {
	if got, want := threadChildren("4242"), "/proc/4242/task/4242/children"; got != want {
		t.Fatalf("threadChildren(4242) = %q, want %q", got, want)
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// Children forked from threads other than the main one are found too.
	var cmds []*exec.Cmd
	defer func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	done := make(chan *exec.Cmd)
	for range 4 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c := exec.Command("sleep", "30")
			if c.Start() != nil {
				c = nil
			}
			done <- c
		}()
	}
	for range 4 {
		if c := <-done; c != nil {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) == 0 {
		t.Skip("no sleep")
	}
	kids := children(os.Getpid())
	for _, c := range cmds {
		if !slices.Contains(kids, c.Process.Pid) {
			t.Errorf("children of %d: %v, want %d among them", os.Getpid(), kids, c.Process.Pid)
		}
	}
}

// reapChildEnv makes the test binary a child for BenchmarkReapAfterTree:
// a Go process with a few threads that exits at the end of its stdin.
const reapChildEnv = "PROCMEM_REAP_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(reapChildEnv) == "1" {
		for range 4 {
			go func() {
				runtime.LockOSThread()
				select {}
			}()
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkReapAfterTree: the CPU the reaping thread spends in the wait
// for a multi-threaded child (a Go process, as claude's MCP servers or
// the fake claude; node's threads alike) after its threads' children
// lists were read: "own" as Tree reads them (threadChildren),
// "under-pid" through /proc/<pid>/task/<tid>, as Tree read them until
// 2026-11-26. On the 2-core development machine at a load of 38–40, 3
// runs of 40 reaps: under-pid 7.0–10.8 ms of CPU a reap, own 0.013–0.038 ms.
//
//	go test ./core/internal/procmem -run '^$' -bench ReapAfterTree -benchtime 100x
func BenchmarkReapAfterTree(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		b.Skip(err)
	}
	for _, tc := range []struct {
		name string
		path func(pid int, tid string) string
	}{
		{"own", func(_ int, tid string) string { return threadChildren(tid) }},
		{"under-pid", func(pid int, tid string) string { return "/proc/" + strconv.Itoa(pid) + "/task/" + tid + "/children" }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var reap time.Duration
			for b.Loop() {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), reapChildEnv+"=1")
				in, err := cmd.StdinPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				pid := cmd.Process.Pid
				// Read once the child's threads are up (a Go runtime starts
				// its own beside the four it locks).
				for deadline := time.Now().Add(10 * time.Second); ; {
					tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
					if len(tasks) >= 5 {
						for _, t := range tasks {
							_, _ = os.ReadFile(tc.path(pid, t.Name()))
						}
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("the child has %d threads after 10 s", len(tasks))
					}
					runtime.Gosched()
				}
				_ = in.Close()
				c0 := threadCPU()
				_ = cmd.Wait()
				reap += threadCPU() - c0
			}
			b.ReportMetric(float64(reap.Microseconds())/float64(b.N), "reap-cpu-us/op")
		})
	}
}

// threadCPU is the calling OS thread's CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
