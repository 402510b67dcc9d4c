package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/pluginstderr"
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
	stderr *pluginstderr.Log
}

// launchTestPlugin starts the plugin at path and returns it with the host's
// client of it.
func launchTestPlugin(path, dataDir string, timeout time.Duration, log hclog.Logger) (*testProc, *pluginclient.Plugin, error) {
	w := &pluginstderr.Log{}
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
func handshakeHint(err error, w *pluginstderr.Log) error {
	if tail := w.Tail(5); tail != "" {
		return fmt.Errorf("%w\nthe plugin's last stderr lines:\n%s", err, tail)
	}
	return err
}

// stop stops the plugin as the host does (SIGTERM to its process group,
// SIGKILL after grace) and says what a host would have complained about:
// no exit within grace, an exit status other than 0, or lines the host logs
// as WARN or ERROR written while stopping.
func (p *testProc) stop(grace time.Duration) error {
	mark := p.stderr.Mark()
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
	var bad []string
	for _, l := range p.stderr.Since(mark) {
		if pluginstderr.Level(l) >= hclog.Warn {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		errs = append(errs, fmt.Errorf("while stopping, the plugin wrote lines the host logs as WARN or ERROR:\n%s", strings.Join(bad, "\n")))
	}
	return errors.Join(errs...)
}
