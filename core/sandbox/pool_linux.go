//go:build linux

package sandbox

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/sandbox/helper"
)

// zygoteSpares is the fewest idle sandboxes an agent keeps: one made off the turn's path
// for the next start, and one more so a start right after an exit need not wait for the
// recycled one. An agent keeps as many as turns may run at once (Config.MaxConcurrent)
// when that is more: claudes evicted while others start come back in waves, and a sandbox
// stopped and started again costs a bubblewrap and a helper's start. Beyond that a recycled
// sandbox is stopped.
const zygoteSpares = 2

// zygoteEmptyingWait bounds how long a start waits for a sandbox being emptied before it
// starts a new one (emptying takes a kill and the reaping: well under it).
const zygoteEmptyingWait = 50 * time.Millisecond

// zygoteProbeTimeout bounds the helper's probe start at New.
const zygoteProbeTimeout = 10 * time.Second

// zygoteKey is whose sandboxes a pool keeps: an agent's, as the user it runs claude as.
type zygoteKey struct {
	agent string
	uid   int64
}

func zygoteKeyOf(agent string, u *runas.User) zygoteKey {
	return zygoteKey{agent: agent, uid: uidOf(u)}
}

// uidOf is u's uid, -1 for the host's own user (nil).
func uidOf(u *runas.User) int64 {
	if u == nil {
		return -1
	}
	return int64(u.UID)
}

// Pool is the Launcher of recycled sandboxes: it keeps each agent's idle sandboxes (one
// sandbox helper each, core/sandbox/helper) and starts claude in one.
type Pool struct {
	bwrap, exe string
	log        hclog.Logger
	spares     int // idle sandboxes kept per agent (zygoteSpares)

	mu      sync.Mutex
	idle    map[zygoteKey][]*zygote
	filling map[zygoteKey]bool
	// emptying counts k's sandboxes whose claude exited and whose helper is killing and
	// reaping what it left: each is back in a moment, sooner than a new one starts.
	emptying map[zygoteKey]int
	// returning counts k's sandboxes whose claude the runner is ending (evicted to make
	// room, idle, replaced): each comes back once claude exited and it is empty again,
	// so no spare is started for k meanwhile — it would be one sandbox too many, stopped
	// when the returning one comes back to a full pool. stopping counts those of them
	// whose claude has been asked to end already: a start with none idle waits for one
	// (bounded) rather than starting a helper. (An evicted claude is asked to end after
	// the start that evicted it: that start does not wait for its sandbox.)
	returning, stopping map[zygoteKey]int
	// back is closed (and replaced) each time a sandbox comes back or is given up.
	back   chan struct{}
	closed bool
	// working counts the pool's goroutines (refills, recycles): close waits (workDone,
	// on mu) until none runs, so that every helper they start or give up has stopped
	// when the runner's Close returns. A counter, not a WaitGroup: a sandbox may be given
	// back while close waits.
	working  int
	workDone sync.Cond
	// stages are each key's last start's mounts a new helper makes ahead for its first
	// (helper.StagePrefix).
	stages map[zygoteKey][]helper.Mount
	// started counts the helpers started (tests: a start that reused one started none).
	started int
	// recycled, when set (tests), is told the helper pid of each sandbox that went back
	// to its pool.
	recycled chan<- int
	// The idle release (poolidle_linux.go): each key's last start on clock, and the timer,
	// armed while a sandbox is idle.
	clock     tstime.Clock
	lastStart map[zygoteKey]time.Time
	release   tstime.Timer
}

// HelperUnsupported is why the helper cannot give claude the sandbox bubblewrap per start
// gives it, or "". As root the helper keeps the capabilities it uses; as any other user it
// holds them in bwrap's user namespace (zygoteBwrapUser), which needs the kernel to allow
// user namespaces to unprivileged users (bubblewrap per start needs the same). Whether
// it works on this machine is the probe's to say (probeZygote).
func HelperUnsupported() string {
	if os.Geteuid() != 0 {
		if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
			return "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0)"
		}
	}
	return ""
}

// ProbeHelper starts a helper of exe in bwrap and one start of true in it, with no
// mounts, and stops it: whether recycled sandboxes work here. The helper is not kept: an
// idle host holds none (two processes, 5.6 MB; issue 84), an agent's first claude start
// starts its sandboxes.
func ProbeHelper(bwrap, exe string) error {
	z, err := probeZygote(bwrap, exe)
	if z != nil {
		z.stop()
	}
	return err
}

