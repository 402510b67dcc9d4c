package core

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// ScheduleTool is the name claude gives the host's schedule_message tool.
const ScheduleTool = "mcp__clawhost__schedule_message"

// maxAhead bounds how far ahead the agent may schedule.
const maxAhead = 366 * 24 * time.Hour

// agentAPI is the loopback endpoint behind the agent's own tools
// (`clawhost mcp-schedule`): a tool call carries a token the host made for
// one chat, so a claude process can schedule only into the chat it serves.
type agentAPI struct {
	h      *Host
	secret []byte
	srv    *http.Server
	url    string
	exe    string

	mu    sync.Mutex
	count int // one-shot entries added, for names
	// senders maps a direct chat ("<instance>:<chat id>") the tool was
	// offered in to its sender ("<instance>:<sender id>"), so an entry the
	// agent adds there is dropped when that sender is revoked.
	senders map[string]string
}

// start listens on 127.0.0.1; without it the tool is not offered.
func (a *agentAPI) start() error {
	a.secret = make([]byte, 32)
	if _, err := rand.Read(a.secret); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	a.exe = exe
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /schedule", a.schedule)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	a.url = "http://" + ln.Addr().String() + "/schedule"
	go func() { _ = a.srv.Serve(ln) }()
	return nil
}

func (a *agentAPI) stop(ctx context.Context) {
	if a.srv != nil {
		_ = a.srv.Shutdown(ctx)
	}
}

func (a *agentAPI) token(chat string, group bool) string {
	m := hmac.New(sha256.New, a.secret)
	fmt.Fprintf(m, "%s|%v", chat, group)
	return hex.EncodeToString(m.Sum(nil))
}

// tools is turn.Options.AgentTools: the MCP config starting
// `clawhost mcp-schedule` for m's chat.
func (a *agentAPI) tools(m *message.Message) (string, []string) {
	if a.url == "" || m.Instance == "" || m.ChatID == "" {
		return "", nil
	}
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
	args := []string{"mcp-schedule", "-endpoint", a.url, "-token", a.token(chat, group), "-chat", chat}
	if group {
		args = append(args, "-group", "true")
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"clawhost": map[string]any{"type": "stdio", "command": a.exe, "args": args}}})
	return string(cfg), []string{ScheduleTool}
}

func (a *agentAPI) schedule(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Token string    `json:"token"`
		Chat  string    `json:"chat"`
		Group bool      `json:"group"`
		At    time.Time `json:"at"`
		Text  string    `json:"text"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if !hmac.Equal([]byte(req.Token), []byte(a.token(req.Chat, req.Group))) {
		http.Error(w, "this token is not valid for that chat", http.StatusForbidden)
		return
	}
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
	err := a.h.schedules.Add(r.Context(), command.ScheduleEntry{Name: name, Chat: req.Chat, Group: req.Group, At: req.At, Prompt: req.Text, Sender: sender})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	a.h.log.Info("the agent scheduled a message", "chat", req.Chat, "at", req.At)
	_, _ = io.WriteString(w, "ok")
}
