package gateway

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/approval"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// nextOp returns the next record of op to chat, and every record before
// it.
func (e *env) nextOp(chat, op string) (record, []record) {
	e.t.Helper()
	var seen []record
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range e.records(time.Second) {
			if r.Op == op && r.ChatID == chat {
				e.after = r.Seq
				return r, seen
			}
			seen = append(seen, r)
		}
	}
	e.t.Fatalf("no %s to %s", op, chat)
	return record{}, nil
}

// question waits for the next tool-use question to chat and returns it
// with its buttons by label.
func (e *env) question(chat string) (record, map[string]string) {
	e.t.Helper()
	for {
		r := e.next(chat)
		if strings.HasPrefix(r.Text, "claude wants to use") {
			ids := map[string]string{}
			for _, row := range r.Buttons {
				for _, b := range row {
					ids[b.Label] = b.ID
				}
			}
			return r, ids
		}
	}
}

func pressed(sender, msgID, buttonID, label string) in {
	m := dm(sender, label)
	m["chat_id"] = "chat-u1"
	m["action"] = map[string]string{"ButtonID": buttonID, "MessageID": msgID}
	return m
}

// TestApprovalsWithButtons: with agent.approvals = "chat" and approvers =
// "sender" a tool use that needs permission asks the chat with buttons;
// the turn waits (typing paused); the asker's Allow and an owner's Deny go
// back to claude; the question is edited to say who decided; a stranger's
// press is refused; "always" allows the command's rule (touch …) without a
// question for the rest of the session, also in a new claude process, and
// /new forgets it; /status shows the decisions.
func TestApprovalsWithButtons(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{loopback: map[string]any{"buttons": true}, settings: func(s *Settings) {
		s.Turn.Approvals = true
		s.Approval.OwnersOnly = false // approvers = "sender", on purpose
		s.Access.AllowFrom = append(s.Access.AllowFrom, "lo:u2")
	}})
	e.post(dm("u1", "clean up #ask=2"))
	q, ids := e.question("chat-u1")
	contains(t, q.Text, "claude wants to use Bash:", "$ touch f1", "(create f1)")
	if ids["Allow"] == "" || ids["Deny"] == "" || ids["Always allow `touch …`"] == "" {
		t.Fatalf("buttons %+v", q.Buttons)
	}
	// u2 may write to the bot but did not start this turn.
	e.post(pressed("u2", q.MessageID, ids["Allow"], "Allow"))
	contains(t, e.text("chat-u1"), "Only User u1 or an owner can answer this question.")
	e.post(pressed("u1", q.MessageID, ids["Allow"], "Allow"))
	edit, _ := e.nextOp("chat-u1", "edit")
	if edit.MessageID != q.MessageID || !strings.HasPrefix(edit.Text, "✅ Allowed by User u1.") {
		t.Errorf("edit %+v", edit)
	}
	q2, ids2 := e.question("chat-u1")
	contains(t, q2.Text, "$ touch f2")
	owner := pressed("owner", q2.MessageID, ids2["Deny"], "Deny")
	owner["chat_id"] = "chat-u1"
	e.post(owner)
	contains(t, e.text("chat-u1"), "asked: allow, deny")

	// The late press of an answered question.
	e.post(pressed("u1", q.MessageID, ids["Deny"], "Deny"))
	contains(t, e.text("chat-u1"), "This question is no longer open.")

	e.post(dm("u1", "again #ask=2"))
	q3, ids3 := e.question("chat-u1")
	e.post(pressed("u1", q3.MessageID, ids3["Always allow `touch …`"], "Always allow `touch …`"))
	contains(t, e.text("chat-u1"), "asked: always, auto")
	// A new claude process of the same session (another permission mode
	// restarts it) is not asked either: the host answers.
	e.post(dm("u1", "/status"))
	contains(t, e.text("chat-u1"), "Approval: Bash ($ touch f1) always allowed by User u1", "Approval: Bash ($ touch f2) denied by User owner")
	e.agent.Stop("agent:main:lo:direct:u1")
	e.post(dm("u1", "once more #ask=1"))
	// The new process asks the host, which answers from the session
	// without a question (the next send is the reply).
	contains(t, e.text("chat-u1"), "asked: always")
	e.post(dm("u1", "/new"))
	contains(t, e.text("chat-u1"), "New session started.")
	e.post(dm("u1", "after new #ask=1"))
	q4, ids4 := e.question("chat-u1")
	e.post(pressed("u1", q4.MessageID, ids4["Deny"], "Deny"))
	contains(t, e.text("chat-u1"), "asked: deny")
}

