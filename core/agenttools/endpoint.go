// Package agenttools is the agent's own tools: the host's endpoint behind
// them (a unix socket only the host's user, and claude's, may reach; a token
// per chat, so a claude process acts only in the chat it serves — or, for a
// claude started before any chat, a token of its process, bound to the chat
// that adopts it: process.go) and the
// stdio MCP bridge claude starts, `clawhost mcp-schedule` (ServeMCP), which
// offers claude schedule_message, send_file and react, and the plugin tools
// its agent is granted (plugintools.go).
package agenttools

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hashicorp/go-hclog"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// ScheduleTool, SendFileTool and ReactTool are the names claude gives the
// host's schedule_message, send_file and react tools.
const (
	ScheduleTool = "mcp__clawhost__schedule_message"
	SendFileTool = "mcp__clawhost__send_file"
	ReactTool    = "mcp__clawhost__react"
)

// maxAhead bounds how far ahead the agent may schedule.
const maxAhead = 366 * 24 * time.Hour

// The agent's tool endpoint lives in one directory (Endpoint.Start's): its unix
// socket and the MCP config files that start `clawhost mcp-schedule` for
// claude, one per chat. A sandbox around claude that hides data_dir binds
// back the socket and the one chat's file it runs for, never the directory.
const (
	// SocketName is the endpoint's unix socket in that directory.
	SocketName     = "agent.sock"
	agentMCPPrefix = "mcp-"
)

// Environment of `clawhost mcp-schedule`, set by the MCP config's env map:
// never its argv, which every local account can read in /proc.
const (
	EnvAgentSocket = "CLAWHOST_AGENT_SOCKET"
	EnvAgentToken  = "CLAWHOST_AGENT_TOKEN"
	EnvAgentChat   = "CLAWHOST_AGENT_CHAT"
	EnvAgentThread = "CLAWHOST_AGENT_THREAD"
	EnvAgentGroup  = "CLAWHOST_AGENT_GROUP"
	// EnvAgentID is the agent whose turns the bridge serves (its plugin
	// tools are that agent's grants).
	EnvAgentID = "CLAWHOST_AGENT_ID"
)

// Endpoint is the endpoint behind the agent's own tools (`clawhost
// mcp-schedule`): a tool call carries a token the host made for one chat,
// so a claude process can schedule only into the chat it serves.
//
// Nothing secret is on a command line: claude gets --mcp-config with the
// path of a 0600 file, and that file gives the bridge its token in its
// environment. The endpoint is a unix socket (0600, in a 0700 directory),
// and on Linux each connection's SO_PEERCRED uid must be the host's own
// (or one added to uids): another local account can neither read the
// token nor connect.
type Endpoint struct {
	log       hclog.Logger
	schedules Schedules
	turns     Turns
	secret    []byte
	srv       *http.Server
	dir       string // AgentRunDir, absolute; "" before start
	sock      string
	exe       string
	// runAs are the users claude runs as (agent.run_as), none for the
	// host's own: they may connect to the socket. One such user owns the
	// directory, the socket and the MCP config files (it reads them; the
	// host, root, still can). With several, the host keeps them (the
	// directory 0711, the socket 0666 behind the peer check) and the runner
	// gives each process a copy of its MCP config file as its own.
	runAs []*runas.User

	mu      sync.Mutex
	count   int             // one-shot entries added, for names
	written map[string]bool // MCP config files written by this run
	// procs are the processes' own tokens (ProcessTools) by handle, procTokens
	// their handles by the token's hash.
	procs      map[string]*procTools
	procTokens map[[32]byte]string
	// senders maps a direct chat ("<instance>:<chat id>") the tool was
	// offered in to its sender ("<instance>:<sender id>"), so an entry the
	// agent adds there is dropped when that sender is revoked.
	senders map[string]string
	// chats maps "<instance>:<chat id>|<thread>" to its latest turn's
	// conversation and sender, for plugin tool calls.
	chats map[string]chatTurn

	plugins PluginTools
	grants  PluginToolGrants
	audit   func(context.Context, store.AuditEvent)
	results store.ToolResults
}

// Schedules is where the schedule_message tool adds its one-shot entries
// (the host's schedules, shared by the hosts of a cluster).
type Schedules interface {
	Add(ctx context.Context, e command.ScheduleEntry) error
}

