package attach

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
)

// Auditor writes the audit trail (core/store).
type Auditor interface {
	Audit(ctx context.Context, e store.AuditEvent) error
}

// StoreAudit is an Options.Audit that writes each event to db's audit
// trail (kind attach; Decision what happened; Subject the chat).
func StoreAudit(ctx context.Context, db Auditor, log hclog.Logger) func(kind string, l Link, detail string) {
	return func(kind string, l Link, detail string) {
		instance, chat, _ := strings.Cut(l.Chat, ":")
		e := store.AuditEvent{Kind: store.AuditAttach, Actor: "terminal", Instance: instance, ChatID: chat, Subject: l.Chat, Decision: kind, Detail: detail}
		if err := db.Audit(ctx, e); err != nil {
			log.Error("audit trail write failed", "kind", e.Kind, "error", err)
		}
	}
}

// Detach answers the chat's /detach (m the command's message, key its
// session): only an owner, and only in a chat nobody but owners can reach
// (policy.OwnersOnlyChat), may detach; a terminal attached to the chat is
// told and let go, a session a gone terminal left it is forgotten, and the
// chat's next message runs in its own session.
func (h *Hub) Detach(policy access.Policy, key string, m *message.Message) string {
	if err := policy.OwnersOnlyChat(m, nil); err != nil {
		h.audit("refused", Link{Key: key, Chat: m.Instance + ":" + m.ChatID}, "/detach: "+err.Error())
		if errors.Is(err, access.ErrNotOwner) {
			return "Only an owner may use /detach."
		}
		return "/detach: " + err.Error()
	}
	had := h.detach(key, nil, Detached)
	h.mu.Lock()
	_, left := h.resume[key]
	_, gone := h.gone[key]
	delete(h.gone, key)
	delete(h.resume, key)
	h.mu.Unlock()
	switch {
	case had:
		return "Detached: the terminal session no longer answers here. Your next message goes to this chat's own session."
	case left || gone:
		return "Back to this chat's own session (the terminal's session it took over after the terminal exited is left as it is)."
	}
	return "No terminal is attached to this chat."
}
