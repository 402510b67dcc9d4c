// Package runner runs turns of Claude Code sessions by driving the claude CLI.
//
// A session (a Claude conversation, named by a uuid) gets a warm process:
//
//	claude -p --output-format stream-json --verbose --input-format stream-json \
//	       (--session-id <uuid> | --resume <uuid>) [flags from Config]
//
// and every turn writes one {"type":"user","message":{"role":"user","content":...}} line
// to its stdin; history stays inside the process. The process is stopped after
// Config.IdleTimeout without turns, or when more than Config.MaxWarm are warm (least
// recently used first). The next turn of a session without a live process resumes it
// with --resume. With Config.OneShot every turn starts a process, writes the prompt to
// stdin and closes it. Prompts never appear in argv; each process has its own TMPDIR under
// Config.StateDir and the workspace as cwd, runs in its own process group (so Abort kills
// tools it started) and, on Linux, dies with the host (Pdeathsig SIGKILL).
//
// Turns of one conversation key are serialized (two claude processes on one session lose
// a turn); Config.MaxConcurrent caps turns across keys. Run returns at once with a Turn
// whose Events channel yields assistant text, tool progress and the final Result.
// Success is claude's is_error == false; failures carry a stable ErrorKind and a short
// user-visible notice (see Error).
//
// Steer adds a user message to a running turn (OpenClaw's "steer" queue mode); see its doc
// for what claude does with it.
//
// Observed claude behaviour the caller should know: after a turn that failed with an API
// error, claude keeps the failed user message, and the next turn's prompt is merged into
// the same user message ("<failed prompt>\n<new prompt>") — the model sees both.
//
// The package imports nothing else from core; the composition package wires it.
package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Runner runs claude turns. Create it with New; it is safe for concurrent use.
type Runner struct {
	cfg Config
	log hclog.Logger
	sem chan struct{}

	mu     sync.Mutex
	closed bool
	procs  map[string]*proc // warm processes by conversation key
	lanes  map[string]*lane // per-key serialization
	active map[string]*Turn // running turn by key
	seq    int
	wg     sync.WaitGroup
}

// lane serializes the turns of one key in Run order: each turn waits for the done
// channel of the turn queued before it.
type lane struct {
	tail chan struct{}
}

// New returns a Runner for cfg (defaults applied, see Config). It validates cfg and creates
// the state directory; it does not start any process. A missing CLI is only logged here —
// turns then fail with KindCLINotFound — so the host can start without it.
func New(cfg Config, logger hclog.Logger) (*Runner, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("runner config: %w", err)
	}
	ws, err := filepath.Abs(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("runner workspace: %w", err)
	}
	cfg.Workspace = ws
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("runner: agent.workspace %q is not a directory", ws)
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "t"), 0o700); err != nil {
		return nil, fmt.Errorf("runner state dir: %w", err)
	}
	r := &Runner{
		cfg:    cfg,
		log:    logger.Named("runner"),
		sem:    make(chan struct{}, cfg.MaxConcurrent),
		procs:  map[string]*proc{},
		lanes:  map[string]*lane{},
		active: map[string]*Turn{},
	}
	if _, err := exec.LookPath(cfg.Command); err != nil {
		r.log.Warn("claude CLI not found; turns will fail", "error", errNotFound(cfg.Command, err).Detail)
	}
	return r, nil
}

// Config returns the effective configuration (defaults applied).
func (r *Runner) Config() Config { return r.cfg }