// probeZygote starts a helper and one start of true in it, with no mounts.
func probeZygote(bwrap, exe string) (*zygote, error) {
	z, err := startZygote(bwrap, exe, nil, nil)
	if err != nil {
		return nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		z.stop()
		return nil, err
	}
	defer devnull.Close()
	done := make(chan error, 1)
	go func() {
		p, err := z.run(helper.Request{Argv: []string{"/bin/true"}, Env: []string{}, Dir: "/", Mounts: zygoteSystem()}, devnull, devnull, devnull)
		if err != nil {
			done <- err
			return
		}
		defer p.Release()
		if code := p.Wait(); code != 0 {
			done <- fmt.Errorf("a probe start exited %d", code)
			return
		}
		select {
		case <-z.clean:
			done <- nil
		case <-z.dead:
			done <- fmt.Errorf("the helper ended after its probe start: %s", strings.TrimSpace(z.stderr.String()))
		}
	}()
	t := time.NewTimer(zygoteProbeTimeout)
	defer t.Stop()
	select {
	case err = <-done:
	case <-t.C:
		err = fmt.Errorf("no answer in %v", zygoteProbeTimeout)
	}
	if err != nil {
		z.stop()
		return nil, err
	}
	return z, nil
}

// perStartWhy is why claude's sandboxes would be made per start here, before the
// helper's probe start (HelperWanted's and HelperUnsupported's reasons); "" when they
// would be recycled.
func perStartWhy() string {
	want, why := HelperWanted()
	if !want {
		return "this binary is no sandbox helper"
	}
	return cmp.Or(why, HelperUnsupported())
}

// HelperWanted is whether the runner tries recycled sandboxes (ZygoteEnv), and, when it
// tries though told not to (ZygoteEnv=0), why each sandbox is made per start.
func HelperWanted() (want bool, why string) {
	switch os.Getenv(ZygoteEnv) {
	case "0":
		return true, ZygoteEnv + "=0"
	case "1":
		return true, ""
	}
	return helperBinary.Load(), ""
}

// helperName is the sandbox helper's own binary (core/cmd/clawhost-sandbox), which make
// build puts beside clawhost: where it is there, recycled sandboxes run it instead of the
// clawhost binary, which is the helper too but costs a sandbox's start about 7 ms of CPU
// initialising packages the helper never uses, against under 2 ms.
const helperName = "clawhost-sandbox"

