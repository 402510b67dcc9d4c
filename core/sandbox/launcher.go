package sandbox

// The launcher interface the runner starts claude through, and the two launchers that
// start it as the host's own child: Direct (no sandbox) and PerStart (a bubblewrap per
// start). The third, Pool (pool_linux.go), starts it in an agent's recycled sandboxes.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/proctree"
	"github.com/clawhost/clawhost/core/internal/runas"
)

// Launcher starts processes for the runner: start one for this Cmd; Close stops what the
// launcher keeps between starts (a recycled sandbox pool's idle sandboxes) and waits for
// its work, the processes it started stop with their own end.
type Launcher interface {
	Start(c Cmd) (*Started, error)
	Close()
}

// Cmd is one process to start.
type Cmd struct {
	// Path is the executable (as exec.LookPath found it), Args its arguments.
	Path string
	Args []string
	Env  []string
	// Dir is the working directory: the workspace, or the chat's worktree.
	Dir string
	// User runs the process as another user (agent.run_as); nil: as the host.
	User *runas.User
	// Stderr gets the process's standard error.
	Stderr io.Writer
	// View is what the process may see (SpecFor): required by PerStart and Pool,
	// ignored by Direct.
	View *Spec
	// Agent names the agent whose recycled sandboxes (Pool) the process starts in.
	Agent string
}

// Started is a started process: its Process, and the host's ends of its stdin and stdout.
type Started struct {
	Process Process
	Stdin   io.WriteCloser
	Stdout  *os.File
}

// Process is one started claude as the runner drives it, whatever started it: reap,
// kill, the pool and the memory meter use only this.
type Process interface {
	// PID is the process the host signals and measures the memory of (with its
	// descendants): claude, or the bubblewrap that runs it.
	PID() int
	// ClaudePID is claude's own pid as the host sees it (the status page); PID when
	// claude is the host's child.
	ClaudePID() int
	// Signal sends sig to claude and every process it started; an error (all gone) is
	// ignored. It does not block.
	Signal(sig syscall.Signal)
	// Wait blocks until the process has exited, ends what it left in its process group
	// (a host child with a lifeline) and returns its exit status: 128+signal when
	// killed, -1 when the wait itself failed. It is called once.
	Wait() int
	// Release, called once after Wait returned, lets go of what the process held while
	// it ran (its group's place on the lifeline's list, its recycled sandbox).
	Release()
	// KillLeftovers ends what outlived claude after kill, where that is still safe to
	// name (the process group; not in the sandbox, whose end took everything with it).
	KillLeftovers()
}

// Ender is a Process that is told when the runner decides to end it and when it asks it
// to (a claude in a recycled sandbox: its pool counts the sandbox as coming back). Neither
// blocks; either may come more than once, and after the process exited.
type Ender interface {
	// Ending: the runner has decided to end the process (evicted to make room), and
	// will ask it to later.
	Ending()
	// Stopping: the runner asks the process to end now (stop or kill).
	Stopping()
}

// Lifeline is the watcher that kills an unsandboxed claude's process group when the host
// dies (the runner's): Add lists a group (false: the watcher is not running), Remove
// takes it off.
type Lifeline interface {
	Add(pgid int) bool
	Remove(pgid int)
}

// Direct starts claude as the host's child without a sandbox, in a process group of its
// own that Lifeline (when set) kills with the host.
type Direct struct {
	Lifeline Lifeline
	// WaitDelay is exec.Cmd.WaitDelay: how long Wait waits for the output pipes after
	// the process exited.
	WaitDelay time.Duration
}

// Start starts c unsandboxed.
func (d Direct) Start(c Cmd) (*Started, error) {
	return startChild(c, c.Path, c.Args, nil, d.Lifeline, d.WaitDelay)
}

// Close does nothing: Direct keeps nothing between starts.
func (Direct) Close() {}

// PerStart starts claude in a bubblewrap of its own (Bwrap, the path Probe found), with
// the syscall filter and the mounts c.View says.
type PerStart struct {
	Bwrap     string
	WaitDelay time.Duration
}

