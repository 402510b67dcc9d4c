package e2e

// Plans and claude's questions end to end: the real clawhost binary, the
// real clawhost-telegram plugin against the fake Bot API, and the real
// claude CLI against the fake Anthropic API, which writes a plan to the
// file plan mode names and calls ExitPlanMode, or calls AskUserQuestion.

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// script answers the fake API's requests in order, each by a function of
// the request's body; past the script it answers "(script over)".
type script struct {
	mu    sync.Mutex
	steps []func(body string) anthropictest.Reply
	n     int
}

func (s *script) add(steps ...func(body string) anthropictest.Reply) {
	s.mu.Lock()
	s.steps = append(s.steps, steps...)
	s.mu.Unlock()
}

func (s *script) respond(r *anthropictest.Request) anthropictest.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= len(s.steps) {
		return anthropictest.Reply{Text: "(script over)"}
	}
	s.n++
	return s.steps[s.n-1](string(r.Body))
}

func say(text string) func(string) anthropictest.Reply {
	return func(string) anthropictest.Reply { return anthropictest.Reply{Text: text} }
}

func use(tool string, input map[string]any) func(string) anthropictest.Reply {
	return func(string) anthropictest.Reply {
		return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: tool, Input: input}}
	}
}

var planPath = regexp.MustCompile(`create your plan at (\S+?\.md)|A plan file already exists at (\S+?\.md)`)

// writePlan writes text to the plan file the request's plan mode names.
func writePlan(t *testing.T, text string) func(string) anthropictest.Reply {
	return func(body string) anthropictest.Reply {
		m := planPath.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("the request names no plan file: not in plan mode")
			return anthropictest.Reply{Text: "not in plan mode"}
		}
		return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "Write", Input: map[string]any{"file_path": m[1] + m[2], "content": text}}}
	}
}

// anyAPIRequest reports whether a request to the fake API carried s.
func anyAPIRequest(f *anthropictest.Server, s string) bool {
	for _, r := range f.Requests() {
		if strings.Contains(string(r.Body), s) {
			return true
		}
	}
	return false
}

