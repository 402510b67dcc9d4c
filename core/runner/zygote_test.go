//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/sandbox"
	"github.com/clawhost/clawhost/core/sandbox/helper"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// zygoteTimeout bounds each wait on a helper in these tests.
const zygoteTimeout = 20 * time.Second

// needZygote skips a test of the sandbox helper where it cannot run (no bwrap, not root).
func needZygote(t *testing.T) string {
	t.Helper()
	needBwrap(t)
	if why := sandbox.HelperUnsupported(); why != "" {
		t.Skip(why)
	}
	bwrap, err := exec.LookPath("bwrap")
	must(t, err)
	return bwrap
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
func newRecycled(t *testing.T, mut func(*Config)) (*Runner, chan int) {
	t.Helper()
	needZygote(t)
	r := newZygoteRunner(t, mut)
	r.waitZygotes()
	if r.SandboxState() != "bubblewrap (recycled)" || r.zygotes == nil {
		t.Fatalf("sandbox %q", r.SandboxState())
	}
	recycled := make(chan int, 8)
	r.zygotes.NotifyRecycled(recycled)
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
	probed := false
	probeHelper = func(bwrap, exe string) error {
		close(probing)
		<-release
		err := sandbox.ProbeHelper(bwrap, exe)
		probed = err == nil
		return err
	}
	t.Cleanup(func() { probeHelper = sandbox.ProbeHelper })
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
	if !probed {
		t.Fatal("the helper's probe start did not pass")
	}
	if h := helperOf(t, r.Warm()["a"]); !isHelper(h) {
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
	idle, _ := r.zygotes.Idle(r.cfg.Name, r.cfg.RunAs)
	if started := r.zygotes.Started(); idle != 0 || started != 0 {
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

// isHelper reports whether pid runs the sandbox helper (its argv[1] is helper.Arg).
func isHelper(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	args := strings.Split(string(b), "\x00")
	return err == nil && len(args) >= 2 && args[1] == helper.Arg
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
		if !strings.Contains(string(cmd), helper.Arg) {
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
	var z int
	select {
	case z = <-recycled:
	case <-time.After(zygoteTimeout):
		t.Fatal("a's sandbox never went back to the pool")
	}
	if z != ha {
		t.Fatalf("the pool got back helper %d, a ran under %d", z, ha)
	}
	res3 := runTurn(t, r, TurnRequest{Key: "c", SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
	mustOK(t, res3, "echo: hi")
	if hc := helperOf(t, r.Warm()["c"]); hc != ha {
		t.Errorf("c's claude runs under helper %d, not the recycled %d", hc, ha)
	}
	// a's, a's spare (b's) and b's spare: c's start, recycled, started none.
	started := r.zygotes.Started()
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
			sandbox.Testing.HelperEnv = []string{"ZYGOTE_WEAKEN=" + weaken}
			t.Cleanup(func() { sandbox.Testing.HelperEnv = nil })
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
				return r.zygotes.Started()
			}
			// The spare A's start made for the next one is there (started off A's
			// path): from here on, none is needed.
			main := r.profile("")
			for deadline := time.Now().Add(zygoteTimeout); ; time.Sleep(5 * time.Millisecond) {
				idle, filling := r.zygotes.Idle(main.Name, main.RunAs)
				ready := !filling && idle == 1
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
				if z == ha {
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
				if z == hb {
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
	real, err := exec.LookPath("bwrap")
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
	if pp := parentCmdline(t, r.Warm()["k"]); strings.Contains(pp, helper.Arg) {
		t.Errorf("claude runs under the helper: %q", pp)
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
	if why := sandbox.HelperUnsupported(); why != "" {
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
			defer func() { helpers += zp.Started() }()
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
