package matrix

import (
	"testing"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

// TestMentions: in a group room on Dendrite, a message is a mention (for
// require_mention) when its m.mentions names the bot, or its text has the
// bot's id or display name as a word; chatter, a mention of someone else
// and the name inside another word are not.
func TestMentions(t *testing.T) {
	t.Parallel()
	h, ctx := startHS(t)
	if err := h.srv.Client(h.bot).SetDisplayName(ctx, "Claw Bot"); err != nil {
		t.Fatal(err)
	}
	alice, mallory := h.srv.Client(h.alice), h.srv.Client(h.mallory)
	room := createRoom(t, ctx, alice, &mautrix.ReqCreateRoom{Preset: "public_chat", Invite: []id.UserID{h.bot.UserID, h.mallory.UserID}})
	if _, err := mallory.JoinRoomByID(ctx, room.RoomID); err != nil {
		t.Fatal(err)
	}
	cfg := h.botConfig(h.srv.URL, true)
	_, in, _ := runReady(t, cfg, t.TempDir(), nil)
	h.waitJoined(t, ctx, alice, room.RoomID)
	cases := []struct {
		body     string
		mentions []id.UserID
		want     bool
	}{
		{body: "just chatting", want: false},
		{body: "hey claw bot, what now?", want: true},
		{body: "CLAW BOT!", want: true},
		{body: h.bot.UserID.String() + " ping", want: true},
		{body: "ping", mentions: []id.UserID{h.bot.UserID}, want: true},
		{body: "ping alice", mentions: []id.UserID{h.alice.UserID}, want: false},
		{body: "the claw botany club meets", want: false},
	}
	want := map[string]bool{}
	for _, c := range cases {
		content := &event.MessageEventContent{MsgType: event.MsgText, Body: c.body}
		if c.mentions != nil {
			content.Mentions = &event.Mentions{UserIDs: c.mentions}
		}
		r, err := mallory.SendMessageEvent(ctx, room.RoomID, event.EventMessage, content)
		if err != nil {
			t.Fatal(err)
		}
		want[r.EventID.String()] = c.want
	}
	got := in.Wait(t, len(cases))
	for _, m := range got {
		w, ok := want[m.MessageID]
		if !ok {
			continue
		}
		if m.ChatType != channel.ChatGroup {
			t.Errorf("%q: chat type %s, want group", m.Text, m.ChatType)
		}
		if m.WasMentioned != w {
			t.Errorf("%q: mentioned %v, want %v", m.Text, m.WasMentioned, w)
		}
	}
}
