package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/hashicorp/go-hclog"
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
// with Pdeathsig set, and kills the whole process group.
type procRunner struct {
	log    hclog.Logger
	sp     *spawner
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr io.ReadCloser
	pid    int
	onPID  func(int)
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(log hclog.Logger, sp *spawner, cmd *exec.Cmd, onPID func(int)) (*procRunner, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &procRunner{log: log, sp: sp, cmd: cmd, stdout: stdout, stderr: stderr, onPID: onPID}, nil
}

func (r *procRunner) Start(context.Context) error {
	if err := r.sp.start(r.cmd); err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	if r.onPID != nil {
		r.onPID(r.pid)
	}
	r.log.Debug("plugin process started", "pid", r.pid)
	return nil
}

func (r *procRunner) Wait(context.Context) error { return r.cmd.Wait() }

// Kill kills the plugin's process group (the plugin and anything it started).
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
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.cmd.Path }
func (r *procRunner) ID() string            { return fmt.Sprint(r.pid) }
func (r *procRunner) Diagnose(context.Context) string {
	return "the plugin did not complete the clawhost handshake: is " + r.cmd.Path + " a clawhost plugin built with the sdk?"
}
func (r *procRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (r *procRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }
