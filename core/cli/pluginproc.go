package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// testProc is one plugin process launched by `clawhost plugin test` the way
// the host launches plugins (pluginhost.Launch: go-plugin's handshake with
// the clawhost cookie, a unix socket directory, a minimal environment, its
// own process group, its data dir as working directory), with its stderr
// watched.
type testProc struct {
	proc   *pluginhost.Process
	stderr *stderrWatch
}

// launchTestPlugin starts the plugin at path and returns it with the host's
// client of it.
func launchTestPlugin(path, dataDir string, timeout time.Duration, log hclog.Logger) (*testProc, *pluginclient.Plugin, error) {
	w := &stderrWatch{}
	proc, plug, err := pluginhost.Launch(pluginhost.ProcessSpec{
		Path:         path,
		Dir:          dataDir,
		LogLevel:     "debug",
		SocketDir:    filepath.Dir(dataDir), // removed by the caller
		StartTimeout: timeout,
		Logger:       log,
		Stderr:       w,
	})
	if err != nil {
		var he *pluginhost.HandshakeError
		if errors.As(err, &he) {
			return nil, nil, fmt.Errorf("handshake: %w", handshakeHint(he.Err, w))
		}
		return nil, nil, fmt.Errorf("dispense: %w", err)
	}
	return &testProc{proc: proc, stderr: w}, plug, nil
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
	mark := p.stderr.mark()
	st := p.proc.Stop(grace)
	var errs []error
	switch {
	case st.Crashed:
		errs = append(errs, fmt.Errorf("the plugin had exited before it was stopped: %s", st.State))
	case st.Killed:
		errs = append(errs, fmt.Errorf("the plugin was still running %s after SIGTERM and was killed (the host logs this as a WARN)", grace))
	case st.State != "" && st.State != "exit status 0" && st.State != "signal: terminated":
		errs = append(errs, fmt.Errorf("after SIGTERM the plugin ended with %s, want exit status 0", st.State))
	}
	if bad := p.stderr.badSince(mark); len(bad) > 0 {
		errs = append(errs, fmt.Errorf("while stopping, the plugin wrote lines the host logs as WARN or ERROR:\n%s", strings.Join(bad, "\n")))
	}
	return errors.Join(errs...)
}

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
