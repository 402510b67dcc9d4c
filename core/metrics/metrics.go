// Package metrics exposes clawhost's Prometheus metrics: messages in and out
// per plugin instance, drops, duplicates, send errors, agent turns and their
// duration, runner errors, queue depth, active runs, plugin health, warm
// claude processes and, per host, its identity, the live hosts sharing its
// database and the leases it holds.
//
// A [Metrics] owns its own registry (never the global default one), which
// also carries the Go runtime and process collectors; [Metrics.Handler]
// serves it in the Prometheus exposition format. The composer (core/gateway)
// creates one Metrics, calls its methods from the message path and mounts
// the handler on the admin endpoint.
//
// # Cardinality
//
// Every label value must come from a small, bounded set: instance names come
// from the configuration (plugin "tg" {} blocks), reasons, codes, outcomes
// and kinds are short enums chosen by the caller (for example "rate_limited",
// "ok", "timeout"). Never pass user input, session keys, chat ids or error
// text as a label value: each distinct value is a new time series, kept for
// the life of the process, and the per-label child cache grows with it.
//
// # Cost
//
// All methods are safe for concurrent use. The counters' children are cached
// per label value, so after the first call for a given value a method takes
// a read lock, a map lookup and an atomic add; it does not allocate.
package metrics

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every metric name.
const namespace = "clawhost"

// TurnBuckets are the upper bounds, in seconds, of the turn duration
// histogram: from a 50 ms cached reply to the 10-minute ceiling of a long
// agentic turn.
var TurnBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600}

// PluginStat is one plugin instance as seen by the supervisor at scrape
// time; see [Metrics.WatchPlugins].
type PluginStat struct {
	// Instance is the configured instance name (the label of the plugin
	// block), used as the instance label.
	Instance string
	// Source is the plugin source ("telegram"); informational, not a label.
	Source string
	// State is the supervisor's state name: the state label of
	// clawhost_plugin_state.
	State string
	// Ready reports whether the plugin is up and serving;
	// clawhost_plugin_up is 1 when true.
	Ready bool
	// Restarts counts the restarts since the host started. It must never
	// decrease for an instance: it is exposed as a counter.
	Restarts int
}

// LeaseKinds are the kinds of lease a host holds (the part of a lease's
// name before the "/"): clawhost_leases_held has a series for each, 0
// when none is held.
var LeaseKinds = []string{"host", "channel", "session"}

// ClusterScrapeTimeout bounds the read of the cluster at a scrape; see
// [Metrics.WatchCluster].
const ClusterScrapeTimeout = 2 * time.Second

// ClusterStat is what a host sees of the hosts sharing its database at
// scrape time; see [Metrics.WatchCluster].
type ClusterStat struct {
	// HostsLive counts the live host leases: the hosts running now,
	// this one included.
	HostsLive int
	// Held counts the live leases this host holds, by kind ("host",
	// "channel", "session"); a kind not in [LeaseKinds] gets its own
	// series (kinds come from the code, not from users: bounded).
	Held map[string]int
	// OrderChecks counts this host's checks, since it started, that no
	// older message of a chat is still out of its hands before a newer
	// one runs (the cluster's ordering check); OrderBehind those that
	// found one (the newer message waited); OrderCheckTime their time.
	OrderChecks, OrderBehind int64
	OrderCheckTime           time.Duration
}

// Metrics records clawhost's metrics in its own registry. Create it with
// [New]; the zero value is not usable.
type Metrics struct {
	registry *prometheus.Registry

	messagesIn  *counterCache
	messagesOut *counterCache
	dropped     *counterCache
	duplicates  *counterCache
	sendErrors  *counterCache
	turns       *counterCache
	runnerErrs  *counterCache
	cost        *counterCache
	storeErrs   *counterCache
	tokens      *prometheus.CounterVec // three labels; once a turn, not cached

	turnDuration prometheus.Histogram
	queueDepth   prometheus.Gauge
	activeRuns   prometheus.Gauge
	hostInfo     *prometheus.GaugeVec

	watch *watchCollector
}

