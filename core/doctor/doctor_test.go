package doctor

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/config/configtest"
	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const (
	noBwrap    = "unavailable (bubblewrap not installed)"
	bwrapFails = "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)"
)

// TestDoctorSandbox: doctor probes bubblewrap as the runner does and says
// whether the host would start: ok with a working one; without one, a
// warning when only owners can reach the agent, a failure (with the
// command that installs it) when others can; sandbox = "off" warns.
func TestDoctorSandbox(t *testing.T) {
	ownersOnly := `access { dm_policy = "allowlist" }
plugin "web" { source = "webchat" }`
	strangers := `access { dm_policy = "open" }
plugin "tg" {
  source = "telegram"
  config { token = "123:abc" }
}`
	off := `agent { sandbox = "off" }` + "\n" + strangers
	t.Setenv("PATH", t.TempDir()) // no bwrap
	for _, tc := range []struct{ name, src, verdict, found, do string }{
		{"owners only", ownersOnly, VerdictWarn, "only owners can reach the agent, so the host starts", "install bubblewrap: "},
		{"strangers", strangers, VerdictFail, "the host refuses to start", `or write sandbox = "off"`},
		{"off", off, VerdictWarn, `agent.sandbox = "off"`, "bubblewrap"},
	} {
		got := doctorSandbox(context.Background(), configtest.Load(t, tc.src), nil)
		if len(got) != 1 || got[0].Verdict != tc.verdict || !strings.Contains(got[0].Found, tc.found) || !strings.Contains(got[0].Do, tc.do) {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
	if real, err := exec.LookPath("/usr/bin/bwrap"); err == nil {
		t.Setenv("PATH", filepath.Dir(real))
		got := doctorSandbox(context.Background(), configtest.Load(t, strangers), nil)
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
		}
		if len(got) != 4 || got[0].Verdict != VerdictOK || got[1].Verdict != VerdictOK ||
			strings.Join(names, ", ") != "sandbox, boundary: user namespace, boundary: seccomp, boundary: Landlock" {
			t.Errorf("with bubblewrap: %+v", got)
		}
	}
}

// TestBoundaryChecks: each part of the boundary is a check named for it;
// one that holds is ok, a missing Landlock (the mounts still hold) a
// warning, a missing user namespace or filter a failure with the fix.
func TestBoundaryChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		facts boundary.Facts
		want  []string // verdict per part
		do    string   // in a check's Do
	}{
		{"everything", boundary.Facts{Sandbox: "bubblewrap", Seccomp: true, LandlockABI: 7}, []string{VerdictOK, VerdictOK, VerdictOK}, ""},
		{"no landlock", boundary.Facts{Sandbox: "bubblewrap", Seccomp: true}, []string{VerdictOK, VerdictOK, VerdictWarn}, "lsm="},
		{"no seccomp", boundary.Facts{Sandbox: "bubblewrap", LandlockABI: 7}, []string{VerdictOK, VerdictFail, VerdictOK}, "CONFIG_SECCOMP_FILTER"},
		{"namespaces off", boundary.Facts{Sandbox: bwrapFails, UsernsOff: "user.max_user_namespaces", Seccomp: true, LandlockABI: 7},
			[]string{VerdictFail, VerdictFail, VerdictFail}, "sysctl -w user.max_user_namespaces=15000"},
	} {
		got := boundaryChecks(boundary.Assess(tc.facts))
		var verdicts []string
		do := ""
		for _, c := range got {
			verdicts = append(verdicts, c.Verdict)
			do += c.Do
			if !strings.HasPrefix(c.Name, "boundary: ") || (c.Verdict == VerdictOK) != (c.Do == "") {
				t.Errorf("%s: %+v", tc.name, c)
			}
		}
		if strings.Join(verdicts, " ") != strings.Join(tc.want, " ") || !strings.Contains(do, tc.do) {
			t.Errorf("%s: %+v", tc.name, got)
		}
	}
}

