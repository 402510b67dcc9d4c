package runner

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/sparedir"
	"github.com/clawhost/clawhost/core/internal/tail"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/sandbox"
)

// proc is one claude process.
type proc struct {
	cfg                   *Config // its agent's configuration (Runner.profile)
	dir                   string  // the directory it works in, when not cfg.Workspace (TurnRequest.Dir)
	key, sessionID, extra string
	model, effort, mode   string // the per-session --model, --effort and --permission-mode it was started with
	mcp                   string // the per-session --mcp-config it was started with
	media                 string // the media directory its sandbox shows
	ask                   bool   // started with --permission-prompt-tool stdio
	// spare is what the process was started for while it is its agent's spare (no
	// session ran in it; spare.go), nil once a chat adopted it or for any other; guarded
	// by Runner.mu, as key, which adoption changes.
	spare *spareID
	// late is the process's own agent tools (a spare started with TurnRequest.LateTools:
	// lateTools, spare.go), dropped when it ends; nil for any other.
	late *lateTools
	// own is the directories of a spare started for a brand-new chat (spare.go),
	// removed when it ends (a chat's adoption leaves only a link of them); nil for any
	// other. Once adopted, its sandbox shows the chat's media at own's path, not media's.
	own *sparedir.Dirs
	// primed is how many of a spare's priming requests (sparePriming) claude
	// answered, set by prime before the process is a spare; 0 for any other.
	primed int
	// planExited: a plan was approved (ExitPlanMode allowed), so claude
	// left the plan mode it was started in; never reused (exchange.go).
	planExited  atomic.Bool
	wmu         sync.Mutex // one write to stdin at a time (prompt, steered message, control response)
	pid         int        // run.PID(), for the logs
	run         process    // the started process: signal, wait, release
	stdin       io.WriteCloser
	stdinOnce   sync.Once
	msgs        chan line
	exited      chan struct{} // closed after Wait and the stdout reader ended
	exitCode    int
	stdoutBytes int
	stderr      *tail.Buffer
	tmpdir      string
	spawned     time.Time
	startup     atomic.Int64 // spawned → first stdout line, in ns; 0 until then

	// guarded by Runner.mu
	busy     bool
	lastUsed time.Time
	idle     tstime.Timer
	uses     int     // turns it ran
	prio     float64 // its worth to the pool (pool.go, keepValueLocked)
	mem      int64   // what its process tree held after its last turn, in bytes; 0 not measured (pool.go, measure)
}

// startCost is what starting p again would cost, as far as the runner knows: how long p
// took to its first output, or defaultStartup before that.
func (p *proc) startCost() time.Duration {
	if d := time.Duration(p.startup.Load()); d > 0 {
		return d
	}
	return defaultStartup
}

type line struct {
	msg wireMsg
	raw []byte
	at  time.Time
	// res is a result line decoded (readStdout decodes it once, as a result), or nil.
	res *wireResult
}

func (p *proc) isDead() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// write writes one whole line to claude's stdin; writes never interleave.
func (p *proc) write(b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.stdin.Write(b)
	return err
}

func (p *proc) closeStdin() { p.stdinOnce.Do(func() { _ = p.stdin.Close() }) }

// discardUnread drops lines claude wrote while no turn was reading (after
// an earlier turn's result): never silently. A result produced between
// turns (a wake-up or background task the disallowed tools did not catch)
// is logged with its text, since nobody will deliver it.
func (p *proc) discardUnread(log hclog.Logger) {
	n := 0
	for drained := false; !drained; {
		select {
		case ln, ok := <-p.msgs:
			if !ok {
				drained = true
				break
			}
			n++
			if ln.msg.Type == "result" {
				var res wireResult
				_ = json.Unmarshal(ln.raw, &res)
				text := ""
				if res.Result != nil {
					text = truncate(*res.Result, 500)
				}
				log.Warn("claude produced a reply between turns; it is not delivered (nobody asked for it)",
					"pid", p.pid, "key", p.key, "subtype", res.Subtype, "text", text)
			}
		default:
			drained = true
		}
	}
	if n > 0 {
		log.Debug("dropped output claude wrote between turns", "pid", p.pid, "key", p.key, "lines", n)
	}
}

// start launches claude for a key: a private TMPDIR, the system prompt file, the process
// in its own group, a goroutine reading its stdout into p.msgs and one reaping it.
func (r *Runner) start(key, sessionID string, resume bool, extra string, l launch) (*proc, *Error) {
	path, err := exec.LookPath(l.cfg.Command)
	if err != nil {
		return nil, errNotFound(l.cfg.Command, err)
	}
	l.sessionID, l.resume, l.warm = sessionID, resume, !r.cfg.OneShot
	l.env = l.cfg.baseEnv(os.Environ())
	prep := r.prepareEarly(key, l)
	tmp, serr := r.takeTmpdir(l.cfg)
	if serr != nil {
		_ = prep.wait()
		return nil, serr
	}
	p, serr := r.spawn(path, l, key, extra, tmp, prep)
	if serr != nil {
		_ = os.RemoveAll(tmp)
		return nil, serr
	}
	// The next start's TMPDIR is made while this claude starts: the turn waits for
	// its first output now. The turn's goroutine holds r.wg, so Close waits for it too.
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.spareTmpdir(l.cfg)
	}()
	return p, nil
}

