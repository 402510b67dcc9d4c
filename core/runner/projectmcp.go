package runner

import (
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/core/internal/mcpapproval"
)

// projectMCP is the workspace's .mcp.json for a process of c, as a copy in
// its private TMPDIR (the bytes approved, not what the file holds a moment
// later), or "" when there is none or it is not approved as it is: a file
// whose sha256 is not the approved one is left out and logged by the caller.
func projectMCP(c *Config, dir, tmp string) (path string, unapproved error) {
	if c.MCPApprovals == "" {
		return "", nil
	}
	b, err := mcpapproval.Approved(c.MCPApprovals, c.Name, dir)
	if b == nil {
		return "", err
	}
	own := filepath.Join(tmp, "project-mcp.json")
	if err := os.WriteFile(own, b, 0o600); err != nil {
		return "", err
	}
	if u := c.RunAs; u != nil {
		if err := u.Chown(own); err != nil {
			return "", err
		}
	}
	return own, nil
}