// Turns is the turn running in a chat as the send_file and react tools
// reach it (the pipeline's turns: core/turn AttachFile and ReactTo).
type Turns interface {
	// AttachFile checks the file at path for the chat tgt and queues it
	// for the turn's reply; it returns the file's name, or why it is not
	// sent.
	AttachFile(tgt message.Target, path, caption string) (string, error)
	// ReactTo sets the bot's reaction on the message the turn answers;
	// it returns why not (no turn, a channel without reactions).
	ReactTo(tgt message.Target, emoji string) error
}

// Options configure an Endpoint.
type Options struct {
	Logger    hclog.Logger
	Schedules Schedules
	// Turns takes the send_file tool's files and the react tool's
	// reactions; nil: neither tool is offered.
	Turns Turns
	// RunAs are the users claude runs as besides the host's own (each
	// agent's run_as, one each); nil: claude runs as the host's user only.
	RunAs []*runas.User
	// PluginTools are the tool plugins, and Grants which agent may call
	// which of their tools; either nil: no plugin tool is offered.
	PluginTools PluginTools
	Grants      PluginToolGrants
	// Audit records each plugin tool call (nil: none recorded).
	Audit func(context.Context, store.AuditEvent)
	// Results remember the finished plugin tool calls by idempotency key,
	// so a turn run again after a crash does not call a tool twice (nil:
	// nothing remembered, every call reaches its plugin).
	Results store.ToolResults
}

// New returns an endpoint that serves nothing until Start.
func New(opts Options) *Endpoint {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	return &Endpoint{log: opts.Logger, schedules: opts.Schedules, turns: opts.Turns, runAs: opts.RunAs,
		plugins: opts.PluginTools, grants: opts.Grants, audit: opts.Audit, results: opts.Results}
}

