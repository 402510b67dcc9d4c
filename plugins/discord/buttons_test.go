package discord

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

var approval = [][]channel.Button{{{ID: "ap:0123456789ab:y", Label: "Allow"}, {ID: "ap:0123456789ab:n", Label: "Deny"}}, {{ID: "ap:0123456789ab:a", Label: "Always allow Bash here"}}}

// TestButtons: buttons become action rows of buttons under the message;
// a press is delivered as an action with the button's label and the
// presser, acknowledged once with a deferred update (type 6); the host's
// edit clears the buttons; what Discord would refuse is refused before
// any request.
func TestButtons(t *testing.T) {
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", nil)
	if !a.Capabilities().Buttons {
		t.Fatal("capability buttons not declared")
	}
	inbox := newInbox()
	a.run(t, inbox)
	waitLive(t, srv, 1)
	ctx := context.Background()
	res, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "claude wants to use Bash", Format: channel.FormatPlain, Buttons: approval})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Message(res.MessageIDs[0])
	if len(m.Components) != 2 || len(m.Components[0].Components) != 2 || m.Components[0].Components[1].Label != "Deny" || m.Components[1].Components[0].CustomID != "ap:0123456789ab:a" || m.Components[0].Components[0].Type != 2 {
		t.Fatalf("components %+v", m.Components)
	}
	ix, err := srv.PressButton(res.MessageIDs[0], "ap:0123456789ab:n", bob)
	if err != nil {
		t.Fatal(err)
	}
	in := inbox.wait(t, 1)[0]
	if in.Action == nil || in.Action.ButtonID != "ap:0123456789ab:n" || in.Action.MessageID != res.MessageIDs[0] || in.Text != "Deny" ||
		in.MessageID != "ix:"+ix.ID || in.Sender.ID != bob.ID || !in.WasMentioned || in.ChatType != channel.ChatGroup || in.ChatID != general.ID {
		t.Fatalf("press %+v action %+v", in, in.Action)
	}
	waitFor(t, "the press acknowledged", func() bool { return len(srv.Callbacks()) == 1 })
	if cb := srv.Callbacks(); cb[0].Interaction != ix.ID || cb[0].Type != 6 {
		t.Errorf("callbacks %+v, want one deferred update (6)", cb)
	}
	if err := a.Edit(ctx, channel.EditRequest{ChatID: general.ID, MessageID: res.MessageIDs[0], Text: "❌ Denied by bob."}); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(res.MessageIDs[0]); len(m.Components) != 0 || m.Content != "❌ Denied by bob." {
		t.Errorf("after the edit: %q %+v", m.Content, m.Components)
	}
	if _, err := srv.PressButton(res.MessageIDs[0], "ap:0123456789ab:y", bob); err == nil {
		t.Error("a removed button could be pressed")
	}

	before := len(srv.Sent())
	for name, rows := range map[string][][]channel.Button{
		"six rows":  {{{ID: "1", Label: "a"}}, {{ID: "2", Label: "a"}}, {{ID: "3", Label: "a"}}, {{ID: "4", Label: "a"}}, {{ID: "5", Label: "a"}}, {{ID: "6", Label: "a"}}},
		"six wide":  {{{ID: "1", Label: "a"}, {ID: "2", Label: "a"}, {ID: "3", Label: "a"}, {ID: "4", Label: "a"}, {ID: "5", Label: "a"}, {ID: "6", Label: "a"}}},
		"long id":   {{{ID: strings.Repeat("i", 101), Label: "a"}}},
		"no label":  {{{ID: "x", Label: " "}}},
		"long text": {{{ID: "x", Label: strings.Repeat("l", 81)}}},
	} {
		_, err := a.Send(ctx, channel.SendRequest{ChatID: general.ID, Text: "t", Buttons: rows})
		var ce *channel.Error
		if !errors.As(err, &ce) || ce.Code != channel.CodeInvalidRequest {
			t.Errorf("%s: %v, want invalid_request", name, err)
		}
	}
	if len(srv.Sent()) != before {
		t.Error("a refused send reached Discord")
	}
}
