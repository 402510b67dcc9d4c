package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config/configtest"
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
