// Package gateway is the one place that composes the core: it routes each
// inbound message of a channel instance through the conversation pipeline
// and sends the reply back through the same instance.
//
//	Inbound ─▶ journal (durable; the plugin's ack waits for it) ─▶ dedupe
//	  ─▶ access (allowlist / pairing / groups / mention gating; /whoami)
//	  ─▶ debounce ─▶ reset triggers and commands (built-in, then plugins)
//	  ─▶ per-session lane and queue mode (followup / collect / interrupt / steer)
//	  ─▶ session (key, reset policy) ─▶ prompt (envelope, group history,
//	     reply context, media, hooks) ─▶ runner (claude; streamed blocks or a
//	     live draft) ─▶ normalize (NO_REPLY, HEARTBEAT_OK, prefix, reply tags)
//	  ─▶ chunk ─▶ outbox ─▶ ordered delivery with retries ─Send▶ plugin
//
// Every message is in the journal before anything else happens to it, and
// the journal is also the per-session queue, so a restart (or kill -9 at any
// moment) resumes where the host stopped: see Start and the store package's
// recovery rules. Replies are recorded in the outbox before the first chunk
// is sent and each chunk is marked when the channel accepted it.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Agent runs turns; *runner.Runner implements it.
type Agent interface {
	Run(ctx context.Context, req runner.TurnRequest) (*runner.Turn, error)
	Abort(key string) bool
	Steer(key, text string) (bool, error)
	CanSteer() bool
	Stop(key string)
	Warm() map[string]int
	Close(ctx context.Context) error
}

// Observer receives the gateway's measurements; *metrics.Metrics
// implements it. Nil means none.
type Observer interface {
	MessageIn(instance string)
	MessageOut(instance string)
	Dropped(instance, reason string)
	Duplicate(instance string)
	SendError(instance, code string)
	Turn(d time.Duration, outcome string)
	RunnerError(kind string)
	SetQueueDepth(n int)
	SetActiveRuns(n int)
}

// Settings are the pipeline's configurable behaviour; SetSettings replaces
// them on reload. The composer maps the HCL blocks onto them.
type Settings struct {
	Access Access
	// Sources maps each enabled instance to its plugin source ("telegram"),
	// the envelope's channel label.
	Sources map[string]string
	// HookOrder lists plugin instances in config order; the ones that are
	// hooks are called before each turn, each bounded by HookTimeout.
	HookOrder   []string
	HookTimeout time.Duration
	// DMScope decides which direct messages share a session.
	DMScope sessionkey.DMScope
	// ResetTriggers start a new session, the text after them being its
	// first message; nil means "/new" and "/reset", empty means none.
	ResetTriggers []string
	Reset         sessionreset.Config
	// Location is the zone of daily resets (messages.timezone); nil
	// means local time.
	Location *time.Location
	// QueueMode is followup, collect, interrupt or steer; ByInstance
	// overrides it per instance. QueueCap bounds waiting messages per
	// session; QueueDrop (old | new | summarize) says what goes when full.
	QueueMode           string
	QueueModeByInstance map[string]string
	QueueCap            int
	QueueDrop           string
	Debounce            debounce.Settings
	// TextLimit caps a chunk (the channel's own limit caps it further);
	// ByInstance overrides it.
	TextLimit           int
	TextLimitByInstance map[string]int
	ChunkMode           chunk.Mode
	// GroupHistoryLimit is how many unaddressed group messages are kept
	// as context for the next addressed one; 0 disables.
	GroupHistoryLimit int
	Envelope          envelope.Options
	ResponsePrefix    string
	// Streaming is auto, blocks, draft or off.
	Streaming string
	// Verbose shows tool progress lines by default (/verbose toggles it per
	// session).
	Verbose bool
	// Workspace is the agent's working directory; inbound media are
	// stored under <Workspace>/media and MEDIA: paths must be inside it.
	Workspace string
	// Model is the configured model, shown by /status before the first turn.
	Model string
}

