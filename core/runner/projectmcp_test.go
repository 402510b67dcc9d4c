package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
	"github.com/clawhost/clawhost/core/internal/mcpapproval"
)

// TestProjectMCPApproval: a workspace's .mcp.json reaches claude only as
// the bytes an owner approved for that agent: none before the approval, a
// copy in the process's TMPDIR after it, none again once the file changed,
// and never for another agent; a file naming clawhost's own server cannot
// be approved.
func TestProjectMCPApproval(t *testing.T) {
	t.Parallel()
	ws, tmp, data := t.TempDir(), t.TempDir(), t.TempDir()
	approvals := filepath.Join(data, "mcp-approvals.json")
	file := filepath.Join(ws, mcpapproval.File)
	c := &Config{Name: "main", Workspace: ws, MCPApprovals: approvals}
	other := &Config{Name: "ops", Workspace: ws, MCPApprovals: approvals}
	at := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)

	if p, err := projectMCP(c, ws, tmp); p != "" || err != nil {
		t.Fatalf("no file: %q, %v", p, err)
	}
	v1 := `{"mcpServers":{"fs":{"command":"/usr/bin/fs-mcp"}}}`
	if err := os.WriteFile(file, []byte(v1), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := projectMCP(c, ws, tmp); p != "" || err == nil || !strings.Contains(err.Error(), "is not approved") {
		t.Fatalf("before the approval: %q, %v", p, err)
	}
	a, err := mcpapproval.Approve(approvals, "main", ws, "alice", at, atomicfile.Write)
	if err != nil || len(a.Servers) != 1 || a.Servers[0] != "fs" || a.By != "alice" || !a.At.Equal(at) {
		t.Fatalf("approve: %+v, %v", a, err)
	}
	if fi, err := os.Stat(approvals); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approvals file: %v %v", fi, err)
	}
	p, err := projectMCP(c, ws, tmp)
	if err != nil || filepath.Dir(p) != tmp {
		t.Fatalf("approved: %q, %v", p, err)
	}
	if b, _ := os.ReadFile(p); string(b) != v1 {
		t.Fatalf("the copy claude reads: %q", b)
	}
	if p, err := projectMCP(other, ws, tmp); p != "" || err == nil {
		t.Fatalf("another agent loaded main's approval: %q, %v", p, err)
	}
	if err := os.WriteFile(file, []byte(`{"mcpServers":{"fs":{"command":"/tmp/evil"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := projectMCP(c, ws, tmp); p != "" || err == nil || !strings.Contains(err.Error(), "changed since it was approved") {
		t.Fatalf("changed file: %q, %v", p, err)
	}
	if err := os.WriteFile(file, []byte(`{"mcpServers":{"clawhost":{"command":"x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpapproval.Approve(approvals, "main", ws, "alice", at, atomicfile.Write); err == nil {
		t.Fatal("a file naming clawhost's own server was approved")
	}
}

// TestArgsMCPConfigs: the agent's servers file and the approved workspace
// file are each one more --mcp-config after the chat's own.
func TestArgsMCPConfigs(t *testing.T) {
	t.Parallel()
	args := strings.Join(Config{}.args(launch{mcp: "/t/chat.json", servers: "/t/agent-mcp.json", project: "/t/project-mcp.json"}), " ")
	if !strings.Contains(args, "--mcp-config /t/chat.json --mcp-config /t/project-mcp.json --mcp-config /t/agent-mcp.json") {
		t.Fatalf("args %s", args)
	}
}

// TestMCPServersFile: the agent's servers are one 0600 file with each
// command, args and env; none is no file.
func TestMCPServersFile(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	if p, err := mcpServersFile(&Config{}, tmp); p != "" || err != nil {
		t.Fatalf("no servers: %q %v", p, err)
	}
	p, err := mcpServersFile(&Config{MCPServers: []MCPServer{{Name: "gh", Command: "/usr/bin/gh-mcp", Args: []string{"stdio"}, Env: map[string]string{"TOKEN": "s3cret"}}}}, tmp)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 || string(b) != `{"mcpServers":{"gh":{"type":"stdio","command":"/usr/bin/gh-mcp","args":["stdio"],"env":{"TOKEN":"s3cret"}}}}` {
		t.Fatalf("file %o %s", fi.Mode().Perm(), b)
	}
}
