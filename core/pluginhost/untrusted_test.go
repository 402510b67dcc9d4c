package pluginhost

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestBwrapArgs: the argv bubblewrap gets for an untrusted plugin: what
// every sandbox gives up, the system's files that exist, scratch, then the
// plugin's grants from the shallowest path down, the root read-only, the
// data dir as working directory.
func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	head := append(confine.BubblewrapArgs(3), "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--dev", "/dev", "--proc", "/proc")
	scratch := []string{"--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/var/tmp"}
	tests := []struct {
		name    string
		c       confinement
		missing []string // paths exists denies
		want    []string // after head, the system grants and scratch
	}{{
		name: "plain",
		c:    confinement{path: "/opt/bin/clawhost-hook", dataDir: "/srv/data/plugins/hook", socketDir: "/tmp/clawhost-sock-1/plugin-dir2"},
		want: []string{
			"--ro-bind", "/opt/bin/clawhost-hook", "/opt/bin/clawhost-hook",
			"--bind", "/tmp/clawhost-sock-1/plugin-dir2", "/tmp/clawhost-sock-1/plugin-dir2",
			"--bind", "/srv/data/plugins/hook", "/srv/data/plugins/hook",
			"--remount-ro", "/", "--chdir", "/srv/data/plugins/hook", "--"},
	}, {
		name: "binary checked against sha256: the descriptor is bound, not the path",
		c:    confinement{path: "/opt/bin/clawhost-hook", verified: true, dataDir: "/srv/data/plugins/hook", socketDir: "/tmp/s/p"},
		want: []string{
			"--ro-bind-fd", "4", "/opt/bin/clawhost-hook",
			"--bind", "/tmp/s/p", "/tmp/s/p",
			"--bind", "/srv/data/plugins/hook", "/srv/data/plugins/hook",
			"--remount-ro", "/", "--chdir", "/srv/data/plugins/hook", "--"},
	}, {
		name:    "media read-only, a missing one left out, deeper grants after shallower",
		c:       confinement{path: "/b/clawhost-hook", dataDir: "/w/ws/media/x/data", socketDir: "/tmp/s/p", readOnly: []string{"/w/ws/media", "/w/other/media"}},
		missing: []string{"/w/other/media"},
		want: []string{
			"--ro-bind", "/b/clawhost-hook", "/b/clawhost-hook",
			"--bind", "/tmp/s/p", "/tmp/s/p",
			"--ro-bind", "/w/ws/media", "/w/ws/media",
			"--bind", "/w/ws/media/x/data", "/w/ws/media/x/data",
			"--remount-ro", "/", "--chdir", "/w/ws/media/x/data", "--"},
	}, {
		name: "no data dir: no working directory",
		c:    confinement{path: "/b/p", socketDir: "/tmp/s/p"},
		want: []string{"--ro-bind", "/b/p", "/b/p", "--bind", "/tmp/s/p", "/tmp/s/p", "--remount-ro", "/", "--"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exists := func(p string) bool { return !slices.Contains(tt.missing, p) && p != "/lib32" }
			var system []string
			for _, p := range confine.SystemGrants() {
				if exists(p) {
					system = append(system, "--ro-bind", p, p)
				}
			}
			got := tt.c.bwrapArgs(exists)
			want := slices.Concat(head, system, scratch, tt.want)
			if !slices.Equal(got, want) {
				t.Errorf("bwrap args\n got %q\nwant %q", got, want)
			}
			if slices.Contains(got, "/lib32") {
				t.Error("a system path that does not exist is bound")
			}
		})
	}
}

// untrustedLoopback is the loopback channel as an untrusted plugin: its
// address file in its data dir (the one place it can write).
func untrustedLoopback(t *testing.T, name string) (Spec, string) {
	t.Helper()
	spec, _ := loopbackSpec(t, name)
	addrFile := filepath.Join(spec.DataDir, "addr")
	spec.Untrusted = true
	spec.Decode = func(schema.Schema) ([]byte, error) {
		return json.Marshal(map[string]any{"listen": "127.0.0.1:0", "addr_file": addrFile, "text_limit": 4000})
	}
	return spec, addrFile
}

