package agenttools

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/tool"
)

// Plugin tools: a tool plugin's tools reach claude through the same
// bridge and socket as the host's own (the sandbox gains nothing). The
// bridge asks the host, at its start, which plugin tools its agent is
// granted (POST /tools) and offers them under "<instance>__<tool>", so
// claude calls them mcp__clawhost__<instance>__<tool>: the name its
// permission rules (allowed_tools, an approval's "Always") use. A call
// (POST /call) is checked again against the agent's grants, given a call
// id, routed to the plugin with the chat, sender, agent and workspace,
// bounded by the plugin's tool_timeout, and audited.

// ToolSeparator joins a plugin instance and its tool's name in the name
// claude sees. Instance names containing it offer no tools.
const ToolSeparator = "__"

// PluginTools are the tool plugins as the endpoint reaches them (the
// plugin host's ports).
type PluginTools interface {
	// ListTools returns the tools of each tool plugin for which want is
	// true, by instance; an instance still starting is waited for
	// (bounded by its start timeout). A plugin that fails is left out.
	ListTools(ctx context.Context, want func(instance string) bool) map[string][]tool.Spec
	// CallTool calls a plugin's tool; ctx bounds it.
	CallTool(ctx context.Context, instance string, req tool.CallRequest) (tool.Result, error)
}

// PluginToolGrants are the configuration's answer about plugin tools,
// read at each call (a reload changes it).
type PluginToolGrants interface {
	// Granted lists the agent's tools patterns ("memory.*", "git.status").
	Granted(agent string) []string
	// Workspace is the agent's working directory (absolute).
	Workspace(agent string) string
	// Workdir is the directory of the chat of session key: its worktree
	// when the agent has worktrees, else Workspace.
	Workdir(agent, key string) string
	// Timeout bounds one call of instance's tools (its tool_timeout).
	Timeout(instance string) time.Duration
}

// Grants reports whether patterns (an agent's tools) grant the tool name
// of plugin instance: "<instance>.<tool>" exactly, "<instance>.*", or a
// path.Match pattern over "<instance>.<tool>".
func Grants(patterns []string, instance, name string) bool {
	full := instance + "." + name
	for _, p := range patterns {
		if p == full || p == instance+".*" {
			return true
		}
		if ok, err := path.Match(p, full); err == nil && ok {
			return true
		}
	}
	return false
}

// grantedInstance reports whether any pattern may grant a tool of
// instance (so that the instance is worth asking).
func grantedInstance(patterns []string, instance string) bool {
	for _, p := range patterns {
		head, _, _ := strings.Cut(p, ".")
		if head == instance {
			return true
		}
		if ok, err := path.Match(head, instance); err == nil && ok {
			return true
		}
	}
	return false
}

// pluginToolDef is a plugin tool as the bridge offers it.
type pluginToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// pluginToolResult is a plugin tool's answer as the bridge passes it on.
type pluginToolResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error"`
}

// addPluginTools asks the host for the plugin tools of the bridge's agent
// and offers each on srv. A host that answers nothing useful leaves the
// host's own tools alone.
func addPluginTools(srv *mcp.Server, ep agentEndpoint, stderr io.Writer) {
	var defs []pluginToolDef
	if err := ep.call(context.Background(), "/tools", map[string]any{}, &defs); err != nil {
		fmt.Fprintf(stderr, "clawhost mcp-schedule: plugin tools not offered: %v\n", err)
		return
	}
	for _, d := range defs {
		d := d
		t := &mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema}
		func() {
			defer func() {
				if r := recover(); r != nil { // a schema the SDK refuses: this tool only
					fmt.Fprintf(stderr, "clawhost mcp-schedule: tool %s not offered: %v\n", d.Name, r)
				}
			}()
			srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := req.Params.Arguments
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				var res pluginToolResult
				if err := ep.call(ctx, "/call", map[string]any{"tool": d.Name, "arguments": args}, &res); err != nil {
					return toolResult("clawhost did not answer: "+err.Error(), true), nil
				}
				return toolResult(res.Text, res.IsError), nil
			})
		}()
	}
}