// Start listens on dir/agent.sock (dir is made 0700); without it the tool
// is not offered. A sandbox around claude that hides dir's parents must
// bind dir back.
func (a *Endpoint) Start(dir string) error {
	a.secret = make([]byte, 32)
	if _, err := rand.Read(a.secret); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	a.exe = exe
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	sock := filepath.Join(dir, SocketName)
	if len(sock) >= maxSocketPath {
		return fmt.Errorf("agent tool socket %s: the path is longer than a unix socket allows (%d bytes); use a shorter data_dir", sock, maxSocketPath-1)
	}
	if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
		_ = c.Close()
		return fmt.Errorf("agent tool socket %s: another clawhost serves this data_dir", sock)
	}
	_ = os.Remove(sock) // a stale one: nothing answers there
	// The files of an earlier run hold tokens of its secret: stale.
	old, _ := filepath.Glob(filepath.Join(dir, agentMCPPrefix+"*.json"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		_ = ln.Close()
		return err
	}
	allowed := []int{os.Getuid()}
	for _, u := range a.runAs {
		allowed = append(allowed, int(u.UID))
	}
	if len(a.runAs) > 0 {
		// claude's users pass through <data_dir>/run to this directory
		// (bubblewrap binds it, as that user, into the sandbox), and each may
		// connect: the host's own user too, whose sandboxed claude holds no
		// capability that would pass another user's permissions. Who connects is
		// the peer's credentials' to say (peerListener).
		err := os.Chmod(filepath.Dir(dir), 0o711)
		if err == nil {
			err = os.Chmod(dir, 0o711)
		}
		if err == nil {
			err = os.Chmod(sock, 0o666)
		}
		if err != nil {
			_ = ln.Close()
			return err
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /schedule", a.schedule)
	mux.HandleFunc("POST /send_file", a.sendFile)
	mux.HandleFunc("POST /react", a.react)
	mux.HandleFunc("POST /tools", a.listPluginTools)
	mux.HandleFunc("POST /call", a.callPluginTool)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.dir, a.sock, a.written = dir, sock, map[string]bool{}
	pl := &peerListener{Listener: ln, allowed: allowed, refuse: func(uid int) {
		a.log.Warn("refused a connection to the agent tool socket from another account", "uid", uid)
	}}
	go func() { _ = a.srv.Serve(pl) }()
	return nil
}

// maxSocketPath is the size of sockaddr_un.sun_path on Linux (104 on the
// BSDs: a path fitting Linux's may not fit there, and Listen says so).
const maxSocketPath = 108

// Stop stops serving; a tool call in flight ends with ctx.
func (a *Endpoint) Stop(ctx context.Context) {
	if a.srv != nil {
		_ = a.srv.Shutdown(ctx)
	}
}

// token is the token of a chat (and thread: a Telegram topic, a Discord
// thread) and agent for a bridge: valid for that chat, thread and agent
// only.
func (a *Endpoint) token(chat, thread string, group bool, agent string) string {
	m := hmac.New(sha256.New, a.secret)
	fmt.Fprintf(m, "%s|%s|%v|%s", chat, thread, group, agent)
	return hex.EncodeToString(m.Sum(nil))
}

// Tools is turn.Options.AgentTools: the path of the MCP config file
// starting `clawhost mcp-schedule` for m's chat and the agent of session
// key (claude's --mcp-config), and the host's own tools it allows without
// asking. Plugin tools are not among them: claude's permission rules
// decide about those like about any MCP tool.
func (a *Endpoint) Tools(key sessionkey.Key, m *message.Message) (string, []string) {
	if a.dir == "" || m.Instance == "" || m.ChatID == "" {
		return "", nil
	}
	agent := key.Agent
	a.noteTurn(key.String(), m)
	chat := m.Instance + ":" + m.ChatID
	group := m.ChatType == channel.ChatGroup || m.ChatType == channel.ChatChannel
	if !group && m.From != "" {
		a.mu.Lock()
		if a.senders == nil {
			a.senders = map[string]string{}
		}
		a.senders[chat] = m.From
		a.mu.Unlock()
	}
	path, err := a.mcpConfig(chat, m.ThreadID, group, agent)
	if err != nil {
		a.log.Warn("the agent's own tools (schedule_message, send_file, react) are not offered to this turn", "chat", chat, "error", err)
		return "", nil
	}
	if a.turns == nil {
		return path, []string{ScheduleTool}
	}
	return path, []string{ScheduleTool, SendFileTool, ReactTool}
}

// mcpConfig writes (once per run) the 0600 MCP config file of a chat and
// returns its path. Its env map carries the token: the bridge's argv
// holds none.
func (a *Endpoint) mcpConfig(chat, thread string, group bool, agent string) (string, error) {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%v|%s", chat, thread, group, agent)))
	path := filepath.Join(a.dir, agentMCPPrefix+hex.EncodeToString(sum[:8])+".json")
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.written[path] {
		return path, nil
	}
	env := map[string]string{EnvAgentSocket: a.sock, EnvAgentToken: a.token(chat, thread, group, agent), EnvAgentChat: chat}
	if agent != "" {
		env[EnvAgentID] = agent
	}
	if thread != "" {
		env[EnvAgentThread] = thread
	}
	if group {
		env[EnvAgentGroup] = "true"
	}
	if err := a.writeMCPConfig(path, env); err != nil {
		return "", err
	}
	a.written[path] = true
	return path, nil
}

// writeMCPConfig writes the 0600 MCP config file at path starting `clawhost
// mcp-schedule` with env (owned by claude's user when it is one other than the
// host's).
func (a *Endpoint) writeMCPConfig(path string, env map[string]string) error {
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"clawhost": map[string]any{
		"type": "stdio", "command": a.exe, "args": []string{"mcp-schedule"}, "env": env}}})
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(a.dir, ".mcp-*.tmp") // 0600
	if err != nil {
		return err
	}
	_, werr := f.Write(cfg)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr == nil && len(a.runAs) == 1 {
		werr = a.runAs[0].Chown(path)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
	}
	return werr
}

// errNoPeerCred: this system does not tell a unix socket's peer.
var errNoPeerCred = errors.New("peer credentials are not checked on this system")

// peerListener accepts only connections whose peer uid is allowed; it
// refuses the others at once (and any whose uid cannot be read). Where
// the system cannot tell the peer at all (errNoPeerCred: not Linux), the
// socket's 0600 mode and the 0700 directory remain.
type peerListener struct {
	net.Listener
	allowed []int
	refuse  func(uid int)
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if errors.Is(err, errNoPeerCred) || (err == nil && slices.Contains(l.allowed, uid)) {
			return c, nil
		}
		l.refuse(uid)
		_ = c.Close()
	}
}

