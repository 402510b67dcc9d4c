package cluster

import (
	"context"
	"errors"
	"github.com/hashicorp/go-hclog"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// fakeDB is the part of store.Cluster the membership uses, with the
// leases' rules of the store contract (core/store/storetest) judged on a
// fake clock. Whatever else is called panics (the embedded nil interface).
type fakeDB struct {
	store.Cluster
	clock *tstimetest.Fake

	mu       sync.Mutex
	leases   map[string]store.Lease
	acquires int
}

func newFakeDB(clock *tstimetest.Fake) *fakeDB {
	return &fakeDB{clock: clock, leases: map[string]store.Lease{}}
}

func (d *fakeDB) AcquireLease(_ context.Context, req store.LeaseRequest) (store.Lease, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.acquires++
	now := d.clock.Now()
	l, ok := d.leases[req.Name]
	switch {
	case ok && l.Live(now) && l.Holder != req.Holder:
		return l, store.ErrLeaseHeld
	case ok && l.Live(now):
		l.Renewed, l.Expires, l.Info = now, now.Add(req.TTL), req.Info
	default:
		l = store.Lease{Name: req.Name, Holder: req.Holder, Info: req.Info, Epoch: l.Epoch + 1, Acquired: now, Renewed: now, Expires: now.Add(req.TTL)}
	}
	d.leases[req.Name] = l
	return l, nil
}

func (d *fakeDB) ReleaseLease(_ context.Context, name, holder string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l, ok := d.leases[name]; ok && l.Holder == holder {
		l.Expires = d.clock.Now()
		d.leases[name] = l
	}
	return nil
}

func (d *fakeDB) ListLeases(_ context.Context, prefix string) ([]store.Lease, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []store.Lease
	for name, l := range d.leases {
		if len(name) >= len(prefix) && name[:len(prefix)] == prefix {
			out = append(out, l)
		}
	}
	return out, nil
}

// set puts a lease as another host wrote it.
func (d *fakeDB) set(l store.Lease) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leases[l.Name] = l
}

func (d *fakeDB) acquired() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.acquires
}

func (d *fakeDB) AbandonClaims(context.Context) (int, error) { return 0, nil }
func (d *fakeDB) TakeHanded(context.Context) ([]store.Entry, error) {
	return nil, nil
}
func (d *fakeDB) ClaimRelays(context.Context, []string, int) ([]store.RelayCall, error) {
	return nil, nil
}

// Listen blocks until ctx ends, as a store with nothing to say.
func (d *fakeDB) Listen(ctx context.Context, _ func(store.Wake)) error {
	<-ctx.Done()
	return ctx.Err()
}

// work records the pipeline's adoptions.
type work struct {
	mu     sync.Mutex
	adopts int
}

func (w *work) Adopt(context.Context) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.adopts++
	return 0, nil
}

func (w *work) Handed(ctx context.Context, take func(context.Context) ([]store.Entry, error)) (int, error) {
	es, err := take(ctx)
	return len(es), err
}

func (w *work) adopted() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.adopts
}

const ttl = 3 * time.Second

var t0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

