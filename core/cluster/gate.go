package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/hashicorp/go-hclog"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// channelLeasePrefix names the lease of a channel instance: the one host
// that runs "tg" (polls its Telegram token) holds "channel/tg".
const channelLeasePrefix = "channel/"

// gate is the pluginhost.Gate of a host sharing its database: a channel
// instance runs on the host that holds its lease "channel/<instance>";
// the other hosts keep it in standby and take it over when the lease
// expires. The holder renews it every third of the TTL, with the
// instance's description in the lease's info so the other hosts shape
// their replies for the channel (ports.go relays them to the holder).
type gate struct {
	db     store.Cluster
	log    hclog.Logger
	clock  tstime.Clock
	id     string
	ttl    time.Duration
	joined chan struct{} // closed once this host holds its host lease

	mu       sync.Mutex
	held     map[string]*hold
	channels map[string]bool // instances that went through the gate
	leases   map[string]store.Lease
}

// hold is one channel lease this host holds.
type hold struct {
	desc   []byte // the instance's description (JSON) once ready
	cancel context.CancelFunc
	renew  chan struct{}
}

func newGate(opts Options) *gate {
	return &gate{db: opts.Store, log: opts.Logger, clock: opts.Clock, id: opts.HostID, ttl: opts.TTL, joined: make(chan struct{}),
		held: map[string]*hold{}, channels: map[string]bool{}, leases: map[string]store.Lease{}}
}

// leaseInfo is what a channel lease's info carries.
type leaseInfo struct {
	Host        string                    `json:"host"`
	Description *pluginclient.Description `json:"description,omitempty"`
}

// Hold implements pluginhost.Gate.
func (g *gate) Hold(ctx context.Context, instance string, waiting func(string)) (context.Context, func(), error) {
	g.mu.Lock()
	g.channels[instance] = true
	g.mu.Unlock()
	select {
	case <-g.joined:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	name := channelLeasePrefix + instance
	poll := min(g.ttl/3, time.Second)
	for {
		l, err := g.acquire(ctx, name, nil)
		if err == nil {
			break
		}
		reason := fmt.Sprintf("the channel lease could not be read: %v", err)
		if errors.Is(err, store.ErrLeaseHeld) {
			reason = fmt.Sprintf("another host serves this channel: %s holds its lease (expires in %s); this host takes over if that one stops",
				l.Holder, l.Expires.Sub(g.clock.Now()).Round(time.Second))
		}
		waiting(reason)
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-g.clock.After(poll):
		}
	}
	g.log.Info("this host serves the channel now (it holds its lease)", "instance", instance)
	held, cancel := context.WithCancel(ctx)
	hd := &hold{cancel: cancel, renew: make(chan struct{}, 1)}
	g.mu.Lock()
	g.held[instance] = hd
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.keep(held, instance, hd)
	}()
	var once sync.Once
	release := func() {
		once.Do(func() {
			cancel()
			<-done
			g.mu.Lock()
			if g.held[instance] == hd {
				delete(g.held, instance)
			}
			g.mu.Unlock()
			rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer rcancel()
			if err := g.db.ReleaseLease(rctx, name, g.id); err != nil {
				g.log.Warn("releasing the channel lease", "instance", instance, "error", err)
			}
		})
	}
	return held, release, nil
}

// acquire takes or renews the lease, with the description when known.
func (g *gate) acquire(ctx context.Context, name string, desc []byte) (store.Lease, error) {
	info, _ := json.Marshal(leaseInfo{Host: g.id})
	if desc != nil {
		info = desc
	}
	return g.db.AcquireLease(ctx, store.LeaseRequest{Name: name, Holder: g.id, TTL: g.ttl, Info: string(info)})
}

// keep renews a held lease until held ends; it ends held when the lease
// is lost: another host took it (this one was too late), or renewals
// failed until it expired (this host can no longer tell whether another
// took it, so it stops polling before one could).
func (g *gate) keep(held context.Context, instance string, hd *hold) {
	name := channelLeasePrefix + instance
	expires := g.clock.Now().Add(g.ttl)
	t, tick := g.clock.NewTicker(g.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-held.Done():
			return
		case <-tick:
		case <-hd.renew:
		}
		g.mu.Lock()
		desc := hd.desc
		g.mu.Unlock()
		start := g.clock.Now()
		_, err := g.acquire(held, name, desc)
		switch {
		case err == nil:
			expires = start.Add(g.ttl)
		case errors.Is(err, store.ErrLeaseHeld):
			g.log.Error("the channel lease was lost to another host; this host stops serving the channel", "instance", instance, "error", err)
			hd.cancel()
			return
		case held.Err() != nil:
			return
		default:
			g.log.Error("renewing the channel lease failed", "instance", instance, "error", err)
			if g.clock.Now().After(expires.Add(-g.ttl / 6)) {
				g.log.Error("the channel lease expires before it could be renewed; this host stops serving the channel", "instance", instance)
				hd.cancel()
				return
			}
		}
	}
}

// ready records a held instance's description (after its Configure) and
// publishes it in the lease at once.
func (g *gate) ready(instance string, d pluginclient.Description) {
	b, _ := json.Marshal(leaseInfo{Host: g.id, Description: &d})
	g.mu.Lock()
	hd := g.held[instance]
	if hd != nil {
		hd.desc = b
	}
	g.mu.Unlock()
	if hd != nil {
		select {
		case hd.renew <- struct{}{}:
		default:
		}
	}
}

// Holds reports whether this host runs the channel instance.
func (g *gate) Holds(instance string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held[instance] != nil
}

// heldInstances lists the channel instances this host runs.
func (g *gate) heldInstances() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.held))
	for k := range g.held {
		out = append(out, k)
	}
	return out
}

// remote reports whether calls to instance go to another host: it is a
// channel this host keeps in standby, or one another host holds the live
// lease of while this host's plugin has not reached the gate yet (just
// after a start: the turns recovered from the journal run meanwhile, and
// asked the local plugin, in standby, until their calls timed out —
// `make chaos` found a before_agent_start hook waiting 10 s so).
func (g *gate) remote(instance string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[instance] != nil {
		return false
	}
	if g.channels[instance] {
		return true
	}
	l, ok := g.leases[channelLeasePrefix+instance]
	return ok && l.Holder != g.id && l.Live(g.clock.Now())
}

// holder returns the live holder of a channel instance and its
// description, from the leases last read (refresh).
func (g *gate) holder(instance string) (string, pluginclient.Description, bool) {
	g.mu.Lock()
	l, ok := g.leases[channelLeasePrefix+instance]
	g.mu.Unlock()
	if !ok || !l.Live(g.clock.Now()) {
		return "", pluginclient.Description{}, false
	}
	var info leaseInfo
	if json.Unmarshal([]byte(l.Info), &info) != nil || info.Description == nil {
		return l.Holder, pluginclient.Description{}, false
	}
	return l.Holder, *info.Description, true
}

// setLeases replaces the leases last read.
func (g *gate) setLeases(ls []store.Lease) {
	m := make(map[string]store.Lease, len(ls))
	for _, l := range ls {
		m[l.Name] = l
	}
	g.mu.Lock()
	g.leases = m
	g.mu.Unlock()
}
