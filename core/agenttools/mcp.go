package agenttools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// ServeMCP is `clawhost mcp-schedule`: the MCP server (stdio,
// newline-delimited JSON-RPC) through which the agent schedules a message
// for itself. The host starts it for claude (--mcp-config names a 0600
// file) with, in its environment, the chat it serves, a token valid for
// that chat only and the host's unix socket (EnvAgent*): nothing of
// it on a command line, where every local account could read it. A call
// reaches the host, which runs the message in that chat at the time asked,
// as a turn, like a schedule. claude's own ScheduleWakeup and CronCreate
// are disallowed: their replies reached nobody.
func ServeMCP(version string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	ep := agentEndpoint{socket: getenv(EnvAgentSocket), token: getenv(EnvAgentToken), chat: getenv(EnvAgentChat), thread: getenv(EnvAgentThread), group: getenv(EnvAgentGroup) == "true"}
	if ep.socket == "" || ep.token == "" || ep.chat == "" {
		fmt.Fprintf(stderr, "clawhost mcp-schedule: %s, %s and %s are required in the environment (the host sets them)\n", EnvAgentSocket, EnvAgentToken, EnvAgentChat)
		return 2
	}
	out := json.NewEncoder(stdout)
	in := bufio.NewReaderSize(stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(line, &req) != nil {
				continue
			}
			if req.ID == nil {
				continue // a notification
			}
			result, rerr := mcpHandle(req.Method, req.Params, ep, version)
			resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
			if rerr != nil {
				resp["error"] = map[string]any{"code": -32601, "message": rerr.Error()}
			} else {
				resp["result"] = result
			}
			if out.Encode(resp) != nil {
				return 1
			}
		}
		if err != nil {
			return 0
		}
	}
}

const scheduleToolDescription = "Schedule a message to yourself in this chat: at the time given, you get the text as a new message (a new turn) and your reply goes to the chat. Use it for reminders and follow-ups; give either `in` (a duration like \"10m\" or \"2h30m\") or `at` (RFC 3339, e.g. \"2026-11-23T09:00:00+01:00\")."

const reactToolDescription = "React to the message you are answering with one emoji (the bot's reaction, set at once; a new one replaces it). Reacting is not answering: say NO_REPLY as well if nothing else is to be said. Not every channel has reactions, and Telegram takes only its own set (👍 ❤ 🔥 🎉 👀 🙏 👌 😁 🤔 …)."

const sendFileToolDescription = "Send a file from your workspace to this chat. It goes out with your answer (after it), once. `path` is relative to the workspace or absolute inside it; links are followed and must stay inside. The channel's size limit applies. An optional `caption` is sent with it."

// agentEndpoint is where and as what the bridge reaches the host.
type agentEndpoint struct {
	socket, token, chat, thread string
	group                       bool
}

func mcpHandle(method string, params json.RawMessage, ep agentEndpoint, version string) (any, error) {
	switch method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(params, &p)
		if p.ProtocolVersion == "" {
			p.ProtocolVersion = "2025-06-18"
		}
		return map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "clawhost", "version": version}}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		return map[string]any{"tools": []any{map[string]any{
			"name": "schedule_message", "description": scheduleToolDescription,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"text": map[string]any{"type": "string", "description": "the message you will get"},
				"in":   map[string]any{"type": "string", "description": "after how long, e.g. \"10m\""},
				"at":   map[string]any{"type": "string", "description": "when, RFC 3339"},
			}, "required": []string{"text"}},
		}, map[string]any{
			"name": "send_file", "description": sendFileToolDescription,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"path":    map[string]any{"type": "string", "description": "the file, in the workspace"},
				"caption": map[string]any{"type": "string", "description": "a line of text sent with it"},
			}, "required": []string{"path"}},
		}, map[string]any{
			"name": "react", "description": reactToolDescription,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"emoji": map[string]any{"type": "string", "description": "one emoji, e.g. 👍"},
			}, "required": []string{"emoji"}},
		}}}, nil
	case "tools/call":
		var p struct {
			Name      string `json:"name"`
			Arguments struct {
				Text    string `json:"text"`
				In      string `json:"in"`
				At      string `json:"at"`
				Path    string `json:"path"`
				Caption string `json:"caption"`
				Emoji   string `json:"emoji"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("bad tool call")
		}
		var text string
		var isErr bool
		switch p.Name {
		case "schedule_message":
			text, isErr = mcpScheduleCall(ep, p.Arguments.Text, p.Arguments.In, p.Arguments.At)
		case "send_file":
			text, isErr = mcpSendFileCall(ep, p.Arguments.Path, p.Arguments.Caption)
		case "react":
			text, isErr = mcpReactCall(ep, p.Arguments.Emoji)
		default:
			return nil, fmt.Errorf("unknown tool %q", p.Name)
		}
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isErr}, nil
	}
	return nil, fmt.Errorf("method %q not found", method)
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
	fields["token"], fields["chat"], fields["thread"], fields["group"] = ep.token, ep.chat, ep.thread, ep.group
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
