package runner

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/sparedir"
)

// Spares (issue 84). Starting claude costs the real CLI about a second, and every new
// session pays it: a new chat, /new, a daily or idle reset. With Config.Spare the pool
// keeps, per agent, one claude started ahead with --session-id of a fresh uuid and no
// turn run in it: its spare. A new session whose start would be the same (spareID: the
// agent's profile, the directory, the extra system prompt, model, effort, permission
// mode, the session's MCP config and tools, whether claude asks the host — and, when the
// agent's claude runs sandboxed, the media directory and the chat whose claude state
// the sandbox binds, mounts fixed at the start) adopts it: the spare becomes the chat's
// warm process, its session the chat's (Result.SessionID; the caller records it, which
// it says with TurnRequest.AdoptSpare), and a replacement starts once the turn is over.
//
// Which new sessions adopt one, honestly: a spare is started for the identity of the
// agent's latest new session, after the turn of a new session that adopted one or whose
// identity repeated the one before it (two in a row), so traffic whose every new session
// differs (each chat its own MCP config or sandboxed claude state) starts none and pays
// nothing. The host's agent tools are late-bound (TurnRequest.LateTools): a spare gets an
// MCP config of its own whose token acts for nobody until the chat that adopts it binds
// it (adoptSpareLocked, before its prompt is written; dropped when the process ends), so
// the chat's per-chat MCP config is no part of the identity. Unsandboxed, then, every
// new chat of the agent adopts (with agent tools on or off; another per-chat MCP config
// without LateTools still keys the spare on it). Sandboxed, the chat's claude state and
// media are bound at the start: a spare for a chat's next new session (/new, a reset)
// is started for that chat, and one for a brand-new chat (no claude state, no media
// yet: spareID.fresh) with directories of its own, which the chat that adopts it takes
// over (core/internal/sparedir; adoptSpareLocked) — its prompts then name the chat's
// attachments at the spare's path (proc.shown).
//
// A spare never carries anything between chats: no turn runs in it before a chat adopts
// it, and it leaves the spare slot then (never returned to it). It lives in Runner.procs
// under spareKey, so warm_memory and max_warm count it (estimateLocked until measured);
// it is started only when it fits beside the warm processes without stopping any, it
// is the first stopped to make room (prio below any turn's), it stops after the agent's
// IdleTimeout without a new session adopting it, as an idle warm process does, and it
// is stopped by Update when its agent's profile changed and by Close.

// sparePrefix starts the pool key of an agent's spare: no conversation key starts with
// a NUL (Run refuses one).
const sparePrefix = "\x00spare\x00"

// spareKey is the pool key of agent's spare (the agent's Config.Name).
func spareKey(agent string) string { return sparePrefix + agent }

// spareID is what a claude's start depends on beyond its session: a new session adopts
// a spare only when its own is the same.
type spareID struct {
	cfg                                         *Config
	dir, extra, model, effort, mode, mcp, tools string
	ask                                         bool
	// late: the session's host tools bind to its chat after the start
	// (TurnRequest.LateTools); mcp is "" then, the spare's own config being no chat's.
	late bool
	// media and chat (the conversation key whose claude state is bound) only when the
	// agent's claude runs sandboxed; "" otherwise, and for fresh.
	media, chat string
	// fresh: sandboxed, for a brand-new chat, which has neither media nor claude state
	// yet (brandNew); the spare's own directories become the chat's.
	fresh bool
}

// spareState is the runner's bookkeeping of spares, guarded by Runner.mu.
type spareState struct {
	// last is each agent's latest new session.
	last map[string]lastNew
	// starting: a spare of the agent is being started.
	starting map[string]bool
	// alias maps a conversation that adopted a spare to the session it asked for and
	// the spare's, until a turn names the spare's (the caller recorded it).
	alias map[string][2]string
	// started and adopted count spares since New (Pool).
	started, adopted int
	// failed is why the latest spare could not be started or adopted, "" once one
	// started after it (Pool.SpareError).
	failed string
	// ready, when set (tests), is called with each spare put in the pool or given up
	// (nil), after Runner.mu is released.
	ready func(*proc)
}

