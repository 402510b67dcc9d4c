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

// aliceDevice logs Alice in anew (a device of her own) and gives that
// device end-to-end encryption (device).
func aliceDevice(t *testing.T, ctx context.Context, e *mxEnv) (*mautrix.Client, *crypto.OlmMachine) {
	t.Helper()
	alice, err := mautrix.NewClient(e.hs.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Login(ctx, &mautrix.ReqLogin{Type: mautrix.AuthTypePassword, Password: e.aliceAcct.Password, StoreCredentials: true,
		Identifier: mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: e.aliceAcct.UserID.String()}}); err != nil {
		t.Fatal(err)
	}
	return alice, device(t, alice)
}

// encDM is an encrypted DM of Alice's with the bot: her client with a
// device of its own, its Olm machine and a watcher that decrypts.
type encDM struct {
	alice *mautrix.Client
	mach  *crypto.OlmMachine
	aw    *watcher
	room  id.RoomID
}

// encryptedDM makes Alice an encrypted client (a device of its own: the
// plain watcher on her first device would take the to-device messages,
// the room keys, meant for it) and an encrypted DM with the bot, which
// the bot joins; the room's Megolm session is shared with the bot.
func encryptedDM(t *testing.T, e *mxEnv) encDM {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice, mach := aliceDevice(t, ctx, e)
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
	return encDM{alice: alice, mach: mach, aw: aw, room: room.RoomID}
}

// send encrypts c for the DM and sends it.
func (d encDM) send(t *testing.T, c *event.MessageEventContent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	enc, err := d.mach.EncryptMegolmEvent(ctx, d.room, event.EventMessage, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.alice.SendMessageEvent(ctx, d.room, event.EventEncrypted, enc); err != nil {
		t.Fatal(err)
	}
}

// noneInClear fails t for each of the bot's messages in the DM that came
// unencrypted.
func (d encDM) noneInClear(t *testing.T, bot id.UserID) {
	t.Helper()
	d.aw.mu.Lock()
	defer d.aw.mu.Unlock()
	for _, ev := range d.aw.events {
		if ev.RoomID == d.room && ev.Sender == bot && ev.Type == event.EventMessage && !ev.Mautrix.WasEncrypted {
			t.Errorf("the bot sent %s in the clear in the encrypted DM", ev.ID)
		}
	}
}

// TestMatrixEncryptedDM: in an encrypted DM, Alice's encrypted message
// reaches claude and the bot's answer comes back encrypted, which Alice's
// device decrypts.
func TestMatrixEncryptedDM(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)
	d := encryptedDM(t, e)
	e.fake.Enqueue(anthropictest.Reply{Text: "A secret answer."})
	d.send(t, text("a secret hello"))
	e.waitBot(t, d.aw, d.room, "the decrypted answer", contains("A secret answer."))
	if got := e.fake.Requests()[0].LastUserText(); !strings.Contains(got, "a secret hello") {
		t.Errorf("claude did not get the decrypted message: %q", got)
	}
	d.noneInClear(t, e.bot.UserID)
}
