package agenttools

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
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
	"github.com/clawhost/clawhost/core/sessionkey"
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
//
// Exactly once across a crash: each call of a turn gets an idempotency
// key (callKey) that a re-run of the turn gives the same call again. A
// finished call's result is stored under it (store.ToolResults) before
// claude sees it, and a call whose key has a stored result is answered
// from the store without reaching the plugin. A call still running when
// the host died has no stored result: it reaches the plugin again with
// the same key, for the plugin to recognise (sdk/tool.Provider.Call).

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
	c, ok := a.callerOf(req.Token, req.Chat, req.Thread, req.Group, req.Agent, r.URL.Path == "/tools")
	if !ok {
		http.Error(w, "this token is not valid for that chat", http.StatusForbidden)
		return req, false
	}
	req.Chat, req.Thread, req.Group, req.Agent = c.chat, c.thread, c.group, c.agent
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
	detail := "call " + callID
	key, journal := a.callKey(req.Chat, req.Thread, instance, name, req.Arguments)
	if stored, ok := a.storedResult(r.Context(), key); ok {
		// The turn runs again after a crash and makes a call that
		// finished before it: its result, not a second call.
		text := a.attach(conv, stored.Text, stored.Files)
		answer(pluginToolResult{Text: text, IsError: stored.IsError}, "replayed", detail+", key "+key)
		return
	}
	timeout := a.grants.Timeout(instance)
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	res, err := a.plugins.CallTool(ctx, instance, tool.CallRequest{CallID: callID, IdempotencyKey: key, Tool: name, Arguments: req.Arguments,
		Conversation: conv, Sender: sender, Agent: req.Agent, Workspace: a.grants.Workspace(req.Agent), Workdir: a.grants.Workdir(req.Agent, conv.SessionKey)})
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
	a.storeResult(r.Context(), key, journal, storedResult{Text: text, IsError: res.IsError, Files: res.Files})
	text = a.attach(conv, text, res.Files)
	decision := "ok"
	if res.IsError {
		decision = "error"
	}
	if key != "" {
		detail += ", key " + key
	}
	answer(pluginToolResult{Text: text, IsError: res.IsError}, decision, detail)
}

// attach queues a tool's files for the turn's reply and returns text with
// a line for each saying what became of it.
func (a *Endpoint) attach(conv command.Conversation, text string, files []tool.File) string {
	for _, f := range files {
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
	return text
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
	// journal is the first journal entry of the turn whose run is
	// claude's current one in the chat (ToolRun), 0 when it is none's;
	// calls counts that run's plugin tool calls by tool and arguments.
	journal int64
	calls   map[string]int
}

// noteTurn records m's chat and sender for its plugin tool calls; the
// run's turn (ToolRun) stays.
func (a *Endpoint) noteTurn(key string, m *message.Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.chats == nil {
		a.chats = map[string]chatTurn{}
	}
	k := m.Instance + ":" + m.ChatID + "|" + m.ThreadID
	c := a.chats[k]
	c.conv = command.Conversation{SessionKey: key, Instance: m.Instance, Channel: m.Channel, ChatType: m.ChatType, ChatID: m.ChatID, ThreadID: m.ThreadID}
	c.sender = m.Sender
	a.chats[k] = c
}

// ToolRun is turn.Options.ToolRun: the run of claude about to start in
// m's chat serves the turn whose first journal entry is journal (0: no
// turn's own run). Its plugin tool calls are counted from zero, so a
// re-run of the turn gives its calls the keys the first run gave them.
func (a *Endpoint) ToolRun(key sessionkey.Key, m *message.Message, journal int64) {
	a.noteTurn(key.String(), m)
	a.mu.Lock()
	defer a.mu.Unlock()
	k := m.Instance + ":" + m.ChatID + "|" + m.ThreadID
	c := a.chats[k]
	c.journal, c.calls = journal, map[string]int{}
	a.chats[k] = c
}

// callKey is the idempotency key of a call of instance's tool name with
// args in chat (and thread), and the journal entry of the call's turn;
// "" and 0 when the chat's run is no turn's own. The key names the turn,
// the tool, a digest of the arguments (canonical JSON: key order and
// spacing do not matter) and the call's ordinal among the run's calls of
// the tool with those arguments. Counting per arguments, not per tool,
// keeps a key with its call when claude makes parallel calls in another
// order on the re-run, and never gives a call with other arguments the
// result of an earlier one.
func (a *Endpoint) callKey(chat, thread, instance, name string, args json.RawMessage) (string, int64) {
	digest := sha256.Sum256(canonicalJSON(args))
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.chats[chat+"|"+thread]
	if !ok || c.journal <= 0 || c.calls == nil {
		return "", 0
	}
	call := instance + "." + name + ":" + hex.EncodeToString(digest[:8])
	c.calls[call]++
	return fmt.Sprintf("turn-%d:%s:%d", c.journal, call, c.calls[call]), c.journal
}

// canonicalJSON is args re-encoded with sorted keys and no spaces (args
// itself when it is not JSON).
func canonicalJSON(args json.RawMessage) []byte {
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return args
	}
	b, err := json.Marshal(v)
	if err != nil {
		return args
	}
	return b
}

// storedResult is a finished call as the store keeps it.
type storedResult struct {
	Text    string      `json:"text"`
	IsError bool        `json:"is_error,omitempty"`
	Files   []tool.File `json:"files,omitempty"`
}

// storedResult reads the result stored under key; false when there is
// none (or no key, no store, or the store failed: the call then runs).
func (a *Endpoint) storedResult(ctx context.Context, key string) (storedResult, bool) {
	if key == "" || a.results == nil {
		return storedResult{}, false
	}
	r, err := a.results.ToolResult(ctx, key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			a.log.Warn("a plugin tool's stored result could not be read; the tool is called", "key", key, "error", err)
		}
		return storedResult{}, false
	}
	var s storedResult
	if err := json.Unmarshal(r.Result, &s); err != nil {
		a.log.Warn("a plugin tool's stored result could not be read; the tool is called", "key", key, "error", err)
		return storedResult{}, false
	}
	return s, true
}

// storeResult stores a finished call's result under key before claude
// sees it. A failed write is logged: the call was made, and a re-run would
// make it again (the plugin sees the same key).
func (a *Endpoint) storeResult(ctx context.Context, key string, journal int64, r storedResult) {
	if key == "" || a.results == nil {
		return
	}
	b, _ := json.Marshal(r) // strings and bools always encode
	if err := a.results.RecordToolResult(context.WithoutCancel(ctx), store.ToolResult{Key: key, JournalID: journal, Result: b}); err != nil {
		a.log.Warn("a plugin tool's result was not stored; a re-run of its turn calls the tool again", "key", key, "error", err)
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
