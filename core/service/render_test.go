package service

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/golden"
)

// units are the Units of the golden files: a user unit, a system unit
// whose paths need quoting and escaping and whose data_dir is under /etc,
// and the macOS agent.
var units = map[string]Unit{
	"user.service": {
		Binary:  "/home/ann/.local/bin/clawhost",
		Config:  "/home/ann/.config/clawhost/config.hcl",
		WorkDir: "/home/ann/.config/clawhost",
		EnvFile: "/home/ann/.config/clawhost/clawhost.env",
		Path:    append([]string{"/home/ann/.npm-global/bin"}, SystemPath("linux")...),
		Home:    "/home/ann",
	},
	"system.service": {
		Binary:    "/opt/claw host/clawhost",
		Config:    "/etc/clawhost/100% config.hcl",
		WorkDir:   "/etc/clawhost",
		EnvFile:   "/etc/clawhost/clawhost.env",
		Path:      append([]string{"/opt/node $x/bin"}, SystemPath("linux")...),
		Home:      SystemHome,
		User:      SystemUser,
		ReadWrite: []string{"/etc/clawhost/data", "/etc/clawhost/work space"},
	},
	"dev.clawhost.plist": {
		Binary:  "/Users/ann/bin/clawhost",
		Config:  "/Users/ann/.config/clawhost/config & more.hcl",
		WorkDir: "/Users/ann/.config/clawhost",
		EnvFile: "/Users/ann/.config/clawhost/clawhost.env",
		Path:    append([]string{"/Users/ann/.npm/bin"}, SystemPath("darwin")...),
		Home:    "/Users/ann",
		LogDir:  DefaultLogDir("/Users/ann"),
	},
}

// TestRenderGolden: the rendered unit files and plist are the golden
// files in testdata (go test ./core/service -update rewrites them).
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	for name, u := range units {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := RenderSystemd(u)
			if strings.HasSuffix(name, ".plist") {
				got = RenderLaunchd(u)
			}
			golden.Check(t, filepath.Join("testdata", name), got)
		})
	}
}

// TestQuoteWord: words systemd would split, unquote or expand are quoted
// and escaped.
func TestQuoteWord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"/usr/bin/clawhost", "/usr/bin/clawhost"},
		{"/a b/c", `"/a b/c"`},
		{"100%", "100%%"},
		{`/a"b`, `"/a\"b"`},
		{`/a\b`, `"/a\\b"`},
		{"it's", `"it's"`},
		{"", `""`},
	} {
		if got := quoteWord(tc.in); got != tc.want {
			t.Errorf("quoteWord(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := execLine("/a $b/c", "run"); got != `"/a $$b/c" run` {
		t.Errorf("execLine: %s", got)
	}
}

// TestSystemdUnitSettings: the settings the service depends on are in
// both units, each once.
func TestSystemdUnitSettings(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"user.service", "system.service"} {
		unit := string(RenderSystemd(units[name]))
		for _, want := range []string{
			"After=network-online.target", "Wants=network-online.target", "Restart=on-failure", "RestartSec=5s",
			"KillMode=mixed", "TimeoutStopSec=30s", "StandardOutput=journal", "StandardError=journal",
			"SyslogIdentifier=clawhost", "NoNewPrivileges=yes", "PrivateTmp=yes", "ProtectSystem=full",
			"ProtectKernelTunables=yes", "ProtectKernelModules=yes", "ProtectControlGroups=yes",
			"RestrictSUIDSGID=yes", "LockPersonality=yes", "RestrictRealtime=yes",
		} {
			if n := strings.Count(unit, "\n"+want+"\n"); n != 1 {
				t.Errorf("%s: %q %d times, want once", name, want, n)
			}
		}
		for _, off := range []string{"ProtectHome=", "MemoryDenyWriteExecute=", "PrivateUsers=", "ProtectSystem=strict", "RestrictNamespaces="} {
			if strings.Contains(unit, "\n"+off) {
				t.Errorf("%s sets %s, which breaks claude", name, off)
			}
		}
	}
}

// TestPlistParses: the rendered plist is read back by a real property
// list parser (Python's plistlib) with the values it was given, special
// characters included; skipped without python3.
func TestPlistParses(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skipf("python3 is missing: %v", err)
	}
	u := units["dev.clawhost.plist"]
	p := filepath.Join(t.TempDir(), "dev.clawhost.plist")
	if err := os.WriteFile(p, RenderLaunchd(u), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", `import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))`, p).CombinedOutput()
	if err != nil {
		t.Fatalf("plistlib: %v\n%s", err, out)
	}
	var got struct {
		Label                string
		ProgramArguments     []string
		EnvironmentVariables map[string]string
		RunAtLoad            bool
		KeepAlive            map[string]bool
		ThrottleInterval     int
		StandardErrorPath    string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Label != Label || !slices.Equal(got.ProgramArguments, []string{u.Binary, "run", "-config", u.Config}) ||
		got.EnvironmentVariables["HOME"] != u.Home || got.EnvironmentVariables["PATH"] != strings.Join(u.Path, ":") ||
		!got.RunAtLoad || got.KeepAlive["SuccessfulExit"] || len(got.KeepAlive) != 1 || got.ThrottleInterval != RestartDelay ||
		got.StandardErrorPath != filepath.Join(u.LogDir, "clawhost.log") {
		t.Errorf("the plist reads back as %+v", got)
	}
}