// TurnRequest is one turn to run.
type TurnRequest struct {
	// Key identifies the conversation (e.g. "tg:dm:1001"). Turns with the same key run one
	// at a time, and a key has at most one warm process. Default: SessionID.
	Key string
	// SessionID is the claude session uuid, kept by the caller's session store. /new is
	// a new uuid with NewSession set; the key's old process is then stopped.
	SessionID string
	// NewSession says SessionID has never run: the process is started with --session-id.
	// Otherwise a process is started with --resume (when none is warm).
	NewSession bool
	// Prompt is the full user message (envelope applied). Sent on stdin.
	Prompt string
	// ExtraSystemPrompt is appended after Config.SystemPrompt (e.g. from hooks). A warm
	// process started with different text is restarted (resuming the session) so the text
	// applies.
	ExtraSystemPrompt string
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("runner closed")

// Run starts a turn and returns at once. The turn waits for earlier turns of the same key
// and for a concurrency slot; the per-turn timeout counts from here. Cancelling ctx aborts
// the turn (KindAborted). Run returns an error only for an invalid request or a closed
// Runner; everything else is reported in the Result.
func (r *Runner) Run(ctx context.Context, req TurnRequest) (*Turn, error) {
	if !uuidRE.MatchString(req.SessionID) {
		return nil, fmt.Errorf("run turn: session id %q is not a uuid", req.SessionID)
	}
	if req.Key == "" {
		req.Key = req.SessionID
	}
	t := newTurn(req.Key)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("run turn: %w", ErrClosed)
	}
	ln := r.lanes[req.Key]
	if ln == nil {
		ln = &lane{}
		r.lanes[req.Key] = ln
	}
	prev, mine := ln.tail, make(chan struct{})
	ln.tail = mine
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		res := r.turn(ctx, t, req, prev)
		// The next turn of the key may start only after the previous one ended.
		go func() {
			if prev != nil {
				<-prev
			}
			r.mu.Lock()
			if r.lanes[req.Key] == ln && ln.tail == mine {
				delete(r.lanes, req.Key)
			}
			r.mu.Unlock()
			close(mine)
		}()
		t.finish(res)
	}()
	return t, nil
}

// Abort ends the running turn of key: SIGTERM to its process group, SIGKILL after
// Config.KillGrace. The turn's Result has KindAborted and the partial text in Streamed; the
// key's warm process is gone and the next turn resumes. It reports whether a turn was
// running for key (a turn queued behind it is not affected).
func (r *Runner) Abort(key string) bool {
	r.mu.Lock()
	t := r.active[key]
	r.mu.Unlock()
	if t == nil {
		return false
	}
	t.abort(KindAborted)
	return true
}

// CanSteer reports whether Steer is available: true unless Config.OneShot.
func (r *Runner) CanSteer() bool { return !r.cfg.OneShot }

// Steer writes text as another user message to the process running key's turn, while
// the turn is in flight. It reports whether a turn took it; false means no turn is
// running (run text as a normal turn instead).
//
// Observed with claude 2.1.330: when the turn is in a tool loop the message is injected
// into it (the model sees "The user sent a new message while you were working: ..." after
// the tool result) and the turn ends with one result; otherwise claude answers it as a
// separate turn right after. Either way the running Turn absorbs it: its events include
// the reply and its Result is the last one, with usage summed (Result.Steered counts the
// messages).
func (r *Runner) Steer(key, text string) (bool, error) {
	if r.cfg.OneShot {
		return false, nil
	}
	r.mu.Lock()
	t := r.active[key]
	r.mu.Unlock()
	if t == nil {
		return false, nil
	}
	return t.steer(text)
}

func (t *Turn) steer(text string) (bool, error) {
	t.steerMu.Lock()
	defer t.steerMu.Unlock()
	if !t.steerOpen || t.steerProc == nil {
		return false, nil
	}
	id := newUUID()
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "uuid": id})
	if _, err := t.steerProc.stdin.Write(append(b, '\n')); err != nil {
		return false, fmt.Errorf("steer: write to claude: %w", err)
	}
	if t.steers == nil {
		t.steers = map[string]bool{}
	}
	t.steers[id] = false
	return true, nil
}

// closeSteer ends steering; more reports whether a steered message has not started yet
// (so another result will follow).
func (t *Turn) closeSteer(final bool) (more bool) {
	t.steerMu.Lock()
	defer t.steerMu.Unlock()
	for _, started := range t.steers {
		if !started {
			more = true
		}
	}
	if final || !more {
		t.steerOpen = false
	}
	return more
}

func (t *Turn) steerStarted(id string) {
	t.steerMu.Lock()
	defer t.steerMu.Unlock()
	if _, ok := t.steers[id]; ok {
		t.steers[id] = true
	}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Stop stops key's warm process, if any, without waiting (e.g. after /new). A running turn
// is not affected; use Abort.
func (r *Runner) Stop(key string) {
	r.mu.Lock()
	p := r.procs[key]
	if p != nil && !p.busy {
		r.removeLocked(p)
	} else {
		p = nil
	}
	r.mu.Unlock()
	if p != nil {
		r.stopAsync(p)
	}
}

// Warm returns the keys with a live warm process and their pids.
func (r *Runner) Warm() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.procs))
	for k, p := range r.procs {
		out[k] = p.pid
	}
	return out
}