// TestWarmMemoryWarning: 4 warm claude processes (~840 MB) are more than a
// third of a 2 GB machine, not of an 8 GB one.
func TestWarmMemoryWarning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		maxWarm int
		budget  config.Size
		total   int64
		want    []string // in the warning; nil: none
	}{
		{4, "2GB", 2 << 30, []string{"agent.max_warm = 4", "840 MB"}},
		{0, "2GB", 2 << 30, []string{`agent.warm_memory = "2GB"`, "2048 MB"}},
		{4, "", 2 << 30, nil}, // the default: 512 MB of 2 GB
		{0, "", 512 << 20, []string{"agent.warm_memory (default", "256 MB"}}, // one claude on a tiny machine
		{4, "", 8 << 30, nil},
		{0, "", 64 << 30, nil},
		{4, "2GB", 0, nil}, // unknown memory
	} {
		w := WarmMemoryWarning(&config.Agent{MaxWarm: tc.maxWarm, WarmMemory: tc.budget}, tc.total)
		if (w == "") != (tc.want == nil) {
			t.Errorf("max_warm %d, warm_memory %q, %d MB: %q", tc.maxWarm, tc.budget, tc.total>>20, w)
		}
		for _, s := range tc.want {
			if !strings.Contains(w, s) {
				t.Errorf("max_warm %d, warm_memory %q: %q lacks %q", tc.maxWarm, tc.budget, w, s)
			}
		}
	}
	if procmem.MemTotal() <= 0 {
		t.Error("MemTotal not read from /proc/meminfo")
	}
}

// TestDoctorPortInUse: an address of the configuration in use is the
// running host's only when data_dir's admin.json names a live process;
// else it is another program's, and doctor fails it.
func TestDoctorPortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	cfg := configtest.Load(t, "admin {\n  listen = \""+ln.Addr().String()+"\"\n}\n")
	verdict := func() Check {
		for _, c := range doctorPorts(context.Background(), cfg, nil) {
			if c.Name == "admin endpoint" {
				return c
			}
		}
		t.Fatal("no admin endpoint check")
		return Check{}
	}
	if c := verdict(); c.Verdict != VerdictFail || !strings.Contains(c.Found, "another program") {
		t.Errorf("another program's listener: %+v", c)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := admin.WriteRuntime(cfg.DataDir, admin.Runtime{Listen: ln.Addr().String(), PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if c := verdict(); c.Verdict != VerdictOK || !strings.Contains(c.Found, "clawhost is running") {
		t.Errorf("the running host's listener: %+v", c)
	}
}

// TestCheckers: every check has a name of its own, and the host's own run
// (the status page's) leaves out only the database, which the host holds
// open and reports as its store item.
func TestCheckers(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var notInHost []string
	for _, c := range checkers {
		if seen[c.name] || c.name == "" || c.run == nil {
			t.Errorf("checker %q: a name of its own and a function", c.name)
		}
		seen[c.name] = true
		if !c.inHost {
			notInHost = append(notInHost, c.name)
		}
	}
	if len(notInHost) != 1 || notInHost[0] != "database" {
		t.Errorf("left out of the host's run: %q, want only the database", notInHost)
	}
}

// TestOtherRelease: a plugin in another install.sh release directory than
// clawhost is warned about, with the plugin_dir to use; one of the same
// release (also through the current-release link), or outside release
// directories, is not.
func TestOtherRelease(t *testing.T) {
	t.Parallel()
	lib := t.TempDir()
	for _, f := range []string{"clawhost-0.1.0/clawhost-webchat", "clawhost-0.2.0/clawhost", "clawhost-0.2.0/clawhost-webchat", "bin/clawhost", "bin/clawhost-webchat"} {
		p := filepath.Join(lib, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		sdktest.WriteExecutable(t, p, nil, 0o755)
	}
	if err := os.Symlink("clawhost-0.2.0", filepath.Join(lib, "clawhost")); err != nil {
		t.Fatal(err)
	}
	at := func(f string) string { return filepath.Join(lib, f) }
	for _, c := range []struct {
		name, self, plugin string
		warn               bool
	}{
		{"an older release's plugin", at("clawhost-0.2.0/clawhost"), at("clawhost-0.1.0/clawhost-webchat"), true},
		{"through the link, an older plugin", at("clawhost/clawhost"), at("clawhost-0.1.0/clawhost-webchat"), true},
		{"the same release", at("clawhost-0.2.0/clawhost"), at("clawhost-0.2.0/clawhost-webchat"), false},
		{"the same release through the link", at("clawhost-0.2.0/clawhost"), at("clawhost/clawhost-webchat"), false},
		{"a build's bin/", at("bin/clawhost"), at("clawhost-0.1.0/clawhost-webchat"), false},
		{"a plugin outside releases", at("clawhost-0.2.0/clawhost"), at("bin/clawhost-webchat"), false},
	} {
		got, warn := otherRelease(c.self, c.plugin)
		if warn != c.warn {
			t.Errorf("%s: warned %v (%+v), want %v", c.name, warn, got, c.warn)
			continue
		}
		if warn && (got.Verdict != VerdictWarn || !strings.Contains(got.Found, "is clawhost 0.1.0's plugin; this clawhost is 0.2.0") ||
			!strings.Contains(got.Do, `plugin_dir = "`+at("clawhost")+`"`)) {
			t.Errorf("%s: %+v", c.name, got)
		}
	}
}
