// Package mcpchanneltest is a Claude Code channel server written to the
// published channel contract, and the chat platform behind it, for tests
// of the mcp-channel bridge.
//
// The platform (NewPlatform) is an HTTP server on 127.0.0.1 in the test's
// process: it holds the chats, queues what people write and records what
// the bot posts, edits and reacts. The channel server (Serve; a test binary
// runs it from TestMain through Main when EnvPlatform is set) is the child
// the bridge starts: an MCP server on stdio, made with the official go-sdk,
// that declares the claude/channel and claude/channel/permission
// capabilities, pushes each message the platform hands it as a
// notifications/claude/channel (content, meta: chat_id, message_id, user,
// user_id, ts, file_path) and offers the reply, react and edit_message
// tools, as the official Telegram and fakechat servers do. Like a real
// platform push, a message handed to a server that dies before it wrote
// the notification is gone.
//
// Faults a test asks for: CrashOnReply (the server records the next
// reply on the platform, then SIGKILLs itself before it answers the
// tool call: the reply reached the chat, its answer is lost) and
// CrashServer (the server exits at once).
package mcpchanneltest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Message is a message in a chat of the platform.
type Message struct {
	ID     string
	ChatID string
	// FromBot: the bot posted it (a reply); else a person wrote it.
	FromBot bool
	UserID  string
	Text    string
	ReplyTo string
	Files   []File
	// Edits are the texts the message had before each edit, oldest
	// first; Text is the current one.
	Edits     []string
	Reactions []string
	Time      time.Time
}

// File is an attachment.
type File struct {
	Name string
	Data []byte
}

// Platform is the chat platform; see the package documentation.
type Platform struct {
	srv *http.Server
	url string
	dir string

	mu       sync.Mutex
	seq      int
	msgs     []*Message
	queue    []wireEvent
	perms    []PermissionRequest
	crashNow bool
	crashOn  bool
	starts   int
	changed  chan struct{} // closed and replaced on every change
	wake     chan struct{} // closed and replaced when queue grows
}

// PermissionRequest is a permission prompt the bridge put to the server.
type PermissionRequest struct {
	RequestID, ToolName, Description, InputPreview string
}

// wireEvent is what /next hands the server.
type wireEvent struct {
	Content string            `json:"content,omitempty"`
	Meta    map[string]string `json:"meta,omitempty"`
	// Permission, when set, is a person's answer to a permission prompt.
	Permission map[string]string `json:"permission,omitempty"`
	Crash      bool              `json:"crash,omitempty"`
}

// NewPlatform starts a platform on 127.0.0.1; inbound files are written
// under dir. Close it at the end.
func NewPlatform(dir string) (*Platform, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Platform{dir: dir, url: "http://" + ln.Addr().String(), changed: make(chan struct{}), wake: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hello", p.hello)
	mux.HandleFunc("POST /push", p.push)
	mux.HandleFunc("GET /next", p.next)
	mux.HandleFunc("POST /reply", p.onReply(p.reply))
	mux.HandleFunc("POST /edit", p.onReply(p.edit))
	mux.HandleFunc("POST /react", p.onReply(p.react))
	mux.HandleFunc("POST /permission_request", p.permissionRequest)
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the platform's address, for the server's EnvPlatform.
func (p *Platform) URL() string { return p.url }

// Close stops the platform.
func (p *Platform) Close() { _ = p.srv.Close() }

// Env is the environment a channel server of this platform needs.
func (p *Platform) Env() map[string]string { return map[string]string{EnvPlatform: p.url} }

// Block is the bridge's config block (command and env) that runs the
// calling binary as this platform's channel server: a test binary whose
// TestMain calls Main.
func (p *Platform) Block() (map[string]any, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return map[string]any{"command": []string{exe}, "env": p.Env()}, nil
}

// notify wakes waiters; p.mu held.
func (p *Platform) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Push queues a message a person (userID, called user) writes in chatID,
// with files, and returns its id.
func (p *Platform) Push(chatID, userID, user, text string, files ...File) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	id := "u" + strconv.Itoa(p.seq)
	m := &Message{ID: id, ChatID: chatID, UserID: userID, Text: text, Files: files, Time: time.Now()}
	meta := map[string]string{"chat_id": chatID, "message_id": id, "user": user, "user_id": userID, "ts": m.Time.UTC().Format(time.RFC3339Nano)}
	for i, f := range files {
		path := filepath.Join(p.dir, id+"-"+strconv.Itoa(i)+"-"+filepath.Base(f.Name))
		if err := os.WriteFile(path, f.Data, 0o600); err != nil {
			return "", err
		}
		meta["file_path"] = path
	}
	p.msgs = append(p.msgs, m)
	p.queue = append(p.queue, wireEvent{Content: text, Meta: meta})
	close(p.wake)
	p.wake = make(chan struct{})
	p.notify()
	return id, nil
}

// Answer queues a person's answer to a permission prompt ("allow" or
// "deny").
func (p *Platform) Answer(requestID, behavior string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue = append(p.queue, wireEvent{Permission: map[string]string{"request_id": requestID, "behavior": behavior}})
	close(p.wake)
	p.wake = make(chan struct{})
}

// CrashOnReply makes the server record the next reply, then die by
// SIGKILL before it answers the call.
func (p *Platform) CrashOnReply() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashOn = true
}

