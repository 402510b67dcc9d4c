// Command mcpecho is a tiny stdio MCP server for the end-to-end tests of
// agent.mcp_server: one tool, token_hash, answering the sha256 (hex, first
// 16 digits) of $ECHO_TOKEN and the directory it runs in — what the test
// compares without the token itself ever reaching a reply or a log.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpecho", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "token_hash", Description: "The hash of the server's token.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sum := sha256.Sum256([]byte(os.Getenv("ECHO_TOKEN")))
			wd, _ := os.Getwd()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("hash=%s cwd=%s", hex.EncodeToString(sum[:8]), wd)}}}, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpecho:", err)
		os.Exit(1)
	}
}
