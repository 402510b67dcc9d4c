package webchat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/channel"
)

var approvalButtons = [][]channel.Button{{{ID: "ap:1:y", Label: "Allow"}, {ID: "ap:1:n", Label: "Deny"}}, {{ID: "ap:1:a", Label: "Always allow Bash here"}}}

// TestEditKeepsButtons: an edit with buttons keeps them on the page (a
// turn card's Stop button across its updates) and a press of one still
// reaches the host; the next edit without buttons removes them.
func TestEditKeepsButtons(t *testing.T) {
	t.Parallel()
	r := start(t, setup{dataDir: t.TempDir()})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	id := c.SenderID()
	stop := [][]channel.Button{{{ID: "/stop", Label: "⏹ Stop"}}}
	res, err := r.Send(ctx, channel.SendRequest{ChatID: id, Text: "⏳ Working · 0s", Format: channel.FormatPlain, Buttons: stop})
	if err != nil {
		t.Fatal(err)
	}
	nextOf(t, ctx, c, webchat.EventMessage)
	if err := r.Edit(ctx, channel.EditRequest{ChatID: id, MessageID: res.MessageIDs[0], Text: "⏳ Working · 5s", Format: channel.FormatPlain, Buttons: stop}); err != nil {
		t.Fatal(err)
	}
	if up := nextOf(t, ctx, c, webchat.EventUpdate).Message; len(up.Buttons) != 1 || up.Buttons[0][0].ID != "/stop" || !strings.Contains(up.HTML, "Working · 5s") {
		t.Fatalf("after an edit with buttons: %+v", up)
	}
	if err := c.Press(ctx, "p1", res.MessageIDs[0], "/stop"); err != nil {
		t.Fatal(err)
	}
	if in, err := r.inbox.Next(ctx); err != nil || in.Action == nil || in.Action.ButtonID != "/stop" {
		t.Fatalf("the press: %+v %v", in, err)
	}
	if err := r.Edit(ctx, channel.EditRequest{ChatID: id, MessageID: res.MessageIDs[0], Text: "The answer.", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	for {
		up := nextOf(t, ctx, c, webchat.EventUpdate).Message
		if strings.Contains(up.HTML, "The answer.") {
			if len(up.Buttons) != 0 {
				t.Errorf("after the final edit: %+v", up)
			}
			break
		}
	}
}

// TestButtons: a message sent with buttons carries them to the page and
// in the history; a press reaches the host as an action with the label;
// once taken the buttons show pressed; a second press, an unknown button
// and a press after an edit removed the buttons are refused; invalid
// buttons are refused at send.
func TestButtons(t *testing.T) {
	t.Parallel()
	r := start(t, setup{dataDir: t.TempDir()})
	ctx := testCtx(t)
	if !r.Capabilities().Buttons {
		t.Fatal("capability buttons not declared")
	}
	c, _ := connect(t, ctx, r.Link())
	id := c.SenderID()
	res, err := r.Send(ctx, channel.SendRequest{ChatID: id, Text: "claude wants to use Bash", Format: channel.FormatPlain, Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	msg := nextOf(t, ctx, c, webchat.EventMessage).Message
	if len(msg.Buttons) != 2 || msg.Buttons[0][1] != (webchat.Button{ID: "ap:1:n", Label: "Deny"}) || msg.Pressed != "" {
		t.Fatalf("buttons %+v", msg.Buttons)
	}
	refused := func(what, messageID, buttonID string) {
		t.Helper()
		if err := c.Press(ctx, what, messageID, buttonID); err != nil {
			t.Fatal(err)
		}
		if ev := nextOf(t, ctx, c, webchat.EventError); ev.ClientID != what || !strings.Contains(ev.Error, "no longer there") {
			t.Errorf("%s: %+v", what, ev)
		}
	}
	refused("unknown", res.MessageIDs[0], "ap:1:x")
	if err := c.Press(ctx, "p1", res.MessageIDs[0], "ap:1:y"); err != nil {
		t.Fatal(err)
	}
	in, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Action == nil || in.Action.ButtonID != "ap:1:y" || in.Action.MessageID != res.MessageIDs[0] || in.Text != "Allow" || !in.WasMentioned || in.ChatID != id || in.Sender.ID != id || !strings.HasPrefix(in.MessageID, "p") {
		t.Fatalf("press %+v action %+v", in, in.Action)
	}
	if up := nextOf(t, ctx, c, webchat.EventUpdate).Message; up.Pressed != "ap:1:y" || len(up.Buttons) != 2 {
		t.Errorf("after the press: %+v", up)
	}
	refused("again", res.MessageIDs[0], "ap:1:n")

	// A new question; the host's edit removes its buttons.
	res2, err := r.Send(ctx, channel.SendRequest{ChatID: id, Text: "second", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	nextOf(t, ctx, c, webchat.EventMessage)
	if err := r.Edit(ctx, channel.EditRequest{ChatID: id, MessageID: res2.MessageIDs[0], Text: "✅ Allowed by you."}); err != nil {
		t.Fatal(err)
	}
	if up := nextOf(t, ctx, c, webchat.EventUpdate).Message; up.Buttons != nil {
		t.Errorf("buttons kept after the edit: %+v", up.Buttons)
	}
	refused("edited", res2.MessageIDs[0], "ap:1:y")

	// The history a reconnect gets keeps a message's buttons.
	res3, err := r.Send(ctx, channel.SendRequest{ChatID: id, Text: "third", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	hello, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := hello.History[len(hello.History)-1]
	if last.ID != res3.MessageIDs[0] || len(last.Buttons) != 2 {
		t.Errorf("history %+v", last)
	}

	for _, bad := range [][][]channel.Button{{{{ID: "", Label: "x"}}}, {{{ID: strings.Repeat("b", 65), Label: "x"}}}, {{{ID: "ok", Label: " "}}}} {
		if _, err := r.Send(ctx, channel.SendRequest{ChatID: id, Text: "bad", Buttons: bad}); channel.CodeOf(err) != channel.CodeInvalidRequest {
			t.Errorf("buttons %+v: %v, want invalid_request", bad, err)
		}
	}
}

// TestBrowserButtons: the page shows a message's buttons; a click delivers
// the press to the host and the buttons end disabled.
func TestBrowserButtons(t *testing.T) {
	b := webchattest.NewBrowser(t, browserTimeout)
	r := start(t, setup{})
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	in := openAndSay(t, ctx, b, r, "hi")
	res, err := r.Send(ctx, channel.SendRequest{ChatID: in.ChatID, Text: "claude wants to use <b>Bash</b>", Format: channel.FormatPlain, Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "claude wants to use <b>Bash</b>"); err != nil {
		t.Fatal(err)
	}
	labels, err := b.Buttons()
	if err != nil || strings.Join(labels, "|") != "Allow|Deny|Always allow Bash here" {
		t.Fatalf("buttons %q %v", labels, err)
	}
	if err := b.PressButton("Allow"); err != nil {
		t.Fatal(err)
	}
	press, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if press.Action == nil || press.Action.ButtonID != "ap:1:y" || press.Action.MessageID != res.MessageIDs[0] || press.Text != "Allow" {
		t.Fatalf("press %+v", press)
	}
	if err := b.WaitJS(`(() => { const p = document.querySelector("#log .msg .buttons button.pressed"); return p !== null && p.textContent === "Allow" && document.querySelectorAll("#log .msg .buttons button:disabled").length === 3; })()`); err != nil {
		t.Fatal(err)
	}
}
