//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/asnobody"
	"github.com/clawhost/clawhost/core/sandbox/helper"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// zygoteTimeout bounds each wait on a helper in these tests.
const zygoteTimeout = 20 * time.Second

// needZygote skips a test of the sandbox helper where it cannot run (no bwrap, not root).
func needZygote(t testing.TB) string {
	t.Helper()
	needBwrap(t)
	if why := HelperUnsupported(); why != "" {
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
	if weaken != "" && weaken != "prepare" && os.Geteuid() != 0 {
		// As any other user claude's own user namespace stands in the way of each
		// attack too: the weakened helper leaves it out as well.
		weaken += ",userns"
	}
	Testing.HelperEnv = []string{"ZYGOTE_WEAKEN=" + weaken}
	t.Cleanup(func() { Testing.HelperEnv = nil })
	z, err := startZygote(bwrap, exe, nil, nil)
	must(t, err)
	t.Cleanup(z.stop)
	return z
}

// zygoteSh runs script with /bin/sh as claude in z and returns what it wrote (stdout and
// stderr) and its exit status, once it exited; "HELPER-ENDED" when the helper ended before
// it answered the start (a broken one the script killed at once).
func zygoteSh(t *testing.T, z *zygote, script string) (string, int) {
	t.Helper()
	return zygoteRun(t, z, helper.Request{Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Dir: "/", Mounts: zygoteSystem()})
}

// zygoteRun is zygoteSh for any request.
func zygoteRun(t *testing.T, z *zygote, req helper.Request) (string, int) {
	t.Helper()
	out, code, _ := zygoteRunPrepared(t, z, req)
	return out, code
}

// zygoteRunPrepared is zygoteRun that also says whether the helper had made the start
// ahead (core/sandbox/helper).
func zygoteRunPrepared(t *testing.T, z *zygote, req helper.Request) (string, int, bool) {
	t.Helper()
	out, code, p := zygoteRunProc(t, z, req)
	return out, code, p != nil && p.prepared
}

// zygoteRunProc is zygoteRun that also returns claude's process as the helper started it
// (released; nil when the helper ended before it answered).
func zygoteRunProc(t *testing.T, z *zygote, req helper.Request) (string, int, *zygoteProc) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	must(t, err)
	defer out.Close()
	devnull, err := os.Open(os.DevNull)
	must(t, err)
	defer devnull.Close()
	p, err := z.run(req, devnull, out, out)
	if err != nil && !z.alive() {
		return "HELPER-ENDED", -1, nil
	}
	must(t, err)
	defer p.Release()
	code := p.Wait()
	b, err := os.ReadFile(out.Name())
	must(t, err)
	return string(b), code, p
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
			return plantThenLook(t, z, "touch /dev/planted; echo x > /dev/shm/planted", "ls /dev/planted /dev/shm/planted 2>/dev/null; true")
		}},
		{"leave processes for the next start", "reap", func(t *testing.T, z *zygote) string {
			return plantThenLook(t, z, "sleep 1000 >/dev/null 2>&1 & setsid sleep 1000 >/dev/null 2>&1 & (sleep 1000 >/dev/null 2>&1 &) ; echo started", "for p in /proc/[0-9]*; do [ $p = /proc/1 ] || [ $p = /proc/$$ ] || echo $p; done")
		}},
	}
	// Each start made ahead (core/sandbox/helper), and each made when asked.
	for _, how := range []string{"", "prepare"} {
		for _, tc := range cases {
			t.Run(strings.TrimSpace(tc.name+" "+strings.ReplaceAll(how, "prepare", "unprepared")), func(t *testing.T) {
				if got := tc.attack(t, testZygote(t, how)); got != "" {
					t.Errorf("claude could: %s", got)
				}
				weaken := strings.Trim(tc.weaken+","+how, ",")
				if got := tc.attack(t, testZygote(t, weaken)); got == "" {
					t.Errorf("against a helper without %q the attack did nothing: the test cannot fail", weaken)
				}
			})
		}
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
	p, err := z.run(helper.Request{Argv: []string{"/bin/cat"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, stdin, devnull, devnull)
	must(t, err)
	defer p.Release()
	if p.PID() <= 1 {
		t.Errorf("claude's pid as the host sees it: %d", p.PID())
	}
	mnt, err := os.Readlink("/proc/" + strconv.Itoa(p.PID()) + "/ns/mnt")
	must(t, err)
	// Held open, the namespace keeps its number to the end of the test: the next
	// start's namespace, made ahead once this one is clean, cannot take it.
	held, err := os.Open("/proc/" + strconv.Itoa(p.PID()) + "/ns/mnt")
	must(t, err)
	defer held.Close()
	if own, _ := os.Readlink("/proc/" + strconv.Itoa(z.helperPID()) + "/ns/mnt"); own == mnt {
		t.Fatalf("claude runs in its helper's mount namespace %s", mnt)
	}
	if _, err := z.run(helper.Request{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, stdin, devnull, devnull); err == nil || !strings.Contains(err.Error(), "already") {
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
	p, err := z.run(helper.Request{Argv: []string{"/usr/bin/env"}, Env: []string{"HOME=/root", "A=1", "HOME=/agent", "B=2", "NOVALUE"}, Dir: "/", Mounts: zygoteSystem()}, devnull, out, out)
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
	p, err := z.run(helper.Request{Argv: []string{"/bin/sh", "-c", "sleep 1000 & wait"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
	must(t, err)
	p.Signal(15)
	if code := p.Wait(); code != 128+15 {
		t.Fatalf("exit after SIGTERM: %d", code)
	}
	p.Release()
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}

	p, err = z.run(helper.Request{Argv: []string{"/bin/sleep", "1000"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
	must(t, err)
	defer p.Release()
	must(t, z.cmd.Process.Kill()) // bwrap, and with it its namespace
	if code := p.Wait(); code != -1 {
		t.Fatalf("Wait after the helper died: %d", code)
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
		if want, why := HelperWanted(); want != tc.want || why != tc.why {
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
	if got := HelperExecutable(host); got != host {
		t.Errorf("without a helper beside it: %s", got)
	}
	helper := filepath.Join(dir, helperName)
	must(t, os.WriteFile(helper, nil, 0o644))
	if got := HelperExecutable(host); got != host {
		t.Errorf("with a helper that is not executable: %s", got)
	}
	must(t, os.Chmod(helper, 0o755))
	if got := HelperExecutable(host); got != helper {
		t.Errorf("with the helper beside it: %s", got)
	}
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
	Testing.HelperEnv = []string{"ZYGOTE_WEAKEN=", "GOGC=1"}
	t.Cleanup(func() { Testing.HelperEnv = nil })
	const helpers, starts = 3, 400
	var wg sync.WaitGroup
	errs := make(chan string, helpers*starts)
	for h := range helpers {
		z, err := startZygote(bwrap, exe, nil, nil)
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
		mounts = append(mounts, helper.Mount{Path: p, Op: opReadOnly, Dir: true})
	}
	p, err := z.run(helper.Request{Argv: []string{"/bin/echo", token}, Env: []string{}, Dir: "/", Mounts: mounts}, inR, outW, errW)
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
	first, err := z.run(helper.Request{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
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
	next, err := z.run(helper.Request{Argv: []string{"/bin/cat"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, stdin, devnull, devnull)
	must(t, err)
	defer next.Release()
	first.Signal(syscall.SIGKILL)
	// A start while cat runs is refused: its reply says the helper read every request
	// before it, the signal's too.
	if _, err := z.run(helper.Request{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull); err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("a second start while cat runs: %v", err)
	}
	stdinW.Close()
	if code := next.Wait(); code != 0 {
		t.Fatalf("the next start's claude exited %d: the released one's signal reached it", code)
	}
}

// TestZygoteRealHelperCaps: the helper as clawhost ships it (built without cgo, where
// narrowBounding drops the capabilities no start keeps from every thread once, at the
// helper's start; the test binary, with cgo, cannot and drops them per start): claude
// holds none beyond a root claude's file permissions, its bounding set included, and has
// no new privileges.
func TestZygoteRealHelperCaps(t *testing.T) {
	bwrap := needZygote(t)
	z, err := startZygote(bwrap, asnobody.ShippedHelper(t), nil, nil)
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
				if n&^uint64(helper.MayKeep) != 0 {
					t.Errorf("the helper's bounding set is %x, more than %x: narrowBounding did nothing", n, uint64(helper.MayKeep))
				}
			}
		}
	}
}

// plantThenLook runs plant in one start of z, which must leave the helper
// clean, then look in the next: what look prints (trimmed) is what the
// first start left for the second.
func plantThenLook(t *testing.T, z *zygote, plant, look string) string {
	t.Helper()
	zygoteSh(t, z, plant)
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}
	out, _ := zygoteSh(t, z, look)
	zygoteAfter(t, z)
	return strings.TrimSpace(out)
}
