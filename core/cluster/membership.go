package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/store"
	"github.com/hashicorp/go-hclog"
)

// membership keeps this host's lease "host/<id>" (the proof to the other
// hosts that it lives and owns its journal entries) and adopts what dead
// hosts left, every third of the lease's TTL. Only with a shared
// (PostgreSQL) database: a SQLite database has one host, which its
// directory lock guarantees.
type membership struct {
	opts  Options
	log   hclog.Logger
	clock tstime.Clock
	db    store.Cluster
	id    string
	ttl   time.Duration
	tag   string // this process's incarnation, kept in the lease's info
	// lost gets ErrLeaseLost once (buffered): the host must stop.
	lost   chan error
	gate   *gate
	place  *placement
	relay  *relay
	handed chan struct{} // wakes the taker of handed entries
	cancel context.CancelFunc
	done   chan struct{}
	// acquired is when the host lease was taken: a renewal that finds
	// another time lost the lease meanwhile.
	acquired time.Time
}

func newMembership(opts Options, g *gate) *membership {
	b := make([]byte, 6)
	rand.Read(b)
	m := &membership{opts: opts, log: opts.Logger, clock: opts.Clock, db: opts.Store, id: opts.HostID, ttl: opts.TTL, tag: hex.EncodeToString(b), gate: g,
		handed: make(chan struct{}, 1), lost: make(chan error, 1)}
	m.place = &placement{db: opts.Store, id: m.id, clock: opts.Clock, live: map[string]time.Time{m.id: {}}, cache: map[string]placed{}}
	return m
}

// request asks for this host's lease; its info tells the other hosts
// about this one.
func (m *membership) request() store.LeaseRequest {
	info := fmt.Sprintf("pid=%d incarnation=%s admin=%s version=%s", os.Getpid(), m.tag, m.opts.Admin, m.opts.Version)
	return store.LeaseRequest{Name: store.HostLeasePrefix + m.id, Holder: m.id, TTL: m.ttl, Info: info}
}

