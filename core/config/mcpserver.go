package config

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// MCPServer is an agent's mcp_server "<name>" block: a stdio MCP server
// that agent's claude starts beside clawhost's own tool server, inside the
// agent's sandbox. Its tools reach the model as mcp__<name>__<tool>. A
// server is the agent's own: an agent "<id>" block does not inherit the
// default block's.
type MCPServer struct {
	// Name is the block's label: the server's name in claude's tool names.
	Name string `hcl:"name,label"`
	// Command is the program claude starts (command): a name looked up in
	// claude's PATH, or a path. In the sandbox it must lie in what the
	// sandbox grants (/usr, /bin, the workspace, agent.expose …).
	Command string `hcl:"command"`
	// Args are its arguments (args).
	Args []string `hcl:"args,optional"`
	// Env is added to its environment (env): values may be env("NAME")
	// for a secret. They are written to a 0600 file in the process's
	// private TMPDIR, never on a command line or in a log.
	Env map[string]string `hcl:"env,optional"`
}

// ReservedMCPServer is the name of clawhost's own tool server.
const ReservedMCPServer = "clawhost"

var mcpNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`) })

// checkMCPServers checks an agent's mcp_server blocks: their names, that
// each has a command, and that the command is there.
func (a *Agent) checkMCPServers(k *checker) {
	blocks := k.blocks("mcp_server", "name")
	seen := map[string]bool{}
	for i, s := range a.MCPServers {
		if i >= len(blocks) {
			break // inherited: checked where written
		}
		b := blocks[i]
		sk := k.sub(b.Body, fmt.Sprintf("mcp_server %q", s.Name))
		switch {
		case !mcpNameRe().MatchString(s.Name):
			k.errorf(b.LabelRanges[0].Ptr(), "Invalid MCP server name",
				"%q is not an MCP server name: use 1 to 48 letters, digits, \"_\" and \"-\" (claude names its tools mcp__<name>__<tool>).", s.Name)
		case s.Name == ReservedMCPServer:
			k.errorf(b.LabelRanges[0].Ptr(), "Reserved MCP server name",
				"%q is clawhost's own tool server: give this one another name.", s.Name)
		case seen[s.Name]:
			k.errorf(b.LabelRanges[0].Ptr(), "Duplicate MCP server",
				"This agent already has an MCP server %q: each name is one server.", s.Name)
		}
		seen[s.Name] = true
		switch {
		case sk.attr("command") == nil:
			// missing: the decoder said so
		case strings.TrimSpace(s.Command) == "":
			sk.errorf(sk.valueRange("command"), "Invalid value for "+sk.qualified("command"), "The command must not be empty.")
		default:
			if err := LookCommand(s.Command); err != nil {
				sk.emit(warning(sk.valueRange("command"), "MCP server command not found",
					err.Error()+": claude will start the agent without this server's tools. Install it, or write its full path."))
			}
		}
		for name := range s.Env {
			if !envNameRe().MatchString(name) {
				sk.errorf(sk.valueRange("env"), "Invalid name in "+sk.qualified("env"), "%q is not an environment variable name.", name)
			}
		}
	}
}

// LookCommand reports whether an MCP server's command can be started: a
// path must be an executable file, a bare name must be found in PATH.
func LookCommand(command string) error {
	if !strings.ContainsRune(command, '/') {
		_, err := exec.LookPath(command)
		return err
	}
	fi, err := os.Stat(command)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return &exec.Error{Name: filepath.Clean(command), Err: exec.ErrNotFound}
	}
	return nil
}
