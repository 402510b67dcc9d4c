package pluginhost

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestRunAs: as root, a plugin with RunAs runs as that user, in a data
// directory made its own, and talks to the host over a socket it could
// create, confined by bubblewrap or not; an unknown user fails the start
// with a reason.
func TestRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("run_as needs the host to run as root")
	}
	// t.TempDir's parent is private to root: the user could not enter it.
	base, err := os.MkdirTemp("", "clawhost-runas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	// The built binaries may be in a private directory too.
	exe := filepath.Join(base, "clawhost-loopback")
	bin, err := os.ReadFile(filepath.Join(binDir(t), "clawhost-loopback"))
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WriteExecutable(t, exe, bin, 0o755)
	rec := newRecorder()
	h := newHost(t, rec)
	var spec Spec
	// Confined too (untrusted_input): bubblewrap runs as the user.
	for _, untrusted := range []bool{false, true} {
		name := map[bool]string{false: "lo", true: "confined"}[untrusted]
		data := filepath.Join(base, "plugins", name)
		spec = Spec{
			Instance: name, Source: "loopback", Path: exe,
			DataDir: data, Fingerprint: "1", RunAs: "nobody", Untrusted: untrusted,
			Decode: func(schema.Schema) ([]byte, error) {
				// Relative: in the data directory, the plugin's working directory.
				return json.Marshal(map[string]any{"listen": "127.0.0.1:0", "addr_file": "addr"})
			},
		}
		h.Apply([]Spec{spec})
		st := waitState(t, h.Instance(name), StateReady)
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", st.PID))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\nUid:\t65534\t65534\t65534\t65534\n") {
			t.Errorf("%s: plugin status:\n%s", name, b)
		}
		if fi, err := os.Stat(data); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 {
			t.Errorf("%s: data dir not the user's: %v", name, err)
		}
		text := "as nobody " + name
		if err := post(filepath.Join(data, "addr"), text); err != nil {
			t.Fatal(err)
		}
		if !rec.texts()[text] {
			t.Errorf("%s: inbound not recorded: %v", name, rec.texts())
		}
	}

	spec.Instance, spec.RunAs, spec.DataDir, spec.Untrusted = "lo2", "no-such-user-here", filepath.Join(base, "plugins", "lo2"), false
	h.Apply([]Spec{spec})
	st := waitStatus(t, h.Instance("lo2"), "a run_as error", func(s Status) bool { return strings.Contains(s.LastError, "run_as") })
	if !strings.Contains(st.LastError, `run_as: user "no-such-user-here"`) {
		t.Errorf("unknown user: state %s, last error %q", st.State, st.LastError)
	}
}
