package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/config/configtest"
	"github.com/clawhost/clawhost/core/internal/atomicfile"
	"github.com/clawhost/clawhost/core/internal/mcpapproval"
	"github.com/clawhost/clawhost/core/settings"
)

// TestDoctorMCPServers: an agent's MCP server whose command is there is ok,
// one whose command is not fails with what to do; each names its agent.
func TestDoctorMCPServers(t *testing.T) {
	t.Parallel()
	cfg := configtest.Load(t, `agent {
  mcp_server "sh" { command = "sh" }
}
agent "ops" {
  workspace = "/srv/ops"
  mcp_server "gone" { command = "/no/such/mcp-server" }
}`)
	got := doctorMCPServers(context.Background(), cfg, nil)
	if len(got) != 2 {
		t.Fatalf("checks %+v", got)
	}
	if got[0].Name != `MCP server "sh" (agent main)` || got[0].Verdict != VerdictOK || !strings.HasSuffix(got[0].Found, "/sh") {
		t.Errorf("found command: %+v", got[0])
	}
	if got[1].Name != `MCP server "gone" (agent ops)` || got[1].Verdict != VerdictFail ||
		!strings.Contains(got[1].Found, "/no/such/mcp-server") || !strings.Contains(got[1].Do, "full path") {
		t.Errorf("missing command: %+v", got[1])
	}
}

// TestDoctorWorkspaceMCP: a workspace's .mcp.json is a warning until it is
// approved as it is, and ok after.
func TestDoctorWorkspaceMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, mcpapproval.File), []byte(`{"mcpServers":{"fs":{"command":"true"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := configtest.Load(t, "data_dir = \""+filepath.Join(dir, "data")+"\"\nagent {\n  workspace = \""+ws+"\"\n}\n")
	got := doctorMCPServers(context.Background(), cfg, nil)
	if len(got) != 1 || got[0].Verdict != VerdictWarn || !strings.Contains(got[0].Found, "is not approved") || got[0].Do != "read the file, then clawhost mcp-approve main" {
		t.Fatalf("unapproved: %+v", got)
	}
	if _, err := mcpapproval.Approve(filepath.Join(dir, "data", settings.MCPApprovalsFile), "main", ws, "alice", time.Now(), atomicfile.Write); err != nil {
		t.Fatal(err)
	}
	if got := doctorMCPServers(context.Background(), cfg, nil); len(got) != 1 || got[0].Verdict != VerdictOK {
		t.Fatalf("approved: %+v", got)
	}
}
