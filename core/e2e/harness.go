package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/deathsig"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/testbin"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// Attrs are the attributes of an HCL block. A value is a string, bool,
// int, float64, []string, map[string]string, map[string]any, Attrs (an
// object) or an Expr; they are written sorted by name.
type Attrs map[string]any

// Expr is an HCL expression written as it is, e.g. Expr(`env("TOKEN")`)
// or a deliberately wrong value a validation test wants.
type Expr string

// Agent is an agent block: ID "" is the default agent {}, another ID an
// agent "<id>" {} block. An empty Command in the default block is the fake
// claude (the running test binary with fakeclaude.EnvVar set); Env is
// merged into the block's env map. Raw is more of the block written as it
// is (a benchmark flag's HCL).
type Agent struct {
	ID      string
	Command string
	Env     map[string]string
	Attrs   Attrs
	Raw     string
}

// RealClaude is a default agent block running the real Claude Code CLI at
// bin against the fake Anthropic API at apiURL, with HOME at home (claude
// keeps its state there) and its telemetry and updater off.
func RealClaude(bin, home, apiURL string, attrs Attrs) Agent {
	return Agent{Command: bin, Attrs: attrs, Env: map[string]string{
		"HOME":                                     home,
		"ANTHROPIC_BASE_URL":                       apiURL,
		"ANTHROPIC_API_KEY":                        "test",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"DISABLE_AUTOUPDATER":                      "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}}
}

// Plugin is a plugin "<Name>" block: source, the host's settings for it
// (enabled, env, checksum, ...) and its config {} block.
type Plugin struct {
	Name   string
	Source string
	Attrs  Attrs
	Config Attrs
}

// Block is any other block (schedule, heartbeat, ...).
type Block struct {
	Type   string
	Labels []string
	Attrs  Attrs
	Blocks []Block
	raw    string
}

// Host describes one clawhost under test; Start writes its config.hcl and
// runs the real binary on it. Every path may be relative to Dir (the
// config's directory), as a user's would be.
type Host struct {
	// Dir holds config.hcl; a new temporary directory when empty.
	Dir string
	// DataDir defaults to "./data"; PluginDir to the built binaries
	// (testbin.Dir); LogLevel to "debug" ("-" leaves it out).
	DataDir, PluginDir, LogLevel string
	// Agent is the default agent block; Agents are agent "<id>" blocks.
	Agent  Agent
	Agents []Agent
	// Access, Admin, Messages and Storage are written as blocks when set.
	Access, Admin, Messages, Storage Attrs
	Plugins                          []Plugin
	Blocks                           []Block
	// Extra is appended to the file as it is (a test of a broken file).
	Extra string
}

// fakeAgentDefaults are the default agent's settings when a test names
// none: a workspace beside the config and a timeout a hung turn cannot
// outlast the test with.
var fakeAgentDefaults = Attrs{"workspace": "./workspace", "timeout": "30s"}

// HCL renders the host's configuration.
func (h Host) HCL(tb testing.TB) string {
	tb.Helper()
	f := hclwrite.NewEmptyFile()
	root := f.Body()
	data := h.DataDir
	if data == "" {
		data = "./data"
	}
	setAttr(root, "data_dir", data)
	pdir := h.PluginDir
	if pdir == "" {
		pdir = binDir(tb)
	}
	setAttr(root, "plugin_dir", pdir)
	switch h.LogLevel {
	case "":
		setAttr(root, "log_level", "debug")
	case "-":
	default:
		setAttr(root, "log_level", h.LogLevel)
	}
	root.AppendNewline()
	writeAgent(tb, root, h.Agent)
	for _, a := range h.Agents {
		writeAgent(tb, root, a)
	}
	// No admin block: no admin endpoint. The default (127.0.0.1:8791) is one
	// port for every host: two tests running at once would both bind it and
	// the second host would exit at its start (a test then waited for a
	// plugin that never came). A test that wants the endpoint names a free
	// address.
	admin := h.Admin
	if admin == nil {
		admin = Attrs{"listen": ""}
	}
	for _, b := range []struct {
		name  string
		attrs Attrs
	}{{"access", h.Access}, {"admin", admin}, {"messages", h.Messages}, {"storage", h.Storage}} {
		if b.attrs != nil {
			writeBlock(root, Block{Type: b.name, Attrs: b.attrs})
		}
	}
	for _, p := range h.Plugins {
		attrs := Attrs{"source": p.Source}
		for k, v := range p.Attrs {
			attrs[k] = v
		}
		b := Block{Type: "plugin", Labels: []string{p.Name}, Attrs: attrs}
		if p.Config != nil {
			b.Blocks = []Block{{Type: "config", Attrs: p.Config}}
		}
		writeBlock(root, b)
	}
	for _, b := range h.Blocks {
		writeBlock(root, b)
	}
	return string(f.Bytes()) + h.Extra
}

func writeAgent(tb testing.TB, root *hclwrite.Body, a Agent) {
	attrs := Attrs{}
	env := map[string]string{}
	if a.ID == "" {
		if a.Command == "" {
			exe, err := os.Executable()
			if err != nil {
				tb.Fatal(err)
			}
			a.Command = exe
			env[fakeclaude.EnvVar] = "1"
			for k, v := range fakeAgentDefaults {
				attrs[k] = v
			}
		}
	}
	if a.Command != "" {
		attrs["command"] = a.Command
	}
	for k, v := range a.Env {
		env[k] = v
	}
	if len(env) > 0 {
		attrs["env"] = env
	}
	for k, v := range a.Attrs {
		attrs[k] = v
	}
	b := Block{Type: "agent", Attrs: attrs, raw: a.Raw}
	if a.ID != "" {
		b.Labels = []string{a.ID}
	}
	writeBlock(root, b)
}

func writeBlock(body *hclwrite.Body, b Block) {
	blk := body.AppendNewBlock(b.Type, b.Labels)
	if b.raw != "" {
		blk.Body().AppendUnstructuredTokens(hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(strings.TrimSpace(b.raw) + "\n")}})
	}
	names := make([]string, 0, len(b.Attrs))
	for k := range b.Attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		setAttr(blk.Body(), k, b.Attrs[k])
	}
	for _, sub := range b.Blocks {
		writeBlock(blk.Body(), sub)
	}
	body.AppendNewline()
}

func setAttr(body *hclwrite.Body, name string, v any) {
	if e, ok := v.(Expr); ok {
		body.SetAttributeRaw(name, hclwrite.Tokens{{Type: hclsyntax.TokenIdent, Bytes: []byte(e)}})
		return
	}
	body.SetAttributeValue(name, ctyValue(v))
}

// ctyValue converts a Go value of an Attrs map to its HCL value.
func ctyValue(v any) cty.Value {
	switch x := v.(type) {
	case string:
		return cty.StringVal(x)
	case bool:
		return cty.BoolVal(x)
	case int:
		return cty.NumberIntVal(int64(x))
	case int64:
		return cty.NumberIntVal(x)
	case float64:
		return cty.NumberFloatVal(x)
	case []string:
		if len(x) == 0 {
			return cty.ListValEmpty(cty.String)
		}
		vals := make([]cty.Value, len(x))
		for i, s := range x {
			vals[i] = cty.StringVal(s)
		}
		return cty.TupleVal(vals)
	case map[string]string:
		m := make(map[string]cty.Value, len(x))
		for k, s := range x {
			m[k] = cty.StringVal(s)
		}
		return cty.ObjectVal(m)
	case Attrs:
		return ctyValue(map[string]any(x))
	case map[string]any:
		m := make(map[string]cty.Value, len(x))
		for k, e := range x {
			m[k] = ctyValue(e)
		}
		return cty.ObjectVal(m)
	}
	panic(fmt.Sprintf("e2e: no HCL value for %T", v))
}

// Write writes the configuration to Dir/config.hcl (0600), making Dir
// when it is empty, and returns the file's path.
func (h *Host) Write(tb testing.TB) string {
	tb.Helper()
	if h.Dir == "" {
		h.Dir = tb.TempDir()
	}
	path := filepath.Join(h.Dir, "config.hcl")
	if err := os.WriteFile(path, []byte(h.HCL(tb)), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

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
