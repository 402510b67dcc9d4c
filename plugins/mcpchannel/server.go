package mcpchannel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The channel contract's names (Claude Code's channels reference).
const (
	// capChannel is the experimental capability a channel server declares.
	capChannel = "claude/channel"
	// capPermission is declared by a server that relays permission
	// prompts (it authenticates who answers them).
	capPermission = "claude/channel/permission"
	// methodMessage carries one inbound chat message (content, meta).
	methodMessage = "notifications/claude/channel"
	// methodPermissionRequest asks the server to put a permission prompt
	// to its trusted senders.
	methodPermissionRequest = "notifications/claude/channel/permission_request"
	// methodPermission is a trusted sender's answer to a permission
	// prompt (request_id, behavior "allow" or "deny").
	methodPermission = "notifications/claude/channel/permission"
)

// Tools of the channel contract.
const (
	toolReply    = "reply"
	toolReact    = "react"
	toolEdit     = "edit_message"
	toolDownload = "download_attachment"
)

// protocolVersion is the MCP revision the plugin speaks to a server: the
// one Claude Code's TypeScript servers answer (the go-sdk would first try
// the stateless 2026 revision's server/discover).
const protocolVersion = "2025-11-25"

// stopGrace is how long a server may take to exit once its stdin is
// closed, and again after SIGTERM, before its process group is killed.
const stopGrace = 2 * time.Second

// notification is one of the channel contract's notifications a server
// sent.
type notification struct {
	method string
	params json.RawMessage
}

// tap is the MCP connection to a server with the channel contract's
// notifications taken out of the stream: the go-sdk client answers
// methods it does not know with an error and never shows them, so the
// tap hands them to out before the client reads on, and writes the
// plugin's own (notify); the rest passes through.
type tap struct {
	mcp.Connection
	out func(notification)
	// broken is closed once a read failed: the server's end is gone, and
	// a call made from then on is never written.
	broken    chan struct{}
	breakOnce sync.Once
}

// Read implements mcp.Connection.
func (t *tap) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := t.Connection.Read(ctx)
		if err != nil {
			t.breakOnce.Do(func() { close(t.broken) })
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok && !r.IsCall() && strings.HasPrefix(r.Method, "notifications/claude/") {
			t.out(notification{method: r.Method, params: r.Params})
			continue
		}
		return m, nil
	}
}

// notify writes a notification the go-sdk has no method for.
func (t *tap) notify(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return t.Connection.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
}

// tapTransport connects through inner and taps the connection.
type tapTransport struct {
	inner mcp.Transport
	out   func(notification)
	conn  *tap
}

// Connect implements mcp.Transport.
func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &tap{Connection: c, out: t.out, broken: make(chan struct{})}
	return t.conn, nil
}

// server is one run of a channel server: its process and the MCP session
// to it.
type server struct {
	log     *slog.Logger
	cmd     *exec.Cmd
	conn    *tap
	session *mcp.ClientSession
	// tools are the server's tools by name; permission: it declared
	// capPermission.
	tools      map[string]*mcp.Tool
	permission bool

	// exited is closed once the process has been reaped (and its process
	// group killed); waitErr is cmd.Wait's.
	exited  chan struct{}
	waitErr error
	stopped sync.Once
	// gone is closed once the adapter no longer offers this server
	// (Adapter.current waits on it).
	gone chan struct{}
}

