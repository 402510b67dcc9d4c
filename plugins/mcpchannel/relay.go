package mcpchannel

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// The permission relay (Claude Code's claude/channel/permission): a server
// that declares it puts a prompt (notifications/claude/channel/
// permission_request: request_id, tool_name, description, input_preview)
// to the people it trusts, with its own buttons, and sends their answer
// back (notifications/claude/channel/permission: request_id, behavior
// "allow" or "deny"). The answer names nobody, so clawhost cannot check
// that an owner gave it: the relay is used only when the operator names
// the one person the server's trusted senders are (permission_relay_from),
// and the answer counts as that person's — the host still lets it decide
// only when that person may answer (an owner, for approvals).
//
// With the relay on, the channel declares buttons: a message whose first
// row is an allow and a deny button (an approval, a pairing request) is
// posted as text and put to the server as a prompt; every message's
// buttons are also written under its text as their labels, since typed
// answers (yes / no, the commands) keep working.

// relayTTL is how long a prompt's answer is taken.
const relayTTL = time.Hour

// relayLetters are the letters of a request id: Claude Code's own ids
// (five of a-z without l, which reads as 1), which the official servers
// check when a person types "yes abcde".
const relayLetters = "abcdefghijkmnopqrstuvwxyz"

// prompt is a question put to the server.
type prompt struct {
	chat, thread, message string
	allow, deny           channel.Button
	at                    time.Time
}

// relay holds the open prompts.
type relay struct {
	mu   sync.Mutex
	open map[string]prompt
}

// put records p and returns its new request id.
func (r *relay) put(p prompt) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open == nil {
		r.open = map[string]prompt{}
	}
	for id, q := range r.open {
		if p.at.Sub(q.at) > relayTTL {
			delete(r.open, id)
		}
	}
	for {
		b := make([]byte, 5)
		_, _ = rand.Read(b)
		for i := range b {
			b[i] = relayLetters[int(b[i])%len(relayLetters)]
		}
		if _, taken := r.open[string(b)]; !taken {
			r.open[string(b)] = p
			return string(b)
		}
	}
}

// take removes and returns the prompt of id.
func (r *relay) take(id string) (prompt, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.open[id]
	delete(r.open, id)
	return p, ok
}

// relaying reports whether approvals go through the server's relay.
func (a *Adapter) relaying() bool {
	return a.cfg.PermissionRelayFrom != "" && a.first != nil && a.first.permission
}

// allowDeny returns the allow and deny buttons of a question: the first
// row's two buttons when their labels say so.
func allowDeny(rows [][]channel.Button) (allow, deny channel.Button, ok bool) {
	if len(rows) == 0 || len(rows[0]) != 2 {
		return allow, deny, false
	}
	allow, deny = rows[0][0], rows[0][1]
	yes, no := strings.ToLower(allow.Label), strings.ToLower(deny.Label)
	ok = (strings.Contains(yes, "allow") || strings.Contains(yes, "approve")) && strings.Contains(no, "deny")
	return allow, deny, ok
}

// withLabels writes the buttons' labels under text.
func withLabels(text string, rows [][]channel.Button) string {
	var labels []string
	for _, row := range rows {
		for _, b := range row {
			labels = append(labels, "["+b.Label+"]")
		}
	}
	if len(labels) == 0 {
		return text
	}
	return strings.TrimRight(text, "\n") + "\n\n" + strings.Join(labels, " ")
}

// ask puts a sent question to the server as a permission prompt.
func (a *Adapter) ask(ctx context.Context, s *server, req channel.SendRequest, ids []string, allow, deny channel.Button) {
	p := prompt{chat: req.ChatID, thread: req.ThreadID, allow: allow, deny: deny, at: time.Now()}
	if len(ids) > 0 {
		p.message = ids[len(ids)-1]
	}
	id := a.relay.put(p)
	title, _, _ := strings.Cut(strings.TrimSpace(req.Text), "\n")
	params := map[string]string{"request_id": id, "tool_name": title, "description": req.Text, "input_preview": ""}
	if err := s.conn.notify(ctx, methodPermissionRequest, params); err != nil {
		a.log.Warn("the permission prompt did not reach the server; the question waits for a typed answer", "error", err)
	}
}

// answered turns a permission answer into a press of the question's
// button by permission_relay_from; false when it answers no open prompt.
func (a *Adapter) answered(raw json.RawMessage) (channel.InboundMessage, bool) {
	var ans struct {
		RequestID string `json:"request_id"`
		Behavior  string `json:"behavior"`
	}
	if json.Unmarshal(raw, &ans) != nil {
		return channel.InboundMessage{}, false
	}
	p, ok := a.relay.take(strings.ToLower(ans.RequestID))
	if !ok || time.Since(p.at) > relayTTL {
		return channel.InboundMessage{}, false
	}
	b := p.deny
	if ans.Behavior == "allow" {
		b = p.allow
	}
	from := a.cfg.PermissionRelayFrom
	m := channel.InboundMessage{
		ChatType:     channel.ChatGroup,
		ChatID:       p.chat,
		ThreadID:     p.thread,
		MessageID:    "perm-" + ans.RequestID,
		Sender:       channel.Sender{ID: from},
		Text:         b.Label,
		WasMentioned: true,
		Timestamp:    time.Now(),
		Action:       &channel.Action{ButtonID: b.ID, MessageID: p.message},
	}
	if a.cfg.ChatType == chatTypeDirect || (a.cfg.ChatType == chatTypeAuto && p.chat == from) {
		m.ChatType = channel.ChatDirect
	}
	return m, true
}
