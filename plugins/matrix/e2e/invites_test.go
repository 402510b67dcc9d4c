package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/core/anthropictest"
	ce2e "github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/plugins/matrix/matrixtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestMatrixInvites: invites decided by the host's access block, through
// the real binary and a real homeserver, no invites_from: the owner's
// invite to a group room joined; a stranger's invite to a group room
// declined (the stranger sees the bot leave); a stranger's DM invite under
// dm_policy "pairing" joined, and what they write there answered with a
// pairing code.
func TestMatrixInvites(t *testing.T) {
	t.Parallel()
	bin := claudeBin(t)
	hs, fake := matrixtest.Start(t), anthropictest.New()
	t.Cleanup(fake.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	accts := map[string]matrixtest.Account{}
	for _, n := range []string{"bot", "alice", "carol"} {
		a, err := hs.Register(ctx, n, false)
		if err != nil {
			t.Fatal(err)
		}
		accts[n] = a
	}
	bot := accts["bot"]
	alice, carol := hs.Client(accts["alice"]), hs.Client(accts["carol"])
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	h := ce2e.Host{
		Dir:      t.TempDir(),
		Agent:    ce2e.RealClaude(bin, filepath.Join(dir, "home"), fake.URL(), ce2e.Attrs{"workspace": ws, "timeout": "60s"}),
		Access:   ce2e.Attrs{"dm_policy": "pairing", "owners": []string{"mx:" + accts["alice"].UserID.String()}},
		Admin:    ce2e.Attrs{"listen": ""},
		Messages: ce2e.Attrs{"streaming": "off"},
		Plugins: []ce2e.Plugin{{Name: "mx", Source: "matrix", Config: ce2e.Attrs{
			"homeserver": hs.URL, "user_id": bot.UserID.String(), "password": bot.Password}}},
	}
	cw := watch(t, carol)
	ce2e.Launch(t, h.Write(t))

	membership := func(cli *mautrix.Client, room id.RoomID) string {
		var m struct {
			Membership string `json:"membership"`
		}
		_ = cli.StateEvent(ctx, room, event.StateMember, bot.UserID.String(), &m)
		return m.Membership
	}
	owners, err := alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Name: "owners", Invite: []id.UserID{bot.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	strangers, err := carol.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Name: "strangers", Invite: []id.UserID{bot.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	dm, err := carol.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{bot.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the owner's room and the stranger's DM joined, the stranger's group room left", func() bool {
		return membership(alice, owners.RoomID) == "join" && membership(carol, dm.RoomID) == "join" && membership(carol, strangers.RoomID) == "leave"
	})
	sendCtx, sc := context.WithTimeout(context.Background(), 30*time.Second)
	defer sc()
	if _, err := carol.SendMessageEvent(sendCtx, dm.RoomID, event.EventMessage, text("hello, who are you?")); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the stranger's DM answered with a pairing code", func() bool {
		for _, ev := range cw.from(dm.RoomID, bot.UserID) {
			if c := ev.Content.AsMessage(); c != nil && contains("pairing code")(c) {
				return true
			}
		}
		return false
	})
}
