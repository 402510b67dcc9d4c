package runner

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawhost/clawhost/core/internal/lifeline"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/internal/sparedir"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/sandbox"

	"github.com/hashicorp/go-hclog"
)

// Runner runs claude turns. Create it with New; it is safe for concurrent use.
type Runner struct {
	cfg Config
	// agents are the named agents' configurations (Config.Agents resolved by forAgent).
	agents map[string]*Config
	log    hclog.Logger
	// clock times the scheduler, the pool's idle processes and the turn
	// timeout; tests replace it. Waits on a claude process (its kill
	// grace, its output) are real time.
	clock tstime.Clock
	// meter measures warm processes for Config.WarmMemory (pool.go); tests replace it.
	meter memoryMeter
	// unmeasured is what a warm process counts for while none has been measured
	// (procMemory; tests of the small fake claude set theirs).
	unmeasured int64
	// measureAfter is how long after its turn a warm process is measured
	// (measureDelay; tests of the pool's policy set 0). quit is closed by Close:
	// a measure still waiting is dropped.
	measureAfter time.Duration
	quit         chan struct{}
	// answers are the times to first answer of returning chats (answers.go).
	answers answerTimes
	// sandboxes are what the probe found for each sandbox mode and user the
	// agents' claude runs with (sandboxes.go); replaced whole, never changed in place.
	sandboxes atomic.Pointer[map[sandboxKey]agentSandbox]
	// zygotes are the agents' recycled sandboxes (sandbox.Pool); nil when every
	// sandboxed claude gets a bubblewrap of its own. Set before zygoteDone closes, and
	// read only after it (waitZygotes).
	zygotes *sandbox.Pool
	// sandboxDone is closed once probeSandboxes stored what it found (New starts it in
	// the background: a bubblewrap run, about 10 ms of the host's start on the
	// development machine), and sandboxOf waits for it. zygoteDone is closed once
	// setupZygotes decided whether the agents' claudes start in recycled sandboxes (the
	// sandbox helper's probe start, 30–45 ms of CPU beside the plugins' starts), which
	// StartSandboxHelpers begins; waitZygotes waits for it. Nil (tests' runners made by
	// hand): nothing to wait for.
	sandboxDone, zygoteDone chan struct{}
	// helpers begins setupZygotes once (StartSandboxHelpers); helperExe is the helper
	// whose probe start decides there, "" where planZygotes decided already (set before
	// sandboxDone closes).
	helpers   sync.Once
	helperExe string

	mu     sync.Mutex
	closed bool
	procs  map[string]*proc // warm processes by conversation key (pool.go)
	// measuredAt is when each warm process's turn last had it measured (pool.go,
	// measureDueLocked).
	measuredAt map[*proc]time.Time
	// inflation is the eviction cost model's clock (pool.go).
	inflation float64
	// The scheduler (sched.go): each key's turns in Run order, the turns waiting for
	// a slot in the order they began to, and the number running.
	lanes   map[string][]*ticket
	waiting []*ticket
	running int
	active  map[string]*Turn // the current (waiting or running) turn by key, for Abort and Steer
	seq     int
	// spareTmp is a TMPDIR made ahead for the next start of a process running as each
	// user (uidOf; takeTmpdir, spareTmpdir), "" while it is being made.
	spareTmp map[int64]string
	wg       sync.WaitGroup
	// started is when New made the runner: a TMPDIR older is an earlier run's
	// (RemoveLeftovers).
	started time.Time

	// lifeline lists the unsandboxed claude processes' groups for the watcher that kills
	// them when the host dies (core/internal/lifeline).
	lifeline *lifeline.Watcher

	// spares are the agents' spare claudes' bookkeeping (spare.go), guarded by mu.
	spares spareState

	// live are the profiles a reload replaced (update.go); nil until the first Update.
	live     atomic.Pointer[liveProfiles]
	updateMu sync.Mutex // one Update at a time
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
	var err error
	if cfg.Workspace, err = checkWorkspace(cfg.Workspace); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "t"), 0o700); err != nil {
		return nil, fmt.Errorf("runner state dir: %w", err)
	}
	if cfg.ConfigDir != "" {
		if cfg.ConfigDir, err = filepath.Abs(cfg.ConfigDir); err != nil {
			return nil, fmt.Errorf("runner config dir: %w", err)
		}
		if err := os.MkdirAll(cfg.ConfigDir, 0o700); err != nil {
			return nil, fmt.Errorf("runner config dir: %w", err)
		}
	}
	agents, err := cfg.agentProfiles()
	if err != nil {
		return nil, err
	}
	if err := prepareRunAs(&cfg, agents); err != nil {
		return nil, err
	}
	r := &Runner{
		cfg:          cfg,
		agents:       agents,
		log:          logger.Named("runner"),
		lifeline:     lifeline.New(logger.Named("runner")),
		clock:        tstime.Std{},
		meter:        treeMeter{},
		unmeasured:   procMemory,
		measureAfter: measureDelay,
		quit:         make(chan struct{}),
		procs:        map[string]*proc{},
		lanes:        map[string][]*ticket{},
		active:       map[string]*Turn{},
		started:      time.Now(),
	}
	r.sandboxDone, r.zygoteDone = make(chan struct{}), make(chan struct{})
	go func() {
		r.probeSandboxes()
		r.planZygotes()
		close(r.sandboxDone)
	}()
	if _, err := exec.LookPath(cfg.Command); err != nil {
		r.log.Warn("claude CLI not found; turns will fail", "error", errNotFound(cfg.Command, err).Detail)
	}
	return r, nil
}

