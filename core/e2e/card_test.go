package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// startCardHost is the real claude CLI against the fake Anthropic API
// behind Telegram: Alice by DM, and the group where Bob (2002) may talk
// and stop turns and Carol (3003) may not; ping_after 2s.
func startCardHost(t *testing.T) (*anthropictest.Server, *telegramtest.Server) {
	t.Helper()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "90s"}),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "groups": []string{"tg:-1001234500001"},
			"group_allow_from": []string{"tg:2002"}, "require_mention": false},
		Messages: Attrs{"ping_after": "2s"},
	})
	return fake, srv
}

// hasStop reports whether m shows the card's Stop button.
func hasStop(m tgMessage) bool {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.Data == "/stop" && strings.Contains(b.Text, "Stop") {
				return true
			}
		}
	}
	return false
}

// TestTurnCardTelegram: through the real binary and CLI on the fake Bot
// API — a fast answer shows no card and pings nobody; a slow one shows
// the card (elapsed time, a Stop button) edited at most every 2 s, which
// becomes the answer (the button gone), then one ping replying to it; in
// the group, where Bob mentions the bot (chatter shows no card), Carol
// (who may not stop the session) presses Stop and the turn goes on, Bob
// presses it and the card collapses to "Stopped".
func TestTurnCardTelegram(t *testing.T) {
	t.Parallel()
	fake, srv := startCardHost(t)
	alice, aliceChat := tgUser(tgAlice, "Alice"), telegramtest.PrivateChat(tgAlice)

	// A first turn starts claude (a node start: seconds on a busy
	// machine, when it may show a card); the next runs on the warm process.
	fake.Enqueue(anthropictest.Reply{Text: "Warm now."})
	srv.PushText(aliceChat, alice, "hello")
	tgWaitMessage(t, srv, tgAlice, "Warm now.")
	tgSettle(t, srv, 500*time.Millisecond)
	warm := len(tgChat(srv, tgAlice))

	// Fast: no card, no ping.
	fake.Enqueue(anthropictest.Reply{Text: "Quick answer."})
	srv.PushText(aliceChat, alice, "hi")
	tgWaitMessage(t, srv, tgAlice, "Quick answer.")
	tgSettle(t, srv, 500*time.Millisecond)
	if n := len(tgChat(srv, tgAlice)) - warm; n != 1 {
		t.Fatalf("a fast turn sent %d messages: %+v", n, tgChat(srv, tgAlice)[warm:])
	}

	// Slow: the card, the answer in its place, one ping.
	fake.Enqueue(anthropictest.Reply{Text: "The slow answer.", HeaderDelay: 7 * time.Second})
	srv.PushText(aliceChat, alice, "think hard")
	card := tgWaitMessage(t, srv, tgAlice, "⏳ Working")
	if !hasStop(card) {
		t.Fatalf("the card has no Stop button: %+v", card.Keyboard)
	}
	answer := tgWaitMessage(t, srv, tgAlice, "The slow answer.")
	if answer.MessageID != card.MessageID || answer.Keyboard != nil {
		t.Errorf("the answer %+v did not replace the card %d (or kept its button)", answer.Sent, card.MessageID)
	}
	// The ping replies to the answer (the warm-up may have had one of
	// its own on a busy machine).
	pings := func() (n int) {
		for _, m := range tgChat(srv, tgAlice)[warm:] {
			if strings.Contains(m.Visible, "✅ Done — took") {
				n++
				if m.ReplyTo != card.MessageID {
					t.Errorf("a ping replies to %d, want the answer %d", m.ReplyTo, card.MessageID)
				}
			}
		}
		return n
	}
	sdktest.WaitFor(t, "the ping", func() bool { return pings() > 0 })
	tgSettle(t, srv, time.Second)
	if n := pings(); n != 1 {
		t.Errorf("%d pings", n)
	}
	// Edits of the card: the first send, an update per 5 s step of the
	// time at most, the answer.
	var edits []time.Time
	for _, r := range tgRequestsTo(srv, "editMessageText", "1001") {
		if r.Params.Get("message_id") == strconv.Itoa(card.MessageID) {
			edits = append(edits, r.Time)
		}
	}
	for i := 1; i < len(edits); i++ {
		if gap := edits[i].Sub(edits[i-1]); gap < 900*time.Millisecond {
			t.Errorf("two edits %v apart (edit %d)", gap, i)
		}
	}
	if len(edits) > 6 {
		t.Errorf("%d edits for a 7 s turn", len(edits))
	}

	// The group: Carol's Stop is not obeyed, Bob's is.
	group, bob, carol := telegramtest.Supergroup(tgGroup, "Team"), tgUser(2002, "Bob"), tgUser(3003, "Carol")
	fake.Enqueue(anthropictest.Reply{Text: "never shown", HeaderDelay: time.Minute})
	srv.PushText(group, bob, "@clawbot long task")
	gcard := tgWaitMessage(t, srv, tgGroup, "⏳ Working")
	if _, err := srv.PressButton(group, gcard.MessageID, "/stop", carol); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "Carol's press answered", func() bool { return len(srv.Requests("answerCallbackQuery")) >= 1 })
	// The card's next update comes after it: the turn still runs.
	before := len(tgRequestsTo(srv, "editMessageText", "-1001234500001"))
	sdktest.WaitFor(t, "the card's next update", func() bool { return len(tgRequestsTo(srv, "editMessageText", "-1001234500001")) > before })
	if m := tgWaitMessage(t, srv, tgGroup, "⏳ Working"); !hasStop(m) || strings.Contains(m.Visible, "Stopped") {
		t.Fatalf("Carol's press stopped the turn: %+v", m.Sent)
	}
	if _, err := srv.PressButton(group, gcard.MessageID, "/stop", bob); err != nil {
		t.Fatal(err)
	}
	stopped := tgWaitMessage(t, srv, tgGroup, "⏹ Stopped after")
	if stopped.MessageID != gcard.MessageID || stopped.Keyboard != nil {
		t.Errorf("the stopped card %+v", stopped.Sent)
	}
	tgSettle(t, srv, time.Second)
	if n := tgCount(srv, tgGroup, "never shown"); n != 0 {
		t.Error("the stopped turn's answer was shown")
	}
}