// labels are a message's buttons' labels, joined by "|".
func labels(m tgMessage) string {
	var out []string
	for _, row := range m.Keyboard {
		for _, b := range row {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "|")
}

// tgPress presses the button of m labelled label, as from.
func tgPress(t *testing.T, srv *telegramtest.Server, chat telegramtest.Chat, m tgMessage, label string, from telegramtest.User) {
	t.Helper()
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.Text == label {
				if _, err := srv.PressButton(chat, m.MessageID, b.Data, from); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	t.Fatalf("no button %q under %q", label, labels(m))
}

// TestPlanTelegramRealClaude: "/plan <text>" runs in plan mode on an agent
// that does not ask about tool use; claude's plan is on the turn card with
// Approve / Keep planning (no Always); Keep planning tells claude to wait
// for feedback, and the owner's next message reaches claude labelled as
// the feedback on the plan, in plan mode; the revised plan, longer than a
// Telegram message, goes as plan.md with the question under it; Approve
// lets claude go on out of plan mode.
func TestPlanTelegramRealClaude(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	rig.start(t, Host{
		Agent:  rig.agent(Attrs{"timeout": "90s", "approval_timeout": "60s"}),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}},
	})
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	sc := &script{}
	fake.SetResponder(sc.respond)
	long := "# Login with OAuth\n" + strings.Repeat("- a step of the revised plan, described at some length\n", 120)
	var feedback string
	sc.add(writePlan(t, "# Login page\n1. Step one: add the route\n2. Step two: test it\n"), use("ExitPlanMode", map[string]any{}),
		say("I will wait for your feedback."),
		func(body string) anthropictest.Reply { feedback = body; return writePlan(t, long)(body) }, use("ExitPlanMode", map[string]any{}),
		say("Carrying out the plan."))

	srv.PushText(chat, alice, "/plan add a login page")
	card := tgWaitMessage(t, srv, tgAlice, "claude's plan", "Step one: add the route")
	if got := labels(card); got != "Approve|Keep planning|⏹ Stop" {
		t.Fatalf("the plan's buttons %q", got)
	}
	if !anyAPIRequest(fake, "add a login page") || anyAPIRequest(fake, "/plan add") {
		t.Error("the turn's prompt is not the text after /plan")
	}
	tgPress(t, srv, chat, card, "Keep planning", alice)
	tgWaitMessage(t, srv, tgAlice, "I will wait for your feedback.")
	if !anyAPIRequest(fake, "did not approve this plan: keep planning") {
		t.Error("claude was not told to keep planning")
	}

	srv.PushText(chat, alice, "use OAuth, not passwords")
	q := tgWaitMessage(t, srv, tgAlice, "attached file plan.md")
	if !strings.Contains(feedback, "feedback on your plan") || !strings.Contains(feedback, "use OAuth, not passwords") || !strings.Contains(feedback, "Plan mode is active") {
		t.Fatalf("the feedback did not reach claude as feedback on the plan, in plan mode: %q", feedback[max(0, len(feedback)-3000):])
	}
	var doc *telegramtest.UploadedFile
	for _, s := range srv.Sent() {
		if s.Method == "sendDocument" && s.File != nil {
			doc = s.File
		}
	}
	if doc == nil || doc.Filename != "plan.md" || !strings.Contains(string(doc.Data), "a step of the revised plan") {
		t.Fatalf("the long plan was not sent as plan.md: %+v", doc)
	}
	if got := labels(q); got != "Approve|Keep planning" {
		t.Fatalf("the long plan's buttons %q", got)
	}
	tgPress(t, srv, chat, q, "Approve", alice)
	tgWaitMessage(t, srv, tgAlice, "Carrying out the plan.")
	tgWaitMessage(t, srv, tgAlice, "Plan approved by Alice")
	if !anyAPIRequest(fake, "User has approved your plan") {
		t.Error("claude did not read the approval")
	}

	// Feedback written while the plan waits sends it back and is the
	// feedback.
	var written string
	sc.add(writePlan(t, "# Cache\n1. Step one: add a cache\n"), use("ExitPlanMode", map[string]any{}),
		say("Waiting for your feedback on the cache plan."),
		func(body string) anthropictest.Reply {
			written = body
			return anthropictest.Reply{Text: "Revising the cache plan."}
		})
	srv.PushText(chat, alice, "/plan add a cache")
	tgWaitMessage(t, srv, tgAlice, "claude's plan", "Step one: add a cache")
	srv.PushText(chat, alice, "smaller steps, please")
	tgWaitMessage(t, srv, tgAlice, "Revising the cache plan.")
	if !strings.Contains(written, "feedback on your plan") || !strings.Contains(written, "smaller steps, please") {
		t.Errorf("the written feedback did not reach claude as feedback: %q", written[max(0, len(written)-2000):])
	}
	for _, s := range srv.Sent() {
		if strings.Contains(labels(tgMessage{Sent: s}), "Always") {
			t.Errorf("an Always button was offered: %+v", s)
		}
	}
}