// seccompFD is the descriptor bwrap per start reads the syscall filter from: the
// first of exec.Cmd.ExtraFiles.
const seccompFD = 3

// Start starts c in a bubblewrap.
func (b PerStart) Start(c Cmd) (*Started, error) {
	if c.View == nil {
		return nil, errors.New("a sandboxed start without its view")
	}
	argv := c.View.BwrapArgs()
	f, err := confine.FilterFile()
	if err != nil {
		return nil, err
	}
	defer f.Close() // bwrap has its own copy once started
	return startChild(c, b.Bwrap, append(append(argv, c.Path), c.Args...), f, nil, b.WaitDelay)
}

// Close does nothing: PerStart keeps nothing between starts.
func (PerStart) Close() {}

// startChild starts exe with args as the host's child for c: bubblewrap (filter, its
// syscall filter's descriptor) or claude itself (listed on lifeline when set).
func startChild(c Cmd, exe string, args []string, filter *os.File, lifeline Lifeline, waitDelay time.Duration) (*Started, error) {
	cmd := exec.Command(exe, args...)
	if filter != nil {
		cmd.ExtraFiles = []*os.File{filter} // seccompFD
	}
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.SysProcAttr = sysProcAttr(c.User)
	cmd.WaitDelay = waitDelay
	cmd.Stderr = c.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start %s: %w", c.Path, err)
	}
	pw.Close()
	child := &hostChild{cmd: cmd, sandboxed: filter != nil}
	if !child.sandboxed && lifeline != nil {
		// In the sandbox bubblewrap's --die-with-parent and the end of claude's PID
		// namespace do the lifeline's work (TestKill9KillsClaudesTools): the host's death
		// kills bwrap (Pdeathsig), bwrap's the namespace's init, and the init's end every
		// process in the namespace, whatever its group or session; so does claude's own
		// exit.
		if lifeline.Add(cmd.Process.Pid) {
			child.lifeline = lifeline
		}
	}
	return &Started{Process: child, Stdin: stdin, Stdout: pr}, nil
}

// hostChild is a claude process (or bubblewrap running it) the host started itself, in
// its own process group (sysProcAttr).
type hostChild struct {
	cmd       *exec.Cmd
	lifeline  Lifeline // the watcher listing its group; nil without one
	sandboxed bool     // runs in bubblewrap: its PID namespace ends with it
	cleared   bool     // Wait killed what claude left in its group before reaping it
}

var _ Process = (*hostChild)(nil)

func (h *hostChild) PID() int { return h.cmd.Process.Pid }

func (h *hostChild) ClaudePID() int {
	if h.sandboxed {
		return proctree.Inner(h.PID())
	}
	return h.PID()
}

func (h *hostChild) Signal(sig syscall.Signal) { signalGroup(h.PID(), sig) }

func (h *hostChild) Wait() int {
	if h.lifeline != nil && waitExited(h.PID()) {
		// What claude left in its group ends with it, killed while claude's zombie
		// still holds the group's id (lifeline).
		signalGroup(h.PID(), syscall.SIGKILL)
		h.cleared = true
	}
	return exitCode(h.cmd.Wait())
}

func (h *hostChild) Release() {
	if h.lifeline == nil {
		return
	}
	if !h.cleared {
		// Where an exited child cannot be waited for without reaping it (not Linux).
		signalGroup(h.PID(), syscall.SIGKILL)
	}
	h.lifeline.Remove(h.PID())
}

func (h *hostChild) KillLeftovers() {
	// Tools that outlived claude in its group (in the sandbox none: the group may be
	// gone, and its id another's).
	if !h.sandboxed {
		signalGroup(h.PID(), syscall.SIGKILL)
	}
}

// exitCode maps cmd.Wait's error to an exit status: 128+signal when killed, -1 when the
// wait itself failed.
func exitCode(werr error) int {
	if werr == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
