package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// RunCluster runs the cases of [store.Cluster] as parallel subtests of t;
// the opener's stores must implement it.
func RunCluster(t *testing.T, newStorage func(t *testing.T) HostOpener) {
	t.Helper()
	cluster := func(t *testing.T, open HostOpener, clk *Clock, host string) store.Cluster {
		c, ok := open(t, clk.Now, host).(store.Cluster)
		if !ok {
			t.Fatal("the engine does not implement store.Cluster")
		}
		return c
	}
	t.Run("PlacementFollowsHostLeases", func(t *testing.T) {
		t.Parallel()
		clk := NewClock()
		open := newStorage(t)
		testPlacement(t, clk, cluster(t, open, clk, "A"), cluster(t, open, clk, "B"))
	})
	t.Run("HandedEntriesTakenOnce", func(t *testing.T) {
		t.Parallel()
		clk := NewClock()
		open := newStorage(t)
		testHandoff(t, cluster(t, open, clk, "A"), cluster(t, open, clk, "B"))
	})
	t.Run("OlderOpenOutOfHand", func(t *testing.T) {
		t.Parallel()
		clk := NewClock()
		open := newStorage(t)
		testOlderOpen(t, cluster(t, open, clk, "A"), cluster(t, open, clk, "B"))
	})
	t.Run("RelayedCallsClaimedOnce", func(t *testing.T) {
		t.Parallel()
		clk := NewClock()
		open := newStorage(t)
		testRelay(t, cluster(t, open, clk, "A"), cluster(t, open, clk, "B"), cluster(t, open, clk, "C"))
	})
}

func lease(t *testing.T, c store.Cluster, host string, ttl time.Duration) {
	t.Helper()
	if _, err := c.AcquireLease(context.Background(), store.LeaseRequest{Name: store.HostLeasePrefix + host, Holder: host, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
}

// testPlacement: a session stays on its host while that host's lease is
// live, whoever asks for it; it moves once the lease expired; racing
// placements of a new session agree.
func testPlacement(t *testing.T, clk *Clock, a, b store.Cluster) {
	ctx := context.Background()
	lease(t, a, "A", time.Minute)
	lease(t, b, "B", 2*time.Minute)
	if got, err := a.PlaceSession(ctx, "s1", "A"); err != nil || got != "A" {
		t.Fatalf("first placement: %q, %v; want A", got, err)
	}
	if got, err := b.PlaceSession(ctx, "s1", "B"); err != nil || got != "A" {
		t.Fatalf("placement while A lives: %q, %v; want A", got, err)
	}
	clk.Advance(time.Minute + time.Millisecond) // A's lease expires, B's not
	if got, err := b.PlaceSession(ctx, "s1", "B"); err != nil || got != "B" {
		t.Fatalf("placement after A died: %q, %v; want B", got, err)
	}
	lease(t, a, "A", time.Minute) // A is back: s1 stays on B
	if got, err := a.PlaceSession(ctx, "s1", "A"); err != nil || got != "B" {
		t.Fatalf("placement after A came back: %q, %v; want B", got, err)
	}
	// Concurrent first placements of one session: one wins, all agree.
	var wg sync.WaitGroup
	got := make([]string, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, want := a, "A"
			if i%2 == 1 {
				c, want = b, "B"
			}
			h, err := c.PlaceSession(ctx, "s2", want)
			if err != nil {
				t.Error(err)
			}
			got[i] = h
		}()
	}
	wg.Wait()
	for _, h := range got {
		if h != got[0] {
			t.Fatalf("concurrent placements disagree: %v", got)
		}
	}
	counts, err := a.PlacementCounts(ctx)
	if err != nil || counts["B"]+counts["A"] != 2 || counts[got[0]] < 1 {
		t.Fatalf("placement counts %v (%v); want s1 on B and s2 on %s", counts, err, got[0])
	}
}

// testHandoff: entries handed to a host become its own, are taken by it
// once, oldest first, and wake it; terminal entries are not handed; a
// Recover of the host takes them instead and clears the mark.
func testHandoff(t *testing.T, a, b store.Cluster) {
	ctx := context.Background()
	lease(t, a, "A", time.Minute)
	lease(t, b, "B", time.Minute)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	woke := make(chan store.Wake, 16)
	go b.Listen(lctx, func(w store.Wake) { woke <- w })
	waitListening(t, a, b, woke, "B")

	e1 := MustAccept(t, a, Msg(1))
	e2 := MustAccept(t, a, Msg(2))
	if err := a.Enqueue(ctx, e2, "s1"); err != nil {
		t.Fatal(err)
	}
	e3 := MustAccept(t, a, Msg(3))
	if err := a.Finish(ctx, store.FinishRequest{IDs: []int64{e3}, State: store.StateDone}); err != nil {
		t.Fatal(err)
	}
	if err := a.Handoff(ctx, "B", e2, e1, e3); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-woke:
		if w.Kind != store.WakeHanded || w.Host != "B" {
			t.Fatalf("wake-up %+v; want handed to B", w)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B was not woken")
	}
	if es, err := a.TakeHanded(ctx); err != nil || len(es) != 0 {
		t.Fatalf("A took %d handed entries (%v); they are B's", len(es), err)
	}
	es, err := b.TakeHanded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].ID != e1 || es[1].ID != e2 || es[0].Owner != "B" || es[1].State != store.StateQueued || es[1].SessionKey != "s1" {
		t.Fatalf("B took %+v; want e1 (accepted) and e2 (queued in s1), owned by B", es)
	}
	if es, err := b.TakeHanded(ctx); err != nil || len(es) != 0 {
		t.Fatalf("taken twice: %d (%v)", len(es), err)
	}
	if e, _ := a.Entry(ctx, e3); e.Owner != "A" {
		t.Fatalf("a finished entry was handed: owner %q", e.Owner)
	}
	// Handed but not taken: the host's Recover takes it and TakeHanded
	// does not return it again.
	e4 := MustAccept(t, a, Msg(4))
	if err := a.Handoff(ctx, "B", e4); err != nil {
		t.Fatal(err)
	}
	rec, err := b.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range rec.Resume {
		found = found || e.ID == e4
	}
	if !found {
		t.Fatalf("B's recovery did not resume the entry handed to it: %+v", rec.Resume)
	}
	if es, err := b.TakeHanded(ctx); err != nil || len(es) != 0 {
		t.Fatalf("recovered and then taken again: %d (%v)", len(es), err)
	}
}