// TestQuestionTelegramRealClaude: claude's AskUserQuestion in a group:
// each question with its options as buttons; another member's press is
// refused and changes nothing; the asker's press is the answer; a
// multi-select is toggles and Done; claude reads the answers as the
// tool's result. A question nobody answers within approval_timeout is
// left unanswered, claude reads that, and the turn finishes.
func TestQuestionTelegramRealClaude(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "90s",
			"approvals": "chat", "approval_timeout": "3s"}),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}, "groups": []string{"tg:-1001234500001"},
			"group_allow_from": []string{"tg:2002", "tg:3003"}, "require_mention": false},
		Messages: Attrs{"streaming": "off"},
	})
	group, bob, carol := telegramtest.Supergroup(tgGroup, "Team"), tgUser(2002, "Bob"), tgUser(3003, "Carol")
	opts := func(ls ...string) []any {
		var out []any
		for _, l := range ls {
			out = append(out, map[string]any{"label": l, "description": "option " + l})
		}
		return out
	}
	fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "AskUserQuestion", Input: map[string]any{"questions": []any{
		map[string]any{"question": "Which color?", "header": "Color", "multiSelect": false, "options": opts("Red", "Blue")},
		map[string]any{"question": "Which sizes?", "header": "Sizes", "multiSelect": true, "options": opts("S", "M", "L")},
	}}}}, anthropictest.Reply{Text: "Blue, in S and L."})
	srv.PushText(group, bob, "pick a shirt for me")
	color := tgWaitMessage(t, srv, tgGroup, "claude asks: Which color?", "1. Red")
	if got := labels(color); got != "Red|Blue" {
		t.Fatalf("buttons %q", got)
	}
	tgPress(t, srv, group, color, "Blue", carol)
	refused := func() bool {
		for _, m := range tgChat(srv, tgGroup) {
			if strings.Contains(m.Visible, "Only Bob or an owner can answer") {
				return true
			}
		}
		for _, r := range srv.Requests("answerCallbackQuery") {
			if strings.Contains(r.Params.Get("text"), "Only Bob or an owner can answer") {
				return true
			}
		}
		return false
	}
	sdktest.WaitFor(t, "Carol told she may not answer", refused)
	if n := tgCount(srv, tgGroup, "claude asks: Which sizes?"); n != 0 {
		t.Fatal("Carol's press answered Bob's question")
	}
	tgPress(t, srv, group, color, "Blue", bob)
	sizes := tgWaitMessage(t, srv, tgGroup, "claude asks: Which sizes?")
	if got := labels(sizes); got != "☐ S|☐ M|☐ L|Done" {
		t.Fatalf("multi-select buttons %q", got)
	}
	tgPress(t, srv, group, sizes, "☐ S", bob)
	sizes = tgWaitMessage(t, srv, tgGroup, "claude asks: Which sizes?")
	sdktest.WaitFor(t, "S shown picked", func() bool {
		sizes = tgWaitMessage(t, srv, tgGroup, "claude asks: Which sizes?")
		return strings.HasPrefix(labels(sizes), "☑ S|")
	})
	tgPress(t, srv, group, sizes, "☐ L", bob)
	sdktest.WaitFor(t, "L shown picked", func() bool {
		sizes = tgWaitMessage(t, srv, tgGroup, "claude asks: Which sizes?")
		return labels(sizes) == "☑ S|☐ M|☑ L|Done"
	})
	tgPress(t, srv, group, sizes, "Done", bob)
	tgWaitMessage(t, srv, tgGroup, "Blue, in S and L.")
	if !anyAPIRequest(fake, `\"Which color?\"=\"Blue\"`) || !anyAPIRequest(fake, `\"Which sizes?\"=\"S, L\"`) {
		t.Error("claude did not get the answers as the tool's result")
	}

	// Nobody answers: the question is left unanswered and the turn goes on.
	fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "AskUserQuestion", Input: map[string]any{"questions": []any{
		map[string]any{"question": "Which day?", "header": "Day", "multiSelect": false, "options": opts("Mon", "Tue")},
	}}}}, anthropictest.Reply{Text: "No answer, so Monday."})
	srv.PushText(group, bob, "and when?")
	tgWaitMessage(t, srv, tgGroup, "claude asks: Which day?")
	tgWaitMessage(t, srv, tgGroup, "No answer within 3 seconds")
	tgWaitMessage(t, srv, tgGroup, "No answer, so Monday.")
	if !anyAPIRequest(fake, "The user did not answer the questions.") {
		t.Error("claude did not read that nobody answered")
	}
}
