package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/attach"
	"github.com/clawhost/clawhost/core/ownersession"
)

// channelHelp is `clawhost help channel`'s detail.
const channelHelp = "A stdio MCP server that a terminal claude loads as its channel server: it connects to the\n" +
	"running host's admin endpoint (GET /attach, with the token of <data_dir>/admin.token) and\n" +
	"attaches the terminal's session to one owner chat. While attached, that chat's messages\n" +
	"come to the terminal as <channel> events, its reply tool answers in the chat, and tool\n" +
	"approvals go to the chat's buttons through Claude Code's permission relay. When the\n" +
	"terminal exits, the chat's own claude resumes the terminal's session; /detach in the chat\n" +
	"lets the terminal go. Only an owner's direct chat can be attached.\n" +
	"  -chat INSTANCE:ID   the chat (or $CLAWHOST_CHAT), e.g. telegram:123456789\n" +
	"  -session UUID       the terminal's session (default $CLAUDE_CODE_SESSION_ID)\n" +
	"  -transcript FILE    its transcript (default <$CLAUDE_CONFIG_DIR or ~/.claude>/projects/<cwd>/<id>.jsonl)\n" +
	"  -config FILE, -admin HOST:PORT  where the host is, as for clawhost status\n" +
	"Set it up with an .mcp.json entry and `claude --dangerously-load-development-channels\n" +
	"server:clawhost` (docs/channels-mcp.md)."

// channelRetry is how long `clawhost channel` waits before it reconnects
// to a host that went away (a restart).
const channelRetry = time.Second

// channelCmd runs `clawhost channel`.
func channelCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clawhost channel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	chat := fs.String("chat", os.Getenv("CLAWHOST_CHAT"), "the chat to attach to: INSTANCE:ID")
	sessionID := fs.String("session", os.Getenv("CLAUDE_CODE_SESSION_ID"), "the terminal claude's session id")
	transcript := fs.String("transcript", "", "the terminal session's transcript file")
	cfgPath := fs.String("config", defaultConfig(), configFlagUsage)
	adminAddr := fs.String("admin", "", "the running host's admin endpoint (host:port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *chat == "" {
		fmt.Fprintln(stderr, "clawhost channel: name the chat: -chat INSTANCE:ID (or CLAWHOST_CHAT)")
		return 2
	}
	cfg, ok := loadForHost("channel", hostAt{config: *cfgPath, admin: *adminAddr}, stderr)
	if !ok {
		return 2
	}
	token, err := admin.ReadToken(admin.TokenPath(cfg.DataDir))
	if err != nil {
		fmt.Fprintf(stderr, "clawhost channel: the admin token: %v\n", err)
		return 2
	}
	base, tr, err := adminBase(cfg.Admin)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost channel: %v\n", err)
		return 2
	}
	if *transcript == "" && *sessionID != "" {
		*transcript = defaultTranscript(*sessionID)
	}
	b := &bridge{url: "ws" + strings.TrimPrefix(base, "http") + attach.Path + "?chat=" + *chat, token: token, chat: *chat,
		http: &http.Client{Transport: tr}, hello: attach.Frame{Type: attach.FrameHello, SessionID: *sessionID, Transcript: *transcript},
		log: stderr, calls: map[int64]chan attach.Frame{}}
	if err := b.serve(context.Background(), stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "clawhost channel: %v\n", err)
		return 1
	}
	return 0
}

// defaultTranscript is where the terminal claude keeps session id's
// transcript: its config directory's project of the working directory.
func defaultTranscript(id string) string {
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".claude")
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return filepath.Join(ownersession.ProjectDir(dir, wd), id+".jsonl")
}

// bridge is `clawhost channel`: the MCP server on stdio and its
// connection to the host.
type bridge struct {
	url, token, chat string
	http             *http.Client
	hello            attach.Frame
	log              io.Writer

	mu       sync.Mutex
	ws       *websocket.Conn // nil while not connected
	conn     *channelConn    // the MCP connection, once claude connected
	calls    map[int64]chan attach.Frame
	next     int64
	detached bool
}

