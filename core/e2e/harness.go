package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/deathsig"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/testbin"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// fakeAgentDefaults are the default agent's settings when a test names
// none: a workspace beside the config and a timeout a hung turn cannot
// outlast the test with.
var fakeAgentDefaults = Attrs{"workspace": "./workspace", "timeout": "30s"}

// Start writes the host's configuration and runs clawhost on it; see
// Launch.
func Start(tb testing.TB, h Host) *Daemon {
	tb.Helper()
	cfg := h.Write(tb)
	return Launch(tb, cfg)
}

// Daemon is a running clawhost.
type Daemon struct {
	t        testing.TB
	cmd      *exec.Cmd
	dir      string
	cfgPath  string
	addrFile string // the loopback plugin's address file, when it has one
	log      *sdktest.Log
	after    int
	as       *hostUser // the user clawhost runs as (LaunchAs); nil: the test's
}

// Dir is the directory of the daemon's config.hcl.
func (d *Daemon) Dir() string { return d.dir }

// ConfigPath is the daemon's config.hcl.
func (d *Daemon) ConfigPath() string { return d.cfgPath }

// Log is what the process wrote so far.
func (d *Daemon) Log() string { return d.log.String() }

// Process is the running process (nil before the first start).
func (d *Daemon) Process() *os.Process { return d.cmd.Process }

// Visible is a path the default agent's claude can see from inside its
// sandbox, in its workspace (./workspace beside the config): a file the
// test creates there to release a fake claude waiting with #wait= (the
// sandbox's /tmp is its own, so a t.TempDir() path is not seen).
func (d *Daemon) Visible(name string) string {
	dir := filepath.Join(d.dir, "workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// Launch runs clawhost on cfgPath. At the end of the test it is stopped
// with SIGTERM (SIGKILL after 10 s) and, when the test failed, its log is
// printed.
func Launch(tb testing.TB, cfgPath string) *Daemon {
	tb.Helper()
	return LaunchAs(tb, cfgPath, nil)
}

// LaunchAs is Launch with clawhost run as the user as (see hostUser; nil
// is the test's user): the config's directory becomes the user's first
// (hostUser.own), so it must be a t.TempDir of its own, and every start
// of the daemon runs with the user's credentials and HOME.
func LaunchAs(tb testing.TB, cfgPath string, as *hostUser) *Daemon {
	tb.Helper()
	d := &Daemon{t: tb, dir: filepath.Dir(cfgPath), cfgPath: cfgPath, as: as}
	if as != nil {
		as.own(tb, d.dir)
	}
	registerAdmin(cfgPath)
	d.spawn()
	tb.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.stop()
		}
		if tb.Failed() {
			tb.Logf("clawhost log:\n%s", d.log.String())
		}
	})
	return d
}

// stopGrace is how long a clawhost told to stop has to exit before it is
// killed.
const stopGrace = 10 * time.Second

// terminate sends p SIGTERM and waits for exited to close; after
// stopGrace it kills p and waits on.
func terminate(p *os.Process, exited <-chan struct{}) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(stopGrace):
		_ = p.Kill()
		<-exited
	}
}

// stop ends the running clawhost (see terminate) and waits for it.
func (d *Daemon) stop() {
	exited := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(exited) }()
	terminate(d.cmd.Process, exited)
}

// spawn starts the clawhost process with a fresh log.
func (d *Daemon) spawn() {
	d.t.Helper()
	d.log = &sdktest.Log{}
	d.cmd = Command(d.t, d.cfgPath)
	if d.as != nil {
		d.as.apply(d.cmd, d.dir)
	}
	d.cmd.Stderr = d.log
	d.cmd.Stdout = d.log
	if err := d.cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
}

// Run starts cmd (a clawhost made by the test: its own arguments,
// environment or directory) so that it dies with the test process, with
// its output in the returned log; the test's end stops it as Launch's
// daemons are stopped, and a failed test shows the log.
func Run(tb testing.TB, cmd *exec.Cmd) *sdktest.Log {
	tb.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	deathsig.Set(cmd.SysProcAttr)
	log := &sdktest.Log{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	// A host that ends before the test stops it fails the test at once, with
	// its log: the test's waits (sdktest.WaitFor) give up then, instead of
	// waiting for the binary's deadline on a message no host will answer.
	var stopping atomic.Bool
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		if !stopping.Load() {
			tb.Errorf("clawhost (%s) ended while the test still needed it: %v\n%s", strings.Join(cmd.Args, " "), err, log.String())
		}
		close(exited)
	}()
	tb.Cleanup(func() {
		stopping.Store(true)
		terminate(cmd.Process, exited)
		if tb.Failed() {
			tb.Logf("clawhost log (%s):\n%s", strings.Join(cmd.Args, " "), log.String())
		}
	})
	return log
}

// Command is the clawhost binary under test on cfgPath, in the config's
// directory. It dies with the test process (an interrupted run leaves no
// host behind), taking its plugins and claude with it.
func Command(tb testing.TB, cfgPath string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(binDir(tb), "clawhost"), append([]string{"-config", cfgPath}, args...)...)
	cmd.Dir = filepath.Dir(cfgPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	deathsig.Set(cmd.SysProcAttr)
	return cmd
}

// binDir returns the directory holding clawhost and every plugin binary.
func binDir(tb testing.TB) string {
	tb.Helper()
	d, err := testbin.Dir()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// adminTokens maps the admin address of every host Launch started to its
// token file, so that a test's requests authenticate as the operator's do.
var adminTokens sync.Map // host:port -> token file

// registerAdmin records the admin endpoint of the configuration at
// cfgPath, if it has one.
func registerAdmin(cfgPath string) {
	cfg, diags := config.Load(cfgPath)
	if cfg == nil || diags.HasErrors() || cfg.Admin.Listen == "" {
		return
	}
	adminTokens.Store(cfg.Admin.Listen, admin.TokenPath(cfg.DataDir))
}

// AdminToken is the token of the admin endpoint at hostport; "" when no
// host Launch started has one there (or it has not made its token yet).
func AdminToken(hostport string) string {
	path, ok := adminTokens.Load(hostport)
	if !ok {
		return ""
	}
	tok, _ := admin.ReadToken(path.(string))
	return tok
}

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
	u2 := &hostUser{name: name, uid: uint32(uid), gid: uint32(gid)}
	if err := u2.userNamespaces(); err != nil {
		// A property of the kernel, not of what the machine installed: bubblewrap
		// as this user, per start or recycled, needs it either way.
		t.Skipf("%s cannot make a user namespace on this machine (bubblewrap as %s: %v)", name, name, err)
	}
	return u2
}

// userNamespaces is nil when the user can make a user namespace, which bubblewrap run by
// a user other than root needs; a machine without bubblewrap has nothing to check.
func (u *hostUser) userNamespaces() error {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil
	}
	cmd := exec.Command(bwrap, "--unshare-user", "--ro-bind", "/", "/", "/bin/true")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
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
