package mcpchanneltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvPlatform, set in a test binary's environment, makes Main serve a
// channel server of the platform at its URL on stdin and stdout.
const EnvPlatform = "MCPCHANNELTEST_PLATFORM"

// Main runs the channel server when EnvPlatform is set and then calls exit
// with the process's exit code (3 at once when the platform asks the server
// to crash); it returns at once otherwise. Call it first in TestMain with
// os.Exit, so that the test binary doubles as the server.
func Main(exit func(code int)) {
	url := os.Getenv(EnvPlatform)
	if url == "" {
		return
	}
	crash = func() { exit(3) }
	if err := Serve(context.Background(), url, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpchanneltest:", err)
		exit(1)
		return
	}
	exit(0)
}

// crash ends the server process abruptly (Main sets it).
var crash = func() {}

// Serve is the channel server of the platform at url on in and out, until
// in ends.
func Serve(ctx context.Context, url string, in io.ReadCloser, out io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &chatClient{url: url, http: &http.Client{}}
	if err := c.post(ctx, "/hello", struct{}{}, nil); err != nil {
		return err
	}
	initialized := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "testchat", Title: "Test chat", Version: "0.1.0"}, &mcp.ServerOptions{
		Instructions: `Messages arrive as <channel source="testchat" chat_id="..." message_id="..." user="...">. Reply with the reply tool, passing chat_id back.`,
		Capabilities: &mcp.ServerCapabilities{
			Tools:        &mcp.ToolCapabilities{},
			Experimental: map[string]any{"claude/channel": map[string]any{}, "claude/channel/permission": map[string]any{}},
		},
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) {
			select {
			case <-initialized:
			default:
				close(initialized)
			}
		},
	})
	str := func(props ...string) map[string]any {
		m := map[string]any{}
		for _, p := range props {
			m[p] = map[string]any{"type": "string"}
		}
		return m
	}
	replyProps := str("chat_id", "text", "reply_to")
	replyProps["files"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	srv.AddTool(&mcp.Tool{Name: "reply", Description: "Reply in the chat. Pass chat_id from the inbound message; files are absolute paths.",
		InputSchema: map[string]any{"type": "object", "properties": replyProps, "required": []string{"chat_id", "text"}}},
		c.tool("reply", "/reply", replyCall, func(ans wireAnswer) *mcp.CallToolResult { return textResult("sent (id: %s)", ans.ID) }))
	srv.AddTool(&mcp.Tool{Name: "edit_message", Description: "Edit a message the bot sent.",
		InputSchema: map[string]any{"type": "object", "properties": str("chat_id", "message_id", "text"), "required": []string{"chat_id", "message_id", "text"}}},
		c.tool("edit_message", "/edit", func(a toolArgs) (wireReply, error) {
			return wireReply{ChatID: a.ChatID, MessageID: a.MessageID, Text: a.Text}, nil
		}, func(ans wireAnswer) *mcp.CallToolResult { return textResult("edited (id: %s)", ans.ID) }))
	srv.AddTool(&mcp.Tool{Name: "react", Description: "Add an emoji reaction to a message.",
		InputSchema: map[string]any{"type": "object", "properties": str("chat_id", "message_id", "emoji"), "required": []string{"chat_id", "message_id", "emoji"}}},
		c.tool("react", "/react", func(a toolArgs) (wireReply, error) {
			return wireReply{ChatID: a.ChatID, MessageID: a.MessageID, Emoji: a.Emoji}, nil
		}, func(wireAnswer) *mcp.CallToolResult { return textResult("reacted") }))

	tt := &Tap{Inner: &mcp.IOTransport{Reader: in, Writer: out}, In: func(r *jsonrpc.Request) {
		if r.Method == "notifications/claude/channel/permission_request" {
			var pr struct {
				RequestID    string `json:"request_id"`
				ToolName     string `json:"tool_name"`
				Description  string `json:"description"`
				InputPreview string `json:"input_preview"`
			}
			if json.Unmarshal(r.Params, &pr) == nil {
				_ = c.post(ctx, "/permission_request", PermissionRequest{RequestID: pr.RequestID, ToolName: pr.ToolName, Description: pr.Description, InputPreview: pr.InputPreview}, nil)
			}
		}
	}}
	session, err := srv.Connect(ctx, tt, nil)
	if err != nil {
		return err
	}
	go func() {
		select {
		case <-initialized:
		case <-ctx.Done():
			return
		}
		c.pump(ctx, tt)
		cancel()
	}()
	err = session.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// pump hands the platform's events to the client as notifications.
func (c *chatClient) pump(ctx context.Context, conn *Tap) {
	for ctx.Err() == nil {
		var ev wireEvent
		ok, err := c.get(ctx, "/next", &ev)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintln(os.Stderr, "mcpchanneltest: poll:", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		switch {
		case !ok:
		case ev.Crash:
			fmt.Fprintln(os.Stderr, "mcpchanneltest: crashing as asked")
			crash()
			return
		case ev.Permission != nil:
			_ = conn.Notify(ctx, "notifications/claude/channel/permission", ev.Permission)
		default:
			if err := conn.Notify(ctx, "notifications/claude/channel", map[string]any{"content": ev.Content, "meta": ev.Meta}); err != nil {
				fmt.Fprintln(os.Stderr, "mcpchanneltest: notify:", err)
				return
			}
		}
	}
}

// chatClient is the server's client of the platform.
type chatClient struct {
	url  string
	http *http.Client
}

func (c *chatClient) post(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// get reads an event; false when the poll ended without one.
func (c *chatClient) get(ctx context.Context, path string, out any) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url+path, nil)
	if err != nil {
		return false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNoContent {
		return false, nil
	}
	if resp.StatusCode/100 != 2 {
		return false, fmt.Errorf("%s: %s", path, resp.Status)
	}
	return true, json.NewDecoder(resp.Body).Decode(out)
}

// toolArgs are the tools' arguments.
type toolArgs struct {
	ChatID    string   `json:"chat_id"`
	Text      string   `json:"text"`
	ReplyTo   string   `json:"reply_to"`
	Files     []string `json:"files"`
	MessageID string   `json:"message_id"`
	Emoji     string   `json:"emoji"`
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func toolFailed(name string, err error) *mcp.CallToolResult {
	r := textResult("%s failed: %v", name, err)
	r.IsError = true
	return r
}

// tool makes the handler of the tool name: the call's arguments, made a
// platform call by wire (or failed by it), are posted to path; the
// platform's error fails the call; else done says what the call did.
func (c *chatClient) tool(name, path string, wire func(toolArgs) (wireReply, error), done func(wireAnswer) *mcp.CallToolResult) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a toolArgs
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return toolFailed(name, err), nil
		}
		in, err := wire(a)
		if err != nil {
			return toolFailed(name, err), nil
		}
		var ans wireAnswer
		if err := c.post(ctx, path, in, &ans); err != nil {
			return toolFailed(name, err), nil
		}
		if ans.Crash {
			// Killed the way kill -9 does, after the platform has the
			// call and before the client has its answer.
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		if ans.Error != "" {
			return toolFailed(name, errors.New(ans.Error)), nil
		}
		return done(ans), nil
	}
}

// replyCall is the reply tool's platform call, the files read in.
func replyCall(a toolArgs) (wireReply, error) {
	in := wireReply{ChatID: a.ChatID, Text: a.Text, ReplyTo: a.ReplyTo}
	for _, f := range a.Files {
		if !filepath.IsAbs(f) {
			return in, fmt.Errorf("%s is not an absolute path", f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return in, err
		}
		in.Files = append(in.Files, File{Name: filepath.Base(f), Data: data})
	}
	return in, nil
}