func (s *Settings) defaults() {
	if s.HookTimeout <= 0 {
		s.HookTimeout = 5 * time.Second
	}
	if s.QueueMode == "" {
		s.QueueMode = ModeFollowup
	}
	if s.QueueCap <= 0 {
		s.QueueCap = 20
	}
	if s.QueueDrop == "" {
		s.QueueDrop = DropSummarize
	}
	if s.TextLimit <= 0 {
		s.TextLimit = chunk.DefaultLimit
	}
	if s.ChunkMode == "" {
		s.ChunkMode = chunk.ModeLength
	}
	if s.ResetTriggers == nil {
		s.ResetTriggers = sessionreset.DefaultTriggers
	}
	if s.Streaming == "" {
		s.Streaming = StreamAuto
	}
}

// Queue modes, drop policies and streaming modes.
const (
	ModeFollowup  = "followup"
	ModeCollect   = "collect"
	ModeInterrupt = "interrupt"
	ModeSteer     = "steer"

	DropOld       = "old"
	DropNew       = "new"
	DropSummarize = "summarize"

	StreamAuto   = "auto"
	StreamBlocks = "blocks"
	StreamDraft  = "draft"
	StreamOff    = "off"
)

// Options configure a Gateway.
type Options struct {
	Logger   hclog.Logger
	Store    store.Store
	Agent    Agent
	Observer Observer
	Settings Settings
	// Version is shown by /status.
	Version string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StaleAfter bounds the age of a produced reply that is still sent
	// after a restart; zero means the store's default (15 min).
	StaleAfter time.Duration
	// Retention is how long finished journal entries are kept; zero means
	// 7 days.
	Retention time.Duration
	// MaxMediaBytes caps one downloaded inbound attachment; zero means 20 MiB.
	MaxMediaBytes int64
}

// Gateway routes messages between channel plugins and the agent.
type Gateway struct {
	opts    Options
	log     hclog.Logger
	store   store.Store
	agent   Agent
	obs     Observer
	host    *pluginhost.Host
	started time.Time

	mu         sync.Mutex
	set        Settings
	commands   map[string]commandRoute
	lanes      map[string]*lane
	debouncers map[time.Duration]*debounce.Debouncer[item]
	refused    map[string]time.Time
	summaries  map[string][]string

	history   *groupHistory
	arrivals  *serial
	sendLocks keyedMutex
	queued    atomic.Int64
	active    atomic.Int64

	// ready is closed when Start has recovered the journal; Inbound waits
	// for it, so nothing new is accepted before recovery has run.
	ready  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// item is one accepted journal entry travelling through the arrival stage.
type item struct {
	id  int64
	key string
	m   Message
}

// New returns a Gateway. Call SetHost, apply the plugins to the host, then
// Start; messages the plugins deliver meanwhile wait for Start.
func New(opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.Retention <= 0 {
		opts.Retention = 7 * 24 * time.Hour
	}
	if opts.MaxMediaBytes <= 0 {
		opts.MaxMediaBytes = 20 << 20
	}
	opts.Settings.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		opts: opts, log: opts.Logger.Named("gateway"), store: opts.Store, agent: opts.Agent, obs: opts.Observer,
		started: opts.Now(), set: opts.Settings,
		commands: map[string]commandRoute{}, lanes: map[string]*lane{},
		debouncers: map[time.Duration]*debounce.Debouncer[item]{}, refused: map[string]time.Time{}, summaries: map[string][]string{},
		history: newGroupHistory(1000), arrivals: newSerial(), ready: make(chan struct{}), ctx: ctx, cancel: cancel,
	}
	return g
}

// SetHost connects the gateway to the plugin host.
func (g *Gateway) SetHost(h *pluginhost.Host) { g.host = h }

// SetSettings replaces the pipeline settings (on reload). Sessions, queues
// and running turns are untouched; pending debounce windows are flushed.
func (g *Gateway) SetSettings(s Settings) {
	s.defaults()
	g.mu.Lock()
	g.set = s
	old := g.debouncers
	g.debouncers = map[time.Duration]*debounce.Debouncer[item]{}
	g.mu.Unlock()
	for _, d := range old {
		d.Close()
	}
}