// spawn starts the process described by l, its sandbox's preparation begun as prep (nil:
// none); the caller removes tmp when it fails.
func (r *Runner) spawn(path string, l launch, key, extra, tmp string, prep *preparing) (*proc, *Error) {
	defer func() { _ = prep.wait() }() // none of it outlives a start that failed before it
	c := l.cfg
	sys, err := c.systemPrompt(extra)
	if err != nil {
		return nil, newError(KindUsage, err.Error())
	}
	if sys != "" {
		l.promptFile = filepath.Join(tmp, "system-prompt.md")
		if err := os.WriteFile(l.promptFile, []byte(sys), 0o600); err != nil {
			return nil, newError(KindCrash, fmt.Sprintf("write system prompt file: %v", err))
		}
		if u := c.RunAs; u != nil {
			if err := u.Chown(l.promptFile); err != nil {
				return nil, newError(KindCrash, fmt.Sprintf("agent.run_as: system prompt file: %v", err))
			}
		}
	}
	l.mcpAsked = l.mcp
	if l.mcp, err = r.ownMCPConfig(c, l.mcp, tmp); err != nil {
		return nil, newError(KindCrash, err.Error())
	}
	if l.servers, err = mcpServersFile(c, tmp); err != nil {
		return nil, newError(KindCrash, err.Error())
	}
	if l.project, err = projectMCP(c, cmp.Or(l.dir, c.Workspace), tmp); err != nil {
		r.log.Warn("workspace MCP servers left out", "agent", c.Name, "why", err.Error())
	}
	env := withTmpdir(l.env, tmp)
	p := &proc{cfg: c, dir: l.dir, key: key, sessionID: l.sessionID, extra: extra, model: l.model, effort: l.effort, mode: l.mode, mcp: l.mcpAsked, media: l.media, ask: l.ask, late: l.late, own: l.own,
		msgs: make(chan line, 256), exited: make(chan struct{}), stderr: &tail.Buffer{Max: 16 << 10}, tmpdir: tmp}
	cmd := sandbox.Cmd{Path: path, Args: c.args(l), Env: env, Dir: cmp.Or(l.dir, c.Workspace), User: c.RunAs, Stderr: p.stderr, Agent: c.Name}
	launcher := r.launcherFor(c)
	if _, direct := launcher.(sandbox.Direct); !direct {
		sl := sandboxLaunch{tmp: tmp, env: env, media: l.media, worktree: l.dir, mcp: l.mcp, exe: path,
			chatState: l.chatState(r.cfg.StateDir, key), sessionID: l.sessionID, resume: l.resume, prep: prep}
		if err := r.prepared(c, sl); err != nil {
			return nil, newError(KindCrash, err.Error())
		}
		view := c.sandboxSpecFor(sl)
		cmd.View = &view
	}
	p.spawned = time.Now()
	st, err := launcher.Start(cmd)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, errNotFound(c.Command, err)
		}
		return nil, newError(KindCrash, err.Error())
	}
	p.stdin, p.run = st.Stdin, st.Process
	p.pid = p.run.PID()
	r.log.Debug("started claude", "key", key, "pid", p.pid, "session", l.sessionID, "resume", l.resume, "warm", l.warm, "sandbox", r.sandboxOf(c).helper)

	readerDone := make(chan struct{})
	dead := make(chan struct{})
	go r.readStdout(p, st.Stdout, dead, readerDone)
	go r.reap(p, st.Stdout, dead, readerDone)
	return p, nil
}