// New returns Metrics with every clawhost metric, the Go runtime collector
// and the process collector registered in a fresh registry.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		messagesIn: newCounterCache("messages_in_total",
			"Inbound messages received from channel plugins, per plugin instance.", "instance"),
		messagesOut: newCounterCache("messages_out_total",
			"Successful Send calls to channel plugins, per plugin instance.", "instance"),
		dropped: newCounterCache("messages_dropped_total",
			"Inbound messages dropped before reaching the agent, per plugin instance and reason.", "instance", "reason"),
		duplicates: newCounterCache("messages_duplicate_total",
			"Inbound messages recognised as duplicates and ignored, per plugin instance.", "instance"),
		sendErrors: newCounterCache("send_errors_total",
			"Failed Send calls to channel plugins, per plugin instance and error code.", "instance", "code"),
		turns: newCounterCache("turns_total",
			"Agent turns finished, per agent and outcome.", "agent", "outcome"),
		storeErrs: newCounterCache("store_errors_total",
			"Writes to the store that failed (a full disk, a lost database), per operation.", "op"),
		cost: newCounterCache("cost_usd_total",
			"What agent turns cost in US dollars, each turn's own (as the usage ledger has it: a stopped turn's tokens priced), per agent and plugin instance.", "agent", "instance"),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "tokens_total",
			Help: "Tokens of agent turns as claude reports them, per agent, plugin instance and kind (input, output, cache_read, cache_creation).",
		}, []string{"agent", "instance", "kind"}),
		runnerErrs: newCounterCache("runner_errors_total",
			"Errors of the claude runner, per kind.", "kind"),
		turnDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: namespace, Name: "turn_duration_seconds",
			Help:    "Wall-clock duration of agent turns, in seconds.",
			Buckets: TurnBuckets,
		}),
		queueDepth: newGauge("queue_depth", "Messages waiting for a turn, across all sessions."),
		activeRuns: newGauge("active_runs", "Agent turns running now."),
		hostInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "host_info",
			Help: "1, labelled with this host's id (storage.host_id) and its storage engine.",
		}, []string{"host_id", "engine"}),
		watch: newWatchCollector(),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.messagesIn.vec, m.messagesOut.vec, m.dropped.vec, m.duplicates.vec,
		m.sendErrors.vec, m.turns.vec, m.runnerErrs.vec, m.cost.vec, m.tokens, m.storeErrs.vec,
		m.turnDuration, m.queueDepth, m.activeRuns, m.hostInfo,
		m.watch,
	)
	return m
}

// newGauge is clawhost's gauge name (clawhost_name) with its help.
func newGauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help})
}

// Handler returns the HTTP handler serving the registry in the Prometheus
// exposition format. A collector that fails during a scrape is reported in
// the response without hiding the other metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{
		Registry:      m.registry, // promhttp's own request metrics
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Registerer returns the registry, for collectors the composer wants to add
// next to clawhost's own.
func (m *Metrics) Registerer() prometheus.Registerer { return m.registry }

// MessageIn counts one inbound message from a plugin instance.
func (m *Metrics) MessageIn(instance string) { m.messagesIn.get(instance, "").Inc() }

// MessageOut counts one successful Send call to a plugin instance (a reply
// split into three chunks sent by three calls counts three).
func (m *Metrics) MessageOut(instance string) { m.messagesOut.get(instance, "").Inc() }

// Dropped counts one inbound message dropped before the agent for a short,
// fixed reason such as "not_allowed", "mention_required" or "queue_full".
func (m *Metrics) Dropped(instance, reason string) { m.dropped.get(instance, reason).Inc() }

// Duplicate counts one inbound message ignored as a duplicate.
func (m *Metrics) Duplicate(instance string) { m.duplicates.get(instance, "").Inc() }

// SendError counts one failed Send call, labelled with the plugin's stable
// error code ("rate_limited", "message_too_long", ...) or a host-side code
// for transport failures.
func (m *Metrics) SendError(instance, code string) { m.sendErrors.get(instance, code).Inc() }

// Turn records one finished turn of an agent (its id; the agents are the
// configuration's, a bounded set): it counts it under outcome (a short enum
// such as "ok", "error", "timeout", "canceled") and observes its duration in
// clawhost_turn_duration_seconds. A negative d counts as 0.
func (m *Metrics) Turn(agent string, d time.Duration, outcome string) {
	m.turns.get(agent, outcome).Inc()
	if d < 0 {
		d = 0
	}
	m.turnDuration.Observe(d.Seconds())
}

// TokenKinds label clawhost_tokens_total, in the order of Usage's tokens.
var TokenKinds = [4]string{"input", "output", "cache_read", "cache_creation"}

