package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// zygoteAsUserEnv marks the run of the helper's tests as another user (TestZygoteUnprivileged).
const zygoteAsUserEnv = "CLAWHOST_ZYGOTE_AS_USER"

// TestZygoteUnprivileged: a host not run as root gets recycled sandboxes too. The runner's
// tests of them — the pool, the next chat after an eviction, Close waiting for the
// sandboxes, an idle runner holding no helper — run again as nobody, from a copy of this
// test binary, and must pass there, not skip (core/sandbox's TestZygoteUnprivileged does the
// same for the helper's own tests).
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
	bin := filepath.Join(dir, "runner.test")
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
	for _, name := range []string{"TestZygotePool", "TestZygoteNextChatAfterEviction", "TestZygoteCloseWaitsForTheSandboxes", "TestZygoteIdleHostHoldsNoHelper"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as nobody:\n%s", name, out)
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