// ownMCPConfig is the session's MCP config file (TurnRequest.MCPConfig) as the process of
// c may read it. The host writes it private (0600) to its own user or to the one user
// claude runs as (core/agenttools); a process running as a user that does not own it
// gets a copy in its private TMPDIR, owned by that user — a claude run as the host's own
// user too: it holds no capability that would read another user's file. A JSON string
// (not a file) is returned as is.
func (r *Runner) ownMCPConfig(c *Config, mcp, tmp string) (string, error) {
	if !sandbox.MCPFile(mcp) {
		return mcp, nil
	}
	uid := uint32(os.Geteuid())
	if c.RunAs != nil {
		uid = c.RunAs.UID
	}
	fi, err := os.Stat(mcp)
	if err != nil {
		return mcp, nil // claude says what is missing
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == uid {
		return mcp, nil
	}
	b, err := os.ReadFile(mcp)
	if err != nil {
		return "", fmt.Errorf("session MCP config: %w", err)
	}
	own := filepath.Join(tmp, "mcp-config.json")
	if err := os.WriteFile(own, b, 0o600); err != nil {
		return "", fmt.Errorf("session MCP config: %w", err)
	}
	if c.RunAs != nil {
		if err := c.RunAs.Chown(own); err != nil {
			return "", fmt.Errorf("agent.run_as: session MCP config: %w", err)
		}
	}
	return own, nil
}

// readStdout decodes p's stdout, one JSON object a line, into p.msgs until EOF, or until
// dead is closed (p was reaped and nobody reads any more). Other lines are logged and
// dropped. It closes p.msgs, then done.
func (r *Runner) readStdout(p *proc, stdout io.Reader, dead <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	defer close(p.msgs)
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		b, err := br.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 {
			if p.stdoutBytes == 0 {
				p.startup.Store(int64(time.Since(p.spawned)))
			}
			p.stdoutBytes += len(b)
			if ln, ok := decodeLine(trimmed); !ok {
				r.log.Debug("non-JSON line from claude", "pid", p.pid, "line", truncate(string(trimmed), 200))
			} else {
				ln.at = time.Now()
				select {
				case p.msgs <- ln:
				case <-dead:
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// resultType is in every result line (claude 2.1.330 writes "type" late in it): a line
// holding it is decoded as a result first, once, instead of as a message and then again
// as a result on the reply's path. Only a line whose own type is "result" is taken so
// ("type":"result" may also stand in an object nested in another line).
var resultType = []byte(`"type":"result"`)

// decodeLine decodes one line of claude's stdout; false when it is not JSON.
func decodeLine(b []byte) (line, bool) {
	if bytes.Contains(b, resultType) {
		var wr wireResult
		if json.Unmarshal(b, &wr) == nil && wr.Type == "result" {
			return line{msg: wireMsg{Type: "result", Subtype: wr.Subtype, SessionID: wr.SessionID}, raw: b, res: &wr}, true
		}
	}
	var m wireMsg
	if json.Unmarshal(b, &m) != nil {
		return line{}, false
	}
	return line{msg: m, raw: b}, true
}

// reap waits for p to exit and for its stdout reader (closing stdout after KillGrace when
// a grandchild still holds it open), records the exit code, closes p.exited, removes the
// TMPDIR and drops p from the pool.
func (r *Runner) reap(p *proc, stdout *os.File, dead chan<- struct{}, readerDone <-chan struct{}) {
	code := p.run.Wait()
	t := time.NewTimer(r.cfg.KillGrace)
	select {
	case <-readerDone:
	case <-t.C:
		// A grandchild holds stdout open.
		stdout.Close()
	}
	t.Stop()
	close(dead)
	<-readerDone
	stdout.Close()
	p.exitCode = code
	p.run.Release()
	close(p.exited)
	_ = os.RemoveAll(p.tmpdir)
	if p.late != nil {
		p.late.tools.Drop(p.late.handle) // its token acts for nobody any more
	}
	r.mu.Lock()
	r.removeLocked(p)
	key := p.key // a spare's changes when a chat adopts it (under r.mu)
	r.mu.Unlock()
	if p.own != nil {
		p.own.Remove() // adopted, only the link goes (the directories are the chat's)
	}
	r.log.Debug("claude exited", "key", key, "pid", p.pid, "code", code)
}

// systemPrompt combines the configured text, file and the turn's extra text.
func (c *Config) systemPrompt(extra string) (string, error) {
	var parts []string
	if s := strings.TrimSpace(c.SystemPrompt); s != "" {
		parts = append(parts, s)
	}
	if c.SystemPromptFile != "" {
		b, err := os.ReadFile(c.SystemPromptFile)
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

// stopAsync ends p in the background: close stdin (claude exits at EOF), SIGTERM to the
// group after KillGrace, SIGKILL after another.
func (r *Runner) stopAsync(p *proc) {
	stopping(p)
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

// kill sends SIGTERM to p and what it started, SIGKILL after KillGrace, waits for p, and
// ends what outlived it.
func (r *Runner) kill(p *proc) {
	stopping(p)
	p.run.Signal(syscall.SIGTERM)
	t := time.NewTimer(r.cfg.KillGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		r.log.Warn("claude ignored SIGTERM; killing", "pid", p.pid)
		p.run.Signal(syscall.SIGKILL)
		<-p.exited
	}
	p.run.KillLeftovers()
}

// ending tells p's process, when it is a sandbox.Ender, that the runner will end it.
func ending(p *proc) {
	if e, ok := p.run.(sandbox.Ender); ok {
		e.Ending()
	}
}

// stopping tells p's process, when it is a sandbox.Ender, that the runner ends it now.
func stopping(p *proc) {
	if e, ok := p.run.(sandbox.Ender); ok {
		e.Stopping()
	}
}

// process is one started claude as the runner drives it, whatever launcher started it
// (sandbox.Process).
type process = sandbox.Process
