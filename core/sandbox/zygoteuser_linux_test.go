package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// zygoteAsUserEnv marks the run of the helper's tests as another user (TestZygoteUnprivileged).
const zygoteAsUserEnv = "CLAWHOST_ZYGOTE_AS_USER"

// TestZygoteUnprivileged: a host not run as root gets recycled sandboxes too
// (zygoteBwrapUser, zygoteuser_linux.go). The helper's tests — each attack on it and the
// weakened helper each one beats, one claude at a time, a thousand starts, the shipped
// helper's capabilities — run again as nobody, from a copy of this test binary, and must
// pass there, not skip (core/runner's TestZygoteUnprivileged does the same for the pool
// as the runner drives it).
func TestZygoteUnprivileged(t *testing.T) {
	if os.Getenv(zygoteAsUserEnv) == "1" {
		t.Skip("this is the run as another user")
	}
	needBwrap(t)
	u := needNobody(t, "run the sandbox helper's tests as nobody")
	probe := exec.Command("bwrap", "--unshare-user", "--ro-bind", "/", "/", "/bin/true")
	probe.Dir = "/"
	probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}}
	if out, err := probe.CombinedOutput(); err != nil {
		// A property of the kernel: bubblewrap per start as nobody needs it too.
		t.Skipf("nobody cannot make a user namespace on this machine (bwrap: %v: %s)", err, out)
	}
	dir, err := os.MkdirTemp("", "zygote-user-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	must(t, err)
	bin := filepath.Join(dir, "sandbox.test")
	copyExecutable(t, self, bin)
	// Not beside the test binary under helperName: the runner would take it for the
	// tests' helper, which the weakened ones must be.
	shipped := filepath.Join(dir, "shipped-helper")
	copyExecutable(t, shippedHelper(t), shipped)
	tmp := filepath.Join(dir, "tmp")
	must(t, os.Mkdir(tmp, 0o700))
	must(t, os.Chown(tmp, int(u.UID), int(u.GID)))
	cmd := exec.Command(bin, "-test.run", "^TestZygote", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, zygoteAsUserEnv + "=1", zygoteShippedEnv + "=" + shipped}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the helper's tests as nobody: %v\n%s", err, out)
	}
	for _, name := range []string{"TestZygoteBoundary", "TestZygoteOneClaudeAtATime", "TestZygoteManyStarts", "TestZygoteRealHelperCaps"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody:\n%s", name, out)
		}
	}
}

// TestParseHostIDs: a helper is a non-root host's only when told its uid and gid, never
// for root (a root host in a container's user namespace is root's).
func TestParseHostIDs(t *testing.T) {
	if ids, err := parseHostIDs(""); ids != nil || err != nil {
		t.Errorf(`"": %v, %v; want a root host's helper`, ids, err)
	}
	if ids, err := parseHostIDs("1000:1001"); err != nil || *ids != (hostIDs{uid: 1000, gid: 1001}) {
		t.Errorf(`"1000:1001": %v, %v`, ids, err)
	}
	for _, bad := range []string{"0:0", "1000", "a:b", ":", "-1:5"} {
		if ids, err := parseHostIDs(bad); err == nil {
			t.Errorf("%q: %v, no error", bad, ids)
		}
	}
}

// copyExecutable copies the program src to dst, mode 0755, for another user
// to run (sdktest.WriteExecutable: not "text file busy" beside tests that
// start processes).
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	must(t, err)
	sdktest.WriteExecutable(t, dst, b, 0o755)
}

// needNobody is the user nobody, for a test run as root that runs something as it.
func needNobody(t *testing.T, what string) *runas.User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to " + what)
	}
	u, err := runas.Lookup("nobody")
	if err != nil {
		t.Skip(err)
	}
	return u
}
