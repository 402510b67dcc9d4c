package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/securityaudit"
)

// TestSecurityAuditBinary: the built binary's `security audit` reports an
// unsafe file (exit 1), as JSON with -json, says nothing high about a safe
// one (exit 0), and exits 2 on bad usage and on a file that does not load.
func TestSecurityAuditBinary(t *testing.T) {
	bin := filepath.Join(binDir(t), "clawhost")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, src string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.hcl", `
access {
  dm_policy  = "open"
  allow_from = ["tg:*"]
}
agent {
  allowed_tools = ["Read", "Bash(git log:*)", "Bash(git:*)"]
}
plugin "tg" {
  source = "telegram"
  config {
    token = "123456:AAH-written-out"
  }
}
`, 0o644)
	safeSrc := `
agent {
  args = []
}
access {
  owners = ["web:me"]
}
plugin "web" {
  source = "webchat"
  sha256 = "` + strings.Repeat("0", 64) + `"
}
`
	safe := write("safe.hcl", safeSrc, 0o600)
	broken := write("broken.hcl", `access { dm_policy = "opne" }`, 0o600)

	audit := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, append([]string{"security", "audit"}, args...)...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	}

	code, out, errOut := audit("-config", bad)
	if code != 1 {
		t.Errorf("unsafe file: exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"CRITICAL  access.dm_policy_open  (" + bad + ":3)",
		"CRITICAL  access.allow_from_wildcard  (" + bad + ":4)",
		"HIGH      files.config_secrets_readable",
		`plugin "tg" config.token (` + bad + ":12)",
		"HIGH      agent.allowed_tools_runs_code  (" + bad + ":7)",
		`found: allowed_tools has "Bash(git:*)": it allows every git subcommand`,
		`fix:   allow each subcommand needed: "Bash(git status:*)"`,
		"fix:   set dm_policy = \"pairing\"",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "AAH-written-out") {
		t.Errorf("the report shows the token:\n%s", out)
	}

	code, out, _ = audit("-json", "-config", bad)
	var rep securityaudit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("-json: exit %d, %v:\n%s", code, err, out)
	}
	if rep.Config != bad || rep.Counts["critical"] != 2 || len(rep.Findings) == 0 || rep.Findings[0].Severity != securityaudit.Critical {
		t.Errorf("-json report: %+v", rep)
	}

	// The safe file still has medium and lower findings (perhaps no
	// bubblewrap; run as root, the plugins run as root); a high one only
	// where claude's boundary does not hold here (TestBoundaryBinary).
	code, out, errOut = audit("-config", safe)
	wantCode := 0
	if strings.Contains(out, "HIGH") {
		wantCode = 1
	}
	if code != wantCode || strings.Contains(out, "CRITICAL") {
		t.Errorf("safe file: exit %d, want %d\n%s%s", code, wantCode, out, errOut)
	}
	// The web chat's default address, declared by the plugin's schema
	// (JSON through the wire: the plugin is asked, so unpinned here), is
	// loopback.
	web := write("web.hcl", "access {\n  owners = [\"web:me\"]\n}\nplugin \"web\" {\n  source = \"webchat\"\n}\n", 0o600)
	if _, out, _ = audit("-config", web); !strings.Contains(out, "plugin.unpinned") || strings.Contains(out, "plugin.listen_public") {
		t.Errorf("the web chat on its default address:\n%s", out)
	}

	if code, _, errOut = audit("-config", broken); code != 2 || !strings.Contains(errOut, `Did you mean "open"?`) || !strings.Contains(errOut, "does not load") {
		t.Errorf("broken file: exit %d, stderr:\n%s", code, errOut)
	}
	if code, _, errOut = audit("-config", safe, "extra"); code != 2 || !strings.Contains(errOut, "usage: clawhost security audit") {
		t.Errorf("extra argument: exit %d, stderr %q", code, errOut)
	}
	cmd := exec.Command(bin, "security")
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 2 {
		t.Errorf("clawhost security without audit: %v", err)
	}
	// The default -config is ./config.hcl, as for the other commands.
	write("config.hcl", safeSrc, 0o600)
	if code, out, errOut = audit(); code != wantCode || !strings.Contains(out, "security audit of config.hcl") {
		t.Errorf("default -config: exit %d\n%s%s", code, out, errOut)
	}
}

// TestBoundaryBinary: on this machine the built binary's `security audit`
// and `doctor` say whether claude's boundary holds, part by part, as this
// kernel answers (confine.State; on the development machine the syscall
// filter and Landlock ABI 7): a user namespace of its own, the filter and
// Landlock in use, in text and in JSON. Run as root, the root finding is a
// pass for claude (only the plugins are root's: medium, no longer high).
func TestBoundaryBinary(t *testing.T) {
	lpNeedBwrap(t)
	seccompOK, abi := confine.State()
	bin := filepath.Join(binDir(t), "clawhost")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, []byte(`data_dir = "./data"`+"\n"+`agent { command = "/nonexistent/claude" }`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append(args, "-config", cfg)...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		var ee *exec.ExitError
		if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if cmd.ProcessState.ExitCode() > 1 {
			t.Fatalf("%v: exit %d\n%s", args, cmd.ProcessState.ExitCode(), errb.String())
		}
		return out.Bytes()
	}
	// What each part must say on this kernel.
	want := map[string]struct{ status, found string }{
		boundary.PartUserNamespace: {"holds", "a user namespace of its own with no capability"},
		boundary.PartSeccomp:       {"holds", "the syscall filter is on every sandboxed process"},
		boundary.PartLandlock:      {"holds", fmt.Sprintf("Landlock ABI %d in use", abi)},
	}
	if !seccompOK {
		want[boundary.PartSeccomp] = struct{ status, found string }{"missing", "loads no seccomp filter"}
	}
	if abi == 0 {
		want[boundary.PartLandlock] = struct{ status, found string }{"weaker", "not available (ABI 0)"}
	}

	var rep securityaudit.Report
	if out := run("security", "audit", "-json"); json.Unmarshal(out, &rep) != nil || rep.Boundary == nil || len(rep.Boundary.Parts) != 3 {
		t.Fatalf("security audit -json says nothing of the boundary:\n%s", out)
	}
	for _, p := range rep.Boundary.Parts {
		if w := want[p.Name]; string(p.Status) != w.status || !strings.Contains(p.Found, w.found) {
			t.Errorf("security audit: %s is %s, %q; want %s, %q", p.Name, p.Status, p.Found, w.status, w.found)
		}
	}
	if rep.Boundary.Holds != seccompOK {
		t.Errorf("security audit: the boundary holds %v with the filter loading %v", rep.Boundary.Holds, seccompOK)
	}
	if os.Getuid() == 0 {
		sev := securityaudit.Severity(-1)
		for _, f := range rep.Findings {
			if f.Check == "process.root_without_run_as" {
				sev = f.Severity
			}
		}
		if wantSev := map[bool]securityaudit.Severity{true: securityaudit.Medium, false: securityaudit.High}[rep.Boundary.Holds]; sev != wantSev {
			t.Errorf("as root, with the boundary holding %v: process.root_without_run_as is %v, want %v", rep.Boundary.Holds, sev, wantSev)
		}
	}
	if text := string(run("security", "audit")); !strings.Contains(text, "claude's boundary on this machine "+rep.Boundary.Summary()+"\n") ||
		!strings.Contains(text, want[boundary.PartLandlock].found) {
		t.Errorf("security audit's text lacks the boundary:\n%s", text)
	}

	var checks []struct{ Name, Verdict, Found, Do string }
	if out := run("doctor", "-json"); json.Unmarshal(out, &checks) != nil {
		t.Fatalf("doctor -json:\n%s", out)
	}
	verdicts := map[string]string{"holds": "ok", "weaker": "warn", "missing": "fail"}
	seen := 0
	for _, c := range checks {
		name, ok := strings.CutPrefix(c.Name, "boundary: ")
		if !ok {
			continue
		}
		seen++
		if w := want[name]; c.Verdict != verdicts[w.status] || !strings.Contains(c.Found, w.found) {
			t.Errorf("doctor: %+v; want %s, %q", c, verdicts[w.status], w.found)
		}
	}
	if seen != 3 {
		t.Errorf("doctor has %d boundary checks, want 3: %+v", seen, checks)
	}
}
