package e2e

// The sandbox's boundary with the host run as an unprivileged user: the
// real binary as user nobody, the real claude CLI and the fake Anthropic
// API. CI runs as root, and every other test's host with it; these run the
// same walks (TestSandboxManifest's, TestBoundaryNextChat's) with the host
// dropped to nobody, where bubblewrap has no root to lean on.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// hostUser is the user a test's clawhost runs as (clOptions.user).
type hostUser struct {
	name     string
	uid, gid uint32
}

// lookupHostUser is the user name, for a test running as root; it skips
// when the test is not root (only root can start a process as another
// user) or name does not exist — unless CLAWHOST_REQUIRE_CLAUDE=1, where a
// missing user fails.
func lookupHostUser(t testing.TB, name string) *hostUser {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("running clawhost as %s needs the test to run as root", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
			t.Fatalf("no user %s to run clawhost as: %v", name, err)
		}
		t.Skipf("no user %s to run clawhost as (%v); set CLAWHOST_REQUIRE_CLAUDE=1 to fail instead", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		t.Fatalf("user %s: uid %q gid %q is no unprivileged user", name, u.Uid, u.Gid)
	}
	return &hostUser{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// own makes dir the user's as an operator's own directory is: dir and
// everything in it (the config, the workspaces, a home at dir/home) the
// user's, and the directories above it passable. t.TempDir's parent, made
// 0700 for root, becomes 0711; any other directory above that the user
// cannot pass fails the test rather than being opened up.
func (u *hostUser) own(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Fatalf("%s (%v) is not passable for %s: clawhost could not reach its config", d, fi.Mode().Perm(), u.name)
		}
		if d == "/" {
			break
		}
	}
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, int(u.uid), int(u.gid))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// apply makes cmd run as the user, with no supplementary groups, and with
// the user's HOME (dir/home, see own), USER and LOGNAME in place of the
// test's.
func (u *hostUser) apply(cmd *exec.Cmd, dir string) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: []uint32{}}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	var out []string
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "USER" && k != "LOGNAME" {
			out = append(out, kv)
		}
	}
	cmd.Env = append(out, "HOME="+filepath.Join(dir, "home"), "USER="+u.name, "LOGNAME="+u.name)
}

// sandboxMode is the sandbox the host says its claudes run in, as
// `clawhost status` prints it: "bubblewrap (recycled)", "bubblewrap (per
// start: why)", "bubblewrap", … The host must run with clOptions.status;
// its admin endpoint comes up after its plugins, so this waits for it.
func (h *clHost) sandboxMode() string {
	h.t.Helper()
	var mode string
	sdktest.WaitFor(h.t, "clawhost status to name the sandbox", func() error {
		var out, errb bytes.Buffer
		rc := run([]string{"status", "-config", h.cfgPath}, &out, &errb)
		for _, line := range strings.Split(out.String(), "\n") {
			if m, ok := strings.CutPrefix(line, "sandbox: "); ok {
				mode = m
				return nil
			}
		}
		return fmt.Errorf("exit %d:\n%s%s", rc, out.String(), errb.String())
	})
	return mode
}

// recycledMode reports whether a sandboxMode is the recycled sandboxes'.
func recycledMode(mode string) bool { return strings.Contains(mode, "(recycled)") }

// TestSandboxManifestUnprivileged is TestSandboxManifest's walk with the
// host run as nobody, with a bubblewrap per start and with the sandbox the
// host picks; beyond the root walk, the tool's shell and claude must hold
// no capability in any set and run with NoNewPrivs.
func TestSandboxManifestUnprivileged(t *testing.T) {
	t.Parallel()
	for _, run := range []struct {
		name string
		run  sandboxRun
	}{{"bwrap per start", sandboxRun{user: "nobody", helper: "0"}}, {"host's choice", sandboxRun{user: "nobody"}}} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			testSandboxManifest(t, run.run)
		})
	}
}

// TestBoundaryNextChatUnprivileged is TestBoundaryNextChat's attack (a file,
// a process and a shared memory segment chat A leaves, which chat B must
// not meet) with the host run as nobody, with a bubblewrap per start and
// with the sandbox the host picks.
func TestBoundaryNextChatUnprivileged(t *testing.T) {
	t.Parallel()
	t.Run("bwrap per start", func(t *testing.T) { testBoundaryNextChat(t, sandboxRun{user: "nobody", helper: "0"}) })
	t.Run("host's choice", func(t *testing.T) { testBoundaryNextChat(t, sandboxRun{user: "nobody"}) })
}
