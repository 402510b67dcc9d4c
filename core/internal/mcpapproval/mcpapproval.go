// Package mcpapproval keeps the owners' approvals of the agents' workspace
// .mcp.json files: a workspace's own MCP config reaches claude only as the
// bytes an owner approved (clawhost mcp-approve), since claude runs with
// --strict-mcp-config and the file alone starts nothing.
package mcpapproval

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

// File is the workspace's own MCP config, which claude reads only once an
// owner approved it (Approve).
const File = ".mcp.json"

// Approval is an owner's approval of one agent's workspace .mcp.json:
// the file's sha256 when approved, so a changed file needs a new approval.
type Approval struct {
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
		return nil, fmt.Errorf("%s is not an MCP config: %w", File, err)
	}
	var names []string
	for n := range f.MCPServers {
		if n == "clawhost" {
			return nil, fmt.Errorf("%s names a server \"clawhost\", clawhost's own tool server: rename it", File)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Read reads the approvals file (by agent id); a missing file is none.
func Read(path string) (map[string]Approval, error) {
	out := map[string]Approval{}
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

// Approve records that by approved agent's workspace .mcp.json as
// it is now: its sha256 and server names, in the approvals file at path.
// write replaces the file whole (atomicfile.Write: 0600, synced before its
// rename, so a crash or a power loss leaves the old file or the new one).
func Approve(path, agent, workspace, by string, now time.Time, write func(path string, data []byte) error) (Approval, error) {
	b, err := os.ReadFile(filepath.Join(workspace, File))
	if err != nil {
		return Approval{}, err
	}
	names, err := projectServers(b)
	if err != nil {
		return Approval{}, err
	}
	all, err := Read(path)
	if err != nil {
		return Approval{}, err
	}
	a := Approval{SHA256: digest(b), Workspace: workspace, Servers: names, By: by, At: now.UTC()}
	all[agent] = a
	out, _ := json.MarshalIndent(all, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Approval{}, err
	}
	if err := write(path, append(out, '\n')); err != nil {
		return Approval{}, err
	}
	return a, nil
}

// Approved is dir's .mcp.json when agent's approval in the
// approvals file is of these bytes; nil without a file (no error) or when
// it is not approved as it is (the error says why and what to run).
func Approved(approvals, agent, dir string) ([]byte, error) {
	file := filepath.Join(dir, File)
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil
	}
	all, err := Read(approvals)
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
