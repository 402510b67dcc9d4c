package pluginhost

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// ProcessSpec says how to start one plugin process. Every plugin binary
// clawhost runs is started by Launch from one: the supervisor's instances,
// the checks of `clawhost validate` and of a reload (Supervisor.Check), and
// `clawhost plugin test`. So a plugin gets the same environment, process
// group, Pdeathsig, socket directory and handshake everywhere.
type ProcessSpec struct {
	// Path is the plugin binary (the process's argv[0]).
	Path string
	// Dir is the working directory (the instance's data dir).
	Dir string
	// LogLevel is handed to the plugin as sdk.EnvLogLevel.
	LogLevel string
	// SocketDir is where go-plugin makes the directory of the process's
	// socket.
	SocketDir string
	// StartTimeout bounds the handshake; zero means 10 s.
	StartTimeout time.Duration
	// Logger is go-plugin's logger: the plugin's stderr lines are logged
	// through it.
	Logger hclog.Logger
	// Stderr, when set, also gets every line the plugin writes to stderr,
	// as written.
	Stderr io.Writer
}

// launchSpec is a ProcessSpec with what only the supervisor sets.
type launchSpec struct {
	ProcessSpec
	exe         string      // what is exec'd; empty: Path (see execPath)
	env         []string    // the plugin block's env ("NAME=value")
	user        *runas.User // run_as; nil: the host's user
	socketGroup string      // the socket directory's group (run_as)
	verified    *os.File    // the binary checked against sha256 (exe names it); nil: none
	bwrap       string      // bubblewrap's path: run confined (untrusted_input); "": not
	confined    confinement // what bubblewrap grants, but the socket directory
	onPID       func(pid int, alive bool)
	onRunner    func(*procRunner) // told the runner before it starts
}

// Process is one plugin process started by Launch (or a process started by
// hand that the host attached to: run nil).
type Process struct {
	client *plugin.Client
	run    *procRunner
}

// HandshakeError is a failed go-plugin handshake. Its Error says in plain
// words why when go-plugin's message would mislead (see handshakeError);
// Err is go-plugin's own error.
type HandshakeError struct{ Err error }

func (e *HandshakeError) Error() string { return handshakeError(e.Err).Error() }
func (e *HandshakeError) Unwrap() error { return e.Err }

// spawnerOnce is the process's one spawner (see spawner): every plugin is
// forked from the same locked thread.
var spawnerOnce = sync.OnceValue(newSpawner)

// Launch starts the plugin binary of s and completes the handshake. A
// failed handshake is a *HandshakeError.
func Launch(s ProcessSpec) (*Process, *pluginclient.Plugin, error) {
	return launch(launchSpec{ProcessSpec: s})
}

