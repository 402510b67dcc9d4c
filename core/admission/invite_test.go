package admission

import (
	"context"
	"testing"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestInviteAudit: a declined invite is an audit row naming the inviter,
// the room and why; an approved inviter's is joined without one.
func TestInviteAudit(t *testing.T) {
	t.Parallel()
	f := &fakes{approved: map[string]bool{"mx:@paired:hs": true}}
	s := New(Options{Pairing: f, Auditor: f, Approvals: f, Received: f, Commands: command.NewRegistry(command.Builtins), History: f})
	pol := access.Policy{DMPolicy: access.PolicyPairing}
	inv := func(who, room string) *message.Message {
		return &message.Message{Instance: "mx", ChatType: channel.ChatGroup, ChatID: room, Sender: channel.Sender{ID: who}, From: "mx:" + who}
	}
	if join, why := s.Invite(context.Background(), pol, inv("@paired:hs", "!a"), false); !join {
		t.Fatalf("a paired inviter's group room declined: %s", why)
	}
	if join, _ := s.Invite(context.Background(), pol, inv("@eve:hs", "!b"), false); join {
		t.Fatal("a stranger's group room joined under pairing")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.audits) != 1 {
		t.Fatalf("audits %+v; want one row, the decline", f.audits)
	}
	a := f.audits[0]
	if a.Kind != store.AuditInvite || a.Actor != "mx:@eve:hs" || a.ChatID != "!b" || a.Decision != "declined" || a.Detail == "" {
		t.Errorf("audit row %+v", a)
	}
}