// serve runs the MCP server until claude closes stdin, connected to the
// host meanwhile.
func (b *bridge) serve(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "clawhost", Title: "clawhost chat", Version: Version}, &mcp.ServerOptions{
		Instructions: "Messages from the owner's chat (" + b.chat + ") arrive as <channel source=\"clawhost\" chat_id=\"...\" message_id=\"...\">. " +
			"Answer each with the reply tool, passing chat_id back, once you are done: the reply is what the chat sees. files are absolute paths to send with it.",
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{},
			Experimental: map[string]any{"claude/channel": map[string]any{}, "claude/channel/permission": map[string]any{}}},
	})
	props := map[string]any{"chat_id": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"},
		"files": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}
	srv.AddTool(&mcp.Tool{Name: "reply", Description: "Answer the chat's message: text (and files, absolute paths) go to the chat.",
		InputSchema: map[string]any{"type": "object", "properties": props, "required": []string{"chat_id", "text"}}}, b.reply)
	tap := &channelTap{inner: &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}, in: b.fromClaude, set: func(c *channelConn) {
		b.mu.Lock()
		b.conn = c
		b.mu.Unlock()
	}}
	session, err := srv.Connect(ctx, tap, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		err := b.connect(ctx)
		if err != nil {
			_ = session.Close() // refused: the server ends, and claude shows it failed
		}
		done <- err
	}()
	werr := session.Wait()
	cancel()
	if err := <-done; err != nil {
		return err
	}
	if werr != nil && !errors.Is(werr, io.EOF) && ctx.Err() == nil {
		return werr
	}
	return nil
}

// connect keeps the bridge attached until ctx ends, the chat detaches it
// or the host refuses it (an error).
func (b *bridge) connect(ctx context.Context) error {
	for ctx.Err() == nil {
		refused, err := b.attachOnce(ctx)
		if refused != "" {
			return errors.New("the host refused to attach: " + refused)
		}
		b.mu.Lock()
		detached := b.detached
		b.mu.Unlock()
		if detached {
			<-ctx.Done() // stay up for claude, answering nothing
			return nil
		}
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(b.log, "clawhost channel: the host: %v; reconnecting\n", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(channelRetry):
		}
	}
	return nil
}

// attachOnce is one connection to the host; refused is the host's reason
// when it refused.
func (b *bridge) attachOnce(ctx context.Context) (refused string, err error) {
	c, _, err := websocket.Dial(ctx, b.url, &websocket.DialOptions{HTTPClient: b.http, HTTPHeader: http.Header{"Authorization": {"Bearer " + b.token}}})
	if err != nil {
		return "", err
	}
	c.SetReadLimit(4 << 20)
	defer c.CloseNow()
	if err := wsjson.Write(ctx, c, b.hello); err != nil {
		return "", err
	}
	b.mu.Lock()
	b.ws = c
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.ws = nil
		for id, ch := range b.calls {
			close(ch)
			delete(b.calls, id)
		}
		b.mu.Unlock()
	}()
	for {
		var f attach.Frame
		if err := wsjson.Read(ctx, c, &f); err != nil {
			return "", err
		}
		switch f.Type {
		case attach.FrameRefused:
			return f.Error, nil
		case attach.FrameAttached:
			fmt.Fprintf(b.log, "clawhost channel: attached to %s\n", f.Chat)
		case attach.FrameMessage:
			b.notify(ctx, "notifications/claude/channel", map[string]any{"content": f.Content, "meta": f.Meta})
		case attach.FrameStopped:
			b.notify(ctx, "notifications/claude/channel", map[string]any{"content": "The chat pressed Stop: do not answer its last message.", "meta": map[string]string{"chat_id": b.chat}})
		case attach.FramePermission:
			b.notify(ctx, "notifications/claude/channel/permission", map[string]string{"request_id": f.RequestID, "behavior": f.Behavior})
		case attach.FrameReplied:
			b.mu.Lock()
			ch := b.calls[f.Call]
			delete(b.calls, f.Call)
			b.mu.Unlock()
			if ch != nil {
				ch <- f
			}
		case attach.FrameDetached:
			b.mu.Lock()
			b.detached = true
			b.mu.Unlock()
			b.notify(ctx, "notifications/claude/channel", map[string]any{"content": f.Error, "meta": map[string]string{"chat_id": b.chat}})
			return "", nil
		}
	}
}

