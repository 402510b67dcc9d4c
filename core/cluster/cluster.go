// Package cluster is what a host does when it shares its database with
// other hosts (storage { engine = "postgres" }): its host lease, renewed
// every third of the TTL, which proves to the others that it lives and owns
// its journal entries; the adoption of what dead hosts left; the placement
// of sessions on the live hosts; the channel gate (one host runs each
// channel instance, the others stand by); and the relay of channel calls
// to the host that runs the channel. Every wait and every reading of the
// time goes through Options.Clock, so failover is tested on a fake clock
// with a fake store.Cluster.
//
// A host that finds its lease lost (paused, or cut off from the database,
// longer than the TTL: the others may have taken its work over) stops:
// Lost delivers ErrLeaseLost and the host aborts without draining.
package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// ErrLeaseLost: this host's lease expired before it was renewed; other
// hosts may run its work now, so it must stop at once (no drain) and
// start again clean. The command line exits 75 (EX_TEMPFAIL) on it.
var ErrLeaseLost = errors.New("this host's lease was lost: other hosts may have taken its work over")

// ChannelLeasePrefix names the lease of a channel instance: the one host
// that runs "tg" (polls its Telegram token) holds "channel/tg".
const ChannelLeasePrefix = channelLeasePrefix

// Work is the host's pipeline as the cluster drives it (core/gateway).
type Work interface {
	// Adopt resumes what dead hosts left in the journal.
	Adopt(ctx context.Context) (int, error)
	// Handed takes the entries other hosts handed to this one with take
	// (store.Cluster.TakeHanded) and resumes them; it returns how many.
	Handed(ctx context.Context, take func(context.Context) ([]store.Entry, error)) (int, error)
}

// Options configure a Cluster.
type Options struct {
	Store  store.Cluster
	HostID string
	// TTL is how long a lease lasts unrenewed (storage.lease_ttl).
	TTL    time.Duration
	Logger hclog.Logger
	// Clock is the time; nil: the real one.
	Clock tstime.Clock
	// Admin and Version are told to the other hosts in the host lease
	// (their status pages show them).
	Admin, Version string
	// Work is the pipeline; set before Run.
	Work Work
}

// Cluster is this host's membership among the hosts sharing its database.
type Cluster struct {
	opts  Options
	m     *membership
	gate  *gate
	relay *relay
}

// New returns the membership of a host; nothing runs before Join and Run.
// Options.Store and Work may come later, with Attach.
func New(opts Options) *Cluster {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	opts.Clock = tstime.Or(opts.Clock)
	g := newGate(opts)
	return &Cluster{opts: opts, gate: g, m: newMembership(opts, g)}
}

// Gate is the plugin supervisor's gate of channel instances
// (pluginhost.Gate).
func (c *Cluster) Gate() *Gate { return &Gate{c.gate} }

// Ports wraps the local plugins' ports: a call to a channel another host
// runs is relayed to it, and the calls other hosts relay to the channels
// this host runs are made with local. Call it once, before Run.
func (c *Cluster) Ports(local gateway.Ports) gateway.Ports {
	c.relay = newRelay(c.opts.Clock, c.opts.Store, c.gate, local, c.opts.Logger, c.opts.HostID, c.m.place.alive)
	c.m.relay = c.relay
	return relayPorts{Ports: local, r: c.relay}
}

// Placement is the gateway's placement of sessions on the live hosts.
func (c *Cluster) Placement() gateway.Placement { return c.m.place }

// Attach gives the cluster the shared store once it is open (the gate is
// made before, for the plugin supervisor, and waits for Join). Before
// Ports, Join and Run.
func (c *Cluster) Attach(db store.Cluster) {
	c.opts.Store = db
	c.gate.db = db
	c.m.db, c.m.opts.Store = db, db
	c.m.place.db = db
}

// SetWork sets the pipeline the cluster drives. Before Run.
func (c *Cluster) SetWork(w Work) { c.m.opts.Work = w }

// TTL is the lease's time to live.
func (c *Cluster) TTL() time.Duration { return c.opts.TTL }

// Join takes the host lease before the journal is recovered (waiting out
// a previous incarnation's, up to one TTL).
func (c *Cluster) Join(ctx context.Context) error { return c.m.join(ctx) }

// Run renews the lease, adopts orphans, takes handed entries and serves
// relayed calls until Leave.
func (c *Cluster) Run() { c.m.run() }

// Lost delivers ErrLeaseLost once the lease was found lost.
func (c *Cluster) Lost() <-chan error { return c.m.lost }

// Leave stops renewing and hands the lease back (a graceful stop).
func (c *Cluster) Leave() { c.m.leave() }

// Drain is a graceful stop's step before the channel plugins stop: the
// calls this host makes for the other hosts (their sends through the
// channels it holds) finish and their outcomes are stored; it claims no
// more. Until ctx ends; then the calls still running are cut.
func (c *Cluster) Drain(ctx context.Context) {
	if c.relay != nil {
		c.relay.drain(ctx)
	}
}

// Abandon stops renewing without touching the store (the lease is lost or
// the store about to close).
func (c *Cluster) Abandon() {
	if c.relay != nil {
		c.relay.kill()
	}
	if c.m.cancel != nil {
		c.m.cancel()
		<-c.m.done
	}
}

// Ready publishes a held channel instance's description (after its
// Configure) in its lease.
func (c *Cluster) Ready(instance string, d pluginclient.Description) { c.gate.ready(instance, d) }

// Metrics is this host's view of the cluster for /metrics, read from the
// store (one query for the leases, one for the placements).
func (c *Cluster) Metrics(ctx context.Context) (metrics.ClusterStat, error) {
	leases, err := c.opts.Store.ListLeases(ctx, "")
	if err != nil {
		return metrics.ClusterStat{}, err
	}
	st := Stat(leases, c.opts.HostID, c.opts.Clock.Now())
	// A session's lease is its placement (alive with its host's).
	counts, err := c.opts.Store.PlacementCounts(ctx)
	if err != nil {
		return metrics.ClusterStat{}, err
	}
	st.Held["session"] = counts[c.opts.HostID]
	p := c.m.place
	st.OrderChecks, st.OrderBehind, st.OrderCheckTime = p.checks.Load(), p.behind.Load(), time.Duration(p.checkTime.Load())
	return st, nil
}

// Gate is the plugin supervisor's gate (pluginhost.Gate) of a host sharing
// its database: a channel instance runs on the host that holds its lease.
type Gate struct{ g *gate }

// Hold implements pluginhost.Gate.
func (g *Gate) Hold(ctx context.Context, instance string, waiting func(string)) (context.Context, func(), error) {
	return g.g.Hold(ctx, instance, waiting)
}

// Holds implements pluginhost.Gate.
func (g *Gate) Holds(instance string) bool { return g.g.Holds(instance) }

// Status is what this host sees of the hosts sharing its database, from
// one read of every lease, for the status page; engine names the storage.
// A failed read is shown in the section, not hidden.
func (c *Cluster) Status(ctx context.Context, engine string) *admin.Cluster {
	st := &admin.Cluster{HostID: c.opts.HostID, Engine: engine}
	leases, err := c.opts.Store.ListLeases(ctx, "")
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.Hosts, st.Leases = View(leases, st.HostID, c.opts.Clock.Now())
	counts, err := c.opts.Store.PlacementCounts(ctx)
	if err != nil {
		st.Error = err.Error()
	}
	for i := range st.Hosts {
		st.Hosts[i].Sessions = counts[st.Hosts[i].ID]
	}
	return st
}
