package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// ProjectMCPFile is the workspace's own MCP config, which claude reads only
// once an owner approved it (ApproveProjectMCP): claude runs with
// --strict-mcp-config, so the file alone starts nothing.
const ProjectMCPFile = ".mcp.json"

// MCPApproval is an owner's approval of one agent's workspace .mcp.json:
// the file's sha256 when approved, so a changed file needs a new approval.
type MCPApproval struct {
	SHA256    string    `json:"sha256"`
	Workspace string    `json:"workspace"`
	Servers   []string  `json:"servers"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
}

// projectServers are the server names of an MCP config file's content; an
// error when it is not one or names clawhost's own server.
func projectServers(b []byte) ([]string, error) {
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s is not an MCP config: %w", ProjectMCPFile, err)
	}
	var names []string
	for n := range f.MCPServers {
		if n == "clawhost" {
			return nil, fmt.Errorf("%s names a server \"clawhost\", clawhost's own tool server: rename it", ProjectMCPFile)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// ReadMCPApprovals reads the approvals file (by agent id); a missing file is none.
func ReadMCPApprovals(path string) (map[string]MCPApproval, error) {
	out := map[string]MCPApproval{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// ApproveProjectMCP records that by approved agent's workspace .mcp.json as
// it is now: its sha256 and server names, in the approvals file at path
// (0600, replaced whole: a crash leaves the old file or the new one).
func ApproveProjectMCP(path, agent, workspace, by string, now time.Time) (MCPApproval, error) {
	b, err := os.ReadFile(filepath.Join(workspace, ProjectMCPFile))
	if err != nil {
		return MCPApproval{}, err
	}
	names, err := projectServers(b)
	if err != nil {
		return MCPApproval{}, err
	}
	all, err := ReadMCPApprovals(path)
	if err != nil {
		return MCPApproval{}, err
	}
	a := MCPApproval{SHA256: digest(b), Workspace: workspace, Servers: names, By: by, At: now.UTC()}
	all[agent] = a
	out, _ := json.MarshalIndent(all, "", "  ")
	tmp := path + ".tmp"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return MCPApproval{}, err
	}
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return MCPApproval{}, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return MCPApproval{}, err
	}
	return a, nil
}

// projectMCP is the workspace's .mcp.json for a process of c, as a copy in
// its private TMPDIR (the bytes approved, not what the file holds a moment
// later), or "" when there is none or it is not approved as it is: a file
// whose sha256 is not the approved one is left out and logged by the caller.
func projectMCP(c *Config, dir, tmp string) (path string, unapproved error) {
	if c.MCPApprovals == "" {
		return "", nil
	}
	b, err := ApprovedProjectMCP(c.MCPApprovals, c.Name, dir)
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

// ApprovedProjectMCP is dir's .mcp.json when agent's approval in the
// approvals file is of these bytes; nil without a file (no error) or when
// it is not approved as it is (the error says why and what to run).
func ApprovedProjectMCP(approvals, agent, dir string) ([]byte, error) {
	file := filepath.Join(dir, ProjectMCPFile)
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil
	}
	all, err := ReadMCPApprovals(approvals)
	if err != nil {
		return nil, err
	}
	a, ok := all[agent]
	switch {
	case !ok:
		return nil, fmt.Errorf("%s is not approved: its servers are not started (clawhost mcp-approve %s)", file, agent)
	case a.SHA256 != digest(b):
		return nil, fmt.Errorf("%s changed since it was approved: its servers are not started until it is approved again (clawhost mcp-approve %s)", file, agent)
	}
	if _, err := projectServers(b); err != nil {
		return nil, err
	}
	return b, nil
}
