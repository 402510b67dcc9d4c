package gateway

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/placement"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

// takeRig is the journal as the hosts sharing it see it, from this host
// ("A"): where an entry is (in A's hands or out of them), another host
// handing one back, and A's takes (TakeHanded, the adoption). On
// PostgreSQL it is the store itself (A's and B's stores on one database);
// SQLite has one host, so the hands are modelled beside the real journal.
type takeRig struct {
	store store.Store // the gateway's (A's)
	// behind is store.Cluster.OlderOpen as A asks it; handoff gives ids
	// to another host.
	behind  func(ctx context.Context, id int64) (bool, error)
	handoff func(ctx context.Context, to string, ids ...int64) error
	// handBack: the other host hands id back to A (not yet taken).
	handBack func(t *testing.T, id int64)
	// take is A's TakeHanded; adopt A's Recover of what a dead host left.
	take  func(ctx context.Context) ([]store.Entry, error)
	adopt func(ctx context.Context, opts store.RecoverOptions) (store.Recovery, error)
}

// sqliteRig models the other host's hands beside the gateway's SQLite
// journal: an entry handed away is out of A's hands until taken.
func sqliteRig(t *testing.T, db store.Store) *takeRig {
	var mu sync.Mutex
	away := map[int64]bool{}
	takeAll := func(ctx context.Context) ([]store.Entry, error) {
		mu.Lock()
		ids := slices.Sorted(func(yield func(int64) bool) {
			for id := range away {
				if !yield(id) {
					return
				}
			}
		})
		clear(away)
		mu.Unlock()
		var es []store.Entry
		for _, id := range ids {
			e, err := db.Entry(ctx, id)
			if err != nil {
				return nil, err
			}
			es = append(es, e)
		}
		return es, nil
	}
	return &takeRig{
		store: db,
		behind: func(_ context.Context, id int64) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			for a := range away {
				if a < id {
					return true, nil
				}
			}
			return false, nil
		},
		handoff: func(_ context.Context, to string, ids ...int64) error {
			mu.Lock()
			defer mu.Unlock()
			for _, id := range ids {
				away[id] = to != "A"
			}
			return nil
		},
		handBack: func(*testing.T, int64) {}, // still out of A's hands until taken
		take:     takeAll,
		adopt: func(ctx context.Context, _ store.RecoverOptions) (store.Recovery, error) {
			es, err := takeAll(ctx)
			return store.Recovery{Resume: es}, err
		},
	}
}

// postgresRig is two hosts' stores on one PostgreSQL database: A (the
// gateway's) and B, which holds no lease (a dead host, for the adoption).
func postgresRig(t *testing.T) *takeRig {
	url := pgtest.Cluster(t).NewDatabase(t)
	open := func(host string) *postgres.DB {
		d, err := postgres.Open(context.Background(), url, postgres.Options{Host: host})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
	a, b := open("A"), open("B")
	return &takeRig{
		store:   a,
		behind:  a.OlderOpen,
		handoff: a.Handoff,
		handBack: func(t *testing.T, id int64) {
			if err := b.Handoff(context.Background(), "A", id); err != nil {
				t.Fatal(err)
			}
		},
		take:  a.TakeHanded,
		adopt: a.Recover,
	}
}

// takePlacement places every session on A once here is set, before on B;
// Behind and Handoff are the rig's. behinds counts the checks.
type takePlacement struct {
	rig *takeRig

	mu      sync.Mutex
	here    bool
	behinds int
	handed  chan int64 // the ids handed away
}

func (p *takePlacement) Place(context.Context, string) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.here {
		return "A", true, nil
	}
	return "B", false, nil
}

func (p *takePlacement) Behind(ctx context.Context, id int64) (bool, error) {
	p.mu.Lock()
	p.behinds++
	p.mu.Unlock()
	return p.rig.behind(ctx, id)
}

func (p *takePlacement) Handoff(ctx context.Context, to string, ids ...int64) error {
	if err := p.rig.handoff(ctx, to, ids...); err != nil {
		return err
	}
	for _, id := range ids {
		p.handed <- id
	}
	return nil
}

func (p *takePlacement) Forget(string) {}

func (p *takePlacement) checks() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.behinds
}

// takeStore is the gateway's store with the adoption's Recover made by
// the rig, paused once the store answered (before the gateway resumes
// what it took) by hook.
type takeStore struct {
	store.Store
	rig  *takeRig
	hook func()
}

func (s *takeStore) Recover(ctx context.Context, opts store.RecoverOptions) (store.Recovery, error) {
	if !opts.Adopt {
		return s.Store.Recover(ctx, opts)
	}
	rec, err := s.rig.adopt(ctx, opts)
	s.hook()
	return rec, err
}