// launch execs s's binary through the spawner and handshakes: the
// environment is pluginEnv's, the process gets its own process group and
// Pdeathsig (procRunner), and run_as's credentials when s.user is set.
func launch(s launchSpec) (*Process, *pluginclient.Plugin, error) {
	// A relative path is the caller's (`clawhost plugin schema
	// ./clawhost-x`): the plugin starts in s.Dir, where exec would look
	// for it otherwise.
	if abs, err := filepath.Abs(s.Path); err == nil && s.Path != "" {
		s.Path = abs
	}
	exe := s.exe
	if exe == "" {
		exe = s.Path
	}
	timeout := s.StartTimeout
	if timeout <= 0 {
		timeout = defaultStartTimeout
	}
	log := s.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	p := &Process{}
	var sockDir string
	p.client = pluginclient.NewClient(pluginclient.Launch{
		StartTimeout: timeout,
		Logger:       log,
		SocketDir:    s.SocketDir,
		SocketGroup:  s.socketGroup,
		Stderr:       s.Stderr,
		// Not the host's environment: pluginEnv decides what a plugin
		// sees. go-plugin hands us a template cmd carrying only its
		// handshake environment; we exec the real one through the spawner
		// so Pdeathsig holds.
		Runner: func(l hclog.Logger, tmpl *exec.Cmd, dir string) (runner.Runner, error) {
			sockDir = dir
			cmd := exec.Command(exe)
			cmd.Args = []string{s.Path}
			own := append(slices.Clone(tmpl.Env), sdk.EnvLogLevel+"="+s.LogLevel)
			extra := s.env
			if s.bwrap != "" {
				extra = append(sandboxEnv(s.Dir), extra...)
			}
			if s.user != nil {
				extra = append(s.user.Env(), extra...)
			}
			cmd.Env = pluginEnv(os.Environ(), extra, own)
			cmd.Dir = s.Dir
			if s.bwrap != "" {
				var err error
				if cmd, err = s.confine(cmd, dir); err != nil {
					return nil, err
				}
			}
			r, err := newProcRunner(l, spawnerOnce(), cmd, s.user, s.onPID)
			if r != nil {
				r.name = s.Path
				p.run = r
				if s.onRunner != nil {
					s.onRunner(r)
				}
			}
			return r, err
		},
	})
	rpc, err := p.client.Client()
	if err != nil {
		// go-plugin has killed the process. Not Client.Kill, which would
		// only add a misleading "plugin failed to exit gracefully": the
		// group is killed, its stderr read to the end (Wait runs after
		// go-plugin read it), and the socket directory removed.
		if p.run != nil && p.run.pid > 0 {
			_ = p.run.Kill(context.Background())
			<-p.run.exited
		}
		if sockDir != "" {
			_ = os.RemoveAll(sockDir)
		}
		return nil, nil, &HandshakeError{Err: err}
	}
	plug, err := pluginclient.Dispense(rpc)
	if err != nil {
		p.Stop(time.Second)
		return nil, nil, err
	}
	return p, plug, nil
}

// Stopped says how a process ended when it was stopped.
type Stopped struct {
	// Crashed: it had exited before it was stopped.
	Crashed bool
	// Killed: it was still running after the grace period and got SIGKILL.
	Killed bool
	// State is how it ended, as os.ProcessState says it ("exit status 0",
	// "signal: terminated"); empty for an attached process.
	State string
}

// Stop stops the process (procRunner.terminate: SIGTERM to its process
// group, SIGKILL after grace; whatever it left in its group is killed),
// then closes the connection. An attached process is only asked to stop
// over its connection.
func (p *Process) Stop(grace time.Duration) Stopped {
	if p.run == nil { // attached (debug mode): close the connection only
		if rpc, err := p.client.Client(); err == nil {
			_ = rpc.Close()
		}
		p.client.Kill()
		return Stopped{}
	}
	st := p.run.terminate(grace)
	p.client.Kill()
	return st
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool { return p.client.Exited() }

// Done is closed once the process has ended and been reaped; nil for an
// attached process (debug mode), which this host did not start and
// cannot wait for.
func (p *Process) Done() <-chan struct{} {
	if p.run == nil {
		return nil
	}
	return p.run.exited
}

// confine makes cmd (the plugin's own command) the command of bubblewrap
// that runs it as s.confined grants, with the socket directory sockDir
// writable: the syscall filter on seccompFD, the verified binary (when the
// block pins sha256) on verifiedFD. procRunner.Start closes the parent's
// copies of both once bwrap has started.
func (s launchSpec) confine(cmd *exec.Cmd, sockDir string) (*exec.Cmd, error) {
	c := s.confined
	c.path, c.dataDir, c.socketDir, c.verified = s.Path, s.Dir, sockDir, s.verified != nil
	filter, err := confine.FilterFile()
	if err != nil {
		return nil, err
	}
	out := exec.Command(s.bwrap)
	out.Args = append(append([]string{s.bwrap}, c.bwrapArgs(pathExists)...), s.Path)
	out.Env, out.Dir = cmd.Env, cmd.Dir
	out.ExtraFiles = []*os.File{filter}
	if s.verified != nil {
		out.ExtraFiles = append(out.ExtraFiles, s.verified)
	}
	return out, nil
}