// lastNew is a new session as the next one is compared with: its identity keyed on its
// chat (as if it were not brand-new) and whether it was brand-new (spareID.fresh).
type lastNew struct {
	keyed spareID
	fresh bool
}

// spareIDOf is req's start identity. It may wait for the sandbox probe.
func (r *Runner) spareIDOf(req TurnRequest) spareID {
	c := r.profile(req.Agent)
	id := spareID{cfg: c, dir: req.Dir, extra: req.ExtraSystemPrompt, model: req.Model, effort: req.Effort,
		mode: req.PermissionMode, mcp: req.MCPConfig, tools: strings.Join(req.Tools, "\x00"), ask: req.AskPermission}
	if req.LateTools != nil && req.MCPConfig != "" {
		id.mcp, id.late = "", true
	}
	if r.sandboxOf(c).bwrap != "" {
		if r.brandNew(c, req) {
			id.fresh = true
		} else {
			id.media, id.chat = req.MediaDir, req.Key
		}
	}
	return id
}

// brandNew tells whether req's chat has no claude state yet (at most an empty directory)
// and at most the attachments of its first message, so a sandboxed spare's directories
// may become its (sparedir.Adopt checks again, in one step). Its media directory is one
// name under <workspace>/media, as a spare's.
func (r *Runner) brandNew(c *Config, req TurnRequest) bool {
	return req.MediaDir != "" && !strings.Contains(req.MediaDir, "/") && sparedir.Carriable(filepath.Join(c.Workspace, "media", req.MediaDir)) && sparedir.Vacant(chatStateDir(r.cfg.StateDir, req.Key))
}

// lateTools is a spare's own host tools (TurnRequest.LateTools): the handle its MCP
// config was made under, bound by the chat that adopts it and dropped when it ends.
type lateTools struct {
	tools  LateTools
	handle string
}

// sparesOn tells whether req may adopt a spare and leave one for the next.
func (r *Runner) sparesOn(req TurnRequest) bool {
	return req.NewSession && req.AdoptSpare && !r.cfg.OneShot && r.profile(req.Agent).Spare
}

// adoptSpareLocked hands the agent's spare to req's conversation when it was started
// for id, and returns it (busy); nil when there is none for id. A spare with its own
// host tools is bound to req's chat first; one that cannot be is taken out of the pool
// and returned as gone (the caller stops it) — it never serves the request unbound.
func (r *Runner) adoptSpareLocked(req TurnRequest, id spareID) (sp, gone *proc) {
	sk := spareKey(id.cfg.Name)
	sp = r.procs[sk]
	if sp == nil || sp.spare == nil || *sp.spare != id || sp.isDead() {
		return nil, nil
	}
	if id.fresh {
		err := sp.own.Adopt(filepath.Join(id.cfg.Workspace, "media", req.MediaDir), chatStateDir(r.cfg.StateDir, req.Key))
		switch {
		case errors.Is(err, sparedir.ErrTaken):
			return nil, nil // the chat made its own meanwhile: the spare waits for the next
		case err != nil:
			r.log.Warn("the agent's spare claude was not adopted: its directories could not be the chat's", "key", req.Key, "pid", sp.pid, "error", err)
			r.spares.failed = "agent " + id.cfg.Name + ": the chat could not take the spare's directories: " + err.Error()
			r.removeLocked(sp)
			return nil, sp
		}
		sp.media = req.MediaDir // its next turns match the chat's; the sandbox shows it at own's path
	}
	if sp.late != nil {
		if err := req.LateTools.Bind(sp.late.handle); err != nil {
			r.log.Warn("the agent's spare claude was not adopted: its tools could not be bound to the chat", "key", req.Key, "pid", sp.pid, "error", err)
			r.spares.failed = "agent " + id.cfg.Name + ": its tools could not be bound to the chat: " + err.Error()
			r.removeLocked(sp)
			return nil, sp
		}
		sp.mcp = req.MCPConfig // bound to the chat whose config this is: its next turns match
	}
	delete(r.procs, sk)
	if sp.idle != nil {
		sp.idle.Stop()
	}
	sp.key, sp.spare = req.Key, nil
	sp.busy, sp.lastUsed = true, r.clock.Now()
	r.procs[req.Key] = sp
	if r.spares.alias == nil {
		r.spares.alias = map[string][2]string{}
	}
	r.spares.alias[req.Key] = [2]string{req.SessionID, sp.sessionID}
	r.spares.adopted++
	r.log.Debug("a new session adopted the agent's spare claude", "key", req.Key, "pid", sp.pid, "session", sp.sessionID)
	return sp, nil
}

// sessionOf is the session key's turns run in: the spare's it adopted while the caller
// still names the one it asked for.
func (r *Runner) sessionOf(key, asked string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.spares.alias[key]
	switch {
	case !ok:
		return asked
	case asked == a[0]:
		return a[1]
	}
	delete(r.spares.alias, key) // the caller moved on (recorded the spare's, or /new)
	return asked
}

// settleLimit bounds how long a spare's start waits for the turn that asked for it to
// be settled (Turn.Settle): a caller that never says so delays the agent's next spare
// by this much, no more.
const settleLimit = 2 * time.Second

// afterNewSession, once a new session's turn t is over, starts the agent's next spare
// when the session adopted one or repeated the previous new session's identity, and
// it fits. The start waits for t to be settled (or settleLimit), off the reply's path.
func (r *Runner) afterNewSession(t *Turn, req TurnRequest, id spareID, adopted bool) {
	agent := id.cfg.Name
	sk := spareKey(agent)
	keyed := id
	if id.fresh {
		keyed.fresh, keyed.media, keyed.chat = false, req.MediaDir, req.Key
	}
	r.mu.Lock()
	if r.spares.last == nil {
		r.spares.last, r.spares.starting = map[string]lastNew{}, map[string]bool{}
	}
	prev, seen := r.spares.last[agent]
	r.spares.last[agent] = lastNew{keyed, id.fresh}
	// Two brand-new chats in a row, or the same chat's new sessions (its first one
	// brand-new, or not), start the spare this one would have adopted.
	repeated := seen && (prev.keyed == keyed || prev.fresh && id.fresh)
	cur := r.procs[sk]
	if r.closed || r.spares.starting[agent] || !adopted && !repeated ||
		cur != nil && cur.spare != nil && *cur.spare == id || !r.spareFitsLocked(id.cfg, cur) {
		r.mu.Unlock()
		return
	}
	if cur != nil {
		r.removeLocked(cur)
	}
	r.spares.starting[agent] = true
	r.wg.Add(1)
	r.mu.Unlock()
	if cur != nil {
		r.stopAsync(cur)
	}
	tools := append([]string(nil), req.Tools...)
	var late LateTools
	if id.late {
		late = req.LateTools
	}
	go func() {
		defer r.wg.Done()
		timer, expired := r.clock.NewTimer(settleLimit)
		defer timer.Stop()
		select {
		case <-t.settled:
		case <-expired:
		case <-r.quit:
			r.mu.Lock()
			delete(r.spares.starting, agent)
			r.mu.Unlock()
			return
		}
		r.startSpare(id, tools, late)
	}()
}

// spareFitsLocked tells whether one more process of the agent configured by c fits its
// and the runner's MaxWarm and WarmMemory without stopping any, instead of old (the
// spare it replaces, nil for none).
func (r *Runner) spareFitsLocked(c *Config, old *proc) bool {
	fits := func(of, limits *Config) bool {
		n, mem := len(r.procs), r.memoryOfLocked(of)
		if of != nil {
			n = r.warmOfLocked(of)
		}
		if old != nil {
			n--
			mem -= r.memOfLocked(old)
		}
		return (limits.MaxWarm <= 0 || n+1 <= limits.MaxWarm) &&
			(limits.WarmMemory <= 0 || mem+r.estimateLocked() <= limits.WarmMemory)
	}
	return (len(r.agents) == 0 || fits(c, c)) && fits(nil, &r.cfg)
}

// memOfLocked is what p counts for in the budget.
func (r *Runner) memOfLocked(p *proc) int64 {
	if p.mem > 0 {
		return p.mem
	}
	return r.estimateLocked()
}

// startSpare starts a spare for id and puts it in the pool, unless the runner closed,
// the agent's profile changed or it no longer fits meanwhile. With late (id.late), the
// spare's host tools are its own, bound to no chat until one adopts it.
func (r *Runner) startSpare(id spareID, tools []string, late LateTools) {
	agent := id.cfg.Name
	sk := spareKey(agent)
	mcp, lt, err := r.spareTools(id, late)
	l := launch{cfg: id.cfg, dir: id.dir, model: id.model, effort: id.effort, mode: id.mode, mcp: mcp, tools: tools, ask: id.ask, media: id.media, stateKey: id.chat, late: lt}
	if err == nil && id.fresh {
		err = r.spareDirs(&l)
	}
	var p *proc
	if err == nil {
		p, err = r.start(sk, newUUID(), false, id.extra, l)
		if err != nil && lt != nil {
			lt.tools.Drop(lt.handle) // never started; once started, reap drops it
		}
		if err != nil && l.own != nil {
			l.own.Remove()
		}
	}
	if err == nil && !r.prime(p) {
		r.stopAsync(p)
		err = newError(KindCrash, "the spare claude exited before it was ready: "+truncate(p.stderr.String(), 300))
	}
	r.mu.Lock()
	delete(r.spares.starting, agent)
	ready := r.spares.ready
	if err != nil {
		r.spares.failed = "agent " + agent + ": could not start: " + truncate(err.Detail, 300)
		r.mu.Unlock()
		r.log.Warn("could not start the agent's spare claude", "agent", agent, "error", err.Detail)
		if ready != nil {
			ready(nil)
		}
		return
	}
	if r.closed || r.profile(agent) != id.cfg || r.procs[sk] != nil || !r.spareFitsLocked(id.cfg, nil) {
		r.mu.Unlock()
		r.stopAsync(p)
		if ready != nil {
			ready(nil)
		}
		return
	}
	p.spare = &id
	p.prio, p.lastUsed = -1, r.clock.Now() // the first to make room
	r.procs[sk] = p
	r.armIdleLocked(p) // one no new session wanted for the idle timeout stops
	r.spares.started++
	r.spares.failed = ""
	due := r.meter != nil && r.measureDueLocked(p)
	r.mu.Unlock()
	r.log.Debug("started a spare claude for the agent's next new session", "agent", agent, "pid", p.pid)
	if due {
		r.measureLater(p)
	}
	if ready != nil {
		ready(p)
	}
}

// shown is text as p's claude must read it: the sandbox of a spare a brand-new chat
// adopted shows the chat's media at the spare's path, so a prompt names the chat's
// attachments there (on the host that path links to the chat's directory: what claude
// names back resolves to the chat's own files).
func (p *proc) shown(text string) string {
	if p.own == nil || p.media == p.own.Name() {
		return text
	}
	sep := string(filepath.Separator)
	return strings.ReplaceAll(text, filepath.Join(p.cfg.Workspace, "media", p.media)+sep, p.own.Media+sep)
}

