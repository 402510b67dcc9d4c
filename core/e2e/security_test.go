package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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

	// The safe file still has medium and lower findings (no sandbox on
	// main, perhaps no bubblewrap); run as root it has a high one.
	code, out, errOut = audit("-config", safe)
	wantCode := 0
	if os.Getuid() == 0 || strings.Contains(out, "HIGH") {
		wantCode = 1
	}
	if code != wantCode || strings.Contains(out, "CRITICAL") {
		t.Errorf("safe file: exit %d, want %d\n%s%s", code, wantCode, out, errOut)
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