// join takes the host lease before the journal is recovered. A live
// lease of another process under the same id (a previous incarnation
// killed less than a TTL ago, or another host configured with this id)
// is waited out, up to one TTL: recovering while it may still run its
// turns could run one twice.
func (m *membership) join(ctx context.Context) error {
	req := m.request()
	ls, err := m.db.ListLeases(ctx, req.Name)
	if err != nil {
		return fmt.Errorf("read the host leases: %w", err)
	}
	for _, l := range ls {
		if l.Name != req.Name || !l.Live(m.clock.Now()) {
			continue
		}
		wait := l.Expires.Sub(m.clock.Now())
		m.log.Warn("another process holds this host's lease: waiting for it to expire before taking over its journal entries; if another running host uses this host_id, give each host its own (storage { host_id })",
			"host_id", m.id, "holder", l.Info, "wait", wait.Round(time.Millisecond))
		select {
		case <-m.clock.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// The lease may still be live for a moment (clocks): retry until the
	// holder's expiry passed on the database's clock.
	deadline := m.clock.Now().Add(m.ttl + 5*time.Second)
	for {
		l, err := m.db.AcquireLease(ctx, req)
		if err == nil {
			m.acquired = l.Acquired
			// Calls a previous incarnation claimed and never finished
			// (killed mid-call): their origins take them as uncertain now,
			// not after their own timeout.
			if n, err := m.db.AbandonClaims(ctx); err != nil {
				m.log.Warn("finishing the relayed calls a previous run left", "error", err)
			} else if n > 0 {
				m.log.Warn("relayed calls a previous run of this host left unfinished are uncertain", "calls", n)
			}
			m.refresh(ctx)
			close(m.gate.joined)
			return nil
		}
		if !errors.Is(err, store.ErrLeaseHeld) || m.clock.Now().After(deadline) {
			return fmt.Errorf("take the host lease %s: %w", req.Name, err)
		}
		select {
		case <-m.clock.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run renews the lease, adopts orphans, takes handed entries and serves
// relayed calls until leave.
func (m *membership) run() {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	var wg sync.WaitGroup
	for _, f := range []func(context.Context){m.renew, m.take, m.listen, m.relay.serve} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(ctx)
		}()
	}
	go func() {
		wg.Wait()
		close(m.done)
	}()
}

func (m *membership) renew(ctx context.Context) {
	t, tick := m.clock.NewTicker(m.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if !m.tick(ctx) {
			return
		}
	}
}

// tick renews the lease, reads the others' and adopts what dead hosts
// left; false when the lease was lost (ErrLeaseLost is on m.lost, and
// renewing stops).
func (m *membership) tick(ctx context.Context) bool {
	l, err := m.db.AcquireLease(ctx, m.request())
	if err != nil {
		m.log.Error("renewing the host lease failed: other hosts take this host's work over once it expires", "error", err)
		return true
	}
	if !l.Acquired.Equal(m.acquired) {
		// The lease expired before this renewal: the other hosts may have
		// taken this host's journal entries and sessions over and be
		// running them. Going on could run a turn twice; a restart
		// recovers cleanly (as after kill -9).
		m.log.Error("this host's lease expired before it was renewed (the host was paused, or the database unreachable, longer than storage.lease_ttl); other hosts may have taken its work over, so it stops to restart clean",
			"lease_ttl", m.ttl, "acquired", m.acquired, "now_acquired", l.Acquired)
		select {
		case m.lost <- ErrLeaseLost:
		default:
		}
		return false
	}
	m.refresh(ctx)
	if _, err := m.opts.Work.Adopt(ctx); err != nil && ctx.Err() == nil {
		m.log.Error("adopting the work of dead hosts failed", "error", err)
	}
	m.wakeTaker()
	return true
}

// refresh reads every lease: the live hosts (placement, relay) and the
// channel holders (gate).
func (m *membership) refresh(ctx context.Context) {
	ls, err := m.db.ListLeases(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("reading the leases failed", "error", err)
		}
		return
	}
	now := m.clock.Now()
	live := map[string]time.Time{m.id: m.acquired}
	for _, l := range ls {
		if strings.HasPrefix(l.Name, store.HostLeasePrefix) && l.Live(now) {
			live[strings.TrimPrefix(l.Name, store.HostLeasePrefix)] = l.Acquired
		}
	}
	if m.place.setLive(live) {
		m.log.Debug("live hosts changed", "hosts", slices.Sorted(maps.Keys(live)))
	}
	m.gate.setLeases(ls)
}

func (m *membership) wakeTaker() {
	select {
	case m.handed <- struct{}{}:
	default:
	}
}

// take resumes the entries other hosts hand to this one, when woken.
func (m *membership) take(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.handed:
		}
		n, err := m.opts.Work.Handed(ctx, m.db.TakeHanded)
		if err != nil {
			if ctx.Err() == nil {
				m.log.Error("taking the messages other hosts handed over failed", "error", err)
			}
			continue
		}
		if n > 0 {
			m.log.Debug("messages handed over by other hosts", "messages", n)
		}
	}
}

// listen dispatches the wake-ups of the other hosts.
func (m *membership) listen(ctx context.Context) {
	_ = m.db.Listen(ctx, func(w store.Wake) {
		switch w.Kind {
		case store.WakeHanded:
			m.wakeTaker()
		case store.WakeRelay:
			if m.gate.Holds(w.Instance) {
				m.relay.wakeClaims()
			}
		case store.WakeRelayDone:
			m.relay.woke()
		}
	})
}