// notify sends claude a notification (the go-sdk has no custom ones).
func (b *bridge) notify(ctx context.Context, method string, params any) {
	b.mu.Lock()
	c := b.conn
	b.mu.Unlock()
	if c == nil {
		return
	}
	raw, err := json.Marshal(params)
	if err == nil {
		err = c.Connection.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
	}
	if err != nil {
		fmt.Fprintf(b.log, "clawhost channel: notifying claude: %v\n", err)
	}
}

// fromClaude takes claude's permission prompts to the host.
func (b *bridge) fromClaude(r *jsonrpc.Request) {
	if r.Method != "notifications/claude/channel/permission_request" {
		return
	}
	var f attach.Frame
	if json.Unmarshal(r.Params, &f) != nil {
		return
	}
	f.Type = attach.FramePermissionRequest
	b.mu.Lock()
	c := b.ws
	b.mu.Unlock()
	if c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := wsjson.Write(ctx, c, f); err != nil {
			fmt.Fprintf(b.log, "clawhost channel: the permission prompt did not reach the host: %v\n", err)
		}
	}
}

type replyArgs struct {
	ChatID string   `json:"chat_id"`
	Text   string   `json:"text"`
	Files  []string `json:"files"`
}

// reply is the reply tool: the text goes to the host, which answers the
// chat's waiting message with it.
func (b *bridge) reply(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a replyArgs
	if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
		return toolError("bad arguments: " + err.Error()), nil
	}
	b.mu.Lock()
	c := b.ws
	b.next++
	id := b.next
	ch := make(chan attach.Frame, 1)
	if c != nil {
		b.calls[id] = ch
	}
	b.mu.Unlock()
	if c == nil {
		return toolError("clawhost is not reachable right now (restarting?): try the reply again in a moment"), nil
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := wsjson.Write(wctx, c, attach.Frame{Type: attach.FrameReply, Call: id, Text: a.Text, Files: a.Files}); err != nil {
		return toolError("the reply did not reach clawhost: " + err.Error()), nil
	}
	select {
	case f, ok := <-ch:
		switch {
		case !ok:
			return toolError("the connection to clawhost dropped before it took the reply: send it again"), nil
		case f.Error != "":
			return toolError(f.Error), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent to the chat"}}}, nil
	case <-wctx.Done():
		return toolError("clawhost did not confirm the reply in time"), nil
	}
}

func toolError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// channelTap is the MCP transport with claude's notifications/claude/*
// taken out (in) and a way to write ours (the go-sdk knows neither).
type channelTap struct {
	inner mcp.Transport
	in    func(*jsonrpc.Request)
	set   func(*channelConn)
}

// Connect implements mcp.Transport.
func (t *channelTap) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cc := &channelConn{Connection: c, in: t.in}
	t.set(cc)
	return cc, nil
}

type channelConn struct {
	mcp.Connection
	in func(*jsonrpc.Request)
}

// Read implements mcp.Connection.
func (c *channelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() && strings.HasPrefix(r.Method, "notifications/claude/") {
			c.in(r)
			continue
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.IsCall() && r.Method == "server/discover" {
			// The 2026-07-28 revision's handshake: refused, so that claude
			// initializes with a revision channels work on.
			err := c.Connection.Write(ctx, &jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "server/discover: use initialize (channels need protocol " + channelProtocol + ")"}})
			if err != nil {
				return nil, err
			}
			continue
		}
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == "initialize" {
			r.Params = legacyProtocol(r.Params)
		}
		return m, nil
	}
}

// channelProtocol is the newest MCP revision with a path for a server's
// unsolicited notifications: Claude Code 2.1.330 skips a channel whose
// connection negotiated a later ("modern") one ("Channel notifications
// skipped: connection negotiated a modern protocol revision with no
// unsolicited notification path").
const channelProtocol = "2025-11-25"

// legacyProtocol caps the protocol version claude's initialize asks for at
// channelProtocol, so that the server answers with that revision.
func legacyProtocol(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	var v string
	if json.Unmarshal(p["protocolVersion"], &v) != nil || v <= channelProtocol {
		return params
	}
	p["protocolVersion"], _ = json.Marshal(channelProtocol)
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}