func (g *Gateway) settings() Settings {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.set
}

// Start recovers the journal. Run it after SetHost and after the plugin
// host has the configured instances (Apply), so recovered work finds them
// (they may still be starting: delivery waits for readiness). Inbound
// waits for Start, so no new message is accepted before recovery. Accepted
// messages are routed again, queued ones resume in their lanes, produced
// replies are delivered (the chunks not yet sent), stale replies and
// twice-interrupted runs are logged and the user is told briefly. It also
// starts the hourly journal pruning.
func (g *Gateway) Start(ctx context.Context) error {
	rec, err := g.store.Recover(ctx, store.RecoverOptions{StaleAfter: g.opts.StaleAfter})
	if err != nil {
		return err
	}
	if n := len(rec.Resume) + len(rec.Deliver) + len(rec.Stale) + len(rec.Failed); n > 0 {
		g.log.Info("resuming from the journal", "messages", len(rec.Resume), "replies_to_deliver", len(rec.Deliver), "stale_replies", len(rec.Stale), "interrupted", len(rec.Failed))
	}
	kicked := map[string]bool{}
	for _, e := range rec.Resume {
		m, err := decodeMessage(e.Message)
		if err != nil {
			g.log.Error("journal entry unreadable; marked failed", "id", e.ID, "error", err)
			_ = g.store.Finish(ctx, store.FinishRequest{IDs: []int64{e.ID}, State: store.StateFailed, Reason: "unreadable"})
			continue
		}
		if e.State == store.StateQueued {
			g.queued.Add(1)
			if !kicked[e.SessionKey] {
				kicked[e.SessionKey] = true
				defer g.kick(e.SessionKey)
			}
			continue
		}
		g.submit(item{id: e.ID, key: g.sessionKey(g.settings(), &m), m: m})
	}
	for _, p := range rec.Deliver {
		p := p
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			m, _ := decodeMessage(p.Entry.Message)
			key := g.sessionKey(g.settings(), &m)
			g.deliverPending(key, p, m)
		}()
	}
	for _, p := range rec.Stale {
		g.log.Warn("reply older than the stale bound not sent after restart", "id", p.Entry.ID, "instance", p.Entry.Instance, "chat", p.Entry.ChatID, "produced", p.Reply.ProducedAt)
	}
	for _, e := range rec.Failed {
		g.log.Error("message interrupted twice; not run again", "id", e.ID, "instance", e.Instance, "chat", e.ChatID)
		if m, err := decodeMessage(e.Message); err == nil {
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				g.notify(g.sessionKey(g.settings(), &m), targetOf(&m), "Your last message could not be answered: the gateway restarted twice while working on it. Please send it again.")
			}()
		}
	}
	g.wg.Add(1)
	go g.prune()
	close(g.ready)
	return nil
}

func (g *Gateway) prune() {
	defer g.wg.Done()
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := g.store.Prune(g.ctx, g.opts.Now().Add(-g.opts.Retention)); err != nil && g.ctx.Err() == nil {
			g.log.Warn("journal prune failed", "error", err)
		} else if n > 0 {
			g.log.Debug("journal pruned", "entries", n)
		}
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
		}
	}
}

func decodeMessage(b []byte) (Message, error) {
	var m Message
	err := json.Unmarshal(b, &m)
	return m, err
}

