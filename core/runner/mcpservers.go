package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// MCPServer is one of an agent's own stdio MCP servers (agent.mcp_server):
// claude starts it with Command and Args, Env added to its environment.
type MCPServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
}

// mcpServersFile writes c.MCPServers as an MCP config file in the process's
// private TMPDIR and returns its path ("" when there are none). The file is
// 0600, owned by the user claude runs as: the servers' env values (secrets,
// often) are in it and in no command line, log or claude environment. In the
// sandbox TMPDIR is bound, so claude reads it there; the commands must lie in
// what the sandbox grants.
func mcpServersFile(c *Config, tmp string) (string, error) {
	if len(c.MCPServers) == 0 {
		return "", nil
	}
	type server struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	servers := make(map[string]server, len(c.MCPServers))
	for _, s := range c.MCPServers {
		servers[s.Name] = server{Type: "stdio", Command: s.Command, Args: append([]string{}, s.Args...), Env: s.Env}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		return "", fmt.Errorf("agent.mcp_server: %w", err)
	}
	path := filepath.Join(tmp, "agent-mcp.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("agent.mcp_server: write %s: %w", filepath.Base(path), err)
	}
	if u := c.RunAs; u != nil {
		if err := u.Chown(path); err != nil {
			return "", fmt.Errorf("agent.run_as: agent.mcp_server file: %w", err)
		}
	}
	return path, nil
}