// RemoveLeftovers removes, in the background, the TMPDIRs an earlier run of the host left
// under <state>/t — a host killed with -9 leaves its claudes' (the files they wrote, their
// system prompt files) — and returns a channel closed once it is done: those last changed
// before New was called (newTmpdir never takes one over). The host calls it
// once it holds its data directory (the store's lock): a second host started on the same
// directory by mistake, refused there, must not have removed the first's.
func (r *Runner) RemoveLeftovers() <-chan struct{} {
	done := make(chan struct{})
	dir := filepath.Join(r.cfg.StateDir, "t")
	go func() {
		defer close(done)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		n := 0
		for _, e := range entries {
			fi, err := e.Info()
			// A second of margin: a file's times come from the kernel's coarse clock, a
			// tick behind time.Now.
			if err != nil || !fi.ModTime().Before(r.started.Add(-time.Second)) {
				continue
			}
			if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
				n++
			}
		}
		if n > 0 {
			r.log.Info("removed the TMPDIRs of claude processes an earlier run left", "dir", dir, "count", n)
		}
		r.removeSpareLeftovers()
	}()
	return done
}

// removeSpareLeftovers removes the directories of spares an earlier run left (sparedir).
func (r *Runner) removeSpareLeftovers() {
	seen := map[string]bool{}
	stateDir := r.cfg.StateDir
	for _, c := range r.profiles() {
		if seen[c.Workspace] {
			continue
		}
		seen[c.Workspace] = true
		n, err := sparedir.Sweep(c.Workspace, stateDir, r.started.Add(-time.Second))
		stateDir = "" // swept once
		if n > 0 || err != nil {
			r.log.Info("removed the directories of spare claudes an earlier run left", "workspace", c.Workspace, "count", n, "error", err)
		}
	}
}

// checkWorkspace returns ws made absolute, or why it cannot be a workspace.
func checkWorkspace(ws string) (string, error) {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", fmt.Errorf("runner workspace: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("runner: agent.workspace %q is not a directory", abs)
	}
	return abs, nil
}

// agentProfiles resolves, validates and checks the named agents' configurations.
func (c Config) agentProfiles() (map[string]*Config, error) {
	out := make(map[string]*Config, len(c.Agents))
	for id, a := range c.Agents {
		a.Name = id
		p := c.forAgent(a)
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("runner config of agent %q: %w", id, err)
		}
		var err error
		if p.Workspace, err = checkWorkspace(p.Workspace); err != nil {
			return nil, fmt.Errorf("agent %q: %w", id, err)
		}
		if p.ConfigDir != "" {
			if p.ConfigDir, err = filepath.Abs(p.ConfigDir); err != nil {
				return nil, fmt.Errorf("agent %q: runner config dir: %w", id, err)
			}
			if err := os.MkdirAll(p.ConfigDir, 0o700); err != nil {
				return nil, fmt.Errorf("agent %q: runner config dir: %w", id, err)
			}
		}
		out[id] = &p
	}
	return out, nil
}