// dcStop reports whether m shows the card's Stop button.
func dcStop(m discordtest.Message) bool {
	for _, row := range m.Components {
		for _, c := range row.Components {
			if c.CustomID == "/stop" {
				return true
			}
		}
	}
	return false
}

// TestTurnCardDiscord: on the fake Discord, a slow turn's card (with its
// Stop button) is edited no faster than Discord's edit rate and becomes
// the answer; Alice's press of Stop on the next card stops that turn.
func TestTurnCardDiscord(t *testing.T) {
	t.Parallel()
	fake, mod, _ := realClaudeIn(t)
	// In #general only Alice and Bob are named (group_allow_from; Carol
	// by allow_from): Dave, a member nobody named, may not stop a turn.
	e := startDiscordDaemon(t, true, nil, mod, func(h *Host) {
		h.Access["group_allow_from"] = []string{"dc:" + dcAlice.ID, "dc:" + dcBob.ID}
	})
	e.live(t, 1)
	dm := e.dm[dcAlice.ID].ID

	fake.Enqueue(anthropictest.Reply{Text: "The slow answer.", HeaderDelay: 7 * time.Second})
	e.pushDM(dcAlice, "think hard")
	card := e.waitMessage(t, dm, "⏳ Working")
	if !dcStop(card) {
		t.Fatalf("the card has no Stop button: %+v", card.Components)
	}
	answer := e.waitMessage(t, dm, "The slow answer.")
	if answer.ID != card.ID || len(answer.Components) != 0 {
		t.Errorf("the answer %+v did not replace the card %s (or kept its button)", answer, card.ID)
	}
	e.settle(t, time.Second)
	var edits []time.Time
	for _, r := range e.srv.Requests("") {
		if r.Method == "PATCH" && strings.Contains(r.Path, card.ID) {
			edits = append(edits, r.Time)
		}
	}
	// Discord allows 5 edits per 5 s in a channel.
	for i := 5; i < len(edits); i++ {
		if edits[i].Sub(edits[i-5]) < 5*time.Second {
			t.Errorf("6 edits within %v", edits[i].Sub(edits[i-5]))
		}
	}

	fake.Enqueue(anthropictest.Reply{Text: "never shown", HeaderDelay: time.Minute})
	e.pushDM(dcAlice, "long task")
	card2 := e.waitMessage(t, dm, "⏳ Working")
	if card2.ID == card.ID {
		t.Fatal("no new card")
	}
	if _, err := e.srv.PressButton(card2.ID, "/stop", dcAlice); err != nil {
		t.Fatal(err)
	}
	stopped := e.waitMessage(t, dm, "⏹ Stopped after")
	if stopped.ID != card2.ID || len(stopped.Components) != 0 {
		t.Errorf("the stopped card %+v", stopped)
	}
	e.settle(t, time.Second)
	if e.count(dm, "never shown") != 0 {
		t.Error("the stopped turn's answer was shown")
	}

	// #general: Dave's Stop is not obeyed (he may not control the
	// session), Bob's is.
	dave := discordtest.User{ID: "100000000000000104", Username: "dave"}
	ctx, cancel := context.WithTimeout(context.Background(), tgWait)
	defer cancel()
	answered, err := e.srv.WaitCallbacks(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(anthropictest.Reply{Text: "never shown in general", HeaderDelay: time.Minute})
	e.srv.Push(discordtest.Message{ChannelID: e.general.ID, Author: dcBob, Content: "<@" + discordtest.BotID + "> long group task",
		Mentions: []discordtest.User{e.srv.Bot()}})
	gcard := e.waitMessage(t, e.general.ID, "⏳ Working")
	if _, err := e.srv.PressButton(gcard.ID, "/stop", dave); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.WaitCallbacks(ctx, len(answered)+1); err != nil {
		t.Fatalf("Dave's press was not answered: %v", err)
	}
	patches := func() int {
		n := 0
		for _, r := range e.srv.Requests("") {
			if r.Method == "PATCH" && strings.Contains(r.Path, gcard.ID) {
				n++
			}
		}
		return n
	}
	before := patches()
	sdktest.WaitFor(t, "the card's next update", func() bool { return patches() > before })
	if m := e.waitMessage(t, e.general.ID, "⏳ Working"); !dcStop(m) || strings.Contains(m.Content, "Stopped") {
		t.Fatalf("Dave's press stopped the turn: %+v", m)
	}
	if _, err := e.srv.PressButton(gcard.ID, "/stop", dcBob); err != nil {
		t.Fatal(err)
	}
	gstopped := e.waitMessage(t, e.general.ID, "⏹ Stopped after")
	if gstopped.ID != gcard.ID || len(gstopped.Components) != 0 {
		t.Errorf("the stopped card %+v", gstopped)
	}
	e.settle(t, time.Second)
	if e.count(e.general.ID, "never shown") != 0 {
		t.Error("the stopped group turn's answer was shown")
	}
}

// TestTurnCardWebchat: in headless Chromium, a slow turn's card shows with
// its Stop button and becomes the answer (the button gone); pressing Stop
// on the next card stops that turn and the card says so.
func TestTurnCardWebchat(t *testing.T) {
	t.Parallel()
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	fake, _ := webchatWithRealClaude(t, b)
	stopLabel := "⏹ Stop"
	hasStop := func() bool {
		ls, err := b.Buttons()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l == stopLabel {
				return true
			}
		}
		return false
	}

	fake.Enqueue(anthropictest.Reply{Text: "The slow answer.", HeaderDelay: 7 * time.Second})
	if err := b.Send("think hard"); err != nil {
		t.Fatal(err)
	}
	card, err := b.WaitMessage("bot", "⏳ Working")
	if err != nil {
		t.Fatal(err)
	}
	if !hasStop() {
		t.Fatal("the card shows no Stop button")
	}
	answer, err := b.WaitMessage("bot", "The slow answer.")
	if err != nil {
		t.Fatal(err)
	}
	if answer.ID != card.ID {
		t.Errorf("the answer is message %s, the card was %s", answer.ID, card.ID)
	}
	if hasStop() {
		t.Error("the answer kept the Stop button")
	}

	fake.Enqueue(anthropictest.Reply{Text: "never shown", HeaderDelay: time.Minute})
	if err := b.Send("long task"); err != nil {
		t.Fatal(err)
	}
	if err := b.PressButton(stopLabel); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "⏹ Stopped after"); err != nil {
		t.Fatal(err)
	}
}

// TestNoCardWhatsApp: WhatsApp edits no messages: a slow turn shows no
// card there, only its answer, once.
func TestNoCardWhatsApp(t *testing.T) {
	t.Parallel()
	fake, e, ann := whatsAppWithRealClaude(t)
	fake.Enqueue(anthropictest.Reply{Text: "The slow answer.", HeaderDelay: 5 * time.Second})
	if _, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "think hard"}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "The slow answer.")
	e.settle(t, 500*time.Millisecond)
	var texts []string
	for _, m := range e.sentTo(waChat(ann)...) {
		if s := m.Message.GetConversation() + m.Message.GetExtendedTextMessage().GetText(); s != "" {
			texts = append(texts, s)
		}
	}
	if len(texts) != 1 || texts[0] != "The slow answer." {
		t.Errorf("WhatsApp got %q, want only the answer", texts)
	}
}