// call posts fields with the bridge's identity to route and decodes the
// JSON answer into out; a status other than 200 is an error with the
// answer's text. ctx bounds it (the host bounds a tool call itself).
func (ep agentEndpoint) call(ctx context.Context, route string, fields map[string]any, out any) error {
	fields["token"], fields["chat"], fields["thread"], fields["group"], fields["agent"] = ep.token, ep.chat, ep.thread, ep.group, ep.agent
	body, _ := json.Marshal(fields)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", ep.socket)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://clawhost"+route, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(io.LimitReader(resp.Body, maxToolAnswer))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(string(bytes.TrimSpace(msg)))
	}
	return json.Unmarshal(msg, out)
}

// maxToolAnswer bounds what the host answers the bridge (a tool list, a
// tool's text).
const maxToolAnswer = 1 << 20

// maxToolText bounds the text a plugin tool returns to the model.
const maxToolText = 256 << 10

// pluginCall is a /tools or /call request.
type pluginCall struct {
	Token     string          `json:"token"`
	Chat      string          `json:"chat"`
	Thread    string          `json:"thread"`
	Group     bool            `json:"group"`
	Agent     string          `json:"agent"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// pluginCallOf decodes and authenticates a /tools or /call request; it
// answers the request itself and returns ok false when it goes no further.
func (a *Endpoint) pluginCallOf(w http.ResponseWriter, r *http.Request) (pluginCall, bool) {
	var req pluginCall
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return req, false
	}
	if !hmac.Equal([]byte(req.Token), []byte(a.token(req.Chat, req.Thread, req.Group, req.Agent))) {
		http.Error(w, "this token is not valid for that chat", http.StatusForbidden)
		return req, false
	}
	return req, true
}

// listPluginTools answers the bridge's /tools: the plugin tools the
// agent is granted, by the names claude will see.
func (a *Endpoint) listPluginTools(w http.ResponseWriter, r *http.Request) {
	req, ok := a.pluginCallOf(w, r)
	if !ok {
		return
	}
	defs := []pluginToolDef{}
	if a.plugins != nil && a.grants != nil {
		patterns := a.grants.Granted(req.Agent)
		if len(patterns) > 0 {
			all := a.plugins.ListTools(r.Context(), func(instance string) bool {
				return !strings.Contains(instance, ToolSeparator) && grantedInstance(patterns, instance)
			})
			instances := make([]string, 0, len(all))
			for inst := range all {
				instances = append(instances, inst)
			}
			slices.Sort(instances)
			for _, inst := range instances {
				for _, s := range all[inst] {
					if !Grants(patterns, inst, s.Name) {
						continue
					}
					if err := tool.ValidSpec(s); err != nil {
						a.log.Warn("a plugin tool is not offered", "plugin", inst, "error", err)
						continue
					}
					defs = append(defs, pluginToolDef{Name: inst + ToolSeparator + s.Name, Description: s.Description, InputSchema: s.InputSchema})
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(defs)
}

// callPluginTool answers the bridge's /call: the grant checked again (a
// reload may have revoked it), the call routed to the plugin under its
// timeout, its files queued like send_file's, and an audit row.
func (a *Endpoint) callPluginTool(w http.ResponseWriter, r *http.Request) {
	req, ok := a.pluginCallOf(w, r)
	if !ok {
		return
	}
	instance, name, _ := strings.Cut(req.Tool, ToolSeparator)
	conv, sender := a.conversation(req.Chat, req.Thread)
	ev := store.AuditEvent{Kind: store.AuditPluginTool, Actor: "host", Instance: conv.Instance, ChatID: conv.ChatID, Subject: instance + "." + name}
	if sender.ID != "" {
		ev.Actor = conv.Instance + ":" + sender.ID
	}
	answer := func(res pluginToolResult, decision, detail string) {
		ev.Decision, ev.Detail = decision, detail
		a.auditEvent(r.Context(), ev)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	}
	if a.plugins == nil || a.grants == nil || name == "" || !Grants(a.grants.Granted(req.Agent), instance, name) {
		answer(pluginToolResult{Text: fmt.Sprintf("The tool %s is not granted to this agent.", req.Tool), IsError: true}, "refused", "agent "+req.Agent)
		return
	}
	callID := newCallID()
	timeout := a.grants.Timeout(instance)
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	res, err := a.plugins.CallTool(ctx, instance, tool.CallRequest{CallID: callID, Tool: name, Arguments: req.Arguments,
		Conversation: conv, Sender: sender, Agent: req.Agent, Workspace: a.grants.Workspace(req.Agent), Workdir: a.grants.Workdir(req.Agent, conv.SessionKey)})
	detail := "call " + callID
	switch {
	// The plugin's side may see the deadline pass first (gRPC carries it)
	// and answer DeadlineExceeded before ctx's own timer fires: a timeout too.
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		a.log.Warn("a plugin tool timed out", "plugin", instance, "tool", name, "chat", req.Chat, "timeout", timeout)
		answer(pluginToolResult{Text: fmt.Sprintf("The tool %s.%s did not answer within %s and was stopped.", instance, name, timeout), IsError: true}, "timeout", detail)
		return
	case err != nil:
		a.log.Warn("a plugin tool failed", "plugin", instance, "tool", name, "chat", req.Chat, "error", err)
		answer(pluginToolResult{Text: fmt.Sprintf("The tool %s.%s failed: %v", instance, name, err), IsError: true}, "error", detail+": "+err.Error())
		return
	}
	text := res.Text
	if len(text) > maxToolText {
		text = text[:maxToolText] + "\n[cut: the tool's answer was longer than 256 KiB]"
	}
	for _, f := range res.Files {
		tgt := message.Target{Instance: conv.Instance, ChatID: conv.ChatID, ThreadID: conv.ThreadID}
		if a.turns == nil {
			text += "\n(" + f.Path + " was not sent: this chat takes no files from tools)"
			continue
		}
		if fname, err := a.turns.AttachFile(tgt, f.Path, f.Caption); err != nil {
			text += "\n(" + err.Error() + ")"
		} else {
			text += "\n(" + fname + " will be sent to the chat with your answer.)"
		}
	}
	decision := "ok"
	if res.IsError {
		decision = "error"
	}
	answer(pluginToolResult{Text: text, IsError: res.IsError}, decision, detail)
}

// conversation is the chat (and thread) a bridge serves, as the turn
// running there last described it (Tools), with that turn's sender.
func (a *Endpoint) conversation(chat, thread string) (command.Conversation, channel.Sender) {
	a.mu.Lock()
	c, ok := a.chats[chat+"|"+thread]
	a.mu.Unlock()
	if ok {
		return c.conv, c.sender
	}
	instance, id, _ := strings.Cut(chat, ":")
	return command.Conversation{Instance: instance, ChatID: id, ThreadID: thread}, channel.Sender{}
}

// chatTurn is what a chat's latest turn told the endpoint.
type chatTurn struct {
	conv   command.Conversation
	sender channel.Sender
}

// noteTurn records m's chat and sender for its plugin tool calls.
func (a *Endpoint) noteTurn(key string, m *message.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chats == nil {
		a.chats = map[string]chatTurn{}
	}
	a.chats[m.Instance+":"+m.ChatID+"|"+m.ThreadID] = chatTurn{
		conv:   command.Conversation{SessionKey: key, Instance: m.Instance, Channel: m.Channel, ChatType: m.ChatType, ChatID: m.ChatID, ThreadID: m.ThreadID},
		sender: m.Sender,
	}
}

func (a *Endpoint) auditEvent(ctx context.Context, ev store.AuditEvent) {
	if a.audit != nil {
		a.audit(ctx, ev)
	}
}

// newCallID is a fresh per-call id.
func newCallID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