// prepareRunAs readies the state and config directories for the agents that run claude
// as another user (run_as): each such user passes through the state directory to its
// processes' TMPDIRs (search only: it can list neither), and owns its agent's config
// directory, which no agent running as another user may share (claude's files there
// are private to the user that wrote them). Then it checks what each user must reach.
func prepareRunAs(main *Config, agents map[string]*Config) error {
	all := []*Config{main}
	for _, id := range slices.Sorted(maps.Keys(agents)) {
		all = append(all, agents[id])
	}
	owner := map[string]*Config{} // config directory → the first agent using it
	anyone := false
	for _, p := range all {
		anyone = anyone || p.RunAs != nil
		if p.ConfigDir == "" {
			continue
		}
		if o := owner[p.ConfigDir]; o != nil && uidOf(o.RunAs) != uidOf(p.RunAs) {
			return fmt.Errorf("agents %q and %q share the claude config directory %s but run as different users (agent.run_as): give one its own (CLAUDE_CONFIG_DIR in agent.env)", o.Name, p.Name, p.ConfigDir)
		}
		owner[p.ConfigDir] = p
	}
	if !anyone {
		return nil
	}
	// The state directory, the TMPDIRs', the chats' and the spares' claude state
	// directories' parents stay the host's: each user passes through
	// them to its own.
	for _, d := range []string{main.StateDir, filepath.Join(main.StateDir, "t"), filepath.Join(main.StateDir, "chats"), filepath.Join(main.StateDir, "spares")} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return fmt.Errorf("agent.run_as: %w", err)
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return fmt.Errorf("agent.run_as: %w", err)
		}
	}
	for _, p := range all {
		if p.RunAs == nil {
			continue
		}
		if p.ConfigDir != "" {
			if err := p.RunAs.Chown(p.ConfigDir); err != nil {
				return fmt.Errorf("agent %q: agent.run_as: %w", p.Name, err)
			}
		}
		if err := checkRunAs(*p); err != nil {
			if p == main {
				return err
			}
			return fmt.Errorf("agent %q: %w", p.Name, err)
		}
	}
	return nil
}

// uidOf is u's uid, -1 for clawhost's own user (nil).
func uidOf(u *runas.User) int64 {
	if u == nil {
		return -1
	}
	return int64(u.UID)
}

// profile is the configuration of an agent's turns: a named agent's, else the runner's.
func (r *Runner) profile(agent string) *Config {
	cur := r.current()
	if p, ok := cur.agents[agent]; ok {
		return p
	}
	return cur.main
}

// Config returns the effective configuration (defaults applied).
func (r *Runner) Config() Config { return r.cfg }

// TurnRequest is one turn to run.
type TurnRequest struct {
	// Key identifies the conversation (e.g. "tg:dm:1001"). Turns with the same key run one
	// at a time, and a key has at most one warm process. Default: SessionID.
	Key string
	// Dir, when set, is the directory claude works in instead of the agent's workspace:
	// the chat's own git worktree inside it (agent.worktrees). The sandbox shows it
	// writable and hides the other worktrees beside it.
	Dir string
	// Agent is the id of the agent whose configuration runs the turn (Config.Agents); ""
	// or Config.Name: the runner's own. A key's turns always name the same agent (the
	// host's session keys carry it).
	Agent string
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
	// Model, when set, is passed as --model instead of Config.Model (a
	// per-session /model); Effort, when set, as --effort (/effort: low,
	// medium, high or max). A warm process started with other values is
	// restarted, resuming the session, so they apply.
	Model  string
	Effort string
	// PermissionMode, when set, is passed as --permission-mode instead of
	// Config.PermissionMode (a chat's /mode); it must be one of
	// Config.PermissionModes, or PlanMode, which any turn may ask for
	// (/plan: it only narrows what claude may do).
	PermissionMode string
	// MCPConfig, when set, is one more --mcp-config (JSON) for this
	// session's process (the host's own tools, bound to its chat), and
	// Tools are added to --allowedTools. Part of the process's identity.
	MCPConfig string
	Tools     []string
	// LateTools, with MCPConfig, says the host's tools of MCPConfig can be bound to the
	// session's chat after a process started: a spare started for such a session gets
	// an MCP config of its own, bound to no chat (LateTools.Process), MCPConfig is then
	// no part of the spare's identity (a new chat adopts it), and the session that
	// adopts it binds it to its chat (LateTools.Bind) before its prompt is written. nil:
	// MCPConfig is fixed at the start (a spare serves sessions with the same only).
	LateTools LateTools
	// AskPermission routes claude's permission prompts to the caller: a
	// tool use that would prompt becomes an EventPermission the caller
	// answers (tool approvals from the chat). Without it such a use is
	// denied by claude. Part of the process's identity; ignored with
	// Config.OneShot (stdin is closed after the prompt, nothing could
	// answer).
	AskPermission bool
	// Images are shown to claude with the prompt, as image content blocks
	// before its text (claude sees them without reading a file). Each is
	// already within the API's limits (see core/turn). Not with
	// Config.OneShot, whose stdin is plain text. Steered messages carry
	// text only.
	Images []Image
	// AdoptSpare, with NewSession, lets the turn run on the agent's spare claude
	// (Config.Spare), started ahead under a session id of its own: the caller records
	// Result.SessionID as the conversation's session. A caller that keeps the id it
	// asked for leaves it unset.
	AdoptSpare bool
	// MediaDir is the one directory under <workspace>/media the sandbox
	// lets this session's process see (a relative path, the chat's own
	// attachments); "" hides all of <workspace>/media. Part of the
	// process's identity. Without a sandbox every file is visible.
	MediaDir string
}

