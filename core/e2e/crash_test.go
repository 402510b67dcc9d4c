package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// restart starts clawhost again on the daemon's directory and config.
func (d *daemon) restart() {
	d.t.Helper()
	_ = os.Remove(d.addrFile)
	d.after = 0
	d.spawn()
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback address file after restart")
}

// TestKill9MidTurnCompletesOnce: clawhost is SIGKILLed while claude works
// on a message; after a restart the turn runs again and its reply is
// delivered exactly once.
func TestKill9MidTurnCompletesOnce(t *testing.T) {
	d := startDaemon(t, false)
	pluginPIDs(d, 2)
	d.post("u1", "survive this #sleep=1500ms")
	// Wait until the turn is running (typing indicator on).
	d.waitFor(func() bool { return typingSeen(d) }, "the turn to start (typing on)")
	time.Sleep(300 * time.Millisecond) // on purpose: the kill comes mid-turn
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()

	d.restart()
	got := d.nextSend("chat-u1")
	if !strings.Contains(got, "survive this") {
		t.Fatalf("after restart: %q", got)
	}
	// On purpose: a second delivery would come within these 3 s.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range d.sent(time.Until(deadline)) {
			d.after = r.Seq
			if r.Op == "send" && r.ChatID == "chat-u1" {
				t.Fatalf("reply delivered twice: %q", r.Text)
			}
		}
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	_ = d.cmd.Wait()
}

func typingSeen(d *daemon) bool {
	for _, r := range d.sent(0) {
		if r.Op == "typing" {
			return true
		}
	}
	return false
}

// TestKill9KillsClaudesTools: a process a claude tool started (sleep 300)
// does not outlive clawhost's SIGKILL: claude's process group is killed by
// its lifeline watcher as soon as the host is gone, without a restart.
func TestKill9KillsClaudesTools(t *testing.T) {
	d := startDaemon(t, false)
	pluginPIDs(d, 2)
	kill9KillsTool(t, d, filepath.Join(t.TempDir(), "tool.pid"), func(pid int) int { return pid })
}

// kill9KillsTool has claude run a tool (the fake claude's #spawn) that
// writes its pid to pidFile and sleeps; it finds the tool's pid on the
// host (hostPID maps the pid the tool wrote, 0 while not found),
// SIGKILLs clawhost and waits for the tool to die with it.
func kill9KillsTool(t *testing.T, d *daemon, pidFile string, hostPID func(written int) int) {
	t.Helper()
	d.post("u1", "run a tool #spawn="+pidFile+" #sleep=60s")
	var tool int
	d.waitFor(func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		written, _ := strconv.Atoi(string(b))
		tool = hostPID(written)
		return tool > 0
	}, "the tool's pid file")
	t.Cleanup(func() { _ = syscall.Kill(tool, syscall.SIGKILL) })
	if !alive(tool) {
		t.Fatalf("tool %d not running", tool)
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.waitFor(func() bool { return !alive(tool) }, "the tool to die with the host")
}

// TestKill9KillsClaudesToolsSandboxed is TestKill9KillsClaudesTools in
// bubblewrap, where no lifeline watcher runs: the tool, in claude's PID
// namespace, dies with the host through bwrap's Pdeathsig, its
// --die-with-parent and the end of the namespace.
func TestKill9KillsClaudesToolsSandboxed(t *testing.T) {
	lpNeedBwrap(t)
	dir := t.TempDir()
	h := loopbackHost(dir, false)
	h.Agent.Attrs = Attrs{"sandbox": "auto"}
	d := Launch(t, h.Write(t))
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	if !strings.Contains(d.log.String(), "sandbox=bubblewrap") {
		t.Fatalf("claude is not sandboxed:\n%s", d.log.String())
	}
	// In the workspace: the sandbox lets claude write there.
	// The pid the tool writes is its namespace's.
	kill9KillsTool(t, d, filepath.Join(dir, "workspace", "tool.pid"), func(inner int) int {
		return descendantWithNSPid(d.cmd.Process.Pid, inner)
	})
}

// descendantWithNSPid is the host pid of the descendant of root whose pid
// in its own PID namespace is inner (0 when there is none).
func descendantWithNSPid(root, inner int) int {
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if pid != root {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) > 2 && f[0] == "NSpid:" && f[len(f)-1] == strconv.Itoa(inner) {
					return pid
				}
			}
		}
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		for _, task := range tasks {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + task.Name() + "/children")
			for _, c := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(c)
				queue = append(queue, n)
			}
		}
	}
	return 0
}
