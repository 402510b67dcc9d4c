package fakeclaude

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// The host's tools, called over MCP as claude calls them.

// callTool calls one of the host's own tools as claude does: it starts
// the MCP server --mcp-config names (its command, with its environment)
// and calls name over MCP. A failure is written to stderr; the turn goes
// on, as claude's would after a tool error.
func callTool(name string, args map[string]any) {
	var path string
	for i, a := range os.Args {
		if a == "--mcp-config" && i+1 < len(os.Args) {
			path = os.Args[i+1]
		}
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	srv, ok := cfg.MCPServers["clawhost"]
	if err != nil || !ok {
		fmt.Fprintf(os.Stderr, "fakeclaude: %s: no clawhost MCP server in --mcp-config %q: %v\n", name, path, err)
		return
	}
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for k, v := range srv.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	res, err := mcpCall(cmd, name, args)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "fakeclaude: %s: %v\n", name, err)
	case res.IsError:
		fmt.Fprintf(os.Stderr, "fakeclaude: %s refused: %s\n", name, res.Content)
	}
}

// toolResult is what callTool reads of a tools/call result.
type toolResult struct {
	IsError bool            `json:"isError"`
	Content json.RawMessage `json:"content"`
}

// mcpCall starts cmd, an MCP server on stdio, and makes one tool call as
// an MCP client does (claude's order: initialize, the initialized
// notification, tools/call; newline-delimited JSON-RPC 2.0), then closes
// its stdin and waits for it. A hand-written client, not the MCP SDK's:
// the SDK's package initialisation (JSON schema, gob) took about 1 ms of
// every fake claude's start, which the first-turn benchmarks counted as
// the host's work.
func mcpCall(cmd *exec.Cmd, name string, args map[string]any) (toolResult, error) {
	var res toolResult
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return res, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	done := make(chan struct{})
	defer func() {
		_ = stdin.Close()
		close(done)
		_ = cmd.Wait()
	}()
	go func() { // a server that hangs is killed, as claude's tool timeout would
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	enc, dec := json.NewEncoder(stdin), json.NewDecoder(stdout)
	call := func(id int, method string, params any) (json.RawMessage, error) {
		if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
			return nil, err
		}
		for {
			var m struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := dec.Decode(&m); err != nil {
				return nil, fmt.Errorf("%s: %w", method, err)
			}
			switch {
			case m.ID == nil || *m.ID != id || m.Method != "":
				continue // a notification, or the server's own request: not asked for here
			case m.Error != nil:
				return nil, fmt.Errorf("%s: error %d: %s", method, m.Error.Code, m.Error.Message)
			}
			return m.Result, nil
		}
	}
	if _, err := call(1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fakeclaude", "version": "1"}}); err != nil {
		return res, err
	}
	if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized", "params": map[string]any{}}); err != nil {
		return res, err
	}
	raw, err := call(2, "tools/call", map[string]any{"name": name, "arguments": args})
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	return res, err
}
