package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeMCP is `clawhost mcp-schedule`: the MCP server (stdio,
// newline-delimited JSON-RPC, served by the official MCP Go SDK) through
// which the agent schedules a message for itself, sends a file, reacts, and
// calls the plugin tools its agent is granted. The host starts it for claude
// (--mcp-config names a 0600 file) with, in its environment, the chat it
// serves, a token valid for that chat only and the host's unix socket
// (EnvAgent*) — or, for a claude started before any chat (a spare), a token
// of its process and no chat (process.go): nothing of it on a command line, where every local account
// could read it. A call reaches the host, which acts in that chat. claude's
// own ScheduleWakeup and CronCreate are disallowed: their replies reached
// nobody.
func ServeMCP(version string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	ep := agentEndpoint{socket: getenv(EnvAgentSocket), token: getenv(EnvAgentToken), chat: getenv(EnvAgentChat), thread: getenv(EnvAgentThread),
		group: getenv(EnvAgentGroup) == "true", agent: getenv(EnvAgentID)}
	if ep.socket == "" || ep.token == "" {
		// No chat: a process started before any chat (a spare), whose token the host
		// binds to the chat that adopts it.
		fmt.Fprintf(stderr, "clawhost mcp-schedule: %s and %s are required in the environment (the host sets them)\n", EnvAgentSocket, EnvAgentToken)
		return 2
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "clawhost", Version: version}, &mcp.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	addOwnTools(srv, ep)
	addPluginTools(srv, ep, stderr)
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}, MaxLineLength: 1 << 20}
	if err := srv.Run(context.Background(), t); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "clawhost mcp-schedule: %v\n", err)
		return 1
	}
	return 0
}

// nopWriteCloser is stdout for the transport: closing the session does not
// close the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// ownTool is one of the host's own tools: its MCP definition and what a
// call does with the decoded arguments (the text for the model, and
// whether it is the tool's error).
type ownTool struct {
	name, description string
	schema            map[string]any
	call              func(ep agentEndpoint, a ownArgs) (string, bool)
}

// ownArgs are the arguments of the host's own tools, one struct for all
// three: a missing one is "", which each tool answers itself (a model's
// call missing `in` gets "Give `in` or `at`.", not a schema error).
type ownArgs struct {
	Text    string `json:"text"`
	In      string `json:"in"`
	At      string `json:"at"`
	Path    string `json:"path"`
	Caption string `json:"caption"`
	Emoji   string `json:"emoji"`
}

func stringProp(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

var ownTools = []ownTool{{
	name: "schedule_message", description: scheduleToolDescription,
	schema: map[string]any{"type": "object", "properties": map[string]any{
		"text": stringProp("the message you will get"),
		"in":   stringProp("after how long, e.g. \"10m\""),
		"at":   stringProp("when, RFC 3339"),
	}, "required": []string{"text"}},
	call: func(ep agentEndpoint, a ownArgs) (string, bool) { return mcpScheduleCall(ep, a.Text, a.In, a.At) },
}, {
	name: "send_file", description: sendFileToolDescription,
	schema: map[string]any{"type": "object", "properties": map[string]any{
		"path":    stringProp("the file, in the workspace"),
		"caption": stringProp("a line of text sent with it"),
	}, "required": []string{"path"}},
	call: func(ep agentEndpoint, a ownArgs) (string, bool) { return mcpSendFileCall(ep, a.Path, a.Caption) },
}, {
	name: "react", description: reactToolDescription,
	schema: map[string]any{"type": "object", "properties": map[string]any{
		"emoji": stringProp("one emoji, e.g. 👍"),
	}, "required": []string{"emoji"}},
	call: func(ep agentEndpoint, a ownArgs) (string, bool) { return mcpReactCall(ep, a.Emoji) },
}}

// addOwnTools adds schedule_message, send_file and react to srv. Their
// handlers decode the arguments themselves (Server.AddTool, not the SDK's
// typed AddTool): a missing argument is the tool's own error text.
func addOwnTools(srv *mcp.Server, ep agentEndpoint) {
	for _, t := range ownTools {
		srv.AddTool(&mcp.Tool{Name: t.name, Description: t.description, InputSchema: t.schema},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var a ownArgs
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
						return toolResult("bad arguments: "+err.Error(), true), nil
					}
				}
				text, isErr := t.call(ep, a)
				return toolResult(text, isErr), nil
			})
	}
}

// toolResult is a tool's answer to the model: one text.
func toolResult(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}

const scheduleToolDescription = "Schedule a message to yourself in this chat: at the time given, you get the text as a new message (a new turn) and your reply goes to the chat. Use it for reminders and follow-ups; give either `in` (a duration like \"10m\" or \"2h30m\") or `at` (RFC 3339, e.g. \"2026-11-23T09:00:00+01:00\")."

const reactToolDescription = "React to the message you are answering with one emoji (the bot's reaction, set at once; a new one replaces it). Reacting is not answering: say NO_REPLY as well if nothing else is to be said. Not every channel has reactions, and Telegram takes only its own set (👍 ❤ 🔥 🎉 👀 🙏 👌 😁 🤔 …)."

const sendFileToolDescription = "Send a file from your workspace to this chat. It goes out with your answer (after it), once. `path` is relative to the workspace or absolute inside it; links are followed and must stay inside. The channel's size limit applies. An optional `caption` is sent with it."

// agentEndpoint is where and as what the bridge reaches the host.
type agentEndpoint struct {
	socket, token, chat, thread, agent string
	group                              bool
}

// mcpScheduleCall asks the host to schedule text; it returns what to tell
// the model.
func mcpScheduleCall(ep agentEndpoint, text, in, at string) (string, bool) {
	var when time.Time
	switch {
	case in != "":
		d, err := time.ParseDuration(in)
		if err != nil || d <= 0 {
			return fmt.Sprintf("%q is not a positive duration like \"10m\".", in), true
		}
		when = time.Now().Add(d)
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return fmt.Sprintf("%q is not an RFC 3339 time.", at), true
		}
		when = t
	default:
		return "Give `in` or `at`.", true
	}
	code, msg, err := ep.post("/schedule", map[string]any{"at": when, "text": text})
	if err != nil {
		return "clawhost did not answer: " + err.Error(), true
	}
	if code != http.StatusOK {
		return "Not scheduled: " + msg, true
	}
	return "Scheduled for " + when.Format(time.RFC3339) + ". You will get the text as a message then.", false
}

// mcpSendFileCall asks the host to send the file at path with the reply;
// it returns what to tell the model.
func mcpSendFileCall(ep agentEndpoint, path, caption string) (string, bool) {
	if path == "" {
		return "Give `path`.", true
	}
	code, msg, err := ep.post("/send_file", map[string]any{"path": path, "caption": caption})
	if err != nil {
		return "clawhost did not answer: " + err.Error(), true
	}
	if code != http.StatusOK {
		return msg, true
	}
	return msg + " will be sent to the chat with your answer.", false
}

// mcpReactCall asks the host to react to the message being answered; it
// returns what to tell the model.
func mcpReactCall(ep agentEndpoint, emoji string) (string, bool) {
	if emoji == "" {
		return "Give `emoji`.", true
	}
	code, msg, err := ep.post("/react", map[string]any{"emoji": emoji})
	if err != nil {
		return "clawhost did not answer: " + err.Error(), true
	}
	if code != http.StatusOK {
		return "No reaction: " + msg, true
	}
	return "Reacted with " + emoji + ".", false
}

// post sends a tool call with the bridge's token, chat and thread to the
// host's socket; it returns the status and the answer's text.
func (ep agentEndpoint) post(route string, fields map[string]any) (int, string, error) {
	fields["token"], fields["chat"], fields["thread"], fields["group"], fields["agent"] = ep.token, ep.chat, ep.thread, ep.group, ep.agent
	body, _ := json.Marshal(fields)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", ep.socket)
		},
	}}
	resp, err := client.Post("http://clawhost"+route, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(bytes.TrimSpace(msg)), nil
}