// TestApprovalsTyped: where the channel has no buttons the question asks
// for a typed answer; the asker's "yes" answers it (and is not a message
// for claude); no answer within approval_timeout denies and says so. An
// owner turns approvals on for a chat with /mode ask, where
// agent.permission_modes lists it; a non-owner cannot.
func TestApprovalsTyped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{settings: func(s *Settings) {
		s.Turn.PermissionModes = []string{"ask"}
		s.Approval = approval.Config{Timeout: 2 * time.Second, OwnersOnly: true}
	}})
	e.post(dm("u1", "/mode ask"))
	contains(t, e.text("chat-u1"), "Only an owner can change the permission mode.")
	e.post(dm("u1", "#ask=1"))
	contains(t, e.text("chat-u1"), "asked: deny") // approvals are off: claude denies by itself
	e.post(dm("owner", "#ask=1"))
	contains(t, e.text("chat-owner"), "asked: deny")
	e.post(dm("owner", "/mode ask"))
	contains(t, e.text("chat-owner"), "Permission mode: ask")
	e.post(dm("owner", "go #ask=2"))
	q, _ := e.nextOp("chat-owner", "send")
	if q.Buttons != nil {
		t.Errorf("buttons sent to a channel without them: %+v", q.Buttons)
	}
	contains(t, q.Text, "claude wants to use Bash:", "Reply yes, no, or always")
	e.post(dm("owner", "Yes"))
	q2, _ := e.question("chat-owner")
	contains(t, q2.Text, "$ touch f2")
	// Nobody answers the second: the question is edited to say so.
	edit, _ := e.nextOp("chat-owner", "edit")
	if edit.MessageID != q2.MessageID || !strings.HasPrefix(edit.Text, "⏱ No answer within 2 seconds — denied.") {
		t.Errorf("edit %+v", edit)
	}
	final, _ := e.nextOp("chat-owner", "send")
	contains(t, final.Text, "asked: allow, deny")
	// Typing is off while a person is asked and on again once answered:
	// on at the start and again after each answer (every record of the
	// chat, read from the start: the indicator is set asynchronously).
	e.waitFor("typing resumed after an answer", func() bool {
		e.after = 0
		ons := 0
		for _, r := range e.records(100 * time.Millisecond) {
			if r.Op == "typing" && r.On && r.ChatID == "chat-owner" {
				ons++
			}
		}
		return ons >= 3
	})
	// The stored "ask" stops asking once the file no longer lists it.
	set := e.set
	set.Turn.PermissionModes = nil
	e.gw.SetSettings(set)
	e.post(dm("owner", "#ask=1"))
	contains(t, e.text("chat-owner"), "asked: deny")
}