// LateTools binds the host's tools of a process started before any chat asked for it (a
// spare) to the chat that adopts it (TurnRequest.LateTools; core/agenttools).
type LateTools interface {
	// Process makes the MCP config file of one process of agent, bound to no chat: its
	// path (--mcp-config) and the handle Bind and Drop name it by. Called before the
	// process starts, not under the runner's lock.
	Process(agent string) (mcp, handle string, err error)
	// Bind binds handle's process to the request's chat; called once, when the request
	// adopts the process, before its prompt is written, under the runner's lock (it must
	// not block). An error leaves the process unadopted (it is stopped).
	Bind(handle string) error
	// Drop forgets handle once its process ended (or never started): its tools act for
	// nobody from then on.
	Drop(handle string)
}

// Image is an image for claude: its bytes and media type (image/jpeg,
// image/png, image/gif or image/webp).
type Image struct {
	MIME string
	Data []byte
}

// userContent is a stream-json user message's content: the prompt as a
// string, or with images the image blocks and then the text block.
func userContent(prompt string, images []Image) any {
	if len(images) == 0 {
		return prompt
	}
	blocks := make([]any, 0, len(images)+1)
	for _, im := range images {
		blocks = append(blocks, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": im.MIME, "data": base64.StdEncoding.EncodeToString(im.Data)}})
	}
	return append(blocks, map[string]any{"type": "text", "text": prompt})
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
	if !validMediaDir(req.MediaDir) {
		return nil, fmt.Errorf("run turn: media directory %q is not a relative path under the workspace's media", req.MediaDir)
	}
	if req.Agent != "" && req.Agent != r.cfg.Name && r.agents[req.Agent] == nil {
		return nil, fmt.Errorf("run turn: no agent %q is configured", req.Agent)
	}
	prof := r.profile(req.Agent)
	if req.Dir != "" && (!filepath.IsAbs(req.Dir) || !strings.HasPrefix(filepath.Clean(req.Dir), prof.Workspace+string(filepath.Separator))) {
		return nil, fmt.Errorf("run turn: directory %q is not inside the agent's workspace %s", req.Dir, prof.Workspace)
	}
	if req.PermissionMode != "" && req.PermissionMode != PlanMode && !slices.Contains(prof.PermissionModes, req.PermissionMode) {
		return nil, fmt.Errorf("run turn: permission mode %q is not in agent.permission_modes", req.PermissionMode)
	}
	if req.Key == "" {
		req.Key = req.SessionID
	}
	if strings.HasPrefix(req.Key, sparePrefix) {
		return nil, fmt.Errorf("run turn: key %q starts with a NUL", req.Key)
	}
	if err := r.shareMedia(prof, req.MediaDir); err != nil {
		return nil, fmt.Errorf("run turn: %w", err)
	}
	t := newTurn(req.Key)
	began := time.Now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("run turn: %w", ErrClosed)
	}
	tk := r.enqueueLocked(req.Key, t)
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		res := r.turn(ctx, t, req, tk)
		if !req.NewSession {
			r.answers.record(res, t.firstText(), began)
		}
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

// Close aborts running turns, stops every process and waits for them (or ctx).
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed && r.quit != nil {
		close(r.quit)
	}
	r.closed = true
	spares := r.spareTmp
	r.spareTmp = nil
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
	for _, tmp := range spares {
		if tmp != "" { // one being made is removed by its maker, which sees r.closed
			_ = os.RemoveAll(tmp)
		}
	}
	for _, t := range turns {
		t.abort(KindAborted)
	}
	for _, p := range procs {
		r.stopAsync(p)
	}
	done := make(chan struct{})
	go func() {
		r.wg.Wait()
		r.helpers.Do(func() { close(r.zygoteDone) }) // never begun: none to stop
		r.waitZygotes()
		if r.zygotes != nil {
			r.zygotes.Close()
		}
		r.lifeline.Close()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close runner: %w", ctx.Err())
	}
}
