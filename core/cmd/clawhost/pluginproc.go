package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/core/internal/envfilter"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/host"
)

// testEnv names the variables of this process a plugin under test inherits:
// the same as the host's (core/pluginhost/env.go), so that a plugin that
// passes here does not rely on anything the host would not give it.
var testEnv = []string{"PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "LANG", "LC_*", "TZ"}

// testProc is one plugin process launched by `clawhost plugin test` the way
// the host launches plugins: go-plugin's handshake with the clawhost
// cookie, a unix socket directory, a minimal environment, its own process
// group, its data dir as working directory.
type testProc struct {
	client *plugin.Client
	run    *testRunner
	stderr *stderrWatch
}

// launchTestPlugin starts the plugin at path and returns it with the host's
// client of it.
func launchTestPlugin(path, dataDir string, timeout time.Duration, log hclog.Logger) (*testProc, *host.Plugin, error) {
	p := &testProc{stderr: &stderrWatch{}}
	p.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  host.Handshake,
		Plugins:          host.PluginSet(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		Logger:           log,
		GRPCDialOptions:  host.DialOptions(),
		SkipHostEnv:      true,
		Stderr:           p.stderr,
		UnixSocketConfig: &plugin.UnixSocketConfig{TempDir: filepath.Dir(dataDir)},
		RunnerFunc: func(l hclog.Logger, tmpl *exec.Cmd, _ string) (runner.Runner, error) {
			cmd := exec.Command(path)
			cmd.Env = append(envfilter.Keep(os.Environ(), testEnv...), append(slices.Clone(tmpl.Env), sdk.EnvLogLevel+"=debug")...)
			cmd.Dir = dataDir
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			r, err := newTestRunner(cmd, p.stderr)
			p.run = r
			return r, err
		},
	})
	rpc, err := p.client.Client()
	if err != nil {
		// go-plugin has killed the process; Client.Kill would only add a
		// misleading "plugin failed to exit gracefully". The socket
		// directory is under dataDir's parent, removed by the caller.
		if p.run != nil {
			_ = p.run.Kill(context.Background())
		}
		return nil, nil, fmt.Errorf("handshake: %w", handshakeHint(err, p.stderr))
	}
	raw, err := rpc.Dispense(host.PluginName)
	if err != nil {
		_ = p.stop(time.Second)
		return nil, nil, fmt.Errorf("dispense: %w", err)
	}
	conn, ok := raw.(*grpc.ClientConn)
	if !ok {
		_ = p.stop(time.Second)
		return nil, nil, fmt.Errorf("dispense: unexpected client type %T", raw)
	}
	return p, host.Wrap(conn), nil
}

// handshakeHint adds the plugin's last stderr lines to a failed handshake.
func handshakeHint(err error, w *stderrWatch) error {
	if tail := w.tail(5); tail != "" {
		return fmt.Errorf("%w\nthe plugin's last stderr lines:\n%s", err, tail)
	}
	return err
}

// stop stops the plugin as the host does (SIGTERM to its process group,
// SIGKILL after grace) and says what a host would have complained about:
// no exit within grace, an exit status other than 0, or lines the host logs
// as WARN or ERROR written while stopping.
func (p *testProc) stop(grace time.Duration) error {
	if p.run == nil || p.run.pid <= 0 {
		p.client.Kill()
		return nil
	}
	mark := p.stderr.mark()
	var errs []error
	select {
	case <-p.run.exited: // it had already ended (a crash)
		errs = append(errs, fmt.Errorf("the plugin had exited before it was stopped: %s", p.run.state()))
	default:
		p.run.stopping.Store(true)
		_ = syscall.Kill(-p.run.pid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-p.run.exited:
			if st := p.run.state(); st != "exit status 0" && st != "signal: terminated" {
				errs = append(errs, fmt.Errorf("after SIGTERM the plugin ended with %s, want exit status 0", st))
			}
		case <-t.C:
			_ = syscall.Kill(-p.run.pid, syscall.SIGKILL)
			<-p.run.exited
			errs = append(errs, fmt.Errorf("the plugin was still running %s after SIGTERM and was killed (the host logs this as a WARN)", grace))
		}
		t.Stop()
	}
	_ = syscall.Kill(-p.run.pid, syscall.SIGKILL) // whatever it left in its group
	p.client.Kill()
	if bad := p.stderr.badSince(mark); len(bad) > 0 {
		errs = append(errs, fmt.Errorf("while stopping, the plugin wrote lines the host logs as WARN or ERROR:\n%s", strings.Join(bad, "\n")))
	}
	return errors.Join(errs...)
}

