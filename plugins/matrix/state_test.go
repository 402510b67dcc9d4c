package matrix

import (
	"testing"
	"time"
)

// TestStateBegin: a fresh state answers from its first configuration and
// keeps that moment across restarts until its first sync stores a
// position; a state of another account starts afresh (its device, token
// and position are not this one's); all of it is on disk.
func TestStateBegin(t *testing.T) {
	dir := t.TempDir()
	t1, t2 := time.UnixMilli(1_000), time.UnixMilli(2_000)
	open := func() *store {
		t.Helper()
		s, err := openStore(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if err := s.begin("@bot:hs", t1); err != nil {
		t.Fatal(err)
	}
	if err := open().begin("@bot:hs", t2); err != nil { // a restart before the first sync
		t.Fatal(err)
	}
	if got := open().get(); got.UserID != "@bot:hs" || got.From != t1.UnixMilli() {
		t.Fatalf("after a restart before the first sync: %+v, want from %d", got, t1.UnixMilli())
	}
	s = open()
	if err := s.update(func(st *state) { st.Since, st.DeviceID, st.AccessToken = "s1", "DEV", "tok" }); err != nil {
		t.Fatal(err)
	}
	if err := open().begin("@bot:hs", t2); err != nil {
		t.Fatal(err)
	}
	if got := open().get(); got.Since != "s1" || got.DeviceID != "DEV" || got.From != t1.UnixMilli() {
		t.Fatalf("a synced state changed at its start: %+v", got)
	}
	if err := open().begin("@other:hs", t2); err != nil {
		t.Fatal(err)
	}
	if got := open().get(); got != (state{UserID: "@other:hs", From: t2.UnixMilli()}) {
		t.Fatalf("another account's state: %+v", got)
	}
}
