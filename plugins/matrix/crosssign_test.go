package matrix

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/crypto/ssss"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// start configures a fresh adapter with cfg on dir and runs it; stop ends
// it (also at the test's end).
func start(t *testing.T, cfg map[string]any, dir string) (a *Adapter, in *sdktest.Inbox, st *sdktest.Statuses, stop func() error) {
	t.Helper()
	js, _ := json.Marshal(cfg)
	a, st, in = New(), &sdktest.Statuses{}, &sdktest.Inbox{}
	if err := a.Configure(context.Background(), schema.Config{Instance: "mx", JSON: js, DataDir: dir, Status: st}); err != nil {
		t.Fatal(err)
	}
	stop = sdktest.Run(t, a, in)
	t.Cleanup(func() { _ = stop() })
	return a, in, st, stop
}

// userDevice logs acct in as a new device with end-to-end encryption
// (keys in memory) and uploads its keys.
func userDevice(t *testing.T, h *hs, acct string, password string) (*mautrix.Client, *crypto.OlmMachine, mautrix.StateStore) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := mautrix.NewClient(h.srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Login(ctx, &mautrix.ReqLogin{Type: mautrix.AuthTypePassword, Password: password, StoreCredentials: true,
		Identifier: mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: acct}}); err != nil {
		t.Fatal(err)
	}
	state := mautrix.NewMemoryStateStore()
	mach := crypto.NewOlmMachine(cli, nil, crypto.NewMemoryStore(func() error { return nil }), state.(crypto.StateStore))
	if err := mach.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := mach.ShareKeys(ctx, -1); err != nil {
		t.Fatal(err)
	}
	return cli, mach, state
}

// seenTrust is how Alice's device judges the bot's device dev after
// fetching the bot's keys afresh, and the master key she sees.
func seenTrust(t *testing.T, mach *crypto.OlmMachine, bot id.UserID, dev id.DeviceID) (id.TrustState, id.Ed25519) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	devs, err := mach.FetchKeys(ctx, []id.UserID{bot}, true)
	if err != nil {
		t.Fatal(err)
	}
	d := devs[bot][dev]
	if d == nil {
		t.Fatalf("Alice does not see the bot's device %s", dev)
	}
	trust, err := mach.ResolveTrustContext(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := mach.CryptoStore.GetCrossSigningKeys(ctx, bot)
	if err != nil {
		t.Fatal(err)
	}
	return trust, keys[id.XSUsageMaster].Key
}