// startServer starts the server l describes in dir, connects to it as an
// MCP client, checks that it is a channel server and lists its tools,
// bounded by ctx. Notifications of the channel contract go to out, from
// the connection's reader: out may block (that holds the server's next
// message back), never for good.
func startServer(ctx context.Context, l launch, dir string, log *slog.Logger, out func(notification)) (*server, error) {
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.Dir = dir
	if l.dir != "" {
		cmd.Dir = l.dir
	}
	cmd.Env = serverEnv(os.Environ(), l.env)
	// Pipes of its own, not cmd's StdoutPipe: Wait would close the read
	// end as soon as the process is gone, losing an answer still in the
	// pipe.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = start(cmd)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start %s: %w", l.argv[0], err)
	}
	s := &server{log: log.With("pid", cmd.Process.Pid), cmd: cmd, exited: make(chan struct{}), gone: make(chan struct{})}
	go s.logStderr(errR)
	go func() {
		s.waitErr = cmd.Wait()
		// Whatever the server started goes with it: a helper left
		// holding its stdout would keep the session open.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		close(s.exited)
	}()

	tt := &tapTransport{inner: &mcp.IOTransport{Reader: outR, Writer: inW}, out: out}
	client := mcp.NewClient(&mcp.Implementation{Name: "clawhost", Version: Version}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
	})
	session, err := client.Connect(ctx, tt, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		s.kill()
		return nil, fmt.Errorf("connect to the channel server: %w%s", err, s.exitNote())
	}
	s.session, s.conn = session, tt.conn
	go func() {
		// The server closed its end (or the pipe broke): it is of no use
		// even if the process lives on.
		_ = session.Wait()
		s.kill()
	}()
	var exp map[string]any
	if res := session.InitializeResult(); res != nil && res.Capabilities != nil {
		exp = res.Capabilities.Experimental
	}
	if _, ok := exp[capChannel]; !ok {
		s.stop()
		return nil, fmt.Errorf("the server does not declare the %q capability: it is not a Claude Code channel server", capChannel)
	}
	_, s.permission = exp[capPermission]
	s.tools = map[string]*mcp.Tool{}
	params := &mcp.ListToolsParams{}
	for {
		res, err := session.ListTools(ctx, params)
		if err != nil {
			s.kill()
			return nil, fmt.Errorf("list the channel server's tools: %w%s", err, s.exitNote())
		}
		for _, t := range res.Tools {
			s.tools[t.Name] = t
		}
		if res.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	if s.tools[toolReply] == nil {
		s.stop()
		return nil, fmt.Errorf("the server has no %q tool (it has %s)", toolReply, strings.Join(s.toolNames(), ", "))
	}
	return s, nil
}

// toolNames lists the server's tools, sorted.
func (s *server) toolNames() []string {
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// alive reports whether the server can take a call: its process has not
// been reaped and its connection has not broken.
func (s *server) alive() bool {
	select {
	case <-s.exited:
		return false
	case <-s.conn.broken:
		return false
	default:
		return true
	}
}

// exitNote says how the process ended, for an error; "" while it runs.
func (s *server) exitNote() string {
	select {
	case <-s.exited:
		if s.waitErr != nil {
			return fmt.Sprintf(" (the server exited: %v)", s.waitErr)
		}
		return " (the server exited)"
	case <-time.After(100 * time.Millisecond):
		return ""
	}
}

// kill ends the server's process group at once.
func (s *server) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
}

// stop ends the server politely, as MCP's stdio transport asks: its stdin
// closed, then SIGTERM, then SIGKILL, stopGrace apart; it returns once the
// process is reaped.
func (s *server) stop() {
	s.stopped.Do(func() {
		if s.session != nil {
			_ = s.session.Close()
		}
		for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
			if sig != 0 {
				_ = syscall.Kill(-s.cmd.Process.Pid, sig)
			}
			select {
			case <-s.exited:
				return
			case <-time.After(stopGrace):
			}
		}
		<-s.exited
	})
}

// logStderr logs the server's stderr line by line.
func (s *server) logStderr(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		s.log.Info("server: " + sc.Text())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		s.log.Debug("server stderr", "error", err)
	}
}

// serverEnv is the server's environment: the plugin's own (the host gives
// a plugin only PATH, HOME, the locale and the like, plus the block's env
// attribute) without the host's plugin protocol variables, then extra.
func serverEnv(own []string, extra map[string]string) []string {
	out := make([]string, 0, len(own)+len(extra))
	for _, kv := range own {
		if strings.HasPrefix(kv, "CLAWHOST_") || strings.HasPrefix(kv, "PLUGIN_") {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}
