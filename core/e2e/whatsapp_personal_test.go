package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
)

// TestWhatsAppPersonalNumber: WhatsApp linked to the operator's own number (init's "is this
// your own number?" → self_chat and only_self_chat), pairing on, no owner yet. A contact who
// writes to that number gets nothing from the bot — no pairing code from the operator's
// number — and never reaches the agent; "/owner CODE" in "Message yourself" makes the
// operator the owner, and a note to self is then answered there.
func TestWhatsAppPersonalNumber(t *testing.T) {
	t.Parallel()
	var code string
	e := startWhatsAppDaemon(t, true, func(h *Host) {
		h.Access = Attrs{"dm_policy": "pairing"}
		h.Plugins[0].Config["only_self_chat"] = true
		var err error
		if code, err = ownerclaim.Create(filepath.Join(h.Dir, "data"), time.Hour, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	e.link(t, "")
	friend := e.contact(t, whatsapptest.ContactOptions{Phone: "15550007777", LID: "200000000000077", Name: "Friend"})
	if _, err := friend.SendText(waCtx(t), whatsapptest.TextOptions{Text: "are we still on for dinner?"}); err != nil {
		t.Fatal(err)
	}
	me := []types.JID{e.srv.JID(), e.srv.LID()}
	if _, err := e.srv.PhoneSendText(waCtx(t), e.srv.JID(), whatsapptest.TextOptions{Text: "/owner " + code}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, me, "You are the owner")
	b, err := os.ReadFile(filepath.Join(e.dir, "data", "owners.json"))
	if err != nil || !strings.Contains(string(b), `"wa:+`) {
		t.Fatalf("owners.json after /owner in the self chat: %s %v", b, err)
	}
	if _, err := e.srv.PhoneSendText(waCtx(t), e.srv.JID(), whatsapptest.TextOptions{Text: "note to self #mark=mine"}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, me, "echo:", "note to self")
	e.settle(t, time.Second)
	if sent := e.sentTo(waChat(friend)...); len(sent) != 0 {
		t.Errorf("the bot wrote %d messages to a contact of the personal number (first %q)", len(sent), sent[0].Text())
	}
}
