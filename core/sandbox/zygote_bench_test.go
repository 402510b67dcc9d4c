//go:build linux

package sandbox

// A measurement for issue 58 ("the sandbox paid once"), not a feature: what a claude start
// would cost inside a long-lived sandbox — one bubblewrap (pid namespace, /dev, /proc, the
// root) started once, a helper inside it that, per start, unshares a mount namespace on a
// locked thread, makes the same mount list bubblewrap makes today (the chat's, from
// sandboxSpecFor: hidden trees, TMPDIR, the chat's claude state, the workspace), then
// forks and execs the command without capabilities — beside bubblewrap per start, in one
// run:
//
//	go test -run '^$' -bench SandboxZygote -benchtime 300x ./core/sandbox
//
// Each row reports wall time per start (ns/op); plain (/bin/true started by the host, no
// sandbox) and the zygote rows also cpu-us/start, the CPU of every process involved (the
// helper, its threads and /bin/true; bwrap's one start spread over all) per start.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/sandbox/helper"
	"golang.org/x/sys/unix"
)

// zygoteSpike is the helper (ZYGOTE_SPIKE=1, run by BenchmarkSandboxZygote and
// TestZygoteSpikeSameView inside one bwrap): ZYGOTE_SPIKE_N starts of the command
// ZYGOTE_SPIKE_ARGV (JSON; /bin/true without), each in a fresh mount namespace with the
// mounts of ZYGOTE_SPIKE_MOUNTS (none: the bare fork and exec from a locked thread), in
// ZYGOTE_SPIKE_DIR. The command's output goes to the helper's stderr; the helper writes
// its CPU time, in ns, to stdout.
func zygoteSpike() int {
	n, _ := strconv.Atoi(os.Getenv("ZYGOTE_SPIKE_N"))
	var ms []helper.Mount
	if err := json.Unmarshal([]byte(os.Getenv("ZYGOTE_SPIKE_MOUNTS")), &ms); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	argv := []string{"/bin/true"}
	if a := os.Getenv("ZYGOTE_SPIKE_ARGV"); a != "" {
		if err := json.Unmarshal([]byte(a), &argv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	dir := os.Getenv("ZYGOTE_SPIKE_DIR")
	for range n {
		errc := make(chan error, 1)
		go func() {
			// Never unlocked: the thread, with its mount namespace, ends with the goroutine.
			runtime.LockOSThread()
			errc <- zygoteSpikeStart(ms, dir, argv)
		}()
		if err := <-errc; err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// Its own CPU and its commands': its parent, bwrap's init, does not pass them on.
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	fmt.Println(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
	return 0
}

// zygoteSpikeStart is one start on the calling (locked) thread: the sources are opened
// before anything is mounted (a hidden tree may hold them, as bwrap reads them from the old
// root), the mounts made, the thread's capabilities dropped (bounding set, no new
// privileges, capset to none: the command, exec'd by this thread, has none), then the fork
// and exec.
func zygoteSpikeStart(ms []helper.Mount, dir string, argv []string) error {
	if len(ms) > 0 {
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
			return fmt.Errorf("unshare: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			return fmt.Errorf("private: %w", err)
		}
	}
	if err := helper.MountEach(ms); err != nil {
		return err
	}
	for c := 0; ; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			break // past the last capability
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no new privs: %w", err)
	}
	var none [2]unix.CapUserData // version 3: two words of each set
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Run()
}

// zygoteSpikeSetup is a direct chat's sandbox, with its own claude state, as the runner's
// BenchmarkSandboxStart makes it: its Policy, launch and state directory (the runner's
// <data>/runner).
func zygoteSpikeSetup(tb testing.TB) (string, Policy, Launch) {
	data, ws := tb.TempDir(), tb.TempDir()
	cfgDir := filepath.Join(data, "claude")
	for _, d := range []string{cfgDir, filepath.Join(data, "runner", "t", "1"), filepath.Join(ws, ".claude")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	for _, f := range []string{".claude.json", "settings.json"} {
		if err := os.WriteFile(filepath.Join(cfgDir, f), []byte(`{"userID":"x","projects":{}}`), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	c := Policy{Workspace: ws, Hide: []string{data}}
	l := Launch{Tmp: filepath.Join(data, "runner", "t", "1"), Env: []string{"HOME=" + data, "CLAUDE_CONFIG_DIR=" + cfgDir},
		ChatState: filepath.Join(data, "runner", "chats", "spike")}
	return filepath.Join(data, "runner"), c, l
}

// spikeSandboxed is bwrap's argv per start for l running path with args, what l binds made
// first (the runner's preparation, reduced to the directories).
func spikeSandboxed(tb testing.TB, c Policy, l Launch, path string, args []string) (string, []string) {
	tb.Helper()
	dirs := []string{filepath.Join(c.Workspace, ".claude"), l.ChatState}
	if l.Media != "" {
		dirs = append(dirs, filepath.Join(c.Workspace, "media", l.Media))
	}
	if l.Worktree != "" {
		git := filepath.Join(c.Workspace, ".git")
		dirs = append(dirs, filepath.Join(l.Worktree, ".claude"), filepath.Join(git, "refs", "heads", BranchDir), filepath.Join(git, "logs", "refs", "heads", BranchDir))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	l.Exe = path
	return "bwrap", append(append(SpecFor(c, l).BwrapArgs(), path), args...)
}

// zygoteMounts is the mount list bwrap gets for l running exe, for the helper.
func zygoteMounts(c Policy, l Launch, exe string) []helper.Mount {
	l.Exe = exe
	return zygoteMountsOf(SpecFor(c, l))
}

// zygoteSpikeBwrap is the one bwrap the helper runs in.
var zygoteSpikeBwrap = []string{"--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
	"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"}

func BenchmarkSandboxZygote(b *testing.B) {
	needBwrap(b)
	_, c, l := zygoteSpikeSetup(b)
	ws := c.Workspace
	exe, argv := spikeSandboxed(b, c, l, "/bin/true", nil)
	spike := zygoteMounts(c, l, "/bin/true")
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// cpu is the CPU time of the children reaped while run ran.
	cpu := func(run func()) time.Duration {
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before)
		run()
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after)
		return time.Duration(after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano())
	}
	b.Run("plain", func(b *testing.B) {
		d := cpu(func() {
			for range b.N {
				if out, err := exec.Command("/bin/true").CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			}
		})
		b.ReportMetric(float64(d.Microseconds())/float64(b.N), "cpu-us/start")
	})
	// No cpu-us/start: what bwrap's init and its command use is not passed on to the
	// host (the init is not waited for by bwrap).
	b.Run("bwrap-per-start", func(b *testing.B) {
		b.ReportMetric(float64(len(spike)), "mounts")
		for range b.N {
			if out, err := sandboxCmd(b, exe, argv...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
	for _, tc := range []struct {
		name   string
		mounts []helper.Mount
	}{{"zygote-bare", nil}, {"zygote-mounts", spike}} {
		b.Run(tc.name, func(b *testing.B) {
			js, _ := json.Marshal(tc.mounts)
			if tc.mounts == nil {
				js = []byte("[]")
			}
			b.ReportMetric(float64(len(tc.mounts)), "mounts")
			cmd := exec.Command("bwrap", append(slices.Clone(zygoteSpikeBwrap), self)...)
			cmd.Env = []string{"ZYGOTE_SPIKE=1", "ZYGOTE_SPIKE_N=" + strconv.Itoa(b.N), "ZYGOTE_SPIKE_MOUNTS=" + string(js), "ZYGOTE_SPIKE_DIR=" + ws}
			var out []byte
			d := cpu(func() {
				var err error
				if out, err = cmd.Output(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
			})
			inside, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
			if err != nil {
				b.Fatalf("the helper's CPU: %q", out)
			}
			b.ReportMetric(float64((d+time.Duration(inside)).Microseconds())/float64(b.N), "cpu-us/start")
		})
	}
}

// zygoteSpikeProbe prints, for each path it is given, whether it is there, a directory or
// a file, writable or not, and a directory's entries.
const zygoteSpikeProbe = `for p in "$@"; do
if [ -d "$p" ]; then t=dir; elif [ -e "$p" ]; then t=file; else echo "$p absent"; continue; fi
w=ro; [ -w "$p" ] && w=rw
if [ $t = dir ]; then echo "$p $t $w entries=$(ls -A "$p" 2>&1 | cksum | cut -d" " -f1)$( [ $(ls -A "$p" | wc -l) -lt 20 ] && ls -A "$p" | tr "\n" " ")"; else echo "$p $t $w"; fi
done`

// TestZygoteSpikeSameView: the helper BenchmarkSandboxZygote measures, making a chat's
// mount list itself inside a long-lived bwrap, shows what bwrap per start shows for the
// same list — every mounted path, its parent and the shared temporary directories there or
// absent alike, a directory or a file, writable or not, with the same entries — for a
// direct chat and for a chat in a git worktree with attachments and its own MCP file, so
// the measurement is of a start that sees what today's does.
func TestZygoteSpikeSameView(t *testing.T) {
	needBwrap(t)
	if os.Geteuid() != 0 {
		t.Skip("the helper's bwrap keeps CAP_SYS_ADMIN: needs root")
	}
	t.Run("direct chat", func(t *testing.T) {
		_, c, l := zygoteSpikeSetup(t)
		zygoteSpikeSameView(t, c, l)
	})
	t.Run("worktree chat", func(t *testing.T) {
		state, c, l := zygoteSpikeSetup(t)
		ws := c.Workspace
		l.Worktree = filepath.Join(ws, ".clawhost", "worktrees", "lo_direct_u1")
		admin := filepath.Join(ws, ".git", "worktrees", "lo_direct_u1")
		must(t, os.MkdirAll(l.Worktree, 0o755))
		must(t, os.MkdirAll(filepath.Join(ws, ".clawhost", "worktrees", "lo_direct_u2"), 0o755))
		must(t, os.MkdirAll(filepath.Join(ws, ".git", "objects"), 0o755))
		must(t, os.MkdirAll(admin, 0o755))
		must(t, os.WriteFile(filepath.Join(l.Worktree, ".git"), []byte("gitdir: "+admin+"\n"), 0o644))
		for _, f := range []string{"commondir", "gitdir"} {
			must(t, os.WriteFile(filepath.Join(admin, f), []byte("x\n"), 0o644))
		}
		l.Media = "lo_direct_u1"
		l.MCP = filepath.Join(filepath.Dir(state), "run", "agent", "mcp-1.json")
		must(t, os.MkdirAll(filepath.Dir(l.MCP), 0o700))
		must(t, os.WriteFile(l.MCP, []byte("{}"), 0o600))
		zygoteSpikeSameView(t, c, l)
	})
}

// zygoteSpikeSameView runs the probe under bwrap per start and under the helper for l.
func zygoteSpikeSameView(t *testing.T, c Policy, l Launch) {
	probe := []string{"-c", zygoteSpikeProbe, "probe"}
	spikeSandboxed(t, c, l, "/bin/sh", nil) // makes the chat's directories
	mounts := zygoteMounts(c, l, "/bin/sh")
	paths := []string{"/", "/tmp", "/var/tmp", "/run", "/dev/shm", "/run/systemd/resolve", os.TempDir(), c.Workspace, l.Tmp, l.ChatState}
	for _, m := range mounts {
		paths = append(paths, m.Path, filepath.Dir(m.Path))
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	dir := cmp.Or(l.Worktree, c.Workspace)
	exe, argv := spikeSandboxed(t, c, l, "/bin/sh", append(probe, paths...))
	want, err := sandboxCmd(t, exe, argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("bwrap per start: %v: %s", err, want)
	}

	// The same probe as the real helper's start (the test binary, as the runner starts it).
	out, code := zygoteRun(t, testZygote(t, ""), helper.Request{Argv: append(append([]string{"/bin/sh"}, probe...), paths...), Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Mounts: mounts})
	if code != 0 {
		t.Fatalf("helper: exit %d: %s", code, out)
	}
	var got strings.Builder
	got.WriteString(out)
	w, g := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
	if len(w) != len(g) {
		t.Fatalf("the helper's start shows another view than bwrap per start:\nbwrap:\n%s\nhelper:\n%s", want, got.String())
	}
	for i := range w {
		if w[i] != g[i] {
			t.Errorf("the helper's start shows another view than bwrap per start:\nbwrap:  %s\nhelper: %s", w[i], g[i])
		}
	}
	t.Logf("%d paths, %d mounts:\n%s", len(paths), len(mounts), want)
}

// BenchmarkZygoteHelperCPU: the sandbox helper's own CPU per start (user and system time of
// its process, all its threads, from /proc), b.N starts of /bin/true with a direct chat's
// mount list, one after the other, each waited for until the helper is clean again;
// with-children-cpu-us/start adds what the starts' processes used (their fork and exec
// are theirs); start-p50-us is the start's wait: the request sent → the helper's reply
// (claude's pid, after its exec).
//
//	go test ./core/sandbox -run '^$' -bench ZygoteHelperCPU -benchtime 500x
func BenchmarkZygoteHelperCPU(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	benchZygoteStarts(b, exe, "")
}

// BenchmarkZygoteConfine: what confining claude adds to a recycled sandbox's start — the
// same starts as BenchmarkZygoteHelperCPU with the shipped helper (bin/clawhost-sandbox, as
// clawhost runs it), with the test binary as the helper, and with the test binary leaving
// out the syscall filter, Landlock and the keyring (the start through the helper's binary,
// its user namespace and capabilities stay).
//
//	go test ./core/sandbox -run '^$' -bench ZygoteConfine -benchtime 300x
func BenchmarkZygoteConfine(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("shipped", func(b *testing.B) {
		dir := os.Getenv("CLAWHOST_BIN_DIR")
		if dir == "" {
			b.Skip("CLAWHOST_BIN_DIR not set (make bench sets it)")
		}
		benchZygoteStarts(b, filepath.Join(dir, "clawhost-sandbox"), "")
	})
	b.Run("test-helper", func(b *testing.B) { benchZygoteStarts(b, exe, "") })
	b.Run("test-helper-no-filter-landlock-keyring", func(b *testing.B) { benchZygoteStarts(b, exe, "seccomp,landlock,keyring") })
	b.Run("test-helper-unprepared", func(b *testing.B) { benchZygoteStarts(b, exe, "prepare") })
}

// benchZygoteStarts is BenchmarkZygoteHelperCPU's measure with exe as the helper, weaken
// as its zygoteWeaken (a test binary's only).
func benchZygoteStarts(b *testing.B, exe, weaken string) {
	bwrap := needZygote(b)
	_, c, l := zygoteSpikeSetup(b)
	mounts := zygoteMounts(c, l, "/bin/true")
	Testing.HelperEnv = []string{"ZYGOTE_WEAKEN=" + weaken}
	z, err := startZygote(bwrap, exe, nil, nil)
	Testing.HelperEnv = nil
	if err != nil {
		b.Fatal(err)
	}
	defer z.stop()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	var waits, ran []time.Duration
	start := func() {
		t0 := time.Now()
		p, err := z.run(helper.Request{Argv: []string{"/bin/true"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: c.Workspace, Mounts: mounts}, devnull, devnull, devnull)
		if err != nil {
			b.Fatal(err)
		}
		waits = append(waits, time.Since(t0))
		if code := p.Wait(); code != 0 {
			b.Fatalf("a start exited %d", code)
		}
		ran = append(ran, time.Since(t0))
		p.Release()
		select {
		case <-z.clean:
		case <-z.dead:
			b.Fatalf("the helper ended: %s", z.stderr.String())
		}
	}
	start() // the helper's own start-up is not counted
	self0, all0 := procCPU(b, z.helperPID())
	b.ResetTimer()
	for range b.N {
		start()
	}
	b.StopTimer()
	self1, all1 := procCPU(b, z.helperPID())
	b.ReportMetric(float64((self1-self0).Microseconds())/float64(b.N), "helper-cpu-us/start")
	b.ReportMetric(float64((all1-all0).Microseconds())/float64(b.N), "with-children-cpu-us/start")
	b.ReportMetric(float64(len(mounts)), "mounts")
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "start-p50-us")
	// The request → claude (true) has run and exited: what the pid's reply leaves out,
	// the confinement and claude's exec after it, counted.
	slices.Sort(ran)
	b.ReportMetric(float64(ran[len(ran)/2].Microseconds()), "ran-p50-us")
}

// procCPU is pid's CPU time (user and system, every thread's) and that plus its reaped
// children's, from /proc/<pid>/stat.
func procCPU(tb testing.TB, pid int) (self, withChildren time.Duration) {
	tb.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		tb.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // from field 3, the state
	tick := func(i int) time.Duration {
		n, err := strconv.ParseInt(f[i-3], 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		return time.Duration(n) * 10 * time.Millisecond // USER_HZ 100
	}
	self = tick(14) + tick(15)
	return self, self + tick(16) + tick(17)
}