// Usage adds one finished turn's own cost (US dollars, as the ledger has it)
// and tokens (input, output, cache read, cache creation: TokenKinds) of an
// agent in a plugin instance's chat to clawhost_cost_usd_total and
// clawhost_tokens_total.
func (m *Metrics) Usage(agent, instance string, costUSD float64, tokens [4]int64) {
	if costUSD > 0 {
		m.cost.get(agent, instance).Add(costUSD)
	}
	for i, n := range tokens {
		if n > 0 {
			m.tokens.WithLabelValues(agent, instance, TokenKinds[i]).Add(float64(n))
		}
	}
}

// StoreError counts one failed write to the store, by operation
// ("accept", "record_reply", ...).
func (m *Metrics) StoreError(op string) { m.storeErrs.get(op, "").Inc() }

// RunnerError counts one error of the claude runner, by kind (a short enum
// such as "start", "exit", "timeout", "parse").
func (m *Metrics) RunnerError(kind string) { m.runnerErrs.get(kind, "").Inc() }

// SetQueueDepth sets the number of messages waiting across all sessions.
func (m *Metrics) SetQueueDepth(n int) { m.queueDepth.Set(float64(n)) }

// SetActiveRuns sets the number of agent turns running now.
func (m *Metrics) SetActiveRuns(n int) { m.activeRuns.Set(float64(n)) }

// WatchPlugins installs f, called at every scrape to produce
// clawhost_plugin_restarts_total{instance} (a counter) and
// clawhost_plugin_up{instance} (1 when Ready, else 0) and
// clawhost_plugin_state{instance,state} (1, for the current state only, so
// an alert can name it: missing, misconfigured, ...). f is called from the
// scraping goroutine, possibly concurrently with itself, so it must be safe
// for concurrent use and quick (no blocking I/O). A later call replaces f;
// nil removes it. Until f is installed the two metrics are absent. When f
// reports an instance twice, the first entry wins.
func (m *Metrics) WatchPlugins(f func() []PluginStat) { m.watch.plugins.Store(&f) }

// WatchWarm installs f, called at every scrape to produce the
// clawhost_runner_warm_processes gauge (warm claude processes kept by the
// runner). The same rules as for [Metrics.WatchPlugins] apply; until f is
// installed the gauge is absent.
func (m *Metrics) WatchWarm(f func() int) { m.watch.warm.Store(&f) }

// SetHostInfo sets clawhost_host_info{host_id,engine} to 1: which host
// serves these metrics (every host serves its own) on which storage
// engine. A later call replaces the labels. Until it is called the series
// is absent.
func (m *Metrics) SetHostInfo(hostID, engine string) {
	m.hostInfo.Reset()
	m.hostInfo.WithLabelValues(hostID, engine).Set(1)
}

// WatchCluster installs f, called at every scrape to produce
// clawhost_hosts_live (the live host leases) and
// clawhost_leases_held{kind} (the live leases this host holds, a series
// for each of [LeaseKinds] and any other kind reported). Unlike the other
// watchers f may read the shared database: it is given a context that
// ends after [ClusterScrapeTimeout], and the scrape waits for it. When f
// fails, both metrics are left out and the scrape counts a gathering
// error (promhttp_metric_handler_errors_total{cause="gathering"}); the
// other metrics are served. A later call replaces f; nil removes it.
// Until f is installed the metrics are absent (a host alone on SQLite).
func (m *Metrics) WatchCluster(f func(ctx context.Context) (ClusterStat, error)) {
	m.watch.cluster.Store(&f)
}

// counterCache is a CounterVec with one or two labels whose children are
// cached by label values, so that the hot path neither hashes the label
// values in client_golang nor builds a variadic slice.
type counterCache struct {
	vec    *prometheus.CounterVec
	labels int

	mu       sync.RWMutex
	children map[[2]string]prometheus.Counter
}

// newCounterCache is clawhost's counter vector name (clawhost_name)
// with its help and one or two labels.
func newCounterCache(name, help string, labels ...string) *counterCache {
	return &counterCache{
		vec:      prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels),
		labels:   len(labels),
		children: make(map[[2]string]prometheus.Counter),
	}
}