// Close aborts running turns, stops every process and waits for them (or ctx).
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	var turns []*Turn
	for _, t := range r.active {
		turns = append(turns, t)
	}
	var procs []*proc
	for _, p := range r.procs {
		if !p.busy {
			procs = append(procs, p)
			r.removeLocked(p)
		}
	}
	r.mu.Unlock()
	for _, t := range turns {
		t.abort(KindAborted)
	}
	for _, p := range procs {
		r.stopAsync(p)
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close runner: %w", ctx.Err())
	}
}

// Turn is a running turn. Read Events until it is closed, or call Wait.
type Turn struct {
	key string

	mu      sync.Mutex
	pending []Event
	ended   bool
	wake    chan struct{}
	out     chan Event

	abortOnce sync.Once
	abortCh   chan struct{}
	abortKind ErrorKind

	done chan struct{}
	res  Result

	// Steering: open while the turn reads from a warm process and has not accepted its
	// final result. steers maps a steered message's uuid to whether claude started it.
	steerMu   sync.Mutex
	steerOpen bool
	steerProc *proc
	steers    map[string]bool
}

func newTurn(key string) *Turn {
	t := &Turn{key: key, wake: make(chan struct{}, 1), out: make(chan Event), abortCh: make(chan struct{}), done: make(chan struct{})}
	go t.forward()
	return t
}

// Events yields the turn's events in order; the last is EventResult, then the channel is
// closed. The runner never waits for the reader: events are queued without bound.
func (t *Turn) Events() <-chan Event { return t.out }

// Wait blocks until the turn ends and returns its Result. Events not yet received are
// discarded, so call it after draining Events or instead of reading them.
func (t *Turn) Wait() Result {
	for range t.out {
	}
	<-t.done
	return t.res
}

// Done is closed when the turn has ended (its Result is final).
func (t *Turn) Done() <-chan struct{} { return t.done }

func (t *Turn) emit(e Event) {
	t.mu.Lock()
	t.pending = append(t.pending, e)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *Turn) forward() {
	for {
		t.mu.Lock()
		if len(t.pending) == 0 {
			ended := t.ended
			t.mu.Unlock()
			if ended {
				close(t.out)
				return
			}
			<-t.wake
			continue
		}
		e := t.pending[0]
		t.pending = t.pending[1:]
		t.mu.Unlock()
		t.out <- e
	}
}

func (t *Turn) finish(res Result) {
	t.res = res
	close(t.done)
	r := res
	t.emit(Event{Kind: EventResult, Result: &r, At: time.Now()})
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *Turn) abort(kind ErrorKind) {
	t.abortOnce.Do(func() {
		t.abortKind = kind
		close(t.abortCh)
	})
}

// stopper gathers the ways a turn ends early.
type stopper struct {
	ctx   context.Context
	t     *Turn
	timer <-chan time.Time
}

// reason reports why the turn must stop, or "" to continue.
func (s stopper) reason() ErrorKind {
	select {
	case <-s.t.abortCh:
		return s.t.abortKind
	case <-s.ctx.Done():
		return KindAborted
	case <-s.timer:
		s.t.abort(KindTimeout)
		return s.t.abortKind
	default:
		return ""
	}
}

// wait blocks on ch or an early end.
func (s stopper) wait(ch <-chan struct{}) ErrorKind {
	select {
	case <-ch:
		return ""
	case <-s.t.abortCh:
		return s.t.abortKind
	case <-s.ctx.Done():
		return KindAborted
	case <-s.timer:
		s.t.abort(KindTimeout)
		return s.t.abortKind
	}
}

func stoppedResult(kind ErrorKind, detail string) Result {
	return Result{Err: newError(kind, detail)}
}