// testOlderOpen: an older open entry of the same chat counts while it is
// out of the asking host's hands (another host's, or handed to it and not
// yet taken), not once it is taken or finished; other chats and threads
// and newer entries never count.
func testOlderOpen(t *testing.T, a, b store.Cluster) {
	ctx := context.Background()
	lease(t, a, "A", time.Minute)
	lease(t, b, "B", time.Minute)
	older := func(c store.Cluster, id int64) bool {
		t.Helper()
		ok, err := c.OlderOpen(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	e1 := MustAccept(t, a, Msg(1))
	other := Msg(2)
	other.ChatID = "200"
	e2 := MustAccept(t, a, other)
	thread := Msg(3)
	thread.ThreadID = "7"
	e3 := MustAccept(t, a, thread)
	e4 := MustAccept(t, a, Msg(4))
	if !older(b, e4) {
		t.Error("B, e4: e1 (same chat, A's) not counted")
	}
	if older(a, e4) {
		t.Error("A, e4: its own e1 counted")
	}
	if older(b, e1) || older(b, e2) || older(b, e3) {
		t.Error("an entry with nothing older of its chat and thread counted something")
	}
	if err := a.Handoff(ctx, "B", e1); err != nil {
		t.Fatal(err)
	}
	if !older(b, e4) {
		t.Error("B, e4: e1 handed to B and not yet taken not counted")
	}
	if _, err := b.TakeHanded(ctx); err != nil {
		t.Fatal(err)
	}
	if older(b, e4) {
		t.Error("B, e4: e1 taken by B still counted")
	}
	if !older(a, e4) {
		t.Error("A, e4: e1, now B's, not counted")
	}
	if err := b.Finish(ctx, store.FinishRequest{IDs: []int64{e1}, State: store.StateDone}); err != nil {
		t.Fatal(err)
	}
	if older(a, e4) || older(b, e4) {
		t.Error("a finished entry counted")
	}
}

// waitListening hands probe entries from c to to until to's listener
// hears one (LISTEN has started only then), and takes them back out of the
// way.
func waitListening(t *testing.T, c, to store.Cluster, woke chan store.Wake, host string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		id := MustAccept(t, c, Msg(int(time.Now().UnixNano()%1e9)))
		if err := c.Handoff(context.Background(), host, id); err != nil {
			t.Fatal(err)
		}
		select {
		case <-woke:
			if _, err := to.TakeHanded(context.Background()); err != nil {
				t.Fatal(err)
			}
			for {
				select {
				case <-woke:
				case <-time.After(100 * time.Millisecond):
					return
				}
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the listener never heard a wake-up")
}

// testRelay: a call is claimed by exactly one of the hosts asking for its
// instance, its outcome reaches the origin once (then the call is gone),
// a call nobody claimed can be withdrawn, a claimed one cannot, and a
// call that wants no reply leaves nothing behind.
func testRelay(t *testing.T, a, b, c store.Cluster) {
	ctx := context.Background()
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	woke := make(chan store.Wake, 64)
	go a.Listen(lctx, func(w store.Wake) {
		if w.Kind == store.WakeRelayDone {
			woke <- w
		}
	})
	awaitListener(t, ctx, a, b, woke)
	var ids []int64
	for i := range 20 {
		req, _ := json.Marshal(map[string]int{"n": i})
		id, err := a.Relay(ctx, store.RelayCall{Instance: "tg", Op: "send", Request: req})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if cs, err := b.ClaimRelays(ctx, []string{"wa"}, 0); err != nil || len(cs) != 0 {
		t.Fatalf("claimed %d calls of another instance (%v)", len(cs), err)
	}
	var mu sync.Mutex
	claimed := map[int64]string{}
	var wg sync.WaitGroup
	for _, h := range []store.Cluster{b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				cs, err := h.ClaimRelays(ctx, []string{"tg"}, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(cs) == 0 {
					return
				}
				for i, call := range cs {
					if i > 0 && call.ID < cs[i-1].ID {
						t.Errorf("claimed out of order: %d after %d", call.ID, cs[i-1].ID)
					}
					mu.Lock()
					if prev, ok := claimed[call.ID]; ok {
						t.Errorf("call %d claimed twice (%s)", call.ID, prev)
					}
					claimed[call.ID] = "x"
					mu.Unlock()
					if call.Origin != "A" || call.Op != "send" || len(call.Request) == 0 {
						t.Errorf("claimed call %+v", call)
					}
					if err := h.FinishRelay(ctx, call.ID, store.RelayResult{Response: json.RawMessage(`{"ok":true}`)}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(claimed) != len(ids) {
		t.Fatalf("%d of %d calls claimed", len(claimed), len(ids))
	}
	select {
	case <-woke:
	case <-time.After(10 * time.Second):
		t.Fatal("the origin was not woken by an outcome")
	}
	for _, id := range ids {
		st, err := a.TakeRelay(ctx, id)
		if err != nil || st.State != store.RelayDone || string(st.Result.Response) != `{"ok":true}` {
			t.Fatalf("outcome of %d: %+v, %v", id, st, err)
		}
		if _, err := a.TakeRelay(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("an outcome taken twice: %v", err)
		}
	}
	testRelayWithdraw(t, ctx, a, b, c)
}

// awaitListener returns once the origin a's listener hears outcomes: it
// LISTENs in its goroutine, so probe calls are finished until one is heard;
// then the wakes of the probes are drained.
func awaitListener(t *testing.T, ctx context.Context, a, b store.Cluster, woke <-chan store.Wake) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for heard := false; !heard; {
		if time.Now().After(deadline) {
			t.Fatal("the origin's listener never heard an outcome")
		}
		id, err := a.Relay(ctx, store.RelayCall{Instance: "probe", Op: "send", Request: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := b.ClaimRelays(ctx, []string{"probe"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range cs {
			if err := b.FinishRelay(ctx, call.ID, store.RelayResult{}); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-woke:
			heard = true
		case <-time.After(50 * time.Millisecond):
		}
		_, _ = a.TakeRelay(ctx, id)
	}
	for drained := false; !drained; {
		select {
		case <-woke:
		case <-time.After(100 * time.Millisecond):
			drained = true
		}
	}
}

// testRelayWithdraw: a call is withdrawn before a claim and not after, a
// restarted claimer's claims are abandoned as uncertain, and a call that
// wants no reply is gone once done.
func testRelayWithdraw(t *testing.T, ctx context.Context, a, b, c store.Cluster) {
	t.Helper()
	// Withdraw before a claim; not after.
	id1, _ := a.Relay(ctx, store.RelayCall{Instance: "tg", Op: "send", Request: json.RawMessage(`{}`)})
	if ok, err := a.CancelRelay(ctx, id1); err != nil || !ok {
		t.Fatalf("withdrawing an unclaimed call: %v, %v", ok, err)
	}
	if cs, _ := b.ClaimRelays(ctx, []string{"tg"}, 0); len(cs) != 0 {
		t.Fatalf("a withdrawn call was claimed: %+v", cs)
	}
	id2, _ := a.Relay(ctx, store.RelayCall{Instance: "tg", Op: "send", Request: json.RawMessage(`{}`)})
	if cs, _ := b.ClaimRelays(ctx, []string{"tg"}, 0); len(cs) != 1 {
		t.Fatal("not claimed")
	}
	if ok, err := a.CancelRelay(ctx, id2); err != nil || ok {
		t.Fatalf("a claimed call was withdrawn: %v, %v", ok, err)
	}
	if st, err := a.TakeRelay(ctx, id2); err != nil || st.State != store.RelayClaimed || st.ClaimedBy != "B" {
		t.Fatalf("claimed call: %+v, %v", st, err)
	}
	// B restarts: the claim its previous incarnation left is uncertain.
	if n, err := b.AbandonClaims(ctx); err != nil || n != 1 {
		t.Fatalf("abandoned %d claims (%v); want 1", n, err)
	}
	if st, err := a.TakeRelay(ctx, id2); err != nil || st.State != store.RelayDone || st.Result.Code != "uncertain" {
		t.Fatalf("an abandoned claim: %+v, %v; want done, uncertain", st, err)
	}
	// No reply wanted: gone once done.
	id3, _ := a.Relay(ctx, store.RelayCall{Instance: "tg", Op: "typing", Request: json.RawMessage(`{}`), NoReply: true})
	cs, _ := c.ClaimRelays(ctx, []string{"tg"}, 0)
	if len(cs) != 1 || !cs[0].NoReply {
		t.Fatalf("claimed %+v", cs)
	}
	if err := c.FinishRelay(ctx, id3, store.RelayResult{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TakeRelay(ctx, id3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a call without reply left behind: %v", err)
	}
}
