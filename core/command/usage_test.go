package command

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/sdk/channel"
)

// spend records one finished turn's usage row, as a turn's reply does.

// uk is the session the /usage tests run in.
var uk = sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "k"}

func spend(t *testing.T, db *sqlite.DB, i int, u store.TurnUsage) {
	t.Helper()
	ctx := context.Background()
	res, err := db.Accept(ctx, store.Inbound{Instance: "tg", ChatID: u.ChatID, MessageID: fmt.Sprint(i), ReceivedAt: u.At, Message: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Enqueue(ctx, res.ID, uk.String()); err != nil {
		t.Fatal(err)
	}
	if err := db.Start(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordReply(ctx, store.Reply{JournalID: res.ID, Text: "r", Chunks: []string{"r"}, Usage: &u}); err != nil {
		t.Fatal(err)
	}
}

// TestUsageCommand: /usage shows the sender's own usage today, over 7 and
// 30 days, and the chat's to who controls it; another person's only to
// owners (/usage @id); /usage all lists people, chats and agents.
func TestUsageCommand(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	h.Location = func() *time.Location { return time.UTC }
	now := h.Now()
	day := 24 * time.Hour
	spend(t, db, 1, store.TurnUsage{At: now.Add(-time.Minute), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:5", CostUSD: 0.25})
	spend(t, db, 2, store.TurnUsage{At: now.Add(-3 * day), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:5", CostUSD: 0.5})
	spend(t, db, 3, store.TurnUsage{At: now.Add(-20 * day), Agent: "ops", Instance: "tg", ChatID: "9", Sender: "tg:5", CostUSD: 1})
	spend(t, db, 4, store.TurnUsage{At: now.Add(-time.Minute), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:6", CostUSD: 2})
	spend(t, db, 5, store.TurnUsage{At: now.Add(-40 * day), Agent: "main", Instance: "tg", ChatID: "-5", Sender: "tg:5", CostUSD: 100})
	m := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", From: "tg:5", Sender: channel.Sender{ID: "5"}}
	ask := func(text string, who Role) string {
		inv, ok := h.Registry.Parse(text)
		if !ok {
			t.Fatalf("%s is not a command", text)
		}
		return h.Answer(context.Background(), sessionkey.Key{Agent: "main", Chat: "tg:group:-5"}, m, inv, who)
	}
	got := ask("/usage", Role{})
	if !strings.Contains(got, "You (tg:5) — today $0.25, 1 turn · 7 days $0.75, 2 turns · 30 days $1.75, 3 turns") || strings.Contains(got, "This chat") {
		t.Errorf("a member's /usage:\n%s", got)
	}
	if got := ask("/usage", Role{Control: true}); !strings.Contains(got, "This chat — today $2.25, 2 turns · 7 days $2.75, 3 turns") {
		t.Errorf("/usage of who controls the chat:\n%s", got)
	}
	if got := ask("/usage @6", Role{Control: true}); !strings.Contains(got, "Only an owner") {
		t.Errorf("a non-owner's /usage @6: %q", got)
	}
	if got := ask("/usage @6", Role{Owner: true, Control: true}); !strings.Contains(got, "tg:6 — today $2.00, 1 turn") {
		t.Errorf("an owner's /usage @6:\n%s", got)
	}
	// The ledger knows ids, not usernames: an @username is told so, not
	// answered with a zero that reads as "spent nothing".
	if got := ask("/usage @alice", Role{Owner: true, Control: true}); !strings.Contains(got, "No turns by tg:alice") || !strings.Contains(got, "/whoami") {
		t.Errorf("an owner's /usage @alice:\n%s", got)
	}
	// A name the chat shows resolves to who wrote under it here.
	bob := message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", Sender: channel.Sender{ID: "6", Name: "Bob Smith", Username: "bob"}, Body: "hi"}
	if _, err := db.Accept(context.Background(), store.Inbound{Instance: "tg", ChatID: "-5", MessageID: "b1", ReceivedAt: now.Add(-time.Hour), Message: message.Encode(&bob)}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"/usage @bob", "/usage @BOB", "/usage @Bob Smith"} {
		if got := ask(q, Role{Owner: true, Control: true}); !strings.Contains(got, "tg:6 — today $2.00, 1 turn") {
			t.Errorf("an owner's %s:\n%s", q, got)
		}
	}
	got = ask("/usage all", Role{Owner: true, Control: true})
	for _, want := range []string{"Everyone — today $2.25, 2 turns", "People:\n  tg:6 — $2.00, 1 turn\n  tg:5 — $1.75, 3 turns", "Chats:\n  tg:-5 — $2.75, 3 turns\n  tg:9", "Agents:\n  main — $2.75, 3 turns\n  ops — $1.00, 1 turn"} {
		if !strings.Contains(got, want) {
			t.Errorf("/usage all lacks %q:\n%s", want, got)
		}
	}
}

type fakeExporter struct{ path string }

func (f fakeExporter) Export(context.Context, sessionkey.Key) (string, int, error) {
	return f.path, 4, nil
}

// TestExportCommand: /export answers with the file as a MEDIA: line (the
// outbox sends it once) for an owner anywhere and for a direct chat's own
// sender; a group member is refused; each is in the audit trail.
func TestExportCommand(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	h.Exporter = fakeExporter{path: "/ws/media/tg_group_-5/session.md"}
	ask := func(m *message.Message, who Role) string {
		inv, _ := h.Registry.Parse("/export")
		return h.Answer(context.Background(), uk, m, inv, who)
	}
	group := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", From: "tg:5"}
	direct := &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "5", From: "tg:5"}
	if got := ask(group, Role{Control: true}); !strings.Contains(got, "only an owner") {
		t.Errorf("a member's /export in a group: %q", got)
	}
	for _, c := range []struct {
		m   *message.Message
		who Role
	}{{group, Role{Owner: true}}, {direct, Role{Control: true}}} {
		if got := ask(c.m, c.who); got != "This session as Markdown (4 messages).\nMEDIA:/ws/media/tg_group_-5/session.md" {
			t.Errorf("/export: %q", got)
		}
	}
	rows, err := db.ListAudit(context.Background(), store.AuditFilter{Kind: store.AuditCommand, Subject: "/export"}, 0)
	if err != nil || len(rows) != 3 || rows[2].Decision != "refused" || rows[1].Decision != "allowed" || rows[2].Actor != "tg:5" {
		t.Errorf("audit rows %+v, %v", rows, err)
	}
}

// TestAuditOfCommands: a role-gated command is recorded when used and when
// refused; /approve's code never enters the trail, its outcome does.
func TestAuditOfCommands(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	m := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", From: "tg:5"}
	for _, c := range []struct {
		text string
		who  Role
	}{{"/schedule list", Role{}}, {"/stop", Role{}}, {"/approve SECRETCODE", Role{Owner: true}}, {"/status", Role{}}} {
		inv, _ := h.Registry.Parse(c.text)
		h.Answer(context.Background(), uk, m, inv, c.who)
	}
	rows, err := db.ListAudit(context.Background(), store.AuditFilter{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Kind+" "+r.Subject+" "+r.Decision)
		if strings.Contains(r.Detail, "SECRETCODE") {
			t.Errorf("the pairing code is in the trail: %+v", r)
		}
	}
	want := []string{"pairing  refused", "command /approve allowed", "command /stop refused", "command /schedule refused"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("audit rows (newest first):\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDenyCommand: an owner's /deny CODE drops the pending request (and
// says so), records it in the audit trail; an unknown code is said to be.
func TestDenyCommand(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	ctx := context.Background()
	res, err := db.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "9"})
	if err != nil {
		t.Fatal(err)
	}
	owner := &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "1", From: "tg:1"}
	ask := func(text string) string {
		inv, _ := h.Registry.Parse(text)
		return h.Answer(ctx, uk, owner, inv, Role{Owner: true, Control: true})
	}
	if got := ask("/deny NOPE"); !strings.Contains(got, "Unknown pairing code") {
		t.Errorf("/deny NOPE: %q", got)
	}
	if got := ask("/deny " + strings.ToLower(res.Code.Code)); got != "Denied tg:9: the request is dropped (they may ask again later)." {
		t.Errorf("/deny: %q", got)
	}
	if pending, _ := db.PendingPairings(ctx, ""); len(pending) != 0 {
		t.Errorf("still pending: %+v", pending)
	}
	rows, _ := db.ListAudit(ctx, store.AuditFilter{Kind: store.AuditPairing}, 0)
	if len(rows) != 1 || rows[0].Decision != "denied" || rows[0].Subject != "tg:9" {
		t.Errorf("audit %+v", rows)
	}
}
