//go:build linux

package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// zygoteTimeout bounds each wait on a helper in these tests.
const zygoteTimeout = 20 * time.Second

// needZygote skips a test of the sandbox helper where it cannot run (no bwrap, not root).
func needZygote(t *testing.T) string {
	t.Helper()
	needBwrap(t)
	if why := zygoteUnsupported(); why != "" {
		t.Skip(why)
	}
	bwrap, err := exec.LookPath(bwrapCommand)
	must(t, err)
	return bwrap
}

// testZygote starts a helper (the test binary; weaken names the defences it leaves out,
// zygoteWeaken) and stops it at the end of the test.
func testZygote(t *testing.T, weaken string) *zygote {
	t.Helper()
	bwrap := needZygote(t)
	exe, err := os.Executable()
	must(t, err)
	if weaken != "" && os.Geteuid() != 0 {
		// As any other user claude's own user namespace stands in the way of each
		// attack too: the weakened helper leaves it out as well.
		weaken += ",userns"
	}
	zygoteTestEnv = []string{"ZYGOTE_WEAKEN=" + weaken}
	t.Cleanup(func() { zygoteTestEnv = nil })
	z, err := startZygote(bwrap, exe)
	must(t, err)
	t.Cleanup(z.stop)
	return z
}

// zygoteSh runs script with /bin/sh as claude in z and returns what it wrote (stdout and
// stderr) and its exit status, once it exited; "HELPER-ENDED" when the helper ended before
// it answered the start (a broken one the script killed at once).
func zygoteSh(t *testing.T, z *zygote, script string) (string, int) {
	t.Helper()
	return zygoteRun(t, z, zygoteRequest{Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Dir: "/", Mounts: zygoteSystem()})
}

// zygoteRun is zygoteSh for any request.
func zygoteRun(t *testing.T, z *zygote, req zygoteRequest) (string, int) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	must(t, err)
	defer out.Close()
	devnull, err := os.Open(os.DevNull)
	must(t, err)
	defer devnull.Close()
	p, err := z.run(req, devnull, out, out)
	if err != nil && !z.alive() {
		return "HELPER-ENDED", -1
	}
	must(t, err)
	defer p.Release()
	code := p.Wait()
	b, err := os.ReadFile(out.Name())
	must(t, err)
	return string(b), code
}

// zygoteAfter is what became of z after its claude exited: "clean" (it takes the next
// start) or "dead".
func zygoteAfter(t *testing.T, z *zygote) string {
	t.Helper()
	select {
	case <-z.clean:
		return "clean"
	case <-z.dead:
		return "dead"
	case <-time.After(zygoteTimeout):
		t.Fatal("the helper neither ended nor took the next start")
		return ""
	}
}

// TestZygoteBoundary: what claude, run by the sandbox helper, must not do to the helper
// or leave for the next start in its sandbox. Each attack runs against the helper and
// against one built without the defence it meets (zygoteWeaken), where it must succeed:
// the check can fail.
func TestZygoteBoundary(t *testing.T) {
	cases := []struct {
		name, weaken string
		// attack runs the attack in z and says what it achieved ("" for nothing).
		attack func(t *testing.T, z *zygote) string
	}{
		{"signal or kill the helper", "signals,landlock", func(t *testing.T, z *zygote) string {
			out, _ := zygoteSh(t, z, "for s in TERM INT HUP QUIT USR1 USR2 ABRT SEGV BUS PIPE ALRM TRAP SYS XCPU KILL STOP; do kill -$s 1; done; echo sent")
			if after := zygoteAfter(t, z); after != "clean" {
				return "the helper is " + after + " after: " + out
			}
			return ""
		}},
		{"read the helper's environment, root, descriptors, or ptrace it", "dumpable,caps,landlock,userns", func(t *testing.T, z *zygote) string {
			out, _ := zygoteSh(t, z, `cat /proc/1/environ >/dev/null 2>&1 && echo ENVIRON
ls /proc/1/root/ >/dev/null 2>&1 && echo ROOT
readlink /proc/1/fd/3 >/dev/null 2>&1 && echo FD
readlink /proc/1/exe >/dev/null 2>&1 && echo EXE
python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(0x4206, 1, 0, 0) == 0 else 1)' 2>/dev/null && echo PTRACE
true`)
			zygoteAfter(t, z)
			return strings.TrimSpace(out)
		}},
		{"unmount what hides a tree", "caps,userns,seccomp,landlock", func(t *testing.T, z *zygote) string {
			out, _ := zygoteSh(t, z, `umount /dev/shm 2>/dev/null && echo UMOUNTED; true`)
			zygoteAfter(t, z)
			return strings.TrimSpace(out)
		}},
		{"reach the helper's socket", "cloexec", func(t *testing.T, z *zygote) string {
			out, _ := zygoteSh(t, z, `ls -l /proc/$$/fd/ 2>/dev/null | grep -q "socket:\[" && echo SOCKET; true`)
			zygoteAfter(t, z)
			return strings.TrimSpace(out)
		}},
		{"keep a capability (root)", "caps", func(t *testing.T, z *zygote) string {
			script := `grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status | grep -Ev '0000000000000000$'; true`
			if os.Geteuid() != 0 {
				// As another user: none at all, and no new privileges. The bounding set
				// of claude's own user namespace is the kernel's full one: with no new
				// privileges and no id of root there, no exec can raise a capability in it.
				script = `grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status | grep -Ev '0000000000000000$'; grep -q '^NoNewPrivs:.*1' /proc/self/status || echo NEW-PRIVILEGES; true`
			}
			out, _ := zygoteSh(t, z, script)
			zygoteAfter(t, z)
			return strings.TrimSpace(out)
		}},
		{"leave files in /dev for the next start", "dev", func(t *testing.T, z *zygote) string {
			zygoteSh(t, z, "touch /dev/planted; echo x > /dev/shm/planted")
			if after := zygoteAfter(t, z); after != "clean" {
				t.Fatalf("the helper is %s", after)
			}
			out, _ := zygoteSh(t, z, "ls /dev/planted /dev/shm/planted 2>/dev/null; true")
			zygoteAfter(t, z)
			return strings.TrimSpace(out)
		}},
		{"leave processes for the next start", "reap", func(t *testing.T, z *zygote) string {
			zygoteSh(t, z, "sleep 1000 >/dev/null 2>&1 & setsid sleep 1000 >/dev/null 2>&1 & (sleep 1000 >/dev/null 2>&1 &) ; echo started")
			if after := zygoteAfter(t, z); after != "clean" {
				t.Fatalf("the helper is %s", after)
			}
			out, _ := zygoteSh(t, z, "for p in /proc/[0-9]*; do [ $p = /proc/1 ] || [ $p = /proc/$$ ] || echo $p; done")
			zygoteAfter(t, z)
			return strings.TrimSpace(out)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.attack(t, testZygote(t, "")); got != "" {
				t.Errorf("claude could: %s", got)
			}
			if got := tc.attack(t, testZygote(t, tc.weaken)); got == "" {
				t.Errorf("against a helper without %q the attack did nothing: the test cannot fail", tc.weaken)
			}
		})
	}
}