// TestApprovalsGoToOwners: with approvers = "owners" a non-owner's turn
// asks the owner in the owner's direct chat, the turn's chat is told it
// waits; the asker's "yes" and press approve nothing; the owner's Allow
// does, and both chats learn it.
func TestApprovalsGoToOwners(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{loopback: map[string]any{"buttons": true}, settings: func(s *Settings) {
		s.Turn.Approvals = true
		s.Approval = approval.Config{OwnersOnly: true, DirectChats: map[string]bool{"lo": true}}
	}})
	e.post(dm("u1", "clean up #ask=1"))
	q, ids := e.question("owner")
	contains(t, q.Text, "claude wants to use Bash:", "$ touch f1", "Asked in a turn of User u1 (lo:u1) in lo:chat-u1.")
	contains(t, e.text("chat-u1"), "Waiting for an owner to approve Bash.")
	e.post(dm("u1", "yes")) // an ordinary message, queued behind the turn
	e.post(pressed("u1", q.MessageID, ids["Allow"], "Allow"))
	contains(t, e.text("chat-u1"), "Only an owner can answer this question.")
	owner := pressed("owner", q.MessageID, ids["Allow"], "Allow")
	owner["chat_id"] = "owner"
	e.post(owner)
	if edit, _ := e.nextOp("owner", "edit"); edit.MessageID != q.MessageID || !strings.HasPrefix(edit.Text, "✅ Allowed by User owner.") {
		t.Errorf("question edited to %+v", edit)
	}
	if edit, _ := e.nextOp("chat-u1", "edit"); !strings.HasPrefix(edit.Text, "✅ Allowed by User owner.") {
		t.Errorf("notice edited to %+v", edit)
	}
	contains(t, e.text("chat-u1"), "asked: allow")
	contains(t, e.text("chat-u1"), "User u1: yes") // the "yes" went to claude as a message

	// The decision is in the store's audit trail: the owner by the id
	// every other row names actors by (not the display name a sender
	// chooses), the turn's chat, the tool and the input's digest.
	rows, err := e.db.ListAudit(context.Background(), store.AuditFilter{Kind: store.AuditTool}, 0)
	if err != nil || len(rows) != 1 {
		t.Fatalf("tool audit rows %+v, %v", rows, err)
	}
	r := rows[0]
	if r.Actor != "lo:owner" || r.Decision != "allowed" || r.Subject != "Bash" || r.Instance != "lo" || r.ChatID != "chat-u1" ||
		!regexp.MustCompile(`^sha256:[0-9a-f]{16} \$ touch f1`).MatchString(r.Detail) || !strings.HasSuffix(r.Detail, "(by User owner)") {
		t.Errorf("tool audit row %+v", r)
	}
}

// TestModePicker: a bare /mode offers an owner the modes the file lists
// as buttons ("ask" only when listed); a press runs "/mode <name>" as if
// typed; where the channel has no buttons the reply lists what to type. A
// non-owner sees the mode without buttons, and a non-owner's press of the
// owner's button is refused.
func TestModePicker(t *testing.T) {
	t.Parallel()
	e := newLo(t, loOptions{buttons: true, settings: func(s *Settings) {
		s.Turn.PermissionModes = []string{"plan", "ask"}
	}})
	e.post(dm("owner", "/mode"))
	r := e.next("chat-owner")
	contains(t, r.Text, "Permission mode: default. Available: plan, ask.")
	if len(r.Buttons) != 1 || len(r.Buttons[0]) != 3 || r.Buttons[0][0] != (channel.Button{ID: "/mode plan", Label: "plan"}) || r.Buttons[0][1].ID != "/mode ask" {
		t.Fatalf("buttons %+v", r.Buttons)
	}
	p := pressed("owner", r.MessageID, "/mode plan", "plan")
	p["chat_id"] = "chat-owner"
	e.post(p)
	contains(t, e.text("chat-owner"), "Permission mode: plan from the next message on.")
	e.post(dm("u1", "/mode"))
	if r := e.next("chat-u1"); r.Buttons != nil || !strings.Contains(r.Text, "An owner can change it.") {
		t.Errorf("to a non-owner: %+v", r)
	}
	e.post(pressed("u1", r.MessageID, "/mode ask", "ask"))
	contains(t, e.text("chat-u1"), "Only an owner can change the permission mode.")

	plain := newLo(t, loOptions{settings: func(s *Settings) { s.Turn.PermissionModes = []string{"plan"} }})
	plain.post(dm("owner", "/mode"))
	contains(t, plain.text("chat-owner"), "Reply with one of:\n• /mode plan — plan\n• /mode default — default")
}
