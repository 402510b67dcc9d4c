package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// device gives cli a device with end-to-end encryption (goolm, keys in
// memory) and uploads its keys.
func device(t *testing.T, cli *mautrix.Client) *crypto.OlmMachine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	state := mautrix.NewMemoryStateStore()
	mach := crypto.NewOlmMachine(cli, nil, crypto.NewMemoryStore(func() error { return nil }), state.(crypto.StateStore))
	if err := mach.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mach.ShareKeys(ctx, -1); err != nil {
		t.Fatal(err)
	}
	return mach
}

// TestMatrixEncryptedDM: in an encrypted DM, Alice's encrypted message
// reaches claude and the bot's answer comes back encrypted, which Alice's
// device decrypts.
func TestMatrixEncryptedDM(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Alice's encrypted client is a device of its own: the plain watcher
	// on her first device would take the to-device messages (the room
	// keys) meant for it.
	alice, err := mautrix.NewClient(e.hs.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Login(ctx, &mautrix.ReqLogin{Type: mautrix.AuthTypePassword, Password: e.aliceAcct.Password, StoreCredentials: true,
		Identifier: mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: e.aliceAcct.UserID.String()}}); err != nil {
		t.Fatal(err)
	}
	mach := device(t, alice)
	aw := watch(t, alice, mach)
	room, err := alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{e.bot.UserID},
		InitialState: []*event.Event{{Type: event.StateEncryption, Content: event.Content{Parsed: &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := aw.state.SetEncryptionEvent(ctx, room.RoomID, &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}); err != nil {
		t.Fatal(err)
	}
	if err := aw.state.SetMembership(ctx, room.RoomID, alice.UserID, event.MembershipJoin); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the bot to join the encrypted DM", func() bool { return e.joined(room.RoomID) })
	if err := mach.ShareGroupSession(ctx, room.RoomID, []id.UserID{alice.UserID, e.bot.UserID}); err != nil {
		t.Fatal(err)
	}
	enc, err := mach.EncryptMegolmEvent(ctx, room.RoomID, event.EventMessage, text("a secret hello"))
	if err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "A secret answer."})
	if _, err := alice.SendMessageEvent(ctx, room.RoomID, event.EventEncrypted, enc); err != nil {
		t.Fatal(err)
	}
	e.waitBot(t, aw, room.RoomID, "the decrypted answer", contains("A secret answer."))
	if got := e.fake.Requests()[0].LastUserText(); !strings.Contains(got, "a secret hello") {
		t.Errorf("claude did not get the decrypted message: %q", got)
	}
	aw.mu.Lock()
	defer aw.mu.Unlock()
	for _, ev := range aw.events {
		if ev.RoomID == room.RoomID && ev.Sender == e.bot.UserID && ev.Type == event.EventMessage && !ev.Mautrix.WasEncrypted {
			t.Errorf("the bot sent %s in the clear in the encrypted DM", ev.ID)
		}
	}
}
