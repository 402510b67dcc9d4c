package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingClaudeIsNotHealthy: with agent.command pointing nowhere
// `clawhost validate` fails at the command's line; the host starts (the
// chat is told when a turn cannot run), but /healthz is 503 naming the
// agent and what to do, and `clawhost status` says NOT READY and exits 1.
func TestMissingClaudeIsNotHealthy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	addr := wcFreeAddr(t)
	h := Host{Dir: dir, Agent: Agent{Command: filepath.Join(dir, "no-claude-here"), Attrs: Attrs{"workspace": "./workspace", "timeout": "30s"}},
		Admin: Attrs{"listen": addr}}
	cfg := h.Write(t)
	d := Launch(t, cfg)
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/status.json"); return code == 200 }, "the admin endpoint")
	code, body := get(t, "http://"+addr+"/healthz")
	if code != 503 || !strings.Contains(body, `"agent"`) || !strings.Contains(body, `"state":"missing"`) || !strings.Contains(body, "no-claude-here not found") {
		t.Errorf("/healthz: %d %s", code, body)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"validate", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "claude CLI not found") || !strings.Contains(errb.String(), "config.hcl:") {
		t.Errorf("clawhost validate: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"status", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "agent: NOT READY (missing)") || !strings.Contains(out.String(), "install the claude CLI") {
		t.Errorf("clawhost status: exit %d\n%s%s", rc, out.String(), errb.String())
	}
}