// get returns the child for the label values; b is ignored for a
// single-label vector.
func (c *counterCache) get(a, b string) prometheus.Counter {
	key := [2]string{a, b}
	c.mu.RLock()
	child, ok := c.children[key]
	c.mu.RUnlock()
	if ok {
		return child
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if child, ok := c.children[key]; ok {
		return child
	}
	if c.labels == 1 {
		child = c.vec.WithLabelValues(a)
	} else {
		child = c.vec.WithLabelValues(a, b)
	}
	c.children[key] = child
	return child
}

// watchCollector produces the metrics evaluated at scrape time.
type watchCollector struct {
	restarts *prometheus.Desc
	up       *prometheus.Desc
	state    *prometheus.Desc
	warmDesc *prometheus.Desc
	live     *prometheus.Desc
	held     *prometheus.Desc
	checks   *prometheus.Desc
	behind   *prometheus.Desc
	checkSec *prometheus.Desc

	plugins atomic.Pointer[func() []PluginStat]
	warm    atomic.Pointer[func() int]
	cluster atomic.Pointer[func(context.Context) (ClusterStat, error)]
}

// desc describes clawhost_subsystem_name with its help and labels.
func desc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, name), help, labels, nil)
}

func newWatchCollector() *watchCollector {
	return &watchCollector{
		restarts: desc("plugin", "restarts_total",
			"Restarts of a plugin instance since the host started.", "instance"),
		up: desc("plugin", "up",
			"1 when the plugin instance is ready, else 0.", "instance"),
		state: desc("plugin", "state",
			"1 for the plugin instance's current state (starting, ready, needs_attention, degraded, misconfigured, missing, no_sandbox, unresponsive, standby, stopped).", "instance", "state"),
		warmDesc: desc("runner", "warm_processes",
			"Warm claude processes kept by the runner."),
		live: desc("", "hosts_live",
			"Hosts sharing this host's database whose host lease is live, this one included."),
		held: desc("leases", "held",
			"Live leases this host holds, per kind (host, channel, session).", "kind"),
		checks: desc("cluster", "order_checks_total",
			"Checks that no older message of a chat is still out of this host's hands before a newer one runs."),
		behind: desc("cluster", "order_behind_total",
			"Ordering checks that found an older message of the chat on its way here (the newer one waited)."),
		checkSec: desc("cluster", "order_check_seconds_total",
			"Time spent in the ordering checks (one database read each), in seconds."),
	}
}

// Describe implements prometheus.Collector.
func (c *watchCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.restarts
	ch <- c.up
	ch <- c.state
	ch <- c.warmDesc
	ch <- c.live
	ch <- c.held
	ch <- c.checks
	ch <- c.behind
	ch <- c.checkSec
}

// Collect implements prometheus.Collector.
func (c *watchCollector) Collect(ch chan<- prometheus.Metric) {
	if f := c.plugins.Load(); f != nil && *f != nil {
		stats := (*f)()
		seen := make(map[string]bool, len(stats))
		for _, s := range stats {
			if seen[s.Instance] {
				continue
			}
			seen[s.Instance] = true
			up := 0.0
			if s.Ready {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(s.Restarts), s.Instance)
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, s.Instance)
			if s.State != "" {
				ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, 1, s.Instance, s.State)
			}
		}
	}
	if f := c.warm.Load(); f != nil && *f != nil {
		ch <- prometheus.MustNewConstMetric(c.warmDesc, prometheus.GaugeValue, float64((*f)()))
	}
	if f := c.cluster.Load(); f != nil && *f != nil {
		c.collectCluster(ch, *f)
	}
}

// collectCluster reads the cluster once for all of its metrics.
func (c *watchCollector) collectCluster(ch chan<- prometheus.Metric, f func(context.Context) (ClusterStat, error)) {
	// A collector is given no context (prometheus.Collector): the bound
	// of the read is ours.
	ctx, cancel := context.WithTimeout(context.Background(), ClusterScrapeTimeout)
	defer cancel()
	st, err := f(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.live, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.live, prometheus.GaugeValue, float64(st.HostsLive))
	ch <- prometheus.MustNewConstMetric(c.checks, prometheus.CounterValue, float64(st.OrderChecks))
	ch <- prometheus.MustNewConstMetric(c.behind, prometheus.CounterValue, float64(st.OrderBehind))
	ch <- prometheus.MustNewConstMetric(c.checkSec, prometheus.CounterValue, st.OrderCheckTime.Seconds())
	for _, kind := range LeaseKinds {
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(st.Held[kind]), kind)
	}
	for kind, n := range st.Held {
		if !slices.Contains(LeaseKinds, kind) {
			ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(n), kind)
		}
	}
}
