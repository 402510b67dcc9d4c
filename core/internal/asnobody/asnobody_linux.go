package asnobody

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

// env marks the run as another user; shippedEnv names, in that run, the
// copy of the shipped helper the root run made for it.
const (
	env        = "CLAWHOST_ZYGOTE_AS_USER"
	shippedEnv = "CLAWHOST_ZYGOTE_SHIPPED"
)

// InRerun reports whether this test process is the run as nobody.
func InRerun() bool { return os.Getenv(env) == "1" }

// ShippedHelper is the helper as clawhost ships it: the copy the root run
// handed the run as nobody, CLAWHOST_BIN_DIR's clawhost-sandbox (make
// test), or one built here without cgo.
func ShippedHelper(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(shippedEnv); p != "" {
		return p
	}
	if dir := os.Getenv("CLAWHOST_BIN_DIR"); dir != "" {
		return filepath.Join(dir, "clawhost-sandbox")
	}
	exe := filepath.Join(t.TempDir(), "clawhost-sandbox")
	build := exec.Command("go", "build", "-o", exe, "github.com/clawhost/clawhost/core/cmd/clawhost-sandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// Rerun runs this test binary's tests matching run again as u, from a copy
// nobody else writes, with the shipped helper beside it (not under the
// helper's name: the package would take it for the tests' helper, which
// the weakened ones must be). It skips when u cannot make a user namespace
// (a property of the kernel: bubblewrap per start as u needs it too) and
// fails unless every test named in want passed.
func Rerun(t *testing.T, u *runas.User, run string, want []string) {
	t.Helper()
	cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}}
	probe := exec.Command("bwrap", "--unshare-user", "--ro-bind", "/", "/", "/bin/true")
	probe.Dir = "/"
	probe.SysProcAttr = cred
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("%s cannot make a user namespace on this machine (bwrap: %v: %s)", u.Name, err, out)
	}
	dir, err := os.MkdirTemp("", "zygote-user-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	self, err := os.Executable()
	must(t, err)
	bin := filepath.Join(dir, filepath.Base(self))
	copyExecutable(t, self, bin)
	shipped := filepath.Join(dir, "shipped-helper")
	copyExecutable(t, ShippedHelper(t), shipped)
	tmp := filepath.Join(dir, "tmp")
	must(t, os.Mkdir(tmp, 0o700))
	must(t, os.Chown(tmp, int(u.UID), int(u.GID)))
	cmd := exec.Command(bin, "-test.run", run, "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, env + "=1", shippedEnv + "=" + shipped}
	cmd.SysProcAttr = cred
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests as %s: %v\n%s", u.Name, err, out)
	}
	for _, name := range want {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as %s:\n%s", name, u.Name, out)
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

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