// testRunner is a go-plugin runner.Runner over one exec.Cmd in its own
// process group. It remembers how the process ended.
type testRunner struct {
	cmd            *exec.Cmd
	stdout, stderr io.ReadCloser
	watch          *stderrWatch
	pid            int
	exited         chan struct{}
	waitErr        error
	stopping       atomic.Bool
}

var _ runner.Runner = (*testRunner)(nil)

func newTestRunner(cmd *exec.Cmd, w *stderrWatch) (*testRunner, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	return &testRunner{cmd: cmd, stdout: stdout, stderr: stderr, watch: w, exited: make(chan struct{})}, nil
}

func (r *testRunner) Start(context.Context) error {
	if err := r.cmd.Start(); err != nil {
		return err
	}
	r.pid = r.cmd.Process.Pid
	return nil
}

// Wait reaps the process. A death by SIGTERM after stop is what was asked
// for; go-plugin would log any error as ERROR, so it is not one.
func (r *testRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.waitErr = err
	close(r.exited)
	var ee *exec.ExitError
	if errors.As(err, &ee) && r.stopping.Load() {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil
		}
	}
	return err
}

// state says how the process ended; call it after exited is closed.
func (r *testRunner) state() string {
	if r.waitErr != nil {
		var ee *exec.ExitError
		if errors.As(r.waitErr, &ee) {
			return ee.ProcessState.String()
		}
		return r.waitErr.Error()
	}
	return r.cmd.ProcessState.String()
}

func (r *testRunner) Kill(context.Context) error {
	if r.pid > 0 {
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
	}
	return nil
}

func (r *testRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *testRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *testRunner) Name() string          { return r.cmd.Path }
func (r *testRunner) ID() string            { return fmt.Sprint(r.pid) }
func (r *testRunner) Diagnose(context.Context) string {
	return "the plugin did not complete the clawhost handshake (proto/PROTOCOL.md, \"Handshake\")"
}
func (r *testRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (r *testRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }

// stderrWatch keeps the lines a plugin wrote to stderr (go-plugin copies
// them here, as ClientConfig.Stderr) to tell which ones the host logs at
// WARN or ERROR. Safe for concurrent use.
type stderrWatch struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

// maxKept bounds the lines kept.
const maxKept = 10000

// Write implements io.Writer.
func (w *stderrWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		if len(w.lines) < maxKept {
			w.lines = append(w.lines, string(w.partial[:i]))
		}
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// mark returns the number of lines seen so far.
func (w *stderrWatch) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

// tail returns the last n lines.
func (w *stderrWatch) tail(n int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines[max(0, len(w.lines)-n):], "\n")
}

// badSince returns the lines from mark on that the host logs at WARN or
// ERROR, by go-plugin's rules: an hclog JSON line whose @level is warn or
// error; a plain line starting with [WARN] or [ERROR], or a panic.
func (w *stderrWatch) badSince(mark int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var bad []string
	for _, l := range w.lines[min(mark, len(w.lines)):] {
		if hostLevel(l) >= hclog.Warn {
			bad = append(bad, l)
		}
	}
	return bad
}

// hostLevel is the level go-plugin's host logs a plugin's stderr line at.
func hostLevel(line string) hclog.Level {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) == nil {
		if lv, ok := m["@level"].(string); ok {
			if l := hclog.LevelFromString(lv); l != hclog.NoLevel {
				return l
			}
		}
		return hclog.Debug
	}
	switch {
	case strings.HasPrefix(line, "[WARN]"):
		return hclog.Warn
	case strings.HasPrefix(line, "[ERROR]"), strings.HasPrefix(line, "panic: "), strings.HasPrefix(line, "fatal error: "):
		return hclog.Error
	}
	return hclog.Debug
}