// turn runs one turn to its Result.
func (r *Runner) turn(ctx context.Context, t *Turn, req TurnRequest, prev <-chan struct{}) Result {
	log := r.log.With("key", req.Key, "session", req.SessionID)
	timer := time.NewTimer(r.cfg.Timeout)
	defer timer.Stop()
	st := stopper{ctx: ctx, t: t, timer: timer.C}

	// One turn per key at a time, in Run order.
	if prev == nil {
		closed := make(chan struct{})
		close(closed)
		prev = closed
	}
	select {
	case <-prev:
	case <-t.abortCh:
		return stoppedResult(t.abortKind, "stopped while waiting for the previous turn")
	case <-ctx.Done():
		return stoppedResult(KindAborted, "stopped while waiting for the previous turn")
	case <-timer.C:
		return stoppedResult(KindTimeout, "timed out waiting for the previous turn of this conversation")
	}
	r.mu.Lock()
	r.active[req.Key] = t
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.active[req.Key] == t {
			delete(r.active, req.Key)
		}
		r.mu.Unlock()
	}()

	select {
	case r.sem <- struct{}{}:
	case <-t.abortCh:
		return stoppedResult(t.abortKind, "stopped while waiting for a free slot")
	case <-ctx.Done():
		return stoppedResult(KindAborted, "stopped while waiting for a free slot")
	case <-timer.C:
		return stoppedResult(KindTimeout, "timed out waiting for a free slot (agent.max_concurrent)")
	}
	defer func() { <-r.sem }()

	sessionReset := false
	resume := !req.NewSession
	for attempt := 0; ; attempt++ {
		p, reused, serr := r.acquire(req, resume)
		if serr != nil {
			log.Error("start claude", "error", serr.Detail)
			return Result{Err: serr, SessionReset: sessionReset}
		}
		res, sawOutput := r.exchange(st, t, p, req.Prompt)
		res.NewProcess = !reused
		res.PID = p.pid
		if res.SessionID == "" {
			res.SessionID = req.SessionID
		}
		res.SessionReset = res.SessionReset || sessionReset
		r.release(p, res.Err == nil || isResultError(res.Err))
		if attempt >= 2 || res.Err == nil {
			return res
		}
		switch {
		case res.Err.Kind == KindSessionMissing && resume:
			log.Warn("session transcript missing; starting a fresh session with the same id", "detail", res.Err.Detail)
			resume, sessionReset = false, true
		case res.Err.Kind == KindUsage && !resume && strings.Contains(res.Err.Detail, "already in use"):
			log.Info("session id already has a transcript; resuming it")
			resume = true
		case res.Err.Kind == KindCrash && reused && !sawOutput:
			log.Warn("warm process died before the turn; restarting with --resume", "detail", res.Err.Detail)
			resume = true
		default:
			if res.Err.Kind != KindAborted && res.Err.Kind != KindTimeout {
				log.Warn("turn failed", "kind", res.Err.Kind, "detail", res.Err.Detail)
			}
			return res
		}
	}
}

// isResultError reports whether the failure came as a result object from a healthy process
// (e.g. an API error), which keeps the warm process usable.
func isResultError(e *Error) bool {
	switch e.Kind {
	case KindCrash, KindUsage, KindTimeout, KindAborted, KindCLINotFound, KindSessionMissing:
		return false
	}
	return true
}

// acquire returns the key's warm process when it fits the request, or starts one.
func (r *Runner) acquire(req TurnRequest, resume bool) (p *proc, reused bool, err *Error) {
	extra := req.ExtraSystemPrompt
	if !r.cfg.OneShot {
		var stale []*proc
		r.mu.Lock()
		if old := r.procs[req.Key]; old != nil {
			if old.sessionID == req.SessionID && old.extra == extra && !old.isDead() {
				old.busy = true
				old.lastUsed = time.Now()
				if old.idle != nil {
					old.idle.Stop()
				}
				r.mu.Unlock()
				return old, true, nil
			}
			r.removeLocked(old)
			stale = append(stale, old)
		}
		// Make room: count the process about to start.
		for len(r.procs) >= r.cfg.MaxWarm {
			lru := r.lruIdleLocked()
			if lru == nil {
				break
			}
			r.removeLocked(lru)
			stale = append(stale, lru)
		}
		r.mu.Unlock()
		for _, s := range stale {
			r.stopAsync(s)
		}
	}
	p, err = r.start(req.Key, req.SessionID, resume, extra)
	if err != nil {
		return nil, false, err
	}
	if !r.cfg.OneShot {
		r.mu.Lock()
		p.busy = true
		r.procs[req.Key] = p
		r.mu.Unlock()
	}
	return p, false, nil
}

