package command

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownersession"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// fakeTerminal records what /continue and /desktop asked of the port.
type fakeTerminal struct {
	list      []ownersession.Session
	continued []string // "<id> fork|takeover"
	desktops  int
}

func (f *fakeTerminal) Sessions(context.Context, sessionkey.Key, *message.Message) ([]ownersession.Session, string, error) {
	return f.list, "/home/ann/proj", nil
}

func (f *fakeTerminal) Continue(_ context.Context, _ sessionkey.Key, _ *message.Message, s ownersession.Session, takeover bool) (string, error) {
	how := "fork"
	if takeover {
		how = "takeover"
	}
	f.continued = append(f.continued, s.ID+" "+how)
	if takeover {
		return s.ID, nil
	}
	return "99999999-0000-0000-0000-000000000000", nil
}

func (f *fakeTerminal) Desktop(context.Context, sessionkey.Key, *message.Message) (string, error) {
	f.desktops++
	return "cd /home/ann/proj && claude --resume 99999999-0000-0000-0000-000000000000", nil
}

func termSession(id, title string, turns int, live bool) ownersession.Session {
	return ownersession.Session{ID: id, Summary: ownersession.Summary{Title: title, Turns: turns}, Modified: time.Unix(1_800_000_000, 0), Live: live}
}

// TestContinueAndDesktop: the owner's terminal sessions are listed with
// their titles, turns and whether they look live; one is forked by
// default, taken over when asked (never while it looks live); a bare
// /continue takes the only one; /desktop answers the port's command.
// Refusals (not an owner, not an owners-only chat) never reach the port
// and are in the audit trail.
func TestContinueAndDesktop(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	term := &fakeTerminal{list: []ownersession.Session{
		termSession("11111111-0000-0000-0000-000000000000", "Fix the parser", 2, true),
		termSession("22222222-0000-0000-0000-000000000000", "Deploy staging", 5, false),
	}}
	h.Terminal = term
	owner := Role{Owner: true, Control: true}
	say := func(text string, who Role) string {
		inv, ok := h.Registry.Parse(text)
		if !ok {
			t.Fatalf("%q is not a command", text)
		}
		m := &message.Message{Instance: "tg", From: "tg:5", ChatType: channel.ChatDirect, Body: text, Sender: channel.Sender{ID: "5"}}
		return h.Answer(context.Background(), tk, m, inv, who)
	}
	got := say("/continue", owner)
	for _, want := range []string{"in /home/ann/proj", "1. Fix the parser — ", "2 turns (11111111) · looks live", "2. Deploy staging — ", "5 turns (22222222)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("/continue lacks %q:\n%s", want, got)
		}
	}
	if got := say("/continue 1 takeover", owner); !strings.Contains(got, "looks open in your terminal") {
		t.Errorf("a live session taken over: %q", got)
	}
	if got := say("/continue deploy takeover", owner); !strings.Contains(got, "Taken over") {
		t.Errorf("takeover: %q", got)
	}
	if got := say("/continue fix", owner); !strings.Contains(got, "Forked into this chat as session 99999999") {
		t.Errorf("fork: %q", got)
	}
	term.list = term.list[1:]
	if got := say("/continue", owner); !strings.Contains(got, `Continuing "Deploy staging"`) {
		t.Errorf("a bare /continue with one session: %q", got)
	}
	want := []string{"22222222-0000-0000-0000-000000000000 takeover", "11111111-0000-0000-0000-000000000000 fork", "22222222-0000-0000-0000-000000000000 fork"}
	if strings.Join(term.continued, "|") != strings.Join(want, "|") {
		t.Errorf("continued %q, want %q", term.continued, want)
	}
	if got := say("/desktop", owner); !strings.HasSuffix(got, "\ncd /home/ann/proj && claude --resume 99999999-0000-0000-0000-000000000000") {
		t.Errorf("/desktop: %q", got)
	}
	// Refused: a member, and an owner in a chat others reach.
	before := len(term.continued)
	for _, tc := range []struct {
		who  Role
		want string
	}{
		{Role{Control: true, NotOwnersChat: access.ErrNotOwner}, "Only an owner can use /"},
		{Role{Owner: true, Control: true, NotOwnersChat: access.ErrMembersUnknown}, "Not in this chat: only in a chat nobody but owners can reach"},
	} {
		for _, cmd := range []string{"/continue 1", "/desktop"} {
			if got := say(cmd, tc.who); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%s by %+v: %q", cmd, tc.who, got)
			}
		}
	}
	if len(term.continued) != before || term.desktops != 1 {
		t.Errorf("a refused command reached the port: %v, %d", term.continued, term.desktops)
	}
	rows, err := db.ListAudit(context.Background(), store.AuditFilter{Kind: store.AuditCommand}, 100)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range rows {
		if (r.Subject == "/continue" || r.Subject == "/desktop") && r.Decision == "refused" {
			refused++
		}
	}
	if refused != 4 {
		t.Errorf("%d refusals audited, want 4: %+v", refused, rows)
	}
}
