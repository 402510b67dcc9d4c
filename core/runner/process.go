package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

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

// discardUnread drops lines left unread from an earlier turn.
func (p *proc) discardUnread() {
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
}

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