// TestOlderMessageTakenWhileANewerOneWaits: the second candidate path of
// the cluster's ordering race. A chat's message four is out of this
// host's hands (another host has it: handed to it, or left by it when it
// died); five arrives here and waits for it. Then this host takes four —
// handed back (TakeHanded), or adopted from the dead host (Recover) —
// and between the store's write (four is in this host's hands now) and
// the gateway resuming four, five's wait checks again: the store says
// nothing older is out of hand, yet four is not in the wait. Five (and
// six, which came after it) must not go ahead: the turns run four, five,
// six. Both engines; the clock is the fake, and the take is held open by
// the test while five's check runs.
func TestOlderMessageTakenWhileANewerOneWaits(t *testing.T) {
	engines := []struct {
		name string
		rig  func(t *testing.T, db store.Store) *takeRig
	}{
		{"sqlite", sqliteRig},
		{"postgres", func(t *testing.T, _ store.Store) *takeRig { return postgresRig(t) }},
	}
	for _, eng := range engines {
		for _, path := range []string{"handed", "adopted"} {
			for _, during := range []bool{false, true} {
				name := eng.name + "/" + path + "/five-waiting"
				if during {
					name = eng.name + "/" + path + "/five-arrives-during-the-take"
				}
				t.Run(name, func(t *testing.T) {
					testTakenWhileWaiting(t, eng.rig, path, during)
				})
			}
		}
	}
}

// testTakenWhileWaiting: four is taken by path ("handed", "adopted");
// five arrives before the take (and waits for four) or, during, while the
// take is held (its first check runs then).
func testTakenWhileWaiting(t *testing.T, newRig func(*testing.T, store.Store) *takeRig, path string, during bool) {
	clk := tstimetest.NewFake(time.Unix(1_800_000_000, 0))
	taken, release := make(chan struct{}), make(chan struct{})
	hold := func() {
		close(taken)
		<-release
	}
	var place *takePlacement
	g, _, agent := inproc(t, nil, func(o *Options) {
		rig := newRig(t, o.Store)
		place = &takePlacement{rig: rig, handed: make(chan int64, 4)}
		o.Clock, o.Placement = clk, place
		o.Store = &takeStore{Store: rig.store, rig: rig, hook: hold}
	})
	rig := place.rig
	ctx := context.Background()
	base := clk.Waiters()

	// Four arrives while its session runs on B: it is handed there.
	sendDM(t, ctx, g, "5", "four")
	var four int64
	select {
	case four = <-place.handed:
	case <-time.After(10 * time.Second): // a bound on a failing test
		t.Fatal("four was not handed to B")
	}
	// The session is A's now (B died, or gave it up); five waits for four.
	place.mu.Lock()
	place.here = true
	place.mu.Unlock()
	send := func(text string) {
		sendDM(t, ctx, g, "5", text)
	}
	// Five, then six 50 ms later: both wait for four (the first candidate
	// path too: their checks must not order them).
	five := func() {
		send("five")
		clk.Advance(50 * time.Millisecond)
		send("six")
	}
	if !during {
		five()
		if !clk.BlockUntil(base+1, 10*time.Second) {
			t.Fatal("five did not wait for four")
		}
	}

	// A takes four; the take is held between the store's write and the
	// gateway's resuming it.
	done := make(chan struct{})
	switch path {
	case "handed":
		rig.handBack(t, four)
		go func() {
			defer close(done)
			_, err := g.Handed(ctx, func(ctx context.Context) ([]store.Entry, error) {
				es, err := rig.take(ctx)
				hold()
				return es, err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	case "adopted":
		go func() {
			defer close(done)
			if _, err := g.Adopt(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	<-taken
	deadline := time.Now().Add(10 * time.Second) // a bound on a failing test, not a wait for time
	if during {
		five() // its first check: the store has four in this host's hands
		if waitsFor(g) == 0 {
			t.Error("five went ahead while four was being taken into this host's hands")
		}
	} else {
		// Five's check: it ends its wait, or waits for the take to end.
		checks := place.checks()
		for place.checks() == checks || !(settling(g) > 0 || waitsFor(g) == 0) {
			if time.Now().After(deadline) {
				t.Fatal("five's wait neither checked again nor ended")
			}
			if place.checks() == checks {
				clk.Advance(placement.BehindPoll)
			}
			time.Sleep(time.Millisecond) // a real goroutine's turn, not time to pass
		}
		if waitsFor(g) == 0 {
			t.Error("five's wait ended while four was being taken into this host's hands")
		}
	}
	close(release)
	<-done

	for {
		agent.mu.Lock()
		n := len(agent.prompts)
		agent.mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d turns ran after four was taken, want 3", n)
		}
		clk.Advance(10 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	var order []string
	for i := range 3 {
		p := agent.turn(t, i).Prompt
		for _, w := range []string{"four", "five", "six"} {
			if strings.Contains(p, "User 5: "+w) {
				order = append(order, w)
			}
		}
	}
	if strings.Join(order, " ") != "four five six" {
		t.Fatalf("turns ran in the order %v; want four, five, six", order)
	}
}

// settling is how many waits wait for a take to place what it took.
func settling(g *Gateway) int {
	_, n := g.place.Waits()
	return n
}

// waitsFor is how many sessions have entries waiting to be placed here.
func waitsFor(g *Gateway) int {
	n, _ := g.place.Waits()
	return n
}