// start joins and runs host id on db; the renewal and the relay poll then
// wait on the clock.
func start(t *testing.T, clock *tstimetest.Fake, db *fakeDB, id string, w *work) *Cluster {
	t.Helper()
	c := New(Options{HostID: id, TTL: ttl, Clock: clock})
	c.Attach(db)
	c.Ports(nil)
	c.SetWork(w)
	if err := c.Join(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Run()
	t.Cleanup(c.Abandon)
	if !clock.BlockUntil(2, 5*time.Second) { // the renewal's ticker and the relay's
		t.Fatalf("the cluster does not wait on the clock: %d waiters", clock.Waiters())
	}
	return c
}

// advance moves the clock by d in steps of one renewal, letting each tick
// run (its work done before the next).
func advance(t *testing.T, clock *tstimetest.Fake, db *fakeDB, d time.Duration) {
	t.Helper()
	for step := ttl / 3; d > 0; d -= step {
		n := db.acquired()
		clock.Advance(step)
		for deadline := time.Now().Add(5 * time.Second); db.acquired() == n; {
			if time.Now().After(deadline) {
				t.Fatal("no renewal after a third of the TTL")
			}
			time.Sleep(time.Millisecond) // a real goroutine's turn, not time to pass
		}
		clock.BlockUntil(2, 5*time.Second)
	}
}

// The host renews its lease every third of the TTL, adopting what dead
// hosts left each time; the lease it renews stays the one it took.
func TestRenewalKeepsTheLease(t *testing.T) {
	clock := tstimetest.NewFake(t0)
	db, w := newFakeDB(clock), &work{}
	c := start(t, clock, db, "h1", w)
	first := db.leases["host/h1"]
	advance(t, clock, db, 10*ttl)
	l := db.leases["host/h1"]
	if !l.Acquired.Equal(first.Acquired) || l.Epoch != first.Epoch || !l.Expires.After(clock.Now()) {
		t.Errorf("after 10 TTLs the lease is %+v, was %+v", l, first)
	}
	if w.adopted() < 30 {
		t.Errorf("adopted %d times in 30 renewals", w.adopted())
	}
	select {
	case err := <-c.Lost():
		t.Fatalf("lost: %v", err)
	default:
	}
}

// A renewal that finds the lease expired (the host was paused longer than
// the TTL; another host may have taken its work) delivers ErrLeaseLost and
// renews no more.
func TestLeaseLost(t *testing.T) {
	clock := tstimetest.NewFake(t0)
	db, w := newFakeDB(clock), &work{}
	c := start(t, clock, db, "h1", w)
	l := db.leases["host/h1"]
	l.Expires = clock.Now() // paused: nobody renewed it in time
	db.set(l)
	clock.Advance(ttl / 3)
	select {
	case err := <-c.Lost():
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("lost with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a lost lease was not noticed")
	}
	n := db.acquired()
	clock.Advance(ttl)
	if db.acquired() != n {
		t.Error("the host renews a lease it lost")
	}
}

// A previous incarnation's live lease under the same id is waited out on
// the clock, then taken over (a new epoch).
func TestJoinWaitsOutThePreviousIncarnation(t *testing.T) {
	clock := tstimetest.NewFake(t0)
	db := newFakeDB(clock)
	db.set(store.Lease{Name: "host/h1", Holder: "h1", Info: "pid=1 incarnation=old", Epoch: 4, Acquired: t0.Add(-time.Minute), Expires: t0.Add(2 * time.Second)})
	c := New(Options{HostID: "h1", TTL: ttl, Clock: clock})
	c.Attach(db)
	joined := make(chan error, 1)
	go func() { joined <- c.Join(context.Background()) }()
	if !clock.BlockUntil(1, 5*time.Second) {
		t.Fatal("join does not wait on the clock")
	}
	select {
	case err := <-joined:
		t.Fatalf("joined while the old lease lived: %v", err)
	default:
	}
	clock.Advance(2 * time.Second)
	if err := <-joined; err != nil {
		t.Fatal(err)
	}
	if l := db.leases["host/h1"]; l.Epoch != 5 || !l.Acquired.Equal(t0.Add(2*time.Second)) {
		t.Errorf("the lease after the takeover: %+v", l)
	}
}

// When another host's lease expires, the next renewal sees it dead: its
// sessions are placed here again, and the channel it ran is no longer
// remote (this host's standby plugin takes it when its gate gets the
// lease).
func TestDeadHostIsTakenOver(t *testing.T) {
	clock := tstimetest.NewFake(t0)
	db, w := newFakeDB(clock), &work{}
	db.set(store.Lease{Name: "host/h2", Holder: "h2", Epoch: 1, Acquired: t0, Expires: t0.Add(ttl)})
	db.set(store.Lease{Name: ChannelLeasePrefix + "tg", Holder: "h2", Epoch: 1, Acquired: t0, Expires: t0.Add(ttl)})
	c := start(t, clock, db, "h1", w)
	if !c.m.place.alive("h2") || !c.gate.remote("tg") {
		t.Fatal("a live host is not seen alive, or its channel not remote")
	}
	if got := pickHost("s", c.m.place.live, "h1"); got != "h1" && got != "h2" {
		t.Fatalf("pickHost: %s", got)
	}
	advance(t, clock, db, ttl+ttl/3) // h2 stops renewing
	if c.m.place.alive("h2") || c.gate.remote("tg") {
		t.Error("a dead host is still alive, or its channel still remote")
	}
	if got := pickHost("s", c.m.place.live, "h1"); got != "h1" {
		t.Errorf("a new session goes to %s, not the only live host", got)
	}
}

// A call to a channel another host runs waits, polling on the clock, until
// that host's lease describes the channel (it configured it).
func TestRelayPollWaitsForTheHolder(t *testing.T) {
	clock := tstimetest.NewFake(t0)
	g := &gate{clock: clock, id: "A", held: map[string]*hold{}, channels: map[string]bool{}, leases: map[string]store.Lease{}}
	g.setLeases([]store.Lease{{Name: ChannelLeasePrefix + "tg", Holder: "B", Epoch: 1, Expires: t0.Add(time.Hour)}})
	p := relayPorts{r: newRelay(clock, nil, g, nil, hclog.NewNullLogger(), "A", func(string) bool { return true })}
	got := make(chan pluginclient.Description, 1)
	go func() {
		d, err := p.WaitReady(context.Background(), "tg")
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	if !clock.BlockUntil(1, 5*time.Second) {
		t.Fatal("WaitReady does not poll on the clock")
	}
	g.setLeases([]store.Lease{{Name: ChannelLeasePrefix + "tg", Holder: "B", Epoch: 1, Expires: t0.Add(time.Hour),
		Info: `{"host":"B","description":{"name":"telegram","channel":true}}`}})
	clock.Advance(100 * time.Millisecond)
	select {
	case d := <-got:
		if !d.Channel {
			t.Errorf("description %+v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitReady did not see the holder's description")
	}
}
