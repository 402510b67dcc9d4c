package service

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recorder is a Runner that records each command line and answers from
// its table (by the joined command line); a command not in the table
// succeeds with no output.
type recorder struct {
	mu      sync.Mutex
	calls   []string
	answers map[string]answer
}

type answer struct {
	out string
	err error
}

func (r *recorder) Run(_ context.Context, name string, args ...string) (string, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, line)
	a := r.answers[line]
	return a.out, a.err
}

func (r *recorder) took() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// newManager is a Manager on goos and scope writing into a temporary
// directory, with a recorder whose table is answers and an account table
// of users.
func newManager(t *testing.T, goos string, scope Scope, answers map[string]answer, users ...string) (*Manager, *recorder, *bytes.Buffer) {
	t.Helper()
	r := &recorder{answers: answers}
	out := &bytes.Buffer{}
	m := &Manager{GOOS: goos, Scope: scope, Dir: filepath.Join(t.TempDir(), "units"), UID: 501, Runner: r,
		UserExists: func(name string) bool { return slices.Contains(users, name) }, Out: out}
	return m, r, out
}

func sameCalls(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s ran\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestInstallUserUnit: install writes the unit and enables it with
// systemctl --user; again with the same unit it writes nothing; a
// different unit is refused with the difference shown and the file kept,
// and replaced with Force and restarted; uninstall disables, removes and
// reloads.
func TestInstallUserUnit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, r, out := newManager(t, "linux", ScopeUser, nil)
	u := units["user.service"]
	if err := m.Install(ctx, u, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install", r.took(), "systemctl --user daemon-reload", "systemctl --user enable --now clawhost.service")
	got, err := os.ReadFile(filepath.Join(m.Dir, "clawhost.service"))
	if err != nil || !bytes.Equal(got, RenderSystemd(u)) {
		t.Fatalf("unit file: %v\n%s", err, got)
	}
	for _, want := range []string{"journalctl --user -u clawhost", "loginctl enable-linger"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("install does not say %q:\n%s", want, out)
		}
	}

	out.Reset()
	if err := m.Install(ctx, u, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "is up to date") || strings.Contains(out.String(), "Wrote") {
		t.Errorf("second install:\n%s", out)
	}

	changed := u
	changed.Config = "/home/ann/other.hcl"
	out.Reset()
	err = m.Install(ctx, changed, InstallOptions{})
	if !errors.Is(err, ErrDiffers) {
		t.Fatalf("a different unit without -force: %v", err)
	}
	if !strings.Contains(out.String(), "- ExecStart=/home/ann/.local/bin/clawhost run -config /home/ann/.config/clawhost/config.hcl") ||
		!strings.Contains(out.String(), "+ ExecStart=/home/ann/.local/bin/clawhost run -config /home/ann/other.hcl") {
		t.Errorf("the refusal does not show what differs:\n%s", out)
	}
	if got, _ := os.ReadFile(m.File()); !bytes.Equal(got, RenderSystemd(u)) {
		t.Error("the refused install changed the file")
	}

	before := len(r.took())
	if err := m.Install(ctx, changed, InstallOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install -force", r.took()[before:], "systemctl --user daemon-reload", "systemctl --user enable clawhost.service", "systemctl --user restart clawhost.service")
	if got, _ := os.ReadFile(m.File()); !bytes.Equal(got, RenderSystemd(changed)) {
		t.Error("install -force did not replace the file")
	}

	before = len(r.took())
	if err := m.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "uninstall", r.took()[before:], "systemctl --user disable --now clawhost.service", "systemctl --user daemon-reload")
	if _, err := os.Stat(m.File()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unit file is still there: %v", err)
	}
	before = len(r.took())
	if err := m.Uninstall(ctx); err != nil || len(r.took()) != before {
		t.Errorf("uninstall of nothing: %v, ran %v", err, r.took()[before:])
	}
}