// TestCrossSigningRecoveryAndBackup: on first start the plugin makes the
// account's cross-signing keys, writes their recovery key to its state
// directory (0600) and signs its device, which Alice's client then sees
// cross-signed; a restart keeps the same identity; a second device (a
// fresh state, the recovery key in recovery_key) signs itself with the
// same identity and decrypts a message sent before it existed, from the
// key backup; a wrong or malformed recovery key is needs_attention
// saying what to set.
func TestCrossSigningRecoveryAndBackup(t *testing.T) {
	t.Parallel()
	h, _ := startHS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := map[string]any{"homeserver": h.srv.URL, "user_id": h.bot.UserID.String(), "password": h.bot.Password,
		"invites_from": []string{h.alice.UserID.String()}}
	dir1 := t.TempDir()
	a1, in1, st1, stop1 := start(t, cfg, dir1)
	sdktest.WaitFor(t, "the first device to be ready", func() bool { return last(st1).State == status.Ready })
	rkPath := filepath.Join(dir1, RecoveryKeyFile)
	if msg := last(st1).Message; strings.Contains(msg, "not cross-signed") || !strings.Contains(msg, rkPath) {
		t.Fatalf("the status does not say the device is cross-signed with the key in %s: %q", rkPath, msg)
	}
	fi, err := os.Stat(rkPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600", rkPath, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(rkPath)
	rk := strings.TrimSpace(string(b))
	dev1 := a1.client().DeviceID
	for _, s := range st1.All() {
		if strings.Contains(s.Message, rk) {
			t.Errorf("a status shows the recovery key: %q", s.Message)
		}
	}

	alice, mach, aState := userDevice(t, h, h.alice.UserID.String(), h.alice.Password)
	trust, master := seenTrust(t, mach, h.bot.UserID, dev1)
	if trust != id.TrustStateCrossSignedTOFU {
		t.Errorf("Alice sees the bot's device as %s, want cross-signed by its owner", trust)
	}

	// An encrypted DM, and a message in it the first device decrypts
	// (and backs the key of up).
	room, err := alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{h.bot.UserID},
		InitialState: []*event.Event{{Type: event.StateEncryption, Content: event.Content{Parsed: &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = aState.SetEncryptionEvent(ctx, room.RoomID, &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1})
	sdktest.WaitFor(t, "the bot to join the DM", func() bool {
		m, err := alice.JoinedMembers(ctx, room.RoomID)
		_, ok := m.Joined[h.bot.UserID]
		return err == nil && ok
	})
	if err := mach.ShareGroupSession(ctx, room.RoomID, []id.UserID{h.alice.UserID, h.bot.UserID}); err != nil {
		t.Fatal(err)
	}
	enc, err := mach.EncryptMegolmEvent(ctx, room.RoomID, event.EventMessage, &event.MessageEventContent{MsgType: event.MsgText, Body: "the old secret"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := alice.SendMessageEvent(ctx, room.RoomID, event.EventEncrypted, enc)
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the first device to decrypt the message", func() bool {
		for _, m := range in1.Stored() {
			if m.Text == "the old secret" {
				return true
			}
		}
		return false
	})
	botCli := h.srv.Client(h.bot)
	sdktest.WaitFor(t, "the room key in the key backup", func() bool {
		v, err := botCli.GetKeyBackupLatestVersion(ctx)
		return err == nil && v.Count > 0
	})

	// The backup deleted meanwhile (another client, an operator): the
	// next keys to back up (the bot's own session, made by its answer)
	// go to a new backup with everything in it.
	v1, err := botCli.GetKeyBackupLatestVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := botCli.DeleteKeyBackupVersion(ctx, v1.Version); err != nil {
		t.Fatal(err)
	}
	if _, err := a1.Send(ctx, channel.SendRequest{ChatID: room.RoomID.String(), Text: "an encrypted answer"}); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "a new backup with both sessions", func() bool {
		v, err := botCli.GetKeyBackupLatestVersion(ctx)
		return err == nil && v.Version != v1.Version && v.Count >= 2
	})

	// A restart keeps the identity.
	_ = stop1() // context.Canceled: stopped
	_, _, st1b, _ := start(t, cfg, dir1)
	sdktest.WaitFor(t, "the restarted device to be ready", func() bool { return last(st1b).State == status.Ready })
	if got, _ := ownMasterKey(ctx, botCli); got != master {
		t.Errorf("the restart changed the master key: %s, was %s", got, master)
	}

	// A new device restored from the recovery key.
	cfg2 := map[string]any{"homeserver": h.srv.URL, "user_id": h.bot.UserID.String(), "password": h.bot.Password, "recovery_key": rk}
	a2, _, st2, _ := start(t, cfg2, t.TempDir())
	sdktest.WaitFor(t, "the second device to be ready", func() bool { return last(st2).State == status.Ready })
	dev2 := a2.client().DeviceID
	if dev2 == dev1 {
		t.Fatal("the second start reused the first device")
	}
	trust, master2 := seenTrust(t, mach, h.bot.UserID, dev2)
	if trust != id.TrustStateCrossSignedTOFU || master2 != master {
		t.Errorf("Alice sees the second device as %s under master key %s, want cross-signed under %s", trust, master2, master)
	}
	evt, err := a2.client().GetEvent(ctx, room.RoomID, old.EventID)
	if err != nil {
		t.Fatal(err)
	}
	evt.RoomID = room.RoomID
	dec, err := a2.decrypt(ctx, evt)
	if err != nil {
		t.Fatalf("the second device cannot decrypt the message sent before it existed: %v", err)
	}
	if c := dec.Content.AsMessage(); c == nil || c.Body != "the old secret" {
		t.Errorf("decrypted %+v", dec.Content.Raw)
	}

	// The probe (init, doctor) checks the recovery key, read only.
	probeTrust := func(cfg map[string]any, dir string) probe.Check {
		t.Helper()
		js, _ := json.Marshal(cfg)
		rep, err := Probe(ctx, schema.Config{Instance: "mx", JSON: js, DataDir: dir})
		if err != nil || len(rep.Checks) != 2 {
			t.Fatalf("probe: %+v %v", rep, err)
		}
		return rep.Checks[1]
	}
	if c := probeTrust(cfg, dir1); c.Verdict != probe.OK || !strings.Contains(c.Found, rkPath) {
		t.Errorf("the probe with the plugin's recovery key file: %+v", c)
	}
	if c := probeTrust(cfg2, ""); c.Verdict != probe.OK || !strings.Contains(c.Found, string(master)) {
		t.Errorf("the probe with recovery_key: %+v", c)
	}
	if c := probeTrust(cfg, t.TempDir()); c.Verdict != probe.Fail || !strings.Contains(c.Do, "recovery_key") {
		t.Errorf("the probe without a recovery key: %+v", c)
	}
	fresh := t.TempDir()
	c := probeTrust(map[string]any{"homeserver": h.srv.URL, "user_id": h.mallory.UserID.String(), "access_token": h.mallory.AccessToken}, fresh)
	if c.Verdict != probe.Warn || !strings.Contains(c.Found, filepath.Join(fresh, RecoveryKeyFile)) || !strings.Contains(c.Do, "password") {
		t.Errorf("the probe of an account without cross-signing, with a token only: %+v", c)
	}

	// A wrong recovery key, and one that is not a recovery key at all.
	other, _ := ssss.NewKey("")
	for _, bad := range []struct{ key, says string }{
		{other.RecoveryKey(), "is not the account's"},
		{"EsT0 0OIl garbage", "is not a recovery key"},
	} {
		cfg3 := map[string]any{"homeserver": h.srv.URL, "user_id": h.bot.UserID.String(), "password": h.bot.Password, "recovery_key": bad.key}
		_, _, st3, _ := start(t, cfg3, t.TempDir())
		sdktest.WaitFor(t, "needs_attention for a bad recovery key", func() bool { return last(st3).State == status.NeedsAttention })
		msg := last(st3).Message
		if !strings.Contains(msg, bad.says) || !strings.Contains(msg, "set recovery_key") {
			t.Errorf("the status does not say what is wrong and what to do: %q", msg)
		}
		if strings.Contains(msg, bad.key) {
			t.Errorf("the status shows the recovery key: %q", msg)
		}
		if c := probeTrust(cfg3, ""); c.Verdict != probe.Fail || !strings.Contains(c.Found, bad.says) {
			t.Errorf("the probe of a bad recovery key: %+v", c)
		}
	}
	if got, _ := ownMasterKey(ctx, botCli); got != master {
		t.Errorf("a bad recovery key changed the master key: %s, was %s", got, master)
	}
}
