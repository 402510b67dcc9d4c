package matrixtest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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

// TestFrontDetachesCancellation: a request whose client hung up runs to
// its end behind the front — its context is not cancelled with the
// client's — and the front proxies to the upstream.
func TestFrontDetachesCancellation(t *testing.T) {
	t.Parallel()
	arrived, gone, release, ended := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan error, 1)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		ended <- r.Context().Err()
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() { <-r.Context().Done(); close(gone) }()
		close(arrived)
		detach(inner).ServeHTTP(w, r)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	done := make(chan error, 1)
	go func() {
		_, err := http.DefaultClient.Do(req)
		done <- err
	}()
	<-arrived
	cancel() // the client hangs up
	if err := <-done; err == nil {
		t.Fatal("the cancelled request succeeded")
	}
	<-gone // the server saw it go
	close(release)
	if err := <-ended; err != nil {
		t.Errorf("the request's context ended with its client: %v", err)
	}

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok "+r.URL.Path) }))
	defer up.Close()
	f, base, err := front(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := http.Get(base + "/next")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok /next" {
		t.Errorf("through the front: %q", b)
	}
}