// spareDirs gives the spare l for a brand-new chat directories of its own, shown by its
// sandbox as a chat's media and claude state are.
func (r *Runner) spareDirs(l *launch) *Error {
	d, err := sparedir.New(l.cfg.Workspace, r.cfg.StateDir)
	if err == nil {
		err = r.shareMedia(l.cfg, d.Name()) // claude's user's (agent.run_as), as a chat's is before its turns
	}
	if err != nil {
		d.Remove()
		return newError(KindCrash, "the spare's directories: "+err.Error())
	}
	l.own, l.media = &d, d.Name()
	return nil
}

// spareTools is the --mcp-config of a spare for id: id's, or with late a config of its
// own (bound to no chat) and its handle.
func (r *Runner) spareTools(id spareID, late LateTools) (string, *lateTools, *Error) {
	if late == nil {
		return id.mcp, nil, nil
	}
	mcp, handle, err := late.Process(id.cfg.Name)
	if err != nil {
		return "", nil, newError(KindCrash, "the spare's agent tools: "+err.Error())
	}
	return mcp, &lateTools{tools: late, handle: handle}, nil
}

// dropStaleSpares stops the spares started with a profile Update replaced.
func (r *Runner) dropStaleSpares() {
	var stale []*proc
	r.mu.Lock()
	for _, p := range r.procs {
		if p.spare != nil && r.profile(p.cfg.Name) != p.cfg {
			r.removeLocked(p)
			stale = append(stale, p)
		}
	}
	r.mu.Unlock()
	for _, p := range stale {
		r.stopAsync(p)
	}
}

// sparePriming is the control requests a spare gets once started, each with what names
// it in claude's answer; each is sent once claude answered the one before (the answers
// are read and dropped: no turn sees them). initialize is the one the Agent SDK opens a session with: the real CLI then does,
// before any turn, the setup it otherwise does at the first prompt (its commands,
// agents, models and account); measured with claude 2.1.330 against the fake API, the
// first answer of a claude started 4 s earlier 0.29 s after the prompt with it, 0.70 s
// without. get_context_usage (the SDK's getContextUsage) has claude build what a
// prompt's request is made of (the system prompt, the tools' definitions, the skills
// listing) and count it, without a turn: nothing goes into the session and no request
// reaches the API, and much of the code a process's first prompt ran for the first
// time has run (docs/warm-memory.md): a spare's first prompt 180–250 ms without it,
// 100–175 ms with it, a later prompt 55–70 ms.
var sparePriming = []struct{ req, id []byte }{
	{[]byte(`{"type":"control_request","request_id":"clawhost-spare","request":{"subtype":"initialize"}}` + "\n"), []byte(`"request_id":"clawhost-spare"`)},
	{[]byte(`{"type":"control_request","request_id":"clawhost-spare-warm","request":{"subtype":"get_context_usage"}}` + "\n"), []byte(`"request_id":"clawhost-spare-warm"`)},
}

// spareInitWait bounds the wait for each answer; a claude that gives none in time is a
// spare all the same (only slower to its first answer).
const spareInitWait = 30 * time.Second

// prime sends the spare p its control requests; false when p ended first.
func (r *Runner) prime(p *proc) bool {
	for _, q := range sparePriming {
		answered, alive := r.ask(p, q.req, q.id)
		if !alive || !answered {
			if alive {
				r.log.Warn("the spare claude did not answer a control request; kept as it is", "pid", p.pid, "request", string(q.id))
			}
			return alive
		}
		p.primed++
	}
	return true
}

// ask writes req to p and waits at most spareInitWait for the control_response naming
// id: (answered, alive); alive false when p ended or the runner closes first.
func (r *Runner) ask(p *proc, req, id []byte) (answered, alive bool) {
	if p.write(req) != nil {
		return false, false
	}
	t := time.NewTimer(spareInitWait)
	defer t.Stop()
	for {
		select {
		case ln, ok := <-p.msgs:
			if !ok {
				return false, false
			}
			if ln.msg.Type == "control_response" && bytes.Contains(ln.raw, id) {
				return true, true
			}
		case <-t.C:
			return false, true
		case <-r.quit:
			return false, false
		}
	}
}