// placement is the gateway's Placement on the store's session
// placements: a new session goes to the live host its key hashes to
// (rendezvous hashing over the live hosts, so sessions spread evenly and
// few move when a host joins), then stays there while that host lives.
//
// What the store answered is cached while the same incarnation of that
// host lives: a host that restarts between two reads of the leases (a
// SIGTERM and a quick restart) may have lost its sessions to another
// meanwhile, so a new lease under its id clears what was cached for it.
// Two hosts that cached different answers would otherwise hand a
// session's messages to each other forever (`make chaos` found it).
type placement struct {
	db    store.Cluster
	id    string
	clock tstime.Clock

	// The ordering checks (Behind): how many, how many found an older
	// message out of hand, and their time, for /metrics.
	checks, behind, checkTime atomic.Int64

	mu    sync.Mutex
	live  map[string]time.Time // live hosts at the last read → when each took its lease
	cache map[string]placed    // session key → host, while that incarnation lives
}

// placed is a cached placement: the host and when it took the lease it
// held then.
type placed struct {
	host  string
	since time.Time
}

// Place implements gateway.Placement.
func (p *placement) Place(ctx context.Context, key string) (string, bool, error) {
	p.mu.Lock()
	if c, ok := p.cache[key]; ok {
		if since, live := p.live[c.host]; live && since.Equal(c.since) {
			p.mu.Unlock()
			return c.host, c.host == p.id, nil
		}
		delete(p.cache, key)
	}
	want := pickHost(key, p.live, p.id)
	p.mu.Unlock()
	h, err := p.db.PlaceSession(ctx, key, want)
	if err != nil {
		return "", false, err
	}
	p.mu.Lock()
	if since, live := p.live[h]; live {
		p.cache[key] = placed{host: h, since: since}
	}
	p.mu.Unlock()
	return h, h == p.id, nil
}

// Forget implements gateway.Placement. A cached "here" is kept: a
// session placed on this host moves only once its lease expired, and then
// this host exits (membership.tick).
func (p *placement) Forget(key string) {
	p.mu.Lock()
	if c, ok := p.cache[key]; ok && c.host != p.id {
		delete(p.cache, key)
	}
	p.mu.Unlock()
}

// pickHost is the live host a new session goes to: the highest score of
// the session key with each host (rendezvous hashing), self when none.
func pickHost[V any](key string, live map[string]V, self string) string {
	want := self
	var best uint64
	for h := range live {
		f := fnv.New64a()
		f.Write([]byte(h))
		f.Write([]byte{0})
		f.Write([]byte(key))
		if s := mix64(f.Sum64()); s > best || (s == best && h < want) {
			best, want = s, h
		}
	}
	return want
}

// mix64 is splitmix64's finalizer: FNV alone orders the hosts alike for
// keys that differ only in their last bytes (every session of one bot
// went to one host).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// Behind implements gateway.Placement.
func (p *placement) Behind(ctx context.Context, id int64) (bool, error) {
	start := p.clock.Now()
	older, err := p.db.OlderOpen(ctx, id)
	p.checkTime.Add(int64(p.clock.Since(start)))
	p.checks.Add(1)
	if older {
		p.behind.Add(1)
	}
	return older, err
}

// Handoff implements gateway.Placement.
func (p *placement) Handoff(ctx context.Context, to string, ids ...int64) error {
	return p.db.Handoff(ctx, to, ids...)
}

// setLive replaces the live hosts and forgets the placements on the
// others and on hosts that took a new lease (restarted) since.
func (p *placement) setLive(live map[string]time.Time) (changed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed = !maps.EqualFunc(p.live, live, time.Time.Equal)
	p.live = live
	for k, c := range p.cache {
		if since, ok := live[c.host]; !ok || !since.Equal(c.since) {
			delete(p.cache, k)
		}
	}
	return changed
}

// alive reports whether a host's lease was live at the last read.
func (p *placement) alive(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.live[host]
	return ok
}

// leave stops renewing and hands the lease back (a graceful stop: the
// other hosts need not wait for it to expire).
func (m *membership) leave() {
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.db.ReleaseLease(ctx, store.HostLeasePrefix+m.id, m.id); err != nil {
		m.log.Warn("releasing the host lease", "error", err)
	}
}
