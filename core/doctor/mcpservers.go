package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/mcpapproval"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/settings"
)

// doctorMCPServers checks the agents' mcp_server commands: each is found
// (a bare name in PATH, a path an executable file). A missing one fails: claude
// would start that agent without the server's tools and say so to nobody. A
// workspace's .mcp.json not approved as it is now is a warning.
func doctorMCPServers(_ context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	for _, a := range cfg.AllAgents() {
		for _, s := range a.MCPServers {
			name := fmt.Sprintf("MCP server %q (agent %s)", s.Name, a.ID)
			if err := config.LookCommand(s.Command); err != nil {
				out = append(out, Check{Name: name, Verdict: VerdictFail, Found: err.Error(),
					Do: "install " + s.Command + " or write its full path in mcp_server \"" + s.Name + "\"; in the sandbox it must lie in what claude may read (/usr, /bin, /opt, the workspace, agent.expose)"})
				continue
			}
			path := s.Command
			if p, err := exec.LookPath(s.Command); err == nil {
				path = p
			}
			out = append(out, Check{Name: name, Verdict: VerdictOK, Found: path})
		}
		file := filepath.Join(a.Workspace, mcpapproval.File)
		if _, err := os.Stat(file); err != nil {
			continue
		}
		name := fmt.Sprintf("workspace MCP servers (agent %s)", a.ID)
		if _, err := mcpapproval.Approved(filepath.Join(cfg.DataDir, settings.MCPApprovalsFile), a.ID, a.Workspace); err != nil {
			out = append(out, Check{Name: name, Verdict: VerdictWarn, Found: err.Error(), Do: "read the file, then clawhost mcp-approve " + a.ID})
		} else {
			out = append(out, Check{Name: name, Verdict: VerdictOK, Found: file + " approved"})
		}
	}
	return out
}
