package cli

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/atomicfile"
	"github.com/clawhost/clawhost/core/internal/mcpapproval"
	"github.com/clawhost/clawhost/core/settings"
)

// mcpApproveCommand is `clawhost mcp-approve [AGENT]`: the agent's (default
// main) workspace .mcp.json as it is now becomes the one its claude loads —
// its sha256, server names, who and when recorded in data_dir; a changed file
// needs a new approval.
func mcpApproveCommand(inv invocation) int {
	cfg, ok := load(inv.config, inv.stderr)
	if !ok {
		return 1
	}
	id := config.DefaultAgentID
	if len(inv.positional) > 0 {
		id = inv.positional[0]
	}
	var agent *config.Agent
	for _, a := range cfg.AllAgents() {
		if a.ID == id {
			agent = a
		}
	}
	if agent == nil {
		fmt.Fprintf(inv.stderr, "clawhost mcp-approve: no agent %q in %s\n", id, inv.config)
		return 2
	}
	by := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		by = u.Username
	}
	path := filepath.Join(cfg.DataDir, settings.MCPApprovalsFile)
	a, err := mcpapproval.Approve(path, id, agent.Workspace, by, time.Now(), atomicfile.Write)
	if err != nil {
		fmt.Fprintf(inv.stderr, "clawhost mcp-approve: %v\n", err)
		return 1
	}
	fmt.Fprintf(inv.stdout, "Approved %s for agent %s (sha256 %s), servers: %v.\nIts claude loads them from its next process; a change to the file needs a new approval.\n",
		filepath.Join(a.Workspace, mcpapproval.File), id, a.SHA256[:16], a.Servers)
	return 0
}