// TestZygoteOneClaudeAtATime: a helper refuses a second start while its claude runs, and
// takes one once the first has exited and everything it left is gone, its mount namespace
// too (it lived on claude and the discarded thread only: nothing to unmount in the helper).
func TestZygoteOneClaudeAtATime(t *testing.T) {
	z := testZygote(t, "")
	stdin, stdinW, err := os.Pipe()
	must(t, err)
	defer stdinW.Close()
	defer stdin.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	must(t, err)
	defer devnull.Close()
	p, err := z.run(zygoteRequest{Argv: []string{"/bin/cat"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, stdin, devnull, devnull)
	must(t, err)
	defer p.Release()
	if p.PID() <= 1 {
		t.Errorf("claude's pid as the host sees it: %d", p.PID())
	}
	mnt, err := os.Readlink("/proc/" + strconv.Itoa(p.PID()) + "/ns/mnt")
	must(t, err)
	if own, _ := os.Readlink("/proc/" + strconv.Itoa(z.helperPID()) + "/ns/mnt"); own == mnt {
		t.Fatalf("claude runs in its helper's mount namespace %s", mnt)
	}
	if _, err := z.run(zygoteRequest{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, stdin, devnull, devnull); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("a second start while claude runs: %v", err)
	}
	stdinW.Close()
	if code := p.Wait(); code != 0 {
		t.Fatalf("cat exited %d", code)
	}
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}
	// claude's mount namespace lived on its process and the helper's discarded
	// thread only: no task of the helper is left in it. (Not every task on the
	// machine: once freed, the namespace's number may be another's already, one
	// made by a test beside this one.)
	helper := strconv.Itoa(z.helperPID())
	tasks, _ := filepath.Glob("/proc/" + helper + "/task/[0-9]*/ns/mnt")
	if len(tasks) == 0 {
		t.Fatalf("no tasks of the helper %s", helper)
	}
	for _, task := range tasks {
		if l, _ := os.Readlink(task); l == mnt {
			t.Errorf("%s is still in claude's mount namespace %s", task, mnt)
		}
	}
	if out, code := zygoteSh(t, z, "echo again"); code != 0 || out != "again\n" {
		t.Fatalf("the next start: %d %q", code, out)
	}
}

// TestZygoteEnvLastWins: a variable named twice in a start's environment reaches claude
// once, with its last value and in its last place, as os/exec gives it to bubblewrap per
// start. The runner's
// environment is the host's with the agent's after it (HOME among them): given both,
// claude (node reads the first) ran with the operator's HOME, not the agent's.
func TestZygoteEnvLastWins(t *testing.T) {
	z := testZygote(t, "")
	out, err := os.CreateTemp(t.TempDir(), "out")
	must(t, err)
	defer out.Close()
	devnull, err := os.Open(os.DevNull)
	must(t, err)
	defer devnull.Close()
	p, err := z.run(zygoteRequest{Argv: []string{"/usr/bin/env"}, Env: []string{"HOME=/root", "A=1", "HOME=/agent", "B=2", "NOVALUE"}, Dir: "/", Mounts: zygoteSystem()}, devnull, out, out)
	must(t, err)
	defer p.Release()
	if code := p.Wait(); code != 0 {
		t.Fatalf("env exited %d", code)
	}
	b, err := os.ReadFile(out.Name())
	must(t, err)
	if got, want := strings.Fields(string(b)), []string{"A=1", "HOME=/agent", "B=2", "NOVALUE"}; !slices.Equal(got, want) {
		t.Fatalf("claude's environment %q, want %q", got, want)
	}
}

// TestZygoteSignalAndDeath: Signal reaches claude and what it started; a helper that dies
// fails its running claude's Wait as a crash does.
func TestZygoteSignalAndDeath(t *testing.T) {
	z := testZygote(t, "")
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0) // claude's stdin, stdout and stderr
	must(t, err)
	defer devnull.Close()
	p, err := z.run(zygoteRequest{Argv: []string{"/bin/sh", "-c", "sleep 1000 & wait"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
	must(t, err)
	p.Signal(15)
	if code := p.Wait(); code != 128+15 {
		t.Fatalf("exit after SIGTERM: %d", code)
	}
	p.Release()
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}

	p, err = z.run(zygoteRequest{Argv: []string{"/bin/sleep", "1000"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
	must(t, err)
	defer p.Release()
	must(t, z.cmd.Process.Kill()) // bwrap, and with it its namespace
	if code := p.Wait(); code != -1 {
		t.Fatalf("Wait after the helper died: %d", code)
	}
}

// newZygoteRunner is a runner of sandboxed fake claudes that tries recycled sandboxes
// (ZygoteEnv=1), closed at the test's end; mut, when set, changes its configuration.
func newZygoteRunner(t *testing.T, mut func(*Config)) *Runner {
	t.Helper()
	t.Setenv(ZygoteEnv, "1")
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "state"), 0o700))
	exe, err := os.Executable()
	must(t, err)
	cfg := Config{Command: exe, Workspace: ws, StateDir: t.TempDir(),
		Env:     map[string]string{"FAKE_CLAUDE": "1", "FAKE_CLAUDE_STATE": filepath.Join(ws, "state")},
		Sandbox: SandboxAuto, Timeout: 10 * time.Second, KillGrace: 300 * time.Millisecond}
	if mut != nil {
		mut(&cfg)
	}
	r, err := New(cfg, nil)
	must(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

// newRecycled is a runner whose sandboxed fake claudes start in recycled sandboxes.
func newRecycled(t *testing.T, mut func(*Config)) (*Runner, chan *zygote) {
	t.Helper()
	needZygote(t)
	r := newZygoteRunner(t, mut)
	r.waitZygotes()
	if r.SandboxState() != "bubblewrap (recycled)" || r.zygotes == nil {
		t.Fatalf("sandbox %q", r.SandboxState())
	}
	recycled := make(chan *zygote, 8)
	r.zygotes.mu.Lock()
	r.zygotes.recycled = recycled
	r.zygotes.mu.Unlock()
	return r, recycled
}

// helperOf is the sandbox helper claude (pid, as the host sees it) runs under: its parent.
func helperOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	must(t, err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(f[1])
	must(t, err)
	return ppid
}

// TestZygoteProbeOffTheStart: New does not wait for the sandbox helper's probe start (it
// ran before the host's plugins could start: about 40 ms of every start), nor begins it:
// StartSandboxHelpers does (the host, once started). Meanwhile the status says so, and a
// claude started meanwhile waits for it and runs in the recycled sandbox the probe left.
func TestZygoteProbeOffTheStart(t *testing.T) {
	needZygote(t)
	probing, release := make(chan struct{}), make(chan struct{})
	var probed *zygote
	probeHelper = func(bwrap, exe string) (*zygote, error) {
		close(probing)
		<-release
		z, err := probeZygote(bwrap, exe)
		probed = z
		return z, err
	}
	t.Cleanup(func() { probeHelper = probeZygote })
	r := newZygoteRunner(t, nil)
	// New started nothing of it: the host begins it once its own start is done.
	if st := r.SandboxState(); st != zygoteStarting {
		t.Fatalf("sandbox %q before the helper's probe began, want %q", st, zygoteStarting)
	}
	r.StartSandboxHelpers()
	<-probing // begun, and held back
	if st := r.SandboxState(); st != zygoteStarting {
		t.Fatalf("sandbox %q while the helper's probe runs, want %q", st, zygoteStarting)
	}
	if _, unavailable := SandboxUnavailable(zygoteStarting); unavailable {
		t.Fatalf("%q reads as no sandbox", zygoteStarting)
	}
	done := make(chan Result, 1)
	go func() {
		turn, err := r.Run(context.Background(), TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
		if err != nil {
			done <- Result{Err: &Error{Kind: KindCrash, Detail: err.Error()}}
			return
		}
		done <- turn.Wait()
	}()
	close(release)
	mustOK(t, <-done, "echo: hi")
	if st := r.SandboxState(); st != "bubblewrap (recycled)" {
		t.Fatalf("sandbox %q after the probe", st)
	}
	// probed was set before the decision that the turn waited for; it was stopped (no
	// helper is kept idle for a turn that may never come), and claude runs in a recycled
	// sandbox of its own.
	if probed == nil || probed.alive() {
		t.Fatal("the probe's helper is still running")
	}
	if h := helperOf(t, r.Warm()["a"]); h == probed.helperPID() || !isHelper(h) {
		t.Errorf("claude runs under %d, not a recycled sandbox's helper", h)
	}
}

// TestZygoteIdleHostHoldsNoHelper (issue 84, the idle host): once the helper's probe start
// decided that the agent's claudes start in recycled sandboxes, no sandbox helper runs
// until the first claude starts; that start starts one and works.
func TestZygoteIdleHostHoldsNoHelper(t *testing.T) {
	r, _ := newRecycled(t, nil) // the probe ran, and passed
	if n := helperProcs(t); len(n) != 0 {
		t.Fatalf("an idle runner holds sandbox helpers %v", n)
	}
	r.zygotes.mu.Lock()
	idle, started := len(r.zygotes.idle[zygoteKeyOf(&r.cfg)]), r.zygotes.started
	r.zygotes.mu.Unlock()
	if idle != 0 || started != 0 {
		t.Fatalf("an idle runner's pool: %d idle, %d started", idle, started)
	}
	mustOK(t, runTurn(t, r, TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"}), "echo: hi")
	if h := helperOf(t, r.Warm()["a"]); !isHelper(h) {
		t.Fatalf("claude runs under %d, not a sandbox helper", h)
	}
	if n := helperProcs(t); len(n) == 0 {
		t.Fatal("helperProcs finds no helper beside a running claude: it could not fail above")
	}
}

// isHelper reports whether pid runs the sandbox helper (its argv[1] is ZygoteArg).
func isHelper(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	args := strings.Split(string(b), "\x00")
	return err == nil && len(args) >= 2 && args[1] == ZygoteArg
}

// helperProcs are the sandbox helpers (and the bubblewraps that run them) among this test
// process's descendants.
func helperProcs(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	must(t, err)
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 1 {
				parent[pid], _ = strconv.Atoi(f[1])
			}
		}
	}
	var out []int
	for pid := range parent {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if !strings.Contains(string(cmd), ZygoteArg) {
			continue
		}
		for a := parent[pid]; a > 1; a = parent[a] {
			if a == os.Getpid() {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// TestZygotePool: the next start of an agent's claude runs in the sandbox the last one
// left, once that is empty again; claudes running at once never share one.
func TestZygotePool(t *testing.T) {
	r, recycled := newRecycled(t, nil)
	// Two warm claudes at once: two sandboxes.
	res1 := runTurn(t, r, TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
	mustOK(t, res1, "echo: hi")
	res2 := runTurn(t, r, TurnRequest{Key: "b", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
	mustOK(t, res2, "echo: hi")
	warm := r.Warm()
	ha, hb := helperOf(t, warm["a"]), helperOf(t, warm["b"])
	if ha == hb {
		t.Fatalf("two claudes run under one sandbox helper (%d)", ha)
	}
	// a's claude ends; its sandbox, emptied, takes the next start.
	r.mu.Lock()
	p := r.procs["a"]
	r.removeLocked(p)
	r.mu.Unlock()
	r.stopAsync(p)
	var z *zygote
	select {
	case z = <-recycled:
	case <-time.After(zygoteTimeout):
		t.Fatal("a's sandbox never went back to the pool")
	}
	if z.helperPID() != ha {
		t.Fatalf("the pool got back helper %d, a ran under %d", z.helperPID(), ha)
	}
	res3 := runTurn(t, r, TurnRequest{Key: "c", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
	mustOK(t, res3, "echo: hi")
	if hc := helperOf(t, r.Warm()["c"]); hc != ha {
		t.Errorf("c's claude runs under helper %d, not the recycled %d", hc, ha)
	}
	// a's, a's spare (b's) and b's spare: c's start, recycled, started none.
	r.zygotes.mu.Lock()
	started := r.zygotes.started
	r.zygotes.mu.Unlock()
	if started > 3 {
		t.Errorf("%d helpers started for three claudes, one of them recycled", started)
	}
}

// TestZygoteNextChatAfterEviction: a warm claude evicted to make room gives its sandbox back
// to the agent's pool (no spare is started meanwhile: the evicted one's comes back), and
// the next chat's claude that starts in it meets nothing the
// evicted one left: not a process it left running in the background (in a session of its
// own, out of claude's process group), not a file in any place it could write outside the
// agent's workspace (/dev/shm, its TMPDIR, the hidden trees' tmpfs), not a System V shared
// memory segment it made. The attack runs against the helper and against one built without
// the defences it meets (zygoteWeaken "reap,dev,ipc"), where chat C must meet all three:
// the test can fail.
func TestZygoteNextChatAfterEviction(t *testing.T) {
	// A's System V shared memory segment, by a key of this test's; without the helper's
	// IPC namespace per start it is the host's: removed at the end.
	shmKey := fmt.Sprintf("0x7c%06x", os.Getpid()&0xffffff)
	t.Cleanup(func() { _ = exec.Command("ipcrm", "-M", shmKey).Run() })
	for _, tool := range []string{"ipcs", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("no " + tool)
		}
	}
	for _, weaken := range []string{"", "reap,dev,ipc"} {
		t.Run("weaken="+weaken, func(t *testing.T) {
			if weaken != "" && os.Geteuid() != 0 {
				// As any other user claude's own user namespace stands in the way of each
				// attack too: the weakened helper leaves it out as well.
				weaken += ",userns"
			}
			zygoteTestEnv = []string{"ZYGOTE_WEAKEN=" + weaken}
			t.Cleanup(func() { zygoteTestEnv = nil })
			// The agent's own state (its workspace, claude's config directory) is
			// every chat's: not what this test looks for. With no config directory
			// claude's would be the host's HOME, writable.
			shared := t.TempDir()
			r, recycled := newRecycled(t, func(c *Config) { c.MaxWarm, c.ConfigDir = 1, shared })
			ws := r.cfg.Workspace
			marker := "left-" + strconv.Itoa(os.Getpid())
			split := func(s string) string { return s[:3] + `""` + s[3:] } // a script's own command line never matches
			// Every place chat A can write: the top of each writable mount (the
			// hidden trees' tmpfs, /dev/shm, its TMPDIR's, the workspace) and its TMPDIR.
			plant := `sh:n=0; for d in $(awk '$6 ~ /^rw/ {print $5}' /proc/self/mountinfo) "$TMPDIR"; do touch "$d/.` + split(marker) + `" 2>/dev/null && n=$((n+1)); done
setsid sh -c 'sleep 1000; true "$0"' ` + split(marker) + ` </dev/null >/dev/null 2>&1 &
python3 -c 'import ctypes; ctypes.CDLL(None).shmget(` + shmKey + `, 4096, 0o1666)' && ipcs -m | grep -qi ` + shmKey + ` && n=$((n+1))
echo "planted $n tmpdir $TMPDIR"`
			res := runTurn(t, r, TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: plant})
			if res.Err != nil || !regexp.MustCompile(`planted [1-9]`).MatchString(res.Text) {
				t.Fatalf("chat A's plant: %v %q", res.Err, res.Text)
			}
			ha := helperOf(t, r.Warm()["a"])
			started := func() int {
				r.zygotes.mu.Lock()
				defer r.zygotes.mu.Unlock()
				return r.zygotes.started
			}
			// The spare A's start made for the next one is there (started off A's
			// path): from here on, none is needed.
			k := zygoteKeyOf(r.profile(""))
			for deadline := time.Now().Add(zygoteTimeout); ; time.Sleep(5 * time.Millisecond) {
				r.zygotes.mu.Lock()
				ready := !r.zygotes.filling[k] && len(r.zygotes.idle[k]) == 1
				r.zygotes.mu.Unlock()
				if ready {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("A's start made no spare")
				}
			}
			before := started()
			// B's start evicts A's warm claude (max_warm 1); A's sandbox, emptied, goes
			// back to the pool.
			mustOK(t, runTurn(t, r, TurnRequest{Key: "b", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"}), "echo: hi")
			for z := range recycled {
				if z.helperPID() == ha {
					break
				}
			}
			tmpA := regexp.MustCompile(`tmpdir (\S+)`).FindStringSubmatch(res.Text)[1]
			look := `sh:find $(awk '{print $5}' /proc/self/mountinfo) ` + tmpA + ` -maxdepth 2 -name ".` + split(marker) + `" 2>/dev/null | grep -v -e "^` + ws + `/" -e "^` + shared + `/" | sed 's/^/F /'
for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done > "$TMPDIR/ps"
grep -F ` + split(marker) + ` "$TMPDIR/ps" | sed 's/^/P /'
ipcs -m | grep -i ` + shmKey + ` | sed 's/^/I /'
echo looked`
			hb := helperOf(t, r.Warm()["b"])
			res = runTurn(t, r, TurnRequest{Key: "c", SessionID: uuid.NewString(), NewSession: true, Prompt: look})
			if res.Err != nil || !strings.Contains(res.Text, "looked") {
				t.Fatalf("chat C's look: %v %q", res.Err, res.Text)
			}
			if hc := helperOf(t, r.Warm()["c"]); hc != ha {
				t.Fatalf("chat C's claude runs under helper %d, not chat A's evicted %d: the reuse was not tested", hc, ha)
			}
			// B's start evicted A's claude, C's B's: their sandboxes, not new spares,
			// are the next starts'.
			for z := range recycled {
				if z.helperPID() == hb {
					break
				}
			}
			if n := started() - before; n != 0 {
				t.Errorf("B's and C's starts, each evicting a warm claude, started %d helpers: the evicted one's sandbox comes back", n)
			}
			var met []string
			for _, l := range strings.Split(res.Text, "\n") {
				if strings.HasPrefix(l, "F ") || strings.HasPrefix(l, "P ") || strings.HasPrefix(l, "I ") {
					met = append(met, l)
				}
			}
			kinds := map[byte]bool{}
			for _, l := range met {
				kinds[l[0]] = true
			}
			switch {
			case weaken == "" && len(met) > 0:
				t.Errorf("chat C met what chat A left in the sandbox:\n%s", strings.Join(met, "\n"))
			case weaken != "" && !(kinds['F'] && kinds['P'] && kinds['I']):
				t.Errorf("against a helper without %q chat C met only %q: the test cannot fail", weaken, met)
			}
		})
	}
}

// TestZygoteFallback: a bubblewrap without --as-pid-1 cannot run the helper; claude then
// gets a bubblewrap per start, and the sandbox state says so and why.
func TestZygoteFallback(t *testing.T) {
	needZygote(t)
	real, err := exec.LookPath(bwrapCommand)
	must(t, err)
	bin := t.TempDir()
	sdktest.WriteExecutable(t, filepath.Join(bin, "bwrap"), []byte(`#!/bin/sh
for a in "$@"; do [ "$a" = --as-pid-1 ] && { echo "bwrap: Unknown option --as-pid-1" >&2; exit 1; }; done
exec `+real+` "$@"
`), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	r := newZygoteRunner(t, nil)
	r.waitZygotes()
	st := r.SandboxState()
	if !strings.HasPrefix(st, "bubblewrap (per start: the sandbox helper failed") || !strings.Contains(st, "--as-pid-1") {
		t.Fatalf("sandbox %q", st)
	}
	if _, unavailable := SandboxUnavailable(st); unavailable {
		t.Errorf("%q reads as no sandbox", st)
	}
	res := runTurn(t, r, TurnRequest{Key: "k", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
	mustOK(t, res, "echo: hi")
	if pp := parentCmdline(t, r.Warm()["k"]); strings.Contains(pp, ZygoteArg) {
		t.Errorf("claude runs under the helper: %q", pp)
	}
}

// TestZygoteWanted: recycled sandboxes are tried by default in a binary that is a helper
// (EnableSandboxHelper: clawhost's, this test binary), never by default in one that is
// not; CLAWHOST_SANDBOX_HELPER=0 makes every sandbox per start and says so, =1 tries them
// in any binary.
func TestZygoteWanted(t *testing.T) {
	defer helperBinary.Store(helperBinary.Load())
	for _, tc := range []struct {
		env     string
		helper  bool
		want    bool
		why     string
		comment string
	}{
		{"", true, true, "", "the default in clawhost"},
		{"", false, false, "", "a binary that is no helper"},
		{"0", true, true, "CLAWHOST_SANDBOX_HELPER=0", "the escape hatch"},
		{"0", false, true, "CLAWHOST_SANDBOX_HELPER=0", "the escape hatch, said in any binary"},
		{"1", false, true, "", "forced (tests)"},
		{"yes", true, true, "", "anything else is the default"},
	} {
		t.Setenv(ZygoteEnv, tc.env)
		helperBinary.Store(tc.helper)
		if want, why := zygoteWanted(); want != tc.want || why != tc.why {
			t.Errorf("%s (%q, helper %v): %v %q, want %v %q", tc.comment, tc.env, tc.helper, want, why, tc.want, tc.why)
		}
	}
}

// TestHelperExecutable: recycled sandboxes run clawhost-sandbox from beside the host's
// executable when it is an executable file there, else the host's executable.
func TestHelperExecutable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	host := filepath.Join(dir, "clawhost")
	sdktest.WriteExecutable(t, host, nil, 0o755)
	if got := helperExecutable(host); got != host {
		t.Errorf("without a helper beside it: %s", got)
	}
	helper := filepath.Join(dir, helperName)
	must(t, os.WriteFile(helper, nil, 0o644))
	if got := helperExecutable(host); got != host {
		t.Errorf("with a helper that is not executable: %s", got)
	}
	must(t, os.Chmod(helper, 0o755))
	if got := helperExecutable(host); got != helper {
		t.Errorf("with the helper beside it: %s", got)
	}
}

// BenchmarkRecycledTurns: 200 turns, each starting a fake claude (a new session; 4 at
// once over 40 chats, max_warm 2), with sandbox = "off", bubblewrap per start and recycled
// sandboxes, rounds interleaved; reported: each one's wall time and the two sandboxed
// ones' throughput as a share of "off"'s (the runner's part of BenchmarkLoadTelegramSandbox,
// without the host around it).
//
//	go test ./core/runner -run '^$' -bench RecycledTurns -benchtime 3x
func BenchmarkRecycledTurns(b *testing.B) {
	needBwrap(b)
	if why := zygoteUnsupported(); why != "" {
		b.Skip(why)
	}
	helpers := 0 // helpers the recycled runs started
	run := func(helper, mode string) time.Duration {
		b.Setenv(ZygoteEnv, helper)
		ws := b.TempDir()
		must(b, os.MkdirAll(filepath.Join(ws, "state"), 0o700))
		exe, err := os.Executable()
		must(b, err)
		r, err := New(Config{Command: exe, Workspace: ws, StateDir: b.TempDir(), MaxWarm: 2,
			Env:     map[string]string{"FAKE_CLAUDE": "1", "FAKE_CLAUDE_STATE": filepath.Join(ws, "state")},
			Sandbox: mode, Timeout: 10 * time.Second, KillGrace: 300 * time.Millisecond}, nil)
		must(b, err)
		defer func() { _ = r.Close(context.Background()) }()
		if zp := r.zygotes; zp != nil {
			defer func() {
				zp.mu.Lock()
				helpers += zp.started
				zp.mu.Unlock()
			}()
		}
		start := time.Now()
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					res := runTurn(b, r, TurnRequest{Key: "k" + strconv.Itoa(w*100+i%10), SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
					if res.Err != nil {
						b.Error(res.Err)
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	var off, per, rec []time.Duration
	for range b.N {
		off = append(off, run("0", SandboxOff))
		per = append(per, run("0", SandboxAuto))
		rec = append(rec, run("1", SandboxAuto))
	}
	med := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	o, p, c := med(off), med(per), med(rec)
	b.ReportMetric(float64(o.Milliseconds()), "off-ms")
	b.ReportMetric(float64(p.Milliseconds()), "per-start-ms")
	b.ReportMetric(float64(c.Milliseconds()), "recycled-ms")
	b.ReportMetric(100*float64(o)/float64(p), "per-start-ratio-%")
	b.ReportMetric(100*float64(o)/float64(c), "recycled-ratio-%")
	b.ReportMetric(float64(helpers)/float64(b.N), "helpers-started/run")
}

// TestZygoteManyStarts: many starts, in several helpers at once, of a short process each,
// with pipes as spawnRecycled passes them: every start starts, and what each wrote reaches
// its own reader. The helpers collect garbage at nearly every start (GOGC=1), as a busy
// one does: a descriptor the collector closes behind a start (a finalizer of a file
// another start's descriptor number was reused for) fails a start with EBADF or sends its
// output elsewhere.
func TestZygoteManyStarts(t *testing.T) {
	bwrap := needZygote(t)
	exe, err := os.Executable()
	must(t, err)
	zygoteTestEnv = []string{"ZYGOTE_WEAKEN=", "GOGC=1"}
	t.Cleanup(func() { zygoteTestEnv = nil })
	const helpers, starts = 3, 400
	var wg sync.WaitGroup
	errs := make(chan string, helpers*starts)
	for h := range helpers {
		z, err := startZygote(bwrap, exe)
		must(t, err)
		t.Cleanup(z.stop)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range starts {
				if msg := zygoteEchoOnce(z, fmt.Sprintf("start-%d-%d", h, i)); msg != "" {
					errs <- msg
					if !z.alive() {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var failed []string
	for e := range errs {
		failed = append(failed, e)
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d starts failed, e.g.:\n%s", len(failed), helpers*starts, strings.Join(failed[:min(len(failed), 10)], "\n"))
	}
}

// zygoteEchoOnce starts echo token in z with fresh pipes and says what went wrong ("" for
// nothing): the start, its exit, its output, or the helper not taking the next start.
func zygoteEchoOnce(z *zygote, token string) string {
	inR, inW, err := os.Pipe()
	if err != nil {
		return err.Error()
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		return err.Error()
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		outW.Close()
		return err.Error()
	}
	defer errR.Close()
	// Mounts as a chat's start makes (a few): the start takes its time between receiving
	// its descriptors and passing them on.
	mounts := zygoteSystem()
	for _, p := range []string{"/var", "/opt", "/srv", "/root"} {
		mounts = append(mounts, zygoteMount{Path: p, Op: opReadOnly, Dir: true})
	}
	p, err := z.run(zygoteRequest{Argv: []string{"/bin/echo", token}, Env: []string{}, Dir: "/", Mounts: mounts}, inR, outW, errW)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		return token + ": start: " + err.Error()
	}
	defer p.Release()
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(outR)
		got <- string(b)
	}()
	var out string
	select {
	case out = <-got:
	case <-time.After(zygoteTimeout):
		// Someone else holds the write end: the reader would block; end it.
		outR.Close()
		out = "(no end of output in " + zygoteTimeout.String() + ")"
	}
	code := p.Wait()
	msg := ""
	if out != token+"\n" || code != 0 {
		msg = fmt.Sprintf("%s: exit %d, output %q", token, code, out)
	}
	select {
	case <-z.clean:
	case <-z.dead:
		return msg + "; the helper ended: " + strings.TrimSpace(z.stderr.String())
	case <-time.After(zygoteTimeout):
		return msg + "; the helper never took the next start"
	}
	return msg
}

// TestZygoteSignalAfterRelease: a claude's Signal after its Release (a kill after an
// abort, once claude had exited and been reaped) does not reach the next start in the
// same sandbox — another chat's claude: the helper signals whichever claude it runs.
func TestZygoteSignalAfterRelease(t *testing.T) {
	z := testZygote(t, "")
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	must(t, err)
	defer devnull.Close()
	first, err := z.run(zygoteRequest{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
	must(t, err)
	if code := first.Wait(); code != 0 {
		t.Fatalf("true exited %d", code)
	}
	first.Release()
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}
	stdin, stdinW, err := os.Pipe()
	must(t, err)
	defer stdin.Close()
	defer stdinW.Close()
	next, err := z.run(zygoteRequest{Argv: []string{"/bin/cat"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, stdin, devnull, devnull)
	must(t, err)
	defer next.Release()
	first.Signal(syscall.SIGKILL)
	// A start while cat runs is refused: its reply says the helper read every request
	// before it, the signal's too.
	if _, err := z.run(zygoteRequest{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("a second start while cat runs: %v", err)
	}
	stdinW.Close()
	if code := next.Wait(); code != 0 {
		t.Fatalf("the next start's claude exited %d: the released one's signal reached it", code)
	}
}

// TestZygoteCloseWaitsForTheSandboxes: when the runner's Close returns, the sandboxes are
// gone — the helpers of the claudes it stopped and the spares — not on their way out: a
// host exits right after, and a sandbox still tearing down could write to a chat's state
// as its directory is removed (make test saw TestAgentEndAcrossKill9's data/claude not
// empty at its cleanup once recycled sandboxes were the default).
func TestZygoteCloseWaitsForTheSandboxes(t *testing.T) {
	r, _ := newRecycled(t, nil)
	mustOK(t, runTurn(t, r, TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"}), "echo: hi")
	mustOK(t, runTurn(t, r, TurnRequest{Key: "b", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"}), "echo: hi")
	warm := r.Warm()
	pids := []int{warm["a"], warm["b"], helperOf(t, warm["a"]), helperOf(t, warm["b"])}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			t.Errorf("process %d outlived the runner's Close: %s", pid, b)
		}
	}
}

// TestZygoteRealHelperCaps: the helper as clawhost ships it (built without cgo, where
// narrowBounding drops the capabilities no start keeps from every thread once, at the
// helper's start; the test binary, with cgo, cannot and drops them per start): claude
// holds none beyond a root claude's file permissions, its bounding set included, and has
// no new privileges.
func TestZygoteRealHelperCaps(t *testing.T) {
	bwrap := needZygote(t)
	z, err := startZygote(bwrap, shippedHelper(t))
	must(t, err)
	t.Cleanup(z.stop)
	// Bnd: as root the five file-permission capabilities at most (0x1f); as any other
	// user claude's own user namespace has the kernel's full set, which no exec can use
	// (TestZygoteBoundary's "caps").
	script := `grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status | grep -Ev '00000000000000(00|1f)$'; grep -q '^NoNewPrivs:.*1' /proc/self/status || echo NEW-PRIVILEGES; true`
	if os.Geteuid() != 0 {
		script = `grep -E '^Cap(Inh|Prm|Eff|Amb):' /proc/self/status | grep -Ev '0000000000000000$'; grep -q '^NoNewPrivs:.*1' /proc/self/status || echo NEW-PRIVILEGES; true`
	}
	for i := range 3 { // the start threads after the first: made by the runtime later
		out, code := zygoteSh(t, z, script)
		if code != 0 || strings.TrimSpace(out) != "" {
			t.Fatalf("start %d: claude holds (exit %d):\n%s", i+1, code, out)
		}
		if after := zygoteAfter(t, z); after != "clean" {
			t.Fatalf("start %d: the helper is %s", i+1, after)
		}
	}
	// The helper's own bounding set, narrowed: its threads keep what starts may keep.
	if os.Geteuid() == 0 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", z.helperPID()))
		must(t, err)
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
				n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				must(t, err)
				if n&^uint64(zygoteMayKeep) != 0 {
					t.Errorf("the helper's bounding set is %x, more than %x: narrowBounding did nothing", n, uint64(zygoteMayKeep))
				}
			}
		}
	}
}

// zygoteShippedEnv names, in TestZygoteUnprivileged's run as nobody, the copy of the
// shipped helper the root run made for it.
const zygoteShippedEnv = "CLAWHOST_ZYGOTE_SHIPPED"

// shippedHelper is the helper as clawhost ships it: CLAWHOST_BIN_DIR's clawhost-sandbox
// (make test), the copy TestZygoteUnprivileged hands its run as nobody, or one built here
// without cgo.
func shippedHelper(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(zygoteShippedEnv); p != "" {
		return p
	}
	if dir := os.Getenv("CLAWHOST_BIN_DIR"); dir != "" {
		return filepath.Join(dir, "clawhost-sandbox")
	}
	exe := filepath.Join(t.TempDir(), "clawhost-sandbox")
	build := exec.Command("go", "build", "-o", exe, "github.com/clawhost/clawhost/core/cmd/clawhost-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// pidOfPidfd asks the kernel, pidFromFdinfo reads /proc: both name the process the pidfd
// refers to.
func TestPidOfPidfd(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	fd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	must(t, err)
	defer unix.Close(fd)
	if got := pidOfPidfd(fd); got != cmd.Process.Pid {
		t.Errorf("pidOfPidfd = %d, want %d", got, cmd.Process.Pid)
	}
	if got := pidFromFdinfo(fd); got != cmd.Process.Pid {
		t.Errorf("pidFromFdinfo = %d, want %d", got, cmd.Process.Pid)
	}
	if got := pidOfPidfd(-1); got != 0 {
		t.Errorf("pidOfPidfd(-1) = %d", got)
	}
}