// release returns a warm process to the pool (keep) or ends it.
func (r *Runner) release(p *proc, keep bool) {
	if r.cfg.OneShot {
		// The process exits after its result; make sure it does.
		r.stopAsync(p)
		return
	}
	var evict []*proc
	r.mu.Lock()
	p.busy = false
	p.lastUsed = time.Now()
	if !keep || p.isDead() || r.closed || r.procs[p.key] != p {
		if r.procs[p.key] == p {
			r.removeLocked(p)
		}
		r.mu.Unlock()
		r.stopAsync(p)
		return
	}
	used := p.lastUsed
	p.idle = time.AfterFunc(r.cfg.IdleTimeout, func() {
		r.mu.Lock()
		if r.procs[p.key] != p || p.busy || !p.lastUsed.Equal(used) {
			r.mu.Unlock()
			return
		}
		r.removeLocked(p)
		r.mu.Unlock()
		r.log.Debug("stopping idle claude process", "key", p.key, "pid", p.pid)
		r.stopAsync(p)
	})
	for len(r.procs) > r.cfg.MaxWarm {
		lru := r.lruIdleLocked()
		if lru == nil {
			break
		}
		r.removeLocked(lru)
		evict = append(evict, lru)
	}
	r.mu.Unlock()
	for _, e := range evict {
		r.log.Debug("stopping least recently used claude process", "key", e.key, "pid", e.pid)
		r.stopAsync(e)
	}
}

func (r *Runner) lruIdleLocked() *proc {
	var lru *proc
	for _, p := range r.procs {
		if !p.busy && (lru == nil || p.lastUsed.Before(lru.lastUsed)) {
			lru = p
		}
	}
	return lru
}

func (r *Runner) removeLocked(p *proc) {
	if r.procs[p.key] == p {
		delete(r.procs, p.key)
	}
	if p.idle != nil {
		p.idle.Stop()
	}
}

// stopAsync ends p in the background: close stdin (claude exits at EOF), SIGTERM to the
// group after KillGrace, SIGKILL after another.
func (r *Runner) stopAsync(p *proc) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		p.closeStdin()
		t := time.NewTimer(r.cfg.KillGrace)
		defer t.Stop()
		select {
		case <-p.exited:
			return
		case <-t.C:
		}
		r.kill(p)
	}()
}

// kill sends SIGTERM to p's process group, SIGKILL after KillGrace, and waits for p.
func (r *Runner) kill(p *proc) {
	signalGroup(p.pid, syscall.SIGTERM)
	t := time.NewTimer(r.cfg.KillGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		r.log.Warn("claude ignored SIGTERM; killing", "pid", p.pid)
		signalGroup(p.pid, syscall.SIGKILL)
		<-p.exited
	}
	// Tools that outlived claude in its group.
	signalGroup(p.pid, syscall.SIGKILL)
}

// proc is one claude process.
type proc struct {
	key, sessionID, extra string
	pid                   int
	cmd                   *exec.Cmd
	stdin                 io.WriteCloser
	stdinOnce             sync.Once
	msgs                  chan line
	exited                chan struct{} // closed after Wait and the stdout reader ended
	exitCode              int
	stdoutBytes           int
	stderr                *tailBuffer
	tmpdir                string

	// guarded by Runner.mu
	busy     bool
	lastUsed time.Time
	idle     *time.Timer
}

type line struct {
	msg wireMsg
	raw []byte
	at  time.Time
}

func (p *proc) isDead() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *proc) closeStdin() { p.stdinOnce.Do(func() { _ = p.stdin.Close() }) }

