package pluginhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/internal/deathsig"
	"github.com/clawhost/clawhost/core/internal/pluginstderr"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/hashicorp/go-plugin/runner"
)

// spawner starts processes from one goroutine locked to one OS thread that
// never exits. Pdeathsig is delivered when the *thread* that forked the child
// exits, not the process; forking from a thread the Go runtime might retire
// would kill plugins at random. With this, a plugin gets SIGKILL exactly when
// the host process dies, even by SIGKILL.
type spawner struct {
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnReq)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for r := range s.reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}

// procRunner is a go-plugin runner.Runner that execs through the spawner,
// with Pdeathsig set, stops the plugin politely (terminate) and kills the
// whole process group.
type procRunner struct {
	log    hclog.Logger
	sp     *spawner
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	tail   *pluginstderr.Log // the last lines of stderr, for errors
	name   string            // the plugin's binary when cmd is another's (bwrap); "": cmd's
	pid    int
	// onPID is told the pid once the process started and again, with
	// alive false, once it has been reaped, so a status never names a
	// process that is gone.
	onPID func(pid int, alive bool)

	exited   chan struct{} // closed when the process has been reaped
	waitErr  error         // cmd.Wait's, set before exited is closed
	stopping atomic.Bool   // terminate was called: a signal death is expected
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(log hclog.Logger, sp *spawner, cmd *exec.Cmd, user *runas.User, onPID func(pid int, alive bool)) (*procRunner, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: user.Credential()}
	deathsig.Set(cmd.SysProcAttr)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &procRunner{log: log, sp: sp, cmd: cmd, stdout: stdout, stderr: stderr, tail: &pluginstderr.Log{}, onPID: onPID, exited: make(chan struct{})}, nil
}

func (r *procRunner) Start(context.Context) error {
	err := r.sp.start(r.cmd)
	// The descriptors handed to the child (an untrusted plugin's filter and
	// verified binary) are its own now.
	for _, f := range r.cmd.ExtraFiles {
		_ = f.Close()
	}
	if err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	if r.onPID != nil {
		r.onPID(r.pid, true)
	}
	r.log.Debug("plugin process started", "pid", r.pid)
	return nil
}

// Wait reaps the process (go-plugin calls it once, from its own goroutine,
// and logs its result: an error as ERROR "plugin process exited"). A death
// by SIGTERM or SIGKILL after terminate is the outcome the host asked for,
// not a failure, so it is reported as a clean exit; terminate has already
// logged the one warning a SIGKILL deserves.
func (r *procRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.waitErr = err
	close(r.exited)
	if r.onPID != nil {
		r.onPID(r.pid, false)
	}
	if err != nil && r.stopping.Load() && killedByStop(err) {
		r.log.Debug("plugin process ended by stop signal", "pid", r.pid, "status", err)
		return nil
	}
	return err
}

// killedByStop reports whether err (from cmd.Wait) says the process died of
// SIGTERM or SIGKILL.
func killedByStop(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGTERM || ws.Signal() == syscall.SIGKILL)
}

// terminate stops the plugin politely and returns once its process has been
// reaped: SIGTERM to its process group (the sdk stops gracefully on it:
// the channel's Run returns, the process exits 0; a plugin in any language
// can do the same), then, if the plugin is still running after grace,
// SIGKILL to the group (Stopped.Killed: the caller warns). Whatever the
// plugin left running in its group is killed in either case.
//
// Why SIGTERM and not go-plugin's own graceful shutdown (Client.Kill: a
// Shutdown RPC to the plugin's GRPCController service, then a hard-coded 2 s
// wait, then "plugin failed to exit gracefully" and SIGKILL): the RPC exists
// only in plugins built on go-plugin, so a plugin written in another
// language was SIGKILLed after 2 s with a WARN and an ERROR on every stop
// and reload; and 2 s is not ours to choose. A signal is understood by every
// process. Client.Kill still runs afterwards, on a process that is gone, to
// close the connection quietly.
func (r *procRunner) terminate(grace time.Duration) Stopped {
	if r.cmd.Process == nil || r.pid <= 0 {
		return Stopped{}
	}
	var st Stopped
	select {
	case <-r.exited: // it ended on its own (a crash)
		st.Crashed = true
	default:
		r.stopping.Store(true)
		_ = syscall.Kill(-r.pid, syscall.SIGTERM) // the plugin's own process group (Setpgid)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-r.exited:
		case <-t.C:
			st.Killed = true
			_ = syscall.Kill(-r.pid, syscall.SIGKILL)
			<-r.exited
		}
	}
	// Whatever the plugin left behind in its group.
	_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	st.State = r.state()
	return st
}

// state says how the process ended; call it after exited is closed.
func (r *procRunner) state() string {
	var ee *exec.ExitError
	if errors.As(r.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	if r.waitErr != nil {
		return r.waitErr.Error()
	}
	return r.cmd.ProcessState.String()
}

// Kill kills the plugin's process group (the plugin and anything it
// started) at once. go-plugin calls it when the handshake fails; a running
// plugin is stopped with terminate first.
func (r *procRunner) Kill(context.Context) error {
	if r.cmd.Process == nil || r.pid <= 0 {
		return nil
	}
	_ = syscall.Kill(-r.pid, syscall.SIGKILL) // the plugin's own process group (Setpgid)
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser {
	return struct {
		io.Reader
		io.Closer
	}{pluginstderr.NewGuard(io.TeeReader(r.stderr, r.tail)), r.stderr}
}
func (r *procRunner) Name() string { return cmp.Or(r.name, r.cmd.Args[0]) }
func (r *procRunner) ID() string   { return fmt.Sprint(r.pid) }

// Diagnose is what go-plugin adds to "Unrecognized remote plugin message"
// (`clawhost plugin test` shows it; the supervisor says it in plain words,
// see handshakeError).
func (r *procRunner) Diagnose(context.Context) string {
	return "the plugin did not complete the clawhost handshake (proto/PROTOCOL.md, \"Handshake\")"
}
func (r *procRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (r *procRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }
