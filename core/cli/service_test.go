package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/service"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// callLog is a service.Runner that records the command lines and answers
// from its table; others succeed with no output.
type callLog struct {
	mu      sync.Mutex
	calls   []string
	answers map[string]string
}

func (c *callLog) Run(_ context.Context, name string, args ...string) (string, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, line)
	return c.answers[line], nil
}

func (c *callLog) took() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// serviceFixture is a machine for `clawhost service`: a home, a config
// directory (its name has a space and a %, which the unit must escape), a
// claude CLI in a directory of its own on PATH, the given binary as this
// program, and a recording runner.
type serviceFixture struct {
	env    serviceEnv
	calls  *callLog
	home   string
	config string
	claude string // the directory of the claude CLI
}

func newServiceFixture(t *testing.T, uid int, binary string) *serviceFixture {
	t.Helper()
	root := t.TempDir()
	f := &serviceFixture{calls: &callLog{}, home: filepath.Join(root, "home"), claude: filepath.Join(root, "npm bin")}
	cfgDir := filepath.Join(root, "etc", "claw 100%")
	f.config = filepath.Join(cfgDir, "config.hcl")
	for _, d := range []string{f.home, f.claude, cfgDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sdktest.WriteExecutable(t, filepath.Join(f.claude, "claude"), []byte("#!/bin/sh\n"), 0o755)
	if err := os.WriteFile(f.config, []byte("agent {\n  command = \"claude\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"HOME": f.home}
	f.env = serviceEnv{
		goos:       "linux",
		uid:        uid,
		getenv:     func(k string) string { return vars[k] },
		executable: func() (string, error) { return binary, nil },
		lookPath: func(p string) (string, error) {
			if p == "claude" {
				return filepath.Join(f.claude, "claude"), nil
			}
			return "", errors.New("not found")
		},
		userExists: func(string) bool { return false },
		lookupUser: func(name string) (*runas.User, error) { return nil, errors.New("no such user " + name) },
		runner:     f.calls,
		logs: func(_ context.Context, name string, args ...string) error {
			_, err := f.calls.Run(context.Background(), name, args...)
			return err
		},
	}
	return f
}

// reachable makes f's tree what a system account can use — directories 0755, the
// configuration 0644, this program a real file (its path returned) — as an installation
// under /etc and /usr/local would be.
func (f *serviceFixture) reachable(t *testing.T) string {
	t.Helper()
	root := filepath.Dir(f.home)
	bin := filepath.Join(root, "bin", "clawhost")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	sdktest.WriteExecutable(t, bin, []byte("#!/bin/sh\n"), 0o755)
	for d := root; d != "/" && d != "."; d = filepath.Dir(d) {
		if strings.HasPrefix(d, os.TempDir()+"/") {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, fi.Mode().Perm()|0o444)
	}); err != nil {
		t.Fatal(err)
	}
	f.env.executable = func() (string, error) { return bin, nil }
	// data_dir and the workspace: as if chowned to the account (uid 0 owns the tree).
	f.env.lookupUser = func(name string) (*runas.User, error) { return &runas.User{Name: name}, nil }
	return bin
}

// runServiceCmd runs `clawhost service ARGS` on f's machine.
func (f *serviceFixture) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runService(args, f.env, &out, &errb)
	return code, out.String(), errb.String()
}

// TestServiceCommand: install as a user writes the user unit into -dir
// running this binary on the absolute config with the claude CLI's
// directory on PATH and enables it with systemctl --user; status -json
// reports it from systemctl's answers; uninstall disables and removes it;
// as root the unit is a system unit for the clawhost account, created
// first. Usage errors exit 2.
func TestServiceCommand(t *testing.T) {
	t.Parallel()
	f := newServiceFixture(t, 1000, "/opt/clawhost/bin/clawhost")
	dir := filepath.Join(f.home, "units")
	code, out, errOut := f.run("install", "-dir", dir, "-config", f.config)
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	unit, err := os.ReadFile(filepath.Join(dir, "clawhost.service"))
	if err != nil {
		t.Fatal(err)
	}
	escaped := strings.ReplaceAll(f.config, "%", "%%")
	for _, want := range []string{
		"ExecStart=/opt/clawhost/bin/clawhost run -config \"" + escaped + "\"\n",
		"Environment=\"PATH=" + f.claude + ":/usr/local/sbin:",
		"Environment=HOME=" + f.home + "\n",
		"EnvironmentFile=-" + filepath.Join(filepath.Dir(escaped), "clawhost.env") + "\n",
		"WantedBy=default.target\n",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(string(unit), "User=") {
		t.Error("a user unit names a User")
	}
	sameLines(t, "install", f.calls.took(), "systemctl --user daemon-reload", "systemctl --user enable --now clawhost.service")

	f.calls.answers = map[string]string{
		"systemctl --user is-enabled clawhost.service": "enabled\n",
		"systemctl --user is-active clawhost.service":  "active\n",
	}
	code, out, _ = f.run("status", "-json", "-dir", dir, "-config", f.config)
	var st service.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
		t.Fatalf("status -json: exit %d, %v\n%s", code, err, out)
	}
	if !st.Installed || !st.UpToDate || st.Enabled != "enabled" || st.Active != "active" || st.Scope != service.ScopeUser {
		t.Errorf("status: %+v", st)
	}
	code, out, _ = f.run("status", "-dir", dir, "-config", f.config)
	if code != 0 || !strings.Contains(out, "active   active\n") || !strings.Contains(out, "journalctl --user -u clawhost -n 50") {
		t.Errorf("status: exit %d\n%s", code, out)
	}

	before := len(f.calls.took())
	if code, out, errOut := f.run("uninstall", "-dir", dir); code != 0 {
		t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
	}
	sameLines(t, "uninstall", f.calls.took()[before:], "systemctl --user disable --now clawhost.service", "systemctl --user daemon-reload")
	if code, out, _ = f.run("status", "-dir", dir, "-config", f.config); code != 1 || !strings.Contains(out, "not installed") {
		t.Errorf("status after uninstall: exit %d\n%s", code, out)
	}

	root := newServiceFixture(t, 0, "/usr/local/bin/clawhost")
	root.reachable(t)
	sysDir := filepath.Join(root.home, "system")
	if code, out, errOut := root.run("install", "-dir", sysDir, "-config", root.config); code != 0 {
		t.Fatalf("install as root: exit %d\n%s%s", code, out, errOut)
	}
	unit, _ = os.ReadFile(filepath.Join(sysDir, "clawhost.service"))
	for _, want := range []string{"User=clawhost\n", "Environment=HOME=/var/lib/clawhost\n", "WantedBy=multi-user.target\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the system unit lacks %q:\n%s", want, unit)
		}
	}
	sameLines(t, "install as root", root.calls.took(), strings.Join(service.SystemUserAdd(), " "), "systemctl daemon-reload", "systemctl enable --now clawhost.service")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"install", "-user", "-system"}, "exclude each other"},
		{[]string{"restart"}, `not "restart"`},
		{[]string{}, `not ""`},
		{[]string{"install", "extra"}, `unexpected argument "extra"`},
		{[]string{"install", "-bogus"}, "-bogus"},
	} {
		if code, _, errOut := f.run(tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, errOut)
		}
	}
	mac := newServiceFixture(t, 501, "/usr/local/bin/clawhost")
	mac.env.goos = "darwin"
	if code, _, errOut := mac.run("install", "-system"); code != 2 || !strings.Contains(errOut, "launchd") {
		t.Errorf("-system on macOS: exit %d\n%s", code, errOut)
	}
	if code, out, _ := mac.run("install", "-config", mac.config); code != 0 ||
		!slices.Equal(mac.calls.took(), []string{"launchctl bootstrap gui/501 " + filepath.Join(mac.home, "Library/LaunchAgents/dev.clawhost.plist")}) {
		t.Errorf("install on macOS: exit %d, ran %q\n%s", code, mac.calls.took(), out)
	}
}