// HelperExecutable is the binary recycled sandboxes run: helperName beside exe (the host's
// executable) when it is a regular executable file there, else exe itself.
func HelperExecutable(exe string) string {
	p := filepath.Join(filepath.Dir(exe), helperName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return exe
}

// get is an idle sandbox of k's, or a new one; it makes a spare off the caller's path
// when none is left.
func (zp *Pool) get(k zygoteKey, u *helper.User, stage []helper.Mount) (*zygote, error) {
	zp.mu.Lock()
	zp.stages[k] = stage
	zp.startedNow(k)
	var z *zygote
	wait := time.NewTimer(zygoteEmptyingWait)
	defer wait.Stop()
	for waited := false; z == nil; {
		for len(zp.idle[k]) > 0 && z == nil {
			z, zp.idle[k] = takeIdle(zp.idle[k])
			if !z.alive() {
				z = nil
			}
		}
		if z != nil || waited || zp.emptying[k]+zp.stopping[k] == 0 {
			break
		}
		// One is being emptied, or its claude is ending: it is back sooner than a new
		// one starts, and costs no helper's start.
		back := zp.back
		zp.mu.Unlock()
		select {
		case <-back:
		case <-wait.C:
			waited = true
		}
		zp.mu.Lock()
	}
	if z == nil {
		zp.started++
	}
	zp.mu.Unlock()
	if z == nil {
		var err error
		if z, err = startZygote(zp.bwrap, zp.exe, u, stage); err != nil {
			return nil, err
		}
	}
	zp.goWork(func() { zp.refill(k, u) })
	return z, nil
}

// takeIdle takes one of q (not empty): the last to come back of those whose helper is
// ready, else the last. A helper started off the path (refill) is idle from its exec, but
// a start sent to it waits until it has started and made its first start ahead, 10–30 ms
// on a busy machine: the first turns of new chats in a row took the one just started.
func takeIdle(q []*zygote) (*zygote, []*zygote) {
	i := len(q) - 1
	for j := i; j >= 0; j-- {
		if q[j].isReady() {
			i = j
			break
		}
	}
	z := q[i]
	return z, slices.Delete(q, i, i+1)
}

// refill starts a spare for k when k has none idle and none coming back.
func (zp *Pool) refill(k zygoteKey, u *helper.User) {
	zp.mu.Lock()
	if zp.closed || zp.filling[k] || len(zp.idle[k]) > 0 || zp.emptying[k] > 0 || zp.returning[k] > 0 {
		zp.mu.Unlock()
		return
	}
	zp.filling[k] = true
	zp.started++
	stage := zp.stages[k]
	zp.mu.Unlock()
	z, err := startZygote(zp.bwrap, zp.exe, u, stage)
	zp.mu.Lock()
	zp.filling[k] = false
	if err != nil {
		zp.mu.Unlock()
		return
	}
	if zp.closed {
		zp.mu.Unlock()
		z.stop()
		return
	}
	zp.idle[k] = append(zp.idle[k], z)
	zp.armRelease()
	zp.mu.Unlock()
}

// giveBack hands z, whose claude exited, back to k's pool once it is
// empty again; until then it counts as emptying (no longer as returning or stopping, as
// it was).
func (zp *Pool) giveBack(k zygoteKey, z *zygote, was endState) {
	zp.mu.Lock()
	if was >= endDecided {
		zp.returning[k]--
	}
	if was == endStopping {
		zp.stopping[k]--
	}
	zp.emptying[k]++
	zp.mu.Unlock()
	zp.goWork(func() { zp.recycle(k, z) })
}

// recycle waits until z's sandbox is empty again (its claude exited and the helper killed
// and reaped all it left), then keeps it for k's next start, or stops it beyond the spares.
func (zp *Pool) recycle(k zygoteKey, z *zygote) {
	clean := false
	select {
	case <-z.clean:
		clean = true
	case <-z.dead:
	}
	zp.mu.Lock()
	zp.emptying[k]--
	close(zp.back)
	zp.back = make(chan struct{})
	if !clean || zp.closed || len(zp.idle[k]) >= zp.spares {
		zp.mu.Unlock()
		z.stop()
		return
	}
	zp.idle[k] = append(zp.idle[k], z)
	zp.armRelease()
	tell := zp.recycled
	zp.mu.Unlock()
	if tell != nil {
		tell <- z.helperPID()
	}
	if zp.log.IsDebug() {
		zp.log.Debug("claude's sandbox is empty again: it takes the agent's next start", "agent", k.agent, "helper", z.helperPID())
	}
}

// close stops every idle sandbox and waits for those being emptied or started; those in
// use stop when their claude has exited.
func (zp *Pool) close() {
	zp.mu.Lock()
	zp.closed = true
	if zp.release != nil {
		zp.release.Stop()
		zp.release = nil
	}
	var all []*zygote
	for k, q := range zp.idle {
		all = append(all, q...)
		delete(zp.idle, k)
	}
	zp.mu.Unlock()
	for _, z := range all {
		z.stop()
	}
	// The sandboxes given back or being started meanwhile: each stops on its own once it
	// is empty (closed), and the runner's Close returns after them.
	zp.mu.Lock()
	for zp.working > 0 {
		zp.cond().Wait()
	}
	zp.mu.Unlock()
}

// goWork runs f in a goroutine that close waits for.
func (zp *Pool) goWork(f func()) {
	zp.mu.Lock()
	zp.working++
	zp.mu.Unlock()
	go func() {
		defer func() {
			zp.mu.Lock()
			zp.working--
			zp.cond().Broadcast()
			zp.mu.Unlock()
		}()
		f()
	}()
}

// cond is workDone, bound to mu on first use. mu is held.
func (zp *Pool) cond() *sync.Cond {
	if zp.workDone.L == nil {
		zp.workDone.L = &zp.mu
	}
	return &zp.workDone
}

// zygoteMountsOf is s's mounts as a start request carries them: what bwrapArgs would
// give bubblewrap per start.
func zygoteMountsOf(s Spec) []helper.Mount {
	var mounts []helper.Mount
	for _, m := range prune(mountOrder(s, hostPaths), hostPaths) {
		mounts = append(mounts, helper.Mount{Path: m.path, Src: m.src, Op: m.op, Dir: m.dir})
	}
	return mounts
}

// zygoteSystem is the mounts of a start that needs the system's programs and nothing
// else (the helper's probe): the system's grants and scratch directories.
func zygoteSystem() []helper.Mount {
	return zygoteMountsOf(Spec{readOnly: confine.SystemGrants(), scratch: confine.Scratch})
}

// NewPool is the recycled sandboxes of a host: each a bubblewrap (bwrap) running the
// helper exe, spares idle ones kept per agent (at least zygoteSpares).
func NewPool(bwrap, exe string, log hclog.Logger, spares int) *Pool {
	return &Pool{bwrap: bwrap, exe: exe, log: log, spares: max(zygoteSpares, spares), idle: map[zygoteKey][]*zygote{},
		clock: tstime.Std{}, lastStart: map[zygoteKey]time.Time{},
		filling: map[zygoteKey]bool{}, stages: map[zygoteKey][]helper.Mount{}, emptying: map[zygoteKey]int{}, returning: map[zygoteKey]int{}, stopping: map[zygoteKey]int{}, back: make(chan struct{})}
}

// Start starts c in one of c.Agent's recycled sandboxes (a spare, or one started now),
// with the mounts c.View says. Its Process is an Ender: the pool counts the sandbox as
// coming back once the runner decides to end it.
func (zp *Pool) Start(c Cmd) (*Started, error) {
	if c.View == nil {
		return nil, errors.New("a sandboxed start without its view")
	}
	s := *c.View
	req := helper.Request{Argv: append([]string{c.Path}, c.Args...), Env: c.Env, Dir: cmp.Or(s.worktree, s.workspace), Mounts: zygoteMountsOf(s)}
	if u := c.User; u != nil {
		cr := u.Credential()
		req.User = &helper.User{UID: cr.Uid, GID: cr.Gid, Groups: cr.Groups}
	}
	k := zygoteKeyOf(c.Agent, c.User)
	stage := helper.StagePrefix(req.Mounts)
	z, err := zp.get(k, req.User, stage)
	if err != nil {
		return nil, err
	}
	var files []*os.File // the child's ends, closed once the helper has them
	pipe := func() (*os.File, *os.File) {
		rd, wr, err := os.Pipe()
		if err != nil {
			return nil, nil
		}
		return rd, wr
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	files = append(files, inR, outW, errW)
	closeFiles := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	if inR == nil || outR == nil || errR == nil {
		closeFiles(inR, inW, outR, outW, errR, errW)
		z.stop() // idle, but no clean will say so: no claude ran
		return nil, errors.New("claude's pipes: too many open files")
	}
	run, serr := z.run(req, inR, outW, errW)
	if serr != nil && !z.alive() {
		// An idle sandbox that ended while it waited (killed from outside): once more in
		// a new one.
		z.stop()
		if z, err = zp.get(k, req.User, stage); err != nil {
			serr = err
		} else {
			run, serr = z.run(req, inR, outW, errW)
		}
	}
	closeFiles(files...)
	if serr != nil {
		closeFiles(inW, outR, errR)
		z.stop()
		return nil, fmt.Errorf("start %s: %w", c.Path, serr)
	}
	stderr := cmp.Or[io.Writer](c.Stderr, io.Discard)
	go func() {
		_, _ = io.Copy(stderr, errR)
		errR.Close()
	}()
	if zp.log.IsDebug() { // helperPID reads /proc the first time
		zp.log.Debug("claude starts in a recycled sandbox", "agent", c.Agent, "pid", run.PID(), "helper", z.helperPID(), "prepared", run.prepared, "staged", run.staged)
	}
	return &Started{Process: &recycledProc{zygoteProc: run, zp: zp, k: k, z: z}, Stdin: inW, Stdout: outR}, nil
}

// Close stops every idle sandbox and waits for those being emptied or started; those in
// use stop when their claude has exited.
func (zp *Pool) Close() { zp.close() }

// Started is the number of sandbox helpers the pool started (tests: a start that reused
// one started none).
func (zp *Pool) Started() int {
	zp.mu.Lock()
	defer zp.mu.Unlock()
	return zp.started
}

// Idle is the number of idle sandboxes the pool keeps for agent's claudes run as u, and
// whether one more is being started for it.
func (zp *Pool) Idle(agent string, u *runas.User) (idle int, filling bool) {
	k := zygoteKeyOf(agent, u)
	zp.mu.Lock()
	defer zp.mu.Unlock()
	return len(zp.idle[k]), zp.filling[k]
}

// NotifyRecycled makes the pool send on ch the helper pid of each sandbox that went back
// to it, empty again (tests).
func (zp *Pool) NotifyRecycled(ch chan<- int) {
	zp.mu.Lock()
	zp.recycled = ch
	zp.mu.Unlock()
}

// recycledProc is a zygoteProc whose sandbox goes back to its pool when released.
type recycledProc struct {
	*zygoteProc
	zp *Pool
	k  zygoteKey
	z  *zygote

	mu       sync.Mutex
	end      endState
	released bool
}

// endState is how far the runner is in ending a recycled claude: its pool counts the
// sandbox as returning from endDecided on, as stopping from endStopping on.
type endState int

const (
	endRunning endState = iota
	endDecided
	endStopping
)

var _ Ender = (*recycledProc)(nil)

func (p *recycledProc) Ending()   { p.advance(endDecided) }
func (p *recycledProc) Stopping() { p.advance(endStopping) }

// advance moves p's end state on to to, and its pool's counts with it; after Release
// (the sandbox is back already) it does nothing.
func (p *recycledProc) advance(to endState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released || p.end >= to {
		return
	}
	p.zp.mu.Lock()
	if p.end < endDecided {
		p.zp.returning[p.k]++
	}
	if to == endStopping {
		p.zp.stopping[p.k]++
	}
	p.zp.mu.Unlock()
	p.end = to
}

func (p *recycledProc) Release() {
	p.zygoteProc.Release()
	p.mu.Lock()
	p.released = true
	was := p.end
	p.mu.Unlock()
	p.zp.giveBack(p.k, p.z, was)
}
