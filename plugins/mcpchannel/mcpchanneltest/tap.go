package mcpchanneltest

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tap is an MCP transport that speaks the channel contract on either side
// of it: it takes the contract's notifications (notifications/claude/*)
// out of what it reads from Inner and hands them to In (the go-sdk drops
// notifications it does not know), and Notify writes the contract's own.
// The test channel server uses it as the server; a test playing the
// terminal claude uses it as the client.
type Tap struct {
	Inner mcp.Transport
	In    func(*jsonrpc.Request)
	conn  *tapConn
}

// Connect implements mcp.Transport.
func (t *Tap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &tapConn{Connection: c, in: t.In}
	return t.conn, nil
}

// Notify writes the notification method with params on the connection
// Connect made.
func (t *Tap) Notify(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return t.conn.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
}

type tapConn struct {
	mcp.Connection
	in func(*jsonrpc.Request)
}

// Read implements mcp.Connection.
func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() && strings.HasPrefix(r.Method, "notifications/claude/") {
			c.in(r)
			continue
		}
		return m, nil
	}
}