// CrashServer makes the server exit at once (status 3).
func (p *Platform) CrashServer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.crashNow = true
	close(p.wake)
	p.wake = make(chan struct{})
}

// Starts is how many times a server said hello.
func (p *Platform) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Messages returns copies of chatID's messages, oldest first.
func (p *Platform) Messages(chatID string) []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Message
	for _, m := range p.msgs {
		if m.ChatID == chatID {
			c := *m
			c.Edits = append([]string(nil), m.Edits...)
			c.Reactions = append([]string(nil), m.Reactions...)
			out = append(out, c)
		}
	}
	return out
}

// Permissions returns the permission prompts the server got.
func (p *Platform) Permissions() []PermissionRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]PermissionRequest(nil), p.perms...)
}

// WaitFor waits until cond, evaluated after each change of the platform,
// holds, or ctx ends.
func (p *Platform) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

func (p *Platform) hello(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.starts++
	p.notify()
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// next long-polls for the next event (at most 20 s).
func (p *Platform) next(w http.ResponseWriter, r *http.Request) {
	t := time.NewTimer(20 * time.Second)
	defer t.Stop()
	for {
		p.mu.Lock()
		if p.crashNow {
			p.crashNow = false
			p.mu.Unlock()
			writeJSON(w, wireEvent{Crash: true})
			return
		}
		if len(p.queue) > 0 {
			ev := p.queue[0]
			p.queue = p.queue[1:]
			p.mu.Unlock()
			writeJSON(w, ev)
			return
		}
		wake := p.wake
		p.mu.Unlock()
		select {
		case <-wake:
		case <-t.C:
			w.WriteHeader(http.StatusNoContent)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// wireReply is a reply, edit or reaction the server posts.
type wireReply struct {
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id,omitempty"`
	Text      string `json:"text,omitempty"`
	ReplyTo   string `json:"reply_to,omitempty"`
	Emoji     string `json:"emoji,omitempty"`
	Files     []File `json:"files,omitempty"`
}

// wireAnswer is the platform's answer to a post.
type wireAnswer struct {
	ID    string `json:"id,omitempty"`
	Error string `json:"error,omitempty"`
	Crash bool   `json:"crash,omitempty"`
}

// onReply is the handler of one of the server's tool calls: it decodes
// the call and answers what do makes of it under p.mu, waking waiters
// when do changed the platform (an answer with no Error).
func (p *Platform) onReply(do func(in wireReply) wireAnswer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in wireReply
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		ans := do(in)
		if ans.Error == "" {
			p.notify()
		}
		p.mu.Unlock()
		writeJSON(w, ans)
	}
}

// reply posts the bot's message; p.mu held.
func (p *Platform) reply(in wireReply) wireAnswer {
	if !p.known(in.ChatID) {
		return wireAnswer{Error: "chat not found"}
	}
	p.seq++
	m := &Message{ID: "b" + strconv.Itoa(p.seq), ChatID: in.ChatID, FromBot: true, Text: in.Text, ReplyTo: in.ReplyTo, Files: in.Files, Time: time.Now()}
	p.msgs = append(p.msgs, m)
	crash := p.crashOn
	p.crashOn = false
	return wireAnswer{ID: m.ID, Crash: crash}
}

// known reports whether someone wrote in chat: the bot may answer only
// there; p.mu held.
func (p *Platform) known(chat string) bool {
	for _, m := range p.msgs {
		if m.ChatID == chat && !m.FromBot {
			return true
		}
	}
	return false
}

// push is Push over HTTP, for a test's inject command (`clawhost plugin
// test -inject`): {"chat_id", "user_id", "user", "text"}.
func (p *Platform) push(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ChatID string `json:"chat_id"`
		UserID string `json:"user_id"`
		User   string `json:"user"`
		Text   string `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.ChatID == "" || in.UserID == "" {
		http.Error(w, "want chat_id, user_id, user and text", http.StatusBadRequest)
		return
	}
	id, err := p.Push(in.ChatID, in.UserID, in.User, in.Text)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, wireAnswer{ID: id})
}

// find returns the message id in chat; p.mu held.
func (p *Platform) find(chat, id string) *Message {
	for _, m := range p.msgs {
		if m.ChatID == chat && m.ID == id {
			return m
		}
	}
	return nil
}

// edit changes the text of a message the bot sent; p.mu held.
func (p *Platform) edit(in wireReply) wireAnswer {
	m := p.find(in.ChatID, in.MessageID)
	if m == nil || !m.FromBot {
		return notFound(in)
	}
	if m.Text != in.Text {
		m.Edits = append(m.Edits, m.Text)
		m.Text = in.Text
	}
	return wireAnswer{ID: m.ID}
}

// react adds the bot's reaction to any message; p.mu held.
func (p *Platform) react(in wireReply) wireAnswer {
	m := p.find(in.ChatID, in.MessageID)
	if m == nil {
		return notFound(in)
	}
	m.Reactions = append(m.Reactions, in.Emoji)
	return wireAnswer{ID: m.ID}
}

// notFound is the answer about a message the call names that is not there.
func notFound(in wireReply) wireAnswer {
	return wireAnswer{Error: fmt.Sprintf("message %s not found in chat %s", in.MessageID, in.ChatID)}
}

func (p *Platform) permissionRequest(w http.ResponseWriter, r *http.Request) {
	var in PermissionRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.perms = append(p.perms, in)
	p.notify()
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