// Inbound is the pluginhost.InboundFunc. Each message is normalized and
// stored in the journal (the dedupe check is part of that); only when every
// message of the batch is stored does it return nil, and the plugin host
// acks them. Messages of one conversation are stored in order; different
// conversations are stored concurrently, so one group commit covers them.
func (g *Gateway) Inbound(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
	select {
	case <-g.ready:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.ctx.Done():
	}
	if g.ctx.Err() != nil {
		return errors.New("gateway is stopping")
	}
	set := g.settings()
	source := set.Sources[instance]
	now := g.opts.Now()
	type conv struct{ items []item }
	convs := map[string]*conv{}
	var order []*conv
	for _, in := range msgs {
		if in.Edited {
			g.log.Debug("edited message ignored", "instance", instance, "chat", in.ChatID, "message", in.MessageID)
			continue
		}
		m, problems := normalize(instance, source, in, now)
		for _, p := range problems {
			g.log.Warn("inbound message repaired", "instance", instance, "chat", m.ChatID, "message", m.MessageID, "problem", p)
		}
		if m.ChatID == "" {
			g.log.Warn("inbound message without chat or sender id dropped", "instance", instance, "message", m.MessageID)
			g.obs.Dropped(instance, "no chat id")
			continue
		}
		key := g.sessionKey(set, &m)
		c := convs[key]
		if c == nil {
			c = &conv{}
			convs[key] = c
			order = append(order, c)
		}
		c.items = append(c.items, item{key: key, m: m})
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, c := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range c.items {
				it := &c.items[j]
				payload, _ := json.Marshal(&it.m)
				res, err := g.store.Accept(ctx, store.Inbound{Instance: instance, ChatID: it.m.ChatID, ThreadID: it.m.ThreadID, MessageID: it.m.MessageID, ReceivedAt: now, Message: payload})
				if err != nil {
					errs[i] = err
					return
				}
				if res.Duplicate {
					g.obs.Duplicate(instance)
					g.log.Debug("duplicate message ignored", "instance", instance, "chat", it.m.ChatID, "message", it.m.MessageID)
					continue
				}
				g.obs.MessageIn(instance)
				it.id = res.ID
				g.submit(*it)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sessionKey derives the conversation's session key.
func (g *Gateway) sessionKey(set Settings, m *Message) string {
	kind := sessionkey.Direct
	peer := m.Sender.ID
	switch m.ChatType {
	case channel.ChatGroup:
		kind, peer = sessionkey.Group, m.ChatID
	case channel.ChatChannel:
		kind, peer = sessionkey.Channel, m.ChatID
	}
	if peer == "" {
		peer = m.ChatID
	}
	return sessionkey.WithThread(sessionkey.Build(sessionkey.Params{Instance: m.Instance, Kind: kind, PeerID: peer, DMScope: set.DMScope}), m.ThreadID)
}

// Close stops accepting messages, flushes debounce windows, and waits for
// running turns and deliveries to end (or ctx). Messages still queued stay
// in the journal for the next start.
func (g *Gateway) Close(ctx context.Context) {
	g.mu.Lock()
	ds := g.debouncers
	g.debouncers = map[time.Duration]*debounce.Debouncer[item]{}
	g.mu.Unlock()
	g.cancel()
	for _, d := range ds {
		d.Close()
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); g.arrivals.wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

type nopObserver struct{}

func (nopObserver) MessageIn(string)           {}
func (nopObserver) MessageOut(string)          {}
func (nopObserver) Dropped(string, string)     {}
func (nopObserver) Duplicate(string)           {}
func (nopObserver) SendError(string, string)   {}
func (nopObserver) Turn(time.Duration, string) {}
func (nopObserver) RunnerError(string)         {}
func (nopObserver) SetQueueDepth(int)          {}
func (nopObserver) SetActiveRuns(int)          {}

// serial runs functions in submission order per key, one goroutine per busy
// key; keys without work hold no goroutine.
type serial struct {
	mu     sync.Mutex
	queues map[string][]func()
	wg     sync.WaitGroup
}

func newSerial() *serial { return &serial{queues: map[string][]func(){}} }

func (s *serial) do(key string, f func()) {
	s.mu.Lock()
	q, busy := s.queues[key]
	s.queues[key] = append(q, f)
	if !busy {
		s.wg.Add(1)
		go s.run(key)
	}
	s.mu.Unlock()
}

func (s *serial) run(key string) {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		q := s.queues[key]
		if len(q) == 0 {
			delete(s.queues, key)
			s.mu.Unlock()
			return
		}
		f := q[0]
		q[0] = nil
		s.queues[key] = q[1:]
		s.mu.Unlock()
		f()
	}
}

func (s *serial) wait() { s.wg.Wait() }

// keyedMutex serializes work per key (deliveries of one session).
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
