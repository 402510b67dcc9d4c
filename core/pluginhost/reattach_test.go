package pluginhost

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// startDebug starts bin/clawhost-<name> by hand in debug mode, as an author
// does under a debugger, and returns the process and the CLAWHOST_REATTACH
// value it printed on stderr.
func startDebug(t *testing.T, name, instance string) (*exec.Cmd, string, *sdktest.Log) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir(t), "clawhost-"+name))
	cmd.Env = append(os.Environ(), sdk.EnvDebug+"="+instance)
	stdout := &sdktest.Log{}
	cmd.Stdout = stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	log := &sdktest.Log{}
	found := make(chan string, 1)
	go func() {
		prefix := pluginclient.EnvReattach + "='"
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			log.Write([]byte(line + "\n"))
			if v, ok := strings.CutPrefix(line, prefix); ok {
				found <- strings.TrimSuffix(v, "'")
			}
		}
	}()
	select {
	case v := <-found:
		if stdout.String() != "" {
			t.Errorf("debug mode wrote to stdout: %q", stdout.String())
		}
		return cmd, v, log
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s line from the plugin in debug mode within 10s; its stderr:\n%s", pluginclient.EnvReattach, log.String())
	}
	return nil, "", nil
}

// TestReattachDebugMode: a plugin started by hand in debug mode prints a
// CLAWHOST_REATTACH value; a host given it attaches to that process
// (the instance's binary path is never used), calls it, and on stop only
// closes the connection: the process exits by itself, with status 0.
func TestReattachDebugMode(t *testing.T) {
	cmd, value, plugLog := startDebug(t, "ping", "dbg")
	reattach, err := pluginclient.ParseReattach(value)
	if err != nil {
		t.Fatalf("parse %q: %v", value, err)
	}
	if rc := reattach["dbg"]; rc == nil || rc.Pid != cmd.Process.Pid || !rc.Test {
		t.Fatalf("reattach config %+v, want instance dbg, pid %d, test mode", reattach, cmd.Process.Pid)
	}
	// Debug mode serves authenticated too: the line carries the secret,
	// without which the socket answers nothing.
	if s := reattach["dbg"].Secret; len(s) != 64 {
		t.Fatalf("the reattach line carries a secret of %d characters, want 64", len(s))
	}
	bare := pluginclient.NewClient(pluginclient.Launch{Reattach: reattach["dbg"].ReattachConfig, Logger: hclog.NewNullLogger()})
	if rpc, err := bare.Client(); err != nil {
		t.Fatalf("connect without the secret: %v", err)
	} else {
		plug, err := pluginclient.Dispense(rpc)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err = plug.Describe(ctx)
			cancel()
		}
		if err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
			t.Errorf("a client without the secret: %v; want Unauthenticated", err)
		}
		_ = rpc.Close()
	}
	log := &sdktest.Log{}
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: log}), Reattach: reattach})
	t.Cleanup(h.Stop)
	defer func() {
		if t.Failed() {
			t.Logf("host log:\n%s\nplugin stderr:\n%s", log.String(), plugLog.String())
		}
	}()
	h.Apply([]Spec{{Instance: "dbg", Source: "ping", Path: filepath.Join(t.TempDir(), "never-built"), Fingerprint: "1"}})
	st := waitState(t, h.Instance("dbg"), StateReady)
	if st.PID != cmd.Process.Pid {
		t.Errorf("status pid %d, want the debugged process %d", st.PID, cmd.Process.Pid)
	}
	plug, desc, ok := h.Instance("dbg").Client()
	if !ok || desc.Name != "ping" || !desc.Command {
		t.Fatalf("client: ok=%v description %+v", ok, desc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := plug.Execute(ctx, command.Request{Command: "ping", Args: "from the host"})
	if err != nil || len(res.Replies) != 1 || res.Replies[0].Text != "pong from the host" {
		t.Fatalf("execute: %+v %v", res, err)
	}

	h.Apply(nil)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("the host signalled the process it attached to: %v", err)
			}
			t.Fatalf("debug-mode plugin exited with %v, want 0", err)
		} else if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the debug-mode plugin did not exit within 10s of the host stopping the instance")
	}
	if strings.Contains(log.String(), "[ERROR]") {
		t.Errorf("ERROR lines in the host log")
	}
}

// TestReattachGone: an instance whose debug-mode process is gone settles
// as missing with an error that says what to do, instead of a restart
// loop.
func TestReattachGone(t *testing.T) {
	reattach, err := pluginclient.ParseReattach(`{"dbg":{"Protocol":"grpc","ProtocolVersion":1,"Pid":2147483000,"Test":true,"Addr":{"Network":"unix","String":"` + filepath.Join(t.TempDir(), "gone.sock") + `"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Logger: hclog.NewNullLogger(), Reattach: reattach})
	t.Cleanup(h.Stop)
	h.Apply([]Spec{{Instance: "dbg", Source: "ping", Path: "/nonexistent", Fingerprint: "1"}})
	st := waitState(t, h.Instance("dbg"), StateMissing)
	if !strings.Contains(st.LastError, "start it again in debug mode") {
		t.Errorf("last error %q does not say what to do", st.LastError)
	}
}

// TestReattachRefusedWhenPinned: CLAWHOST_REATTACH cannot stand in for a
// plugin whose block pins sha256: the instance is misconfigured with an
// error that names the pin and what to do, and nothing is attached.
func TestReattachRefusedWhenPinned(t *testing.T) {
	reattach, err := pluginclient.ParseReattach(`{"dbg":{"Protocol":"grpc","ProtocolVersion":1,"Pid":2147483000,"Test":true,"Addr":{"Network":"unix","String":"` + filepath.Join(t.TempDir(), "gone.sock") + `"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	h := New(Options{Logger: hclog.NewNullLogger(), Reattach: reattach})
	t.Cleanup(h.Stop)
	h.Apply([]Spec{{Instance: "dbg", Source: "ping", Path: "/nonexistent", SHA256: strings.Repeat("ab", 32), Fingerprint: "1"}})
	st := waitState(t, h.Instance("dbg"), StateMisconfigured)
	if !strings.Contains(st.LastError, "pins sha256") || !strings.Contains(st.LastError, pluginclient.EnvReattach) {
		t.Errorf("last error %q does not name the pin and %s", st.LastError, pluginclient.EnvReattach)
	}
}

// TestParseReattach: the CLAWHOST_REATTACH value is checked before use.
func TestParseReattach(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, wantErr string }{
		{"", ""},
		{`{"a":{"Protocol":"grpc","ProtocolVersion":1,"Pid":7,"Addr":{"Network":"unix","String":"/tmp/x"}}}`, ""},
		{`{"a":`, "parse CLAWHOST_REATTACH"},
		{`{"a":{"Protocol":"netrpc","Pid":7,"Addr":{"Network":"unix","String":"/tmp/x"}}}`, "clawhost plugins speak"},
		{`{"a":{"Protocol":"grpc","Pid":7,"Addr":{"Network":"udp","String":"x"}}}`, "not unix or tcp"},
		{`{"a":{"Protocol":"grpc","Addr":{"Network":"unix","String":"/tmp/x"}}}`, "no pid"},
	} {
		m, err := pluginclient.ParseReattach(tc.value)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.value, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.value, err, tc.wantErr)
		case err == nil && tc.value != "" && !m["a"].Test:
			t.Errorf("%s: not in test mode: the host would kill a process it did not start", tc.value)
		}
	}
}