// TestInstallSystemUnit: a system unit creates the missing account before
// systemctl (without --user); an existing account is not created again;
// -no-start runs nothing and prints the commands.
func TestInstallSystemUnit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := units["system.service"]
	useradd := strings.Join(SystemUserAdd(), " ")
	if useradd != "useradd --system --home-dir /var/lib/clawhost --create-home --shell /usr/sbin/nologin clawhost" {
		t.Errorf("useradd: %s", useradd)
	}

	m, r, _ := newManager(t, "linux", ScopeSystem, nil)
	if err := m.Install(ctx, u, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install", r.took(), useradd, "systemctl daemon-reload", "systemctl enable --now clawhost.service")

	m, r, _ = newManager(t, "linux", ScopeSystem, nil, SystemUser)
	if err := m.Install(ctx, u, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install with the account there", r.took(), "systemctl daemon-reload", "systemctl enable --now clawhost.service")

	m, r, out := newManager(t, "linux", ScopeSystem, nil)
	if err := m.Install(ctx, u, InstallOptions{NoStart: true}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install -no-start", r.took())
	if !strings.Contains(out.String(), "  "+useradd+"\n  systemctl daemon-reload\n  systemctl enable --now clawhost.service\n") {
		t.Errorf("-no-start does not print the commands:\n%s", out)
	}
	if _, err := os.Stat(m.File()); err != nil {
		t.Errorf("-no-start wrote no file: %v", err)
	}
}

// TestInstallWithoutSystemd: when systemctl fails (a container without
// systemd) the unit stays written, install fails, and the output says
// what failed, what to do instead and what is left to run.
func TestInstallWithoutSystemd(t *testing.T) {
	t.Parallel()
	bus := "System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down"
	m, r, out := newManager(t, "linux", ScopeUser, map[string]answer{
		"systemctl --user daemon-reload": {bus, errors.New("exit status 1")},
	})
	err := m.Install(context.Background(), units["user.service"], InstallOptions{})
	if err == nil {
		t.Fatal("install succeeded without systemd")
	}
	sameCalls(t, "install", r.took(), "systemctl --user daemon-reload")
	for _, want := range []string{"Failed to connect to bus", "clawhost run -config FILE", "  systemctl --user daemon-reload\n  systemctl --user enable --now clawhost.service\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(m.File()); err != nil {
		t.Errorf("the unit is not written: %v", err)
	}
}

// TestStatusSystemd: status reads the file and systemctl's is-enabled and
// is-active, which answer on stdout and exit non-zero when the unit is
// disabled or inactive; a manager that cannot be reached is a problem,
// not a state.
func TestStatusSystemd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := units["user.service"]
	m, _, _ := newManager(t, "linux", ScopeUser, nil)
	if st := m.Status(ctx, u); st.Installed || st.Running() || st.Logs != "journalctl --user -u clawhost -n 50" {
		t.Errorf("nothing installed: %+v", st)
	}
	if err := m.Install(ctx, u, InstallOptions{NoStart: true}); err != nil {
		t.Fatal(err)
	}
	m.Runner = &recorder{answers: map[string]answer{
		"systemctl --user is-enabled clawhost.service": {"enabled\n", nil},
		"systemctl --user is-active clawhost.service":  {"active\n", nil},
	}}
	if st := m.Status(ctx, u); !st.Installed || !st.UpToDate || st.Enabled != "enabled" || st.Active != "active" || !st.Running() {
		t.Errorf("running: %+v", st)
	}
	changed := u
	changed.Home = "/elsewhere"
	if st := m.Status(ctx, changed); st.UpToDate {
		t.Errorf("a different unit is up to date: %+v", st)
	}
	m.Runner = &recorder{answers: map[string]answer{
		"systemctl --user is-enabled clawhost.service": {"disabled\n", errors.New("exit status 1")},
		"systemctl --user is-active clawhost.service":  {"inactive\n", errors.New("exit status 3")},
	}}
	if st := m.Status(ctx, u); st.Enabled != "disabled" || st.Active != "inactive" || st.Running() || st.Problem != "" {
		t.Errorf("stopped: %+v", st)
	}
	m.Runner = &recorder{answers: map[string]answer{
		"systemctl --user is-enabled clawhost.service": {"Failed to connect to bus: No medium found\n", errors.New("exit status 1")},
		"systemctl --user is-active clawhost.service":  {"Failed to connect to bus: No medium found\n", errors.New("exit status 1")},
	}}
	if st := m.Status(ctx, u); st.Active != "" || st.Running() || !strings.Contains(st.Problem, "Failed to connect to bus") {
		t.Errorf("no bus: %+v", st)
	}
}

// TestLaunchd: on macOS install writes the plist and the log directory
// and bootstraps it into gui/<uid>; a replaced plist is booted out first;
// status reads launchctl print's state; uninstall boots it out.
func TestLaunchd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := units["dev.clawhost.plist"]
	u.LogDir = filepath.Join(t.TempDir(), "Logs", "clawhost")
	m, r, _ := newManager(t, "darwin", ScopeUser, map[string]answer{
		"launchctl print gui/501/dev.clawhost": {"gui/501/dev.clawhost = {\n\tactive count = 1\n\tstate = running\n}\n", nil},
	})
	plist := filepath.Join(m.Dir, "dev.clawhost.plist")
	if err := m.Install(ctx, u, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install", r.took(), "launchctl bootstrap gui/501 "+plist)
	if fi, err := os.Stat(u.LogDir); err != nil || !fi.IsDir() {
		t.Errorf("log directory: %v", err)
	}
	if st := m.Status(ctx, u); st.Manager != "launchd" || st.Enabled != "loaded" || st.Active != "running" || !st.Running() || !st.UpToDate {
		t.Errorf("status: %+v", st)
	}
	changed := u
	changed.Home = "/Users/bob"
	before := len(r.took())
	if err := m.Install(ctx, changed, InstallOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "install -force", r.took()[before:], "launchctl bootout gui/501/dev.clawhost", "launchctl bootstrap gui/501 "+plist)
	before = len(r.took())
	if err := m.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	sameCalls(t, "uninstall", r.took()[before:], "launchctl bootout gui/501/dev.clawhost")
	if err := m.Install(ctx, u, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Scope = ScopeSystem
	if err := m.Install(ctx, u, InstallOptions{}); err == nil {
		t.Error("a system service on macOS was accepted")
	}
}

// TestNoStartSaysLinger: a user unit written without starting it
// (-no-start) is told, as an installed one is, that it stops at logout
// unless lingering is on; a system unit is not.
func TestNoStartSaysLinger(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scope Scope
		unit  string
		want  bool
	}{{ScopeUser, "user.service", true}, {ScopeSystem, "system.service", false}} {
		m, _, out := newManager(t, "linux", c.scope, nil, SystemUser)
		if err := m.Install(context.Background(), units[c.unit], InstallOptions{NoStart: true}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "loginctl enable-linger $USER"); got != c.want {
			t.Errorf("%s unit -no-start: says linger %v, want %v:\n%s", c.scope, got, c.want, out)
		}
	}
}