func (a *Endpoint) schedule(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token  string    `json:"token"`
		Chat   string    `json:"chat"`
		Thread string    `json:"thread"`
		Group  bool      `json:"group"`
		Agent  string    `json:"agent"`
		At     time.Time `json:"at"`
		Text   string    `json:"text"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	c, ok := a.callerOf(req.Token, req.Chat, req.Thread, req.Group, req.Agent, false)
	if !ok {
		http.Error(w, "this token is not valid for that chat", http.StatusForbidden)
		return
	}
	req.Chat, req.Group = c.chat, c.group
	now := time.Now()
	switch {
	case strings.TrimSpace(req.Text) == "":
		http.Error(w, "the text is empty", http.StatusBadRequest)
		return
	case !req.At.After(now.Add(-time.Minute)):
		http.Error(w, "that time has passed", http.StatusBadRequest)
		return
	case req.At.After(now.Add(maxAhead)):
		http.Error(w, "at most a year ahead", http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	a.count++
	name := fmt.Sprintf("agent-%d-%d", now.UnixNano(), a.count)
	sender := ""
	if !req.Group {
		sender = a.senders[req.Chat]
	}
	a.mu.Unlock()
	err := a.schedules.Add(r.Context(), command.ScheduleEntry{Name: name, Chat: req.Chat, Group: req.Group, At: req.At, Prompt: req.Text, Sender: sender})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	a.log.Info("the agent scheduled a message", "chat", req.Chat, "at", req.At)
	_, _ = io.WriteString(w, "ok")
}

// turnCall is a send_file or react call: the bridge's token, chat and
// thread, and the tool's arguments.
type turnCall struct {
	Token   string `json:"token"`
	Chat    string `json:"chat"`
	Thread  string `json:"thread"`
	Group   bool   `json:"group"`
	Agent   string `json:"agent"`
	Path    string `json:"path"`
	Caption string `json:"caption"`
	Emoji   string `json:"emoji"`
}

// turnCall decodes a call and checks its token; it answers the request
// itself and returns ok false when the call goes no further.
func (a *Endpoint) turnCall(w http.ResponseWriter, r *http.Request) (turnCall, message.Target, bool) {
	var req turnCall
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return req, message.Target{}, false
	}
	c, ok := a.callerOf(req.Token, req.Chat, req.Thread, req.Group, req.Agent, false)
	if !ok {
		http.Error(w, "this token is not valid for that chat", http.StatusForbidden)
		return req, message.Target{}, false
	}
	req.Chat, req.Thread, req.Group, req.Agent = c.chat, c.thread, c.group, c.agent
	instance, chatID, ok := strings.Cut(req.Chat, ":")
	if a.turns == nil || !ok {
		http.Error(w, "not possible in this chat", http.StatusUnprocessableEntity)
		return req, message.Target{}, false
	}
	return req, message.Target{Instance: instance, ChatID: chatID, ThreadID: req.Thread}, true
}

// sendFile queues a file for the reply of the turn running in the
// token's chat (the send_file tool): 200 with the file's name, 422 with
// why it is not sent (the tool's error for claude).
func (a *Endpoint) sendFile(w http.ResponseWriter, r *http.Request) {
	req, tgt, ok := a.turnCall(w, r)
	if !ok {
		return
	}
	name, err := a.turns.AttachFile(tgt, req.Path, req.Caption)
	if err != nil {
		a.log.Info("the agent's file was not sent", "chat", req.Chat, "reason", err)
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	a.log.Info("the agent sent a file with its reply", "chat", req.Chat, "file", name)
	_, _ = io.WriteString(w, name)
}

// maxEmoji bounds a reaction (one emoji, with modifiers and joiners).
const maxEmoji = 32

// react sets the bot's reaction on the message the turn running in the
// token's chat answers (the react tool): 200, or 422 with why not.
func (a *Endpoint) react(w http.ResponseWriter, r *http.Request) {
	req, tgt, ok := a.turnCall(w, r)
	if !ok {
		return
	}
	emoji := strings.TrimSpace(req.Emoji)
	if emoji == "" || len(emoji) > maxEmoji || strings.ContainsAny(emoji, " \n\t") {
		http.Error(w, "give one emoji", http.StatusUnprocessableEntity)
		return
	}
	if err := a.turns.ReactTo(tgt, emoji); err != nil {
		a.log.Info("the agent's reaction was not set", "chat", req.Chat, "reason", err)
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	a.log.Debug("the agent reacted", "chat", req.Chat, "emoji", emoji)
	_, _ = io.WriteString(w, "ok")
}