// start launches claude for a key.
func (r *Runner) start(key, sessionID string, resume bool, extra string) (*proc, *Error) {
	path, err := exec.LookPath(r.cfg.Command)
	if err != nil {
		return nil, errNotFound(r.cfg.Command, err)
	}
	r.mu.Lock()
	r.seq++
	n := r.seq
	r.mu.Unlock()
	tmp := filepath.Join(r.cfg.StateDir, "t", strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(n))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, newError(KindCrash, fmt.Sprintf("create TMPDIR: %v", err))
	}
	fail := func(e *Error) (*proc, *Error) {
		_ = os.RemoveAll(tmp)
		return nil, e
	}
	l := launch{sessionID: sessionID, resume: resume, warm: !r.cfg.OneShot}
	sys, err := r.systemPrompt(extra)
	if err != nil {
		return fail(newError(KindUsage, err.Error()))
	}
	if sys != "" {
		l.promptFile = filepath.Join(tmp, "system-prompt.md")
		if err := os.WriteFile(l.promptFile, []byte(sys), 0o600); err != nil {
			return fail(newError(KindCrash, fmt.Sprintf("write system prompt file: %v", err)))
		}
	}
	cmd := exec.Command(path, r.cfg.args(l)...)
	cmd.Dir = r.cfg.Workspace
	cmd.Env = r.cfg.env(os.Environ(), tmp)
	cmd.SysProcAttr = sysProcAttr()
	cmd.WaitDelay = r.cfg.KillGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fail(newError(KindCrash, fmt.Sprintf("stdin pipe: %v", err)))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(newError(KindCrash, fmt.Sprintf("stdout pipe: %v", err)))
	}
	cmd.Stdout = pw
	p := &proc{key: key, sessionID: sessionID, extra: extra, cmd: cmd, stdin: stdin,
		msgs: make(chan line, 256), exited: make(chan struct{}), stderr: &tailBuffer{max: 16 << 10}, tmpdir: tmp}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return fail(errNotFound(r.cfg.Command, err))
		}
		return fail(newError(KindCrash, fmt.Sprintf("start %s: %v", path, err)))
	}
	pw.Close()
	p.pid = cmd.Process.Pid
	r.log.Debug("started claude", "key", key, "pid", p.pid, "session", sessionID, "resume", resume, "warm", l.warm)

	readerDone := make(chan struct{})
	dead := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(p.msgs)
		br := bufio.NewReaderSize(pr, 64<<10)
		for {
			b, err := br.ReadBytes('\n')
			if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 {
				p.stdoutBytes += len(b)
				var m wireMsg
				if jerr := json.Unmarshal(trimmed, &m); jerr != nil {
					r.log.Debug("non-JSON line from claude", "pid", p.pid, "line", truncate(string(trimmed), 200))
				} else {
					select {
					case p.msgs <- line{msg: m, raw: trimmed, at: time.Now()}:
					case <-dead:
						return
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		werr := cmd.Wait()
		code := 0
		if werr != nil {
			var ee *exec.ExitError
			if errors.As(werr, &ee) {
				code = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
			} else {
				code = -1
			}
		}
		t := time.NewTimer(r.cfg.KillGrace)
		select {
		case <-readerDone:
		case <-t.C:
			// A grandchild holds stdout open.
			pr.Close()
		}
		t.Stop()
		close(dead)
		<-readerDone
		pr.Close()
		p.exitCode = code
		close(p.exited)
		_ = os.RemoveAll(tmp)
		r.mu.Lock()
		r.removeLocked(p)
		r.mu.Unlock()
		r.log.Debug("claude exited", "key", key, "pid", p.pid, "code", code)
	}()
	return p, nil
}

// systemPrompt combines the configured text, file and the turn's extra text.
func (r *Runner) systemPrompt(extra string) (string, error) {
	var parts []string
	if s := strings.TrimSpace(r.cfg.SystemPrompt); s != "" {
		parts = append(parts, s)
	}
	if r.cfg.SystemPromptFile != "" {
		b, err := os.ReadFile(r.cfg.SystemPromptFile)
		if err != nil {
			return "", fmt.Errorf("agent.system_prompt_file: %w", err)
		}
		if s := strings.TrimSpace(string(b)); s != "" {
			parts = append(parts, s)
		}
	}
	if s := strings.TrimSpace(extra); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n\n"), nil
}

// exchange sends the prompt to p and reads until the result, p's end, or an early stop.
// sawOutput reports whether p wrote anything during this turn.
func (r *Runner) exchange(st stopper, t *Turn, p *proc, prompt string) (res Result, sawOutput bool) {
	// Discard anything left from an earlier turn.
	for drained := false; !drained; {
		select {
		case _, ok := <-p.msgs:
			if !ok {
				drained = true
			}
		default:
			drained = true
		}
	}
	var payload []byte
	if r.cfg.OneShot {
		payload = []byte(prompt)
	} else {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
		payload = append(b, '\n')
	}
	if !r.cfg.OneShot {
		t.steerMu.Lock()
		t.steerOpen, t.steerProc = true, p
		t.steerMu.Unlock()
	}
	defer t.closeSteer(true)
	// Results of turns that steered messages queued behind (usage summed into the last).
	var (
		accOut   int
		accCost  float64
		accTurns int
	)
	wrote := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(payload)
		if r.cfg.OneShot {
			p.closeStdin()
		}
		wrote <- err
	}()

	var (
		blocks  []string
		cur     strings.Builder
		inBlock bool
	)
	streamed := func() string {
		all := blocks
		if cur.Len() > 0 {
			all = append(append([]string(nil), blocks...), cur.String())
		}
		return strings.Join(all, "\n\n")
	}
	stop := func(kind ErrorKind) Result {
		r.kill(p)
		detail := "aborted"
		if kind == KindTimeout {
			detail = fmt.Sprintf("no result within agent.timeout (%s)", r.cfg.Timeout)
		}
		res.Err = newError(kind, detail)
		res.Streamed = streamed()
		return res
	}
	if k := st.reason(); k != "" {
		return stop(k), false
	}
	for {
		select {
		case err := <-wrote:
			if err != nil {
				r.log.Debug("write prompt", "pid", p.pid, "error", err)
			}
			wrote = nil
			continue
		case <-st.t.abortCh:
			return stop(st.t.abortKind), sawOutput
		case <-st.ctx.Done():
			return stop(KindAborted), sawOutput
		case <-st.timer:
			st.t.abort(KindTimeout)
			return stop(st.t.abortKind), sawOutput
		case ln, ok := <-p.msgs:
			if !ok {
				if k := st.wait(p.exited); k != "" {
					return stop(k), sawOutput
				}
				res.Err = classifyExit(p.exitCode, p.stdoutBytes == 0, p.stderr.String())
				res.Streamed = streamed()
				return res, sawOutput
			}
			sawOutput = true
			m := ln.msg
			switch m.Type {
			case "system":
				switch m.Subtype {
				case "init":
					res.SessionID = m.SessionID
				case "compact_boundary":
					res.Compacted = true
				}
			case "stream_event":
				if m.ParentToolUseID != nil {
					continue
				}
				var ev wireStreamEvent
				if json.Unmarshal(m.Event, &ev) != nil {
					continue
				}
				switch ev.Type {
				case "content_block_start":
					inBlock = ev.ContentBlock.Type == "text"
					cur.Reset()
				case "content_block_delta":
					if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
						cur.WriteString(ev.Delta.Text)
						t.emit(Event{Kind: EventTextDelta, Text: ev.Delta.Text, At: ln.at})
					}
				case "content_block_stop":
					if inBlock {
						t.emit(Event{Kind: EventBlockEnd, At: ln.at})
						inBlock = false
					}
				}
			case "assistant":
				if m.ParentToolUseID != nil || m.IsAPIError || (len(m.Error) > 0 && string(m.Error) != "null") {
					continue
				}
				var am wireAssistant
				if json.Unmarshal(m.Message, &am) != nil {
					continue
				}
				for _, c := range am.Content {
					switch c.Type {
					case "text":
						if c.Text == "" {
							continue
						}
						blocks = append(blocks, c.Text)
						cur.Reset()
						t.emit(Event{Kind: EventText, Text: c.Text, At: ln.at})
					case "tool_use":
						t.emit(Event{Kind: EventToolUse, Tool: &ToolUse{ID: c.ID, Name: c.Name, Summary: summarizeInput(c.Input)}, At: ln.at})
					}
				}
			case "command_lifecycle":
				var cl struct {
					CommandUUID string `json:"command_uuid"`
					State       string `json:"state"`
				}
				if json.Unmarshal(ln.raw, &cl) == nil && (cl.State == "started" || cl.State == "completed") {
					t.steerStarted(cl.CommandUUID)
				}
			case "result":
				var wr wireResult
				if err := json.Unmarshal(ln.raw, &wr); err != nil {
					res.Err = newError(KindCrash, fmt.Sprintf("unreadable result line: %v", err))
					return res, sawOutput
				}
				if t.closeSteer(false) {
					// A steered message was queued behind this result; its turn follows.
					var part Result
					wr.fill(&part)
					accOut += part.Usage.OutputTokens
					accCost += part.Usage.CostUSD
					accTurns += part.NumTurns
					continue
				}
				wr.fill(&res)
				// Input tokens stay the last request's: the prompt size memory flush needs.
				res.Usage.OutputTokens += accOut
				res.Usage.CostUSD += accCost
				res.NumTurns += accTurns
				t.steerMu.Lock()
				res.Steered = len(t.steers)
				t.steerMu.Unlock()
				res.Err = classifyResult(&wr)
				res.Streamed = streamed()
				return res, sawOutput
			}
		}
	}
}

// tailBuffer keeps the last max bytes written (claude's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
