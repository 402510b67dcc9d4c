package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// faultProcess is the fault plugin of mode as Launch starts it, with the
// block env that selects the mode.
func faultProcess(t *testing.T, mode string, stderr *sdktest.Log) launchSpec {
	t.Helper()
	dir := t.TempDir()
	return launchSpec{
		ProcessSpec: ProcessSpec{Path: os.Args[0], Dir: dir, LogLevel: "debug", SocketDir: dir, StartTimeout: 5 * time.Second, Logger: hclog.NewNullLogger(), Stderr: stderr},
		env:         []string{"CLAWHOST_FAULT=" + mode},
	}
}

// TestLaunchStop: the one launch path starts a plugin in its own process
// group with the plugin environment (not the host's secrets), copies its
// stderr, and Stop says how it ended: a clean exit, a death by SIGTERM, a
// SIGKILL after the grace period — what `clawhost plugin test` reports
// and the supervisor warns about.
func TestLaunchStop(t *testing.T) {
	const secret = "hunter2-launch-secret"
	t.Setenv("CLAWHOST_TEST_SECRET", secret)
	// grace is Stop's wait before SIGKILL: long for a plugin that ends on
	// SIGTERM (a loaded machine, a -race build, must not turn its exit into
	// a kill), short for the one that ignores it.
	for _, tc := range []struct {
		mode  string
		grace time.Duration
		want  Stopped
	}{
		{"logs", 10 * time.Second, Stopped{State: "exit status 0"}}, // logs at every level when configured
		{"termdefault", 10 * time.Second, Stopped{State: "signal: terminated"}},
		{"ignoreterm", 300 * time.Millisecond, Stopped{Killed: true, State: "signal: killed"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			var stderr sdktest.Log
			spec := faultProcess(t, tc.mode, &stderr)
			var mu sync.Mutex
			pid := 0
			spec.onPID = func(p int, alive bool) {
				mu.Lock()
				defer mu.Unlock()
				if alive {
					pid = p
				}
			}
			proc, plug, err := launch(spec)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := plug.Configure(ctx, schema.Config{Instance: "f", JSON: []byte(`{}`), DataDir: spec.Dir}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			p := pid
			mu.Unlock()
			if pgid, err := syscall.Getpgid(p); err != nil || pgid != p {
				t.Errorf("process group %d (%v), want its own (%d)", pgid, err, p)
			}
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(environ), secret) || !strings.Contains(string(environ), sdk.EnvLogLevel+"=debug") {
				t.Errorf("environment %q: want %s=debug and not the host's secret", environ, sdk.EnvLogLevel)
			}
			if got := proc.Stop(tc.grace); got != tc.want {
				t.Errorf("Stop: %+v, want %+v", got, tc.want)
			}
			if tc.mode == "logs" && !strings.Contains(stderr.String(), "@level") {
				t.Error("the plugin's stderr was not copied to ProcessSpec.Stderr")
			}
		})
	}
}

// TestLaunchHandshakeError: a plugin that writes to stdout before the
// handshake fails with a *HandshakeError that says so in plain words and
// keeps go-plugin's own message (which `clawhost plugin test` prints).
func TestLaunchHandshakeError(t *testing.T) {
	_, _, err := launch(faultProcess(t, "stdout", &sdktest.Log{}))
	var he *HandshakeError
	if !errors.As(err, &he) {
		t.Fatalf("error %v (%T), want a *HandshakeError", err, err)
	}
	if !strings.Contains(err.Error(), `wrote "a plugin that prints to stdout" to stdout before the handshake`) {
		t.Errorf("Error() = %q, want the plain words", err)
	}
	if msg := he.Err.Error(); !strings.Contains(msg, "Unrecognized remote plugin message: a plugin that prints to stdout") || !strings.Contains(msg, `proto/PROTOCOL.md, "Handshake"`) {
		t.Errorf("Err = %q, want go-plugin's message with the diagnosis", msg)
	}
}