// TestUntrustedPluginServes: a plugin with untrusted_input runs inside
// bubblewrap (the process the host started is bwrap) and works as any
// other: a Go plugin, one whose binary sha256 pins, and a Python zipapp
// (its interpreter and modules are the system's).
func TestUntrustedPluginServes(t *testing.T) {
	if _, err := findBubblewrap(bwrapCommand, nil); err != nil {
		t.Skip(err)
	}
	rec := newRecorder()
	h := newHost(t, rec)
	plain, plainAddr := untrustedLoopback(t, "plain")
	pinned, pinnedAddr := untrustedLoopback(t, "pinned")
	pinned.SHA256 = fileSum(t, pinned.Path)
	specs := []Spec{plain, pinned}
	type served struct {
		inst, addr string
	}
	checks := []served{{"plain", plainAddr}, {"pinned", pinnedAddr}}
	// The zipapp is made by make build (CLAWHOST_BIN_DIR), not by testbin.
	python, pythonAddr := untrustedLoopback(t, "python")
	python.Path = filepath.Join(binDir(t), "clawhost-python-echo")
	if _, err := os.Stat(python.Path); err == nil {
		specs, checks = append(specs, python), append(checks, served{"python", pythonAddr})
	} else {
		t.Logf("no Python zipapp plugin (run make build and set CLAWHOST_BIN_DIR): %v", err)
	}
	h.Apply(specs)
	for _, c := range checks {
		st := waitState(t, h.Instance(c.inst), StateReady)
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", st.PID))
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(exe) != "bwrap" {
			t.Errorf("%s: the host started %s, not bubblewrap", c.inst, exe)
		}
		text := "through the sandbox " + c.inst
		if err := post(c.addr, text); err != nil {
			t.Fatal(err)
		}
		<-rec.ch
		if !rec.texts()[text] {
			t.Errorf("%s: inbound %q not received", c.inst, text)
		}
	}
}

// TestUntrustedWithoutBubblewrap: where bubblewrap is missing or cannot
// run, a plugin with untrusted_input is not started at all — no process,
// no restarts — and its status says why and what to do; a plugin without
// it starts beside it.
func TestUntrustedWithoutBubblewrap(t *testing.T) {
	tests := []struct {
		name, bwrap, why string
	}{
		{"not installed", "clawhost-test-no-such-bwrap", "not found in PATH"},
		{"cannot run", "false", "bwrap: exit status 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, newRecorder())
			h.opts.bubblewrap = tt.bwrap
			hook, addrFile := untrustedLoopback(t, "hook")
			other, _ := loopbackSpec(t, "other")
			h.Apply([]Spec{hook, other})
			st := waitState(t, h.Instance("hook"), StateNoSandbox)
			if !strings.Contains(st.LastError, "untrusted_input") || !strings.Contains(st.LastError, tt.why) || !strings.Contains(st.Action, "install bubblewrap") {
				t.Errorf("last error %q should say untrusted_input and %q; action %q how to fix it", st.LastError, tt.why, st.Action)
			}
			waitState(t, h.Instance("other"), StateReady)
			if st := h.Instance("hook").Status(); st.State != StateNoSandbox || st.PID != 0 || st.Restarts != 0 {
				t.Errorf("the refused plugin: %+v", st)
			}
			if _, err := os.Stat(addrFile); err == nil {
				t.Error("the plugin ran unconfined")
			}
		})
	}
}

// TestUntrustedChecksumIsOfTheBytesThatRun: confined, a binary pinned by
// sha256 and swapped after its check (renamed over the path, as an update
// or an attacker would) does not run: bubblewrap is handed the descriptor
// the host checked, not the path. bwrap cannot bind a file that has lost
// its name, so that start fails — closed — and the next one finds the new
// file's checksum wrong (misconfigured). Had the swapped-in script run, its
// stderr line would be in the error the host logs.
func TestUntrustedChecksumIsOfTheBytesThatRun(t *testing.T) {
	if _, err := findBubblewrap(bwrapCommand, nil); err != nil {
		t.Skip(err)
	}
	log := &sdktest.Log{}
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: log}), FirstBackoff: 20 * time.Millisecond, MaxBackoff: 400 * time.Millisecond})
	t.Cleanup(h.Stop)
	spec, _ := untrustedLoopback(t, "lo")
	pinnedCopy(t, &spec)
	evil := spec.Path + ".new"
	sdktest.WriteExecutable(t, evil, []byte("#!/bin/sh\necho UNVERIFIED-BYTES-RAN >&2\nexit 3\n"), 0o700)
	var once sync.Once
	h.opts.afterVerify = func(path string) {
		once.Do(func() {
			if err := os.Rename(evil, path); err != nil {
				t.Errorf("swap: %v", err)
			}
		})
	}
	h.Apply([]Spec{spec})
	st := waitState(t, h.Instance("lo"), StateMisconfigured)
	if !strings.Contains(st.LastError, "checksum") {
		t.Errorf("last error %q, want the checksum's", st.LastError)
	}
	if strings.Contains(log.String(), "UNVERIFIED-BYTES-RAN") {
		t.Fatalf("the binary swapped in after the check ran:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "before the handshake") {
		t.Errorf("the start after the swap should have failed before the handshake:\n%s", log.String())
	}
}
