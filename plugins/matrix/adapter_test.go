package matrix

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/plugins/matrix/matrixtest"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// hs is a Dendrite with the bot, Alice (whose invites the bot takes) and
// Mallory (whose it declines).
type hs struct {
	srv                 *matrixtest.Server
	bot, alice, mallory matrixtest.Account
}

// startHS starts a Dendrite with the three accounts; ctx bounds what the
// test does with it to a minute from then (canceled when the test ends).
func startHS(t *testing.T) (h *hs, ctx context.Context) {
	t.Helper()
	h = &hs{srv: matrixtest.Start(t)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, a := range []struct {
		name string
		to   *matrixtest.Account
	}{{"bot", &h.bot}, {"alice", &h.alice}, {"mallory", &h.mallory}} {
		acct, err := h.srv.Register(ctx, a.name, false)
		if err != nil {
			t.Fatal(err)
		}
		*a.to = acct
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return h, ctx
}

// run configures a fresh adapter with cfg and runs it until the test ends.
func run(t *testing.T, cfg map[string]any, dir string) (*Adapter, *sdktest.Inbox, *sdktest.Statuses) {
	t.Helper()
	return runWith(t, cfg, dir, nil)
}

// botConfig is the bot's config block against homeserver (h.srv.URL, or
// a proxy in front of it); with aliceInvites the bot takes alice's
// invites.
func (h *hs) botConfig(homeserver string, aliceInvites bool) map[string]any {
	cfg := map[string]any{"homeserver": homeserver, "user_id": h.bot.UserID.String(), "access_token": h.bot.AccessToken}
	if aliceInvites {
		cfg["invites_from"] = []string{h.alice.UserID.String()}
	}
	return cfg
}

// runReady is runWith, then waits until the plugin reports ready.
func runReady(t *testing.T, cfg map[string]any, dir string, mod func(*Adapter)) (*Adapter, *sdktest.Inbox, *sdktest.Statuses) {
	t.Helper()
	a, in, st := runWith(t, cfg, dir, mod)
	sdktest.WaitFor(t, "the plugin to be ready", func() bool { return last(st).State == status.Ready })
	return a, in, st
}

// waitJoined waits until the bot is a member of room as c sees it and
// as the bot's own account does (Dendrite can list the member to c before
// it lets the bot send there).
func (h *hs) waitJoined(t *testing.T, ctx context.Context, c *mautrix.Client, room id.RoomID) {
	t.Helper()
	bot := h.srv.Client(h.bot)
	sdktest.WaitFor(t, "the bot to join", func() bool {
		m, err := c.JoinedMembers(ctx, room)
		_, ok := m.Joined[h.bot.UserID]
		if err != nil || !ok {
			return false
		}
		mine, err := bot.JoinedMembers(ctx, room)
		_, ok = mine.Joined[h.bot.UserID]
		return err == nil && ok
	})
}

// createRoom has c create a room as req asks.
func createRoom(t *testing.T, ctx context.Context, c *mautrix.Client, req *mautrix.ReqCreateRoom) *mautrix.RespCreateRoom {
	t.Helper()
	room, err := c.CreateRoom(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return room
}

// joinedDM is a direct chat c (alice) opens with the bot, joined by the
// bot's account before any plugin runs.
func (h *hs) joinedDM(t *testing.T, ctx context.Context, c *mautrix.Client) *mautrix.RespCreateRoom {
	t.Helper()
	dm := createRoom(t, ctx, c, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{h.bot.UserID}})
	if _, err := h.srv.Client(h.bot).JoinRoomByID(ctx, dm.RoomID); err != nil {
		t.Fatal(err)
	}
	return dm
}

// runWith is run with mod applied to the configured adapter first.
func runWith(t *testing.T, cfg map[string]any, dir string, mod func(*Adapter)) (*Adapter, *sdktest.Inbox, *sdktest.Statuses) {
	t.Helper()
	js, _ := json.Marshal(cfg)
	a, st, in := New(), &sdktest.Statuses{}, &sdktest.Inbox{}
	if err := a.Configure(context.Background(), schema.Config{Instance: "mx", JSON: js, DataDir: dir, Status: st}); err != nil {
		t.Fatal(err)
	}
	if mod != nil {
		mod(a)
	}
	stop := sdktest.Run(t, a, in)
	t.Cleanup(func() { _ = stop() })
	return a, in, st
}

// TestInvitesAndRefusedToken: an invite from someone in invites_from is
// joined at once; Mallory's are offered to the host (Invite set, is_direct
// from the invite) and answered by AnswerInvite: her group room declined
// (she sees the bot leave, with the reason), her DM joined; a token the homeserver refuses makes the
// channel needs_attention with what to do, not a crash loop; the probe
// says the same before the plugin runs.
func TestInvitesAndRefusedToken(t *testing.T) {
	t.Parallel()
	h, ctx := startHS(t)
	cfg := h.botConfig(h.srv.URL, true)
	a, in, _ := runReady(t, cfg, t.TempDir(), nil)

	alice, mallory := h.srv.Client(h.alice), h.srv.Client(h.mallory)
	good := createRoom(t, ctx, alice, &mautrix.ReqCreateRoom{Invite: []id.UserID{h.bot.UserID}})
	bad := createRoom(t, ctx, mallory, &mautrix.ReqCreateRoom{Invite: []id.UserID{h.bot.UserID}})
	dm := createRoom(t, ctx, mallory, &mautrix.ReqCreateRoom{Invite: []id.UserID{h.bot.UserID}, IsDirect: true, Preset: "trusted_private_chat"})
	membership := func(cli *mautrix.Client, room id.RoomID) string {
		var m struct {
			Membership string `json:"membership"`
		}
		_ = cli.StateEvent(ctx, room, event.StateMember, h.bot.UserID.String(), &m)
		return m.Membership
	}
	offered := map[id.RoomID]bool{} // room → is_direct
	sdktest.WaitFor(t, "Mallory's two invites offered to the host", func() bool {
		for _, m := range in.Stored() {
			if m.Invite != nil && m.Sender.ID == h.mallory.UserID.String() {
				offered[id.RoomID(m.ChatID)] = m.Invite.IsDirect
			}
		}
		return len(offered) == 2
	})
	if direct, ok := offered[bad.RoomID]; !ok || direct {
		t.Errorf("the group room's invite: offered %v, is_direct %v", ok, direct)
	}
	if direct, ok := offered[dm.RoomID]; !ok || !direct {
		t.Errorf("the DM's invite: offered %v, is_direct %v", ok, direct)
	}
	for _, m := range in.Stored() {
		if m.ChatID == good.RoomID.String() && m.Invite != nil {
			t.Error("an invite from invites_from was offered to the host; it is joined at once")
		}
	}
	if err := a.AnswerInvite(ctx, bad.RoomID.String(), false, "not allowed"); err != nil {
		t.Fatal(err)
	}
	if err := a.AnswerInvite(ctx, dm.RoomID.String(), true, "pairing"); err != nil {
		t.Fatal(err)
	}
	// Answered twice (a redelivery after a crash): not an error.
	if err := a.AnswerInvite(ctx, bad.RoomID.String(), false, "not allowed"); err != nil {
		t.Errorf("declining a declined invite again: %v", err)
	}
	sdktest.WaitFor(t, "the bot to join Alice's room and Mallory's DM, and leave her group room", func() bool {
		return membership(alice, good.RoomID) == "join" && membership(mallory, dm.RoomID) == "join" && membership(mallory, bad.RoomID) == "leave"
	})

	// A refused token.
	cfg["access_token"] = "syt_not_a_token"
	_, _, st2 := run(t, cfg, t.TempDir())
	sdktest.WaitFor(t, "needs_attention for the refused token", func() bool { return last(st2).State == status.NeedsAttention })
	if msg := last(st2).Message; !strings.Contains(msg, "M_UNKNOWN_TOKEN") || !strings.Contains(msg, "access_token") {
		t.Errorf("the status does not say what to do: %q", msg)
	}
	js, _ := json.Marshal(cfg)
	rep, err := Probe(ctx, schema.Config{Instance: "mx", JSON: js})
	if err != nil || len(rep.Checks) != 1 || rep.Checks[0].Verdict != probe.Fail {
		t.Errorf("the probe of a refused token: %+v %v", rep, err)
	}
	cfg["access_token"], cfg["password"] = "", h.bot.Password
	js, _ = json.Marshal(cfg)
	rep, err = Probe(ctx, schema.Config{Instance: "mx", JSON: js})
	if err != nil || len(rep.Checks) != 2 || rep.Checks[0].Verdict != probe.OK {
		t.Errorf("the probe of the password (and cross-signing): %+v %v", rep, err)
	}
}

func last(s *sdktest.Statuses) status.Status {
	all := s.All()
	if len(all) == 0 {
		return status.Status{}
	}
	return all[len(all)-1]
}

// TestUndecryptableToldToSender: an encrypted message (the plugin holds no
// keys) does not reach the host, and its sender gets a notice replying to
// it that says so — never a silent drop.
func TestUndecryptableToldToSender(t *testing.T) {
	t.Parallel()
	h, ctx := startHS(t)
	alice := h.srv.Client(h.alice)
	room := createRoom(t, ctx, alice, &mautrix.ReqCreateRoom{Invite: []id.UserID{h.bot.UserID}})
	cfg := h.botConfig(h.srv.URL, true)
	_, in, _ := runReady(t, cfg, t.TempDir(), nil)
	h.waitJoined(t, ctx, alice, room.RoomID)
	enc, err := alice.SendMessageEvent(ctx, room.RoomID, event.EventEncrypted, map[string]any{
		"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnACgAkLmt6qF84IK++J7UDH2Za1YVchHyprqTqsg",
		"sender_key": "SenderKeyOfAlicesDevice", "device_id": "ALICEDEVICE", "session_id": "SessionIdOfAlice"})
	if err != nil {
		t.Fatal(err)
	}
	// A plain message after it shows the batch was handled.
	if _, err := alice.SendText(ctx, room.RoomID, "and in the clear"); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the clear message", func() bool { return len(in.Stored()) > 0 })
	for _, m := range in.Stored() {
		if m.MessageID == enc.EventID.String() {
			t.Errorf("the encrypted event reached the host: %+v", m)
		}
	}
	resp, err := alice.Messages(ctx, room.RoomID, "", "", mautrix.DirectionBackward, nil, 50)
	if err != nil {
		t.Fatal(err)
	}
	told := 0
	for _, ev := range resp.Chunk {
		if ev.Sender != h.bot.UserID || ev.Type != event.EventMessage {
			continue
		}
		_ = ev.Content.ParseRaw(ev.Type)
		c := ev.Content.AsMessage()
		if c.MsgType == event.MsgNotice && strings.Contains(c.Body, "could not decrypt") && c.RelatesTo.GetReplyTo() == enc.EventID {
			told++
		}
	}
	if told != 1 {
		t.Errorf("the sender was told %d times, want once", told)
	}
}

// TestFreshStateAnswersFromConfigure: a fresh state answers what is written
// from the moment the plugin was first configured, not from when its sync
// loop began — the host opens the stream and the channel's first sync
// follows later (a loaded machine, a slow key upload), and a message
// written in between is the user's, not history. The moment is kept in the
// state, so a plugin stopped before its first sync stored a position (kill
// -9, a restart) still answers what came while it was down. What the room
// held before stays unanswered.
func TestFreshStateAnswersFromConfigure(t *testing.T) {
	t.Parallel()
	h, ctx := startHS(t)
	alice := h.srv.Client(h.alice)
	dm := h.joinedDM(t, ctx, alice)
	old, err := alice.SendText(ctx, dm.RoomID, "written before the bot was set up")
	if err != nil {
		t.Fatal(err)
	}
	// Timestamps are in milliseconds: the plugin is set up on a later one.
	for sent := time.Now().UnixMilli(); time.Now().UnixMilli() <= sent; {
		runtime.Gosched()
	}
	cfg := h.botConfig(h.srv.URL, false)
	js, _ := json.Marshal(cfg)
	dir := t.TempDir()
	// The first process is configured and stops before its first sync.
	first := New()
	if err := first.Configure(ctx, schema.Config{Instance: "mx", JSON: js, DataDir: dir}); err != nil {
		t.Fatal(err)
	}
	down, err := alice.SendText(ctx, dm.RoomID, "written while the plugin was down")
	if err != nil {
		t.Fatal(err)
	}
	_, in, _ := run(t, cfg, dir)
	sdktest.WaitFor(t, "the message written while down", func() bool {
		for _, m := range in.Stored() {
			if m.MessageID == down.EventID.String() {
				return true
			}
		}
		return false
	})
	for _, m := range in.Stored() {
		if m.MessageID == old.EventID.String() {
			t.Errorf("the room's history reached the host: %+v", m)
		}
	}
}
