package matrixtest

import (
	"context"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// TestDendrite starts the real homeserver, registers the bot and two
// users by the shared secret, and has one user write to a room the other
// reads: the homeserver the matrix tests run against works.
func TestDendrite(t *testing.T) {
	t.Parallel()
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var accts []Account
	for _, n := range []string{"bot", "alice", "bob"} {
		a, err := s.Register(ctx, n, false)
		if err != nil {
			t.Fatal(err)
		}
		if a.UserID.String() != "@"+n+":"+ServerName {
			t.Errorf("registered %s", a.UserID)
		}
		accts = append(accts, a)
	}
	if _, err := s.Register(ctx, "mallory", false); err != nil {
		t.Fatal(err)
	}
	alice, bob := s.Client(accts[1]), s.Client(accts[2])
	room, err := alice.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "private_chat", Invite: []id.UserID{accts[2].UserID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.JoinRoomByID(ctx, room.RoomID); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.SendText(ctx, room.RoomID, "hello bob"); err != nil {
		t.Fatal(err)
	}
	since := ""
	for {
		r, err := bob.SyncRequest(ctx, 5000, since, "", false, event.PresenceOnline)
		if err != nil {
			t.Fatal(err)
		}
		since = r.NextBatch
		for _, e := range r.Rooms.Join[room.RoomID].Timeline.Events {
			if e.Type == event.EventMessage && e.Sender == accts[1].UserID && string(e.Content.VeryRaw) != "" &&
				containsBody(e, "hello bob") {
				return
			}
		}
	}
}

func containsBody(e *event.Event, s string) bool {
	_ = e.Content.ParseRaw(e.Type)
	m := e.Content.AsMessage()
	return m != nil && m.Body == s
}