// TestServiceInstallConfigProblems: a configuration that does not load is
// refused before anything is written; a claude CLI that is not found is a
// warning that says what to do.
func TestServiceInstallConfigProblems(t *testing.T) {
	t.Parallel()
	f := newServiceFixture(t, 1000, "/usr/local/bin/clawhost")
	dir := filepath.Join(f.home, "units")
	if err := os.WriteFile(f.config, []byte("agent {\n  comand = \"claude\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := f.run("install", "-dir", dir, "-config", f.config)
	if code != 1 || !strings.Contains(errOut, "does not load") {
		t.Errorf("a broken config: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written for a broken config: %v", err)
	}
	if err := os.WriteFile(f.config, []byte("agent {\n  command = \"claude-nowhere\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := f.run("install", "-no-start", "-dir", dir, "-config", f.config)
	if code != 0 || !strings.Contains(out, "WARN: claude-nowhere is not found") {
		t.Errorf("a missing claude: exit %d\n%s", code, out)
	}
}

func sameLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s ran\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestServiceUnitVerifies: the units install writes — a user unit and a
// system unit, with the built clawhost binary (CLAWHOST_BIN_DIR, else this
// test binary) behind a path with a space and a % — are accepted by
// systemd's own checker, `systemd-analyze verify` (Debian's systemd
// package, make systemd). A unit with a wrong value is not, which shows
// the check can fail. Without systemd-analyze the test skips, unless
// CLAWHOST_REQUIRE_SYSTEMD=1.
func TestServiceUnitVerifies(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_SYSTEMD") == "1" {
			t.Fatalf("systemd-analyze is missing (make systemd): %v", err)
		}
		t.Skipf("systemd-analyze is missing (make systemd installs it; CLAWHOST_REQUIRE_SYSTEMD=1 makes this a failure): %v", err)
	}
	bin, err := os.Executable()
	if d := os.Getenv("CLAWHOST_BIN_DIR"); d != "" {
		bin, err = filepath.Abs(filepath.Join(d, "clawhost"))
	}
	if err != nil {
		t.Fatal(err)
	}
	// The binary behind a path the unit must quote and escape.
	odd := filepath.Join(t.TempDir(), "claw host 100%")
	if err := os.MkdirAll(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(odd, "clawhost")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		uid  int
		args []string
	}{
		{"user", 1000, nil},
		{"system", 0, nil},
		{"forced user as root", 0, []string{"-user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newServiceFixture(t, tc.uid, filepath.Join(odd, "clawhost"))
			if tc.uid == 0 {
				// What the unit says, not who may read it: TestServiceInstallAsRootChecksTheAccount.
				f.env.lookupUser = func(name string) (*runas.User, error) { return &runas.User{Name: name}, nil }
			}
			dir := filepath.Join(f.home, "units")
			args := append([]string{"install", "-no-start", "-dir", dir, "-config", f.config}, tc.args...)
			if code, out, errOut := f.run(args...); code != 0 {
				t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
			}
			unit := filepath.Join(dir, "clawhost.service")
			if problems := verifyUnit(t, analyze, unit); len(problems) > 0 {
				data, _ := os.ReadFile(unit)
				t.Errorf("systemd-analyze verify %s:\n%s\n\n%s", unit, strings.Join(problems, "\n"), data)
			}
			data, err := os.ReadFile(unit)
			if err != nil {
				t.Fatal(err)
			}
			broken := filepath.Join(t.TempDir(), "clawhost.service")
			if err := os.WriteFile(broken, bytes.Replace(data, []byte("Restart=on-failure"), []byte("Restart=on-failur"), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			if problems := verifyUnit(t, analyze, broken); len(problems) == 0 {
				t.Error("systemd-analyze verify accepts Restart=on-failur: the check cannot fail")
			}
		})
	}
}

// verifyUnit runs `systemd-analyze verify` on unit (in the system
// manager's mode, which checks a user unit's settings the same way and
// needs no user session) and returns what it says of the unit, and its
// failure; what it says of other units on the machine is not the unit's.
func verifyUnit(t *testing.T, analyze, unit string) []string {
	t.Helper()
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	var problems []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, unit) || strings.HasPrefix(l, "clawhost.service") {
			problems = append(problems, l)
		}
	}
	if err != nil {
		problems = append(problems, "exit: "+err.Error())
	}
	return problems
}

// TestServiceInstallSaysHowToInstallBubblewrap: without bwrap in PATH,
// install names the command that installs it — a note when only owners
// reach the agent, a warning that the service will not start when others
// can; with sandbox = "off" written out, nothing.
func TestServiceInstallSaysHowToInstallBubblewrap(t *testing.T) {
	t.Parallel()
	tg := "\nplugin \"tg\" {\n  source = \"telegram\"\n  config {\n    token = \"123:abc\"\n  }\n}\n"
	for _, tc := range []struct{ name, src, want, not string }{
		{"owners only", "agent {\n  command = \"claude\"\n}\n", "NOTE: bubblewrap (bwrap), claude's sandbox, is not found", "WARN"},
		{"pairing on telegram", "agent {\n  command = \"claude\"\n}\n" + tg, `dm_policy = "pairing": a stranger on tg`, "NOTE"},
		{"sandbox off", "agent {\n  command = \"claude\"\n  sandbox = \"off\"\n}\n" + tg, "", "bubblewrap"},
	} {
		f := newServiceFixture(t, 1000, "/usr/local/bin/clawhost")
		if err := os.WriteFile(f.config, []byte(tc.src), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := f.run("install", "-no-start", "-dir", filepath.Join(f.home, "units"), "-config", f.config)
		if code != 0 || !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
			t.Errorf("%s: exit %d, want %q and no %q:\n%s%s", tc.name, code, tc.want, tc.not, out, errOut)
		}
		if tc.want != "" && !strings.Contains(out, "install bubblewrap") && !strings.Contains(out, "Linux only") {
			t.Errorf("%s: no install command:\n%s", tc.name, out)
		}
	}
}

// TestServiceInstallAsRootChecksTheAccount: as root with init's layout (the configuration,
// its secrets, data_dir and the workspace in a 0700 home), install refuses before writing
// or enabling anything, names every path the clawhost account cannot reach and the
// commands that fix it; -run-as the account whose files they are installs a unit running
// as it. Before, the unit was written and enabled and failed at its start.
func TestServiceInstallAsRootChecksTheAccount(t *testing.T) {
	t.Parallel()
	f := newServiceFixture(t, 0, "/usr/local/bin/clawhost")
	f.reachable(t)
	f.env.lookupUser = func(name string) (*runas.User, error) { return nil, errors.New("no such user " + name) }
	home := filepath.Join(filepath.Dir(f.home), "root-home")
	cfgDir := filepath.Join(home, ".config", "clawhost")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "config.hcl")
	if err := os.WriteFile(cfg, []byte("data_dir = \""+filepath.Join(home, ".local/share/clawhost")+"\"\nagent {\n  command = \"claude\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "clawhost.env"), []byte("TELEGRAM_BOT_TOKEN=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.home, "system")
	code, out, errOut := f.run("install", "-dir", dir, "-config", cfg)
	if code != 1 {
		t.Fatalf("install with init's layout in root's home: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"nothing was installed", "cannot read the configuration " + cfg, "cannot enter " + cfgDir,
		"cannot write data_dir", "cannot write the workspace of agent main", "clawhost service install -run-as root -config " + cfg, "/etc/clawhost", "/var/lib/clawhost"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "clawhost.service")); !errors.Is(err, os.ErrNotExist) || len(f.calls.took()) != 0 {
		t.Errorf("a refused install wrote the unit (%v) or ran %q", err, f.calls.took())
	}

	// -run-as the owner of the files: the unit runs as that account, with its home.
	f.env.userExists = func(name string) bool { return name == "alice" }
	f.env.lookupUser = func(name string) (*runas.User, error) {
		if name == "alice" {
			return &runas.User{Name: "alice", UID: 0, GID: 0, Home: home}, nil
		}
		return nil, errors.New("no such user " + name)
	}
	code, out, errOut = f.run("install", "-dir", dir, "-config", cfg, "-run-as", "alice")
	if code != 0 {
		t.Fatalf("install -run-as alice: exit %d\n%s%s", code, out, errOut)
	}
	unit, _ := os.ReadFile(filepath.Join(dir, "clawhost.service"))
	for _, want := range []string{"User=alice\n", "Environment=HOME=" + home + "\n", "WantedBy=multi-user.target\n"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("the -run-as unit lacks %q:\n%s", want, unit)
		}
	}
	if took := f.calls.took(); slices.Contains(took, strings.Join(service.SystemUserAdd(), " ")) {
		t.Errorf("-run-as an existing account still created the clawhost account: %q", took)
	}
	if code, _, errOut := f.run("install", "-dir", dir, "-config", cfg, "-run-as", "nobody-here"); code != 1 || !strings.Contains(errOut, "no such user") {
		t.Errorf("-run-as an unknown account: exit %d\n%s", code, errOut)
	}
}

// TestServiceLogs: logs runs journalctl for the unit (--user for a user unit, -f to follow).
func TestServiceLogs(t *testing.T) {
	t.Parallel()
	f := newServiceFixture(t, 1000, "/usr/local/bin/clawhost")
	if code, out, errOut := f.run("logs", "-f"); code != 0 {
		t.Fatalf("logs: exit %d\n%s%s", code, out, errOut)
	}
	sameLines(t, "logs", f.calls.took(), "journalctl --user -u clawhost -n 200 --no-pager -f")
}

// TestServiceAccessMatchesTheAccount: install's access check says what the account can
// really do. As root, for the account nobody: a configuration tree it can read and write
// passes the check, and clawhost validate run as nobody reads it; the same tree with the
// configuration 0600 is refused by the check, and validate as nobody fails too.
func TestServiceAccessMatchesTheAccount(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it runs clawhost as another account")
	}
	nobody, err := runas.Lookup("nobody")
	if err != nil {
		t.Skipf("no account nobody: %v", err)
	}
	bin := os.Getenv("CLAWHOST_BIN_DIR")
	if bin == "" {
		t.Skip("CLAWHOST_BIN_DIR names no built clawhost (make test sets it)")
	}
	bin, _ = filepath.Abs(filepath.Join(bin, "clawhost"))
	root, err := os.MkdirTemp("/var/tmp", "clawhost-service-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	cfgDir, data := filepath.Join(root, "etc"), filepath.Join(root, "data")
	for _, d := range []string{cfgDir, data, filepath.Join(cfgDir, "workspace")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{root, cfgDir} {
		_ = os.Chmod(d, 0o755)
	}
	for _, d := range []string{data, filepath.Join(cfgDir, "workspace")} {
		if err := os.Chown(d, int(nobody.UID), int(nobody.GID)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(cfgDir, "config.hcl")
	if err := os.WriteFile(cfg, []byte("data_dir = \""+data+"\"\nagent {\n  command = \"/bin/true\"\n  sandbox = \"off\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := machineServiceEnv()
	env.executable = func() (string, error) { return bin, nil }
	env.runner = &callLog{}
	validateAsNobody := func() error {
		cmd := exec.Command(bin, "validate", "-config", cfg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody.UID, Gid: nobody.GID}}
		cmd.Env = []string{"HOME=/", "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	run := func() (int, string) {
		var out, errb bytes.Buffer
		code := runService([]string{"install", "-no-start", "-dir", filepath.Join(root, "units"), "-config", cfg, "-run-as", "nobody"}, env, &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := run(); code != 0 {
		t.Fatalf("install -run-as nobody of a tree nobody can use: exit %d\n%s", code, out)
	}
	if err := validateAsNobody(); err != nil {
		t.Fatalf("the check passed, but clawhost validate as nobody fails: %v", err)
	}
	if err := os.Chmod(cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := run(); code != 1 || !strings.Contains(out, "cannot read the configuration "+cfg) {
		t.Fatalf("install with a configuration nobody cannot read: exit %d\n%s", code, out)
	}
	if err := validateAsNobody(); err == nil {
		t.Fatal("the check refused, but clawhost validate as nobody reads the file: the check is wrong")
	}
}
