// Package gateway composes the conversation pipeline. It owns no rule of
// its own beyond the order of the stages; each stage is a package:
//
//	Inbound ─▶ journal (durable; the plugin's ack waits for it; dedupe)
//	  ─▶ core/placement (which host runs the session)
//	  ─▶ core/admission (one verdict: access, pairing, /owner, /whoami,
//	     flood limit, tool-question answers, message_received hooks)
//	  ─▶ core/debounce ─▶ core/sessionreset (the reset triggers' verdict)
//	     and core/command (built-ins, plugins)
//	  ─▶ core/queue (lanes, modes, cap) ─▶ core/turn (session, prompt, hooks,
//	     runner, streaming) ─▶ core/replyroute (the reply's conversation,
//	     message_sending, agent_end) ─▶ core/delivery (normalize, chunk,
//	     outbox, ordered sends, drafts, typing) ─Send▶ plugin
//
// The session key travels typed (sessionkey.Key) through every stage; it
// becomes a string only for the store, logs and the plugins' wire, and the
// store's strings become keys again in one file (stored.go).
//
// Every message is in the journal before anything else happens to it, and
// the journal is also the per-session queue, so a restart (or kill -9 at
// any moment) resumes where the host stopped: see Start and core/store's
// recovery rules.
//
// The pipeline reaches plugins only through ports: core/delivery.Channels,
// core/turn.Channels and Hooks, core/command.Plugins; core/pluginhost.Ports
// implements all of them ([Ports]). Calls go one way: the gateway calls the stages,
// a stage never calls the gateway (the queue runs turns through the
// queue.Runner interface, which the gateway implements by calling
// core/turn and then core/delivery).
package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/admission"
	"github.com/clawhost/clawhost/core/agents"
	"github.com/clawhost/clawhost/core/approval"
	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/claudecmds"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/placement"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/received"
	"github.com/clawhost/clawhost/core/replyroute"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/core/usagelimit"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Agent runs turns; *runner.Runner implements it.
type Agent interface {
	turn.Agent
	// Abort ends the session's running turn.
	Abort(key string) bool
}

// Ports is everything the pipeline needs from the plugins: the stages'
// ports together. core/pluginhost.Ports implements it.
type Ports interface {
	delivery.Channels
	turn.Channels
	turn.Hooks
	received.Hooks
	replyroute.Hooks
	turn.Labels
	command.Plugins
}

// Observer receives the pipeline's measurements; *metrics.Metrics
// implements it. Nil means none.
type Observer interface {
	MessageIn(instance string)
	Duplicate(instance string)
	queue.Observer
	delivery.Observer
	turn.Observer
}

// Options configure a Gateway.
type Options struct {
	Logger hclog.Logger
	Store  store.Store
	Agent  Agent
	// ChatState is where each chat's claude keeps its transcripts (the
	// runner itself: Agent may be a wrapper in front of it, as the attach
	// hub is); nil, and /continue and /desktop are not available.
	ChatState ChatState
	Ports     Ports
	Observer  Observer
	Settings  Settings
	// MemoryFlush decides the memory-flush turn (agent.memory_flush).
	MemoryFlush turn.MemoryFlush
	// AgentTools gives the host's MCP tools for a chat (turn.Options).
	AgentTools func(key sessionkey.Key, m *message.Message) (mcpConfig string, tools []string)
	// ProcessTools gives a spare claude host tools bound to the chat that adopts
	// it (turn.Options).
	ProcessTools turn.ProcessTools
	// ToolRun tells the host's MCP tools which turn a run serves
	// (turn.Options).
	ToolRun func(key sessionkey.Key, m *message.Message, journal int64)
	// Version is shown by /status.
	Version string
	// Schedules serves /schedule; nil: not available.
	Schedules command.Schedules
	// Revoker serves /revoke; nil: not available.
	Revoker command.Revoker
	// OwnerClaims answers "/owner CODE" (the owner code of clawhost init);
	// nil: /owner is not special.
	OwnerClaims OwnerClaims
	// Clock is the pipeline's clock (the usage-limit pause, budgets, the
	// turn card, the debounce windows); nil means the real clock. Now reads the time; nil means
	// Clock.Now (tests that pin the time of messages alone set Now).
	Now   func() time.Time
	Clock tstime.Clock
	// StaleAfter bounds the age of a produced reply that is still sent
	// after a restart; zero means the store's default (15 min).
	StaleAfter time.Duration
	// Retention is how long finished journal entries are kept; zero means
	// 7 days.
	Retention time.Duration
	// Placement, with several hosts on one database, decides which host
	// runs each session; nil runs every session here.
	Placement Placement
	// AgentEndSpool is the directory where agent_end events wait for
	// their hooks (data_dir/agent-end), so a restart delivers them again;
	// "" keeps them in memory only.
	AgentEndSpool string
	// Detach, when not nil, serves /detach: the chat leaves the terminal
	// claude attached to it (core/attach).
	Detach func(key sessionkey.Key, m *message.Message) string
	// Ready, when set, is the gateway's readiness gate, closed once the
	// journal is recovered (Start): the composer made it before the
	// gateway so what arrives earlier waits on the same gate.
	Ready chan struct{}
}

// Gateway routes messages between channel plugins and the agent.
type Gateway struct {
	opts     Options
	log      hclog.Logger
	store    store.Store
	obs      Observer
	started  time.Time
	commands *command.Registry
	handler  *command.Handler
	// claude is the agents' claude commands and skills.
	claude *claudecmds.Catalog
	// menus are the chats that switched agents, for their command menus.
	menus command.ChatMenus
	// admission decides what happens to each arriving message.
	admission *admission.Stage
	// agents route chats to agents (bindings, /agent, worktrees).
	agents *agents.Agents
	// meta is the decode cache of the sessions' metadata, shared by the
	// turn stage and the built-ins' view of sessions.
	meta     *session.Cache
	arrivals *queue.Ordered
	// place runs each session on its host (with several hosts).
	place *placement.Placer
	// holds remember the messages held for pairing.
	holds pairingHolds
	sends queue.Locks
	queue *queue.Queue
	turns *turn.Turns
	// received is the message_received stage, between access and the
	// queue.
	received *received.Stage
	// replies is the reply's route out of a turn: the message_sending
	// hooks, the outbox, the agent_end hooks.
	replies *replyroute.Stage
	// work is what the lifecycle hooks last did per session (/status).
	work hookWork
	// pause holds the turns while claude's usage limit is reached.
	pause     *usagelimit.Pause
	delivery  *delivery.Dispatcher
	approvals *approval.Approvals
	budgets   *budget.Budgets

	mu         sync.Mutex
	set        Settings
	debouncers map[time.Duration]*debounce.Debouncer[arrival]

	// ready is closed when Start has recovered the journal; Inbound waits
	// for it, so nothing new is accepted before recovery has run.
	ready  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Gateway; apply the plugins, then call Start. Messages the
// plugins deliver meanwhile wait for Start.
func New(opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Clock == nil {
		opts.Clock = tstime.Std{}
	}
	if opts.Now == nil {
		opts.Now = opts.Clock.Now // one clock unless a test pins Now alone
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.Retention <= 0 {
		opts.Retention = 7 * 24 * time.Hour
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := opts.Logger.Named("gateway")
	g := &Gateway{
		opts: opts, log: log, store: opts.Store, obs: opts.Observer, started: opts.Now(), set: opts.Settings,
		commands: command.NewRegistry(command.Builtins), arrivals: queue.NewOrdered(),
		debouncers: map[time.Duration]*debounce.Debouncer[arrival]{}, ready: cmp.Or(opts.Ready, make(chan struct{})), ctx: ctx, cancel: cancel,
		meta: session.NewCache(session.DefaultCacheSize),
	}
	// On the wall clock, as the store's own idle release: it frees memory and
	// changes nothing a test's fake clock steps through.
	g.meta.ReleaseWhenIdle(tstime.Std{}, session.IdleRelease)
	g.place = placement.New(placement.Options{Placement: opts.Placement, Clock: opts.Clock, Ctx: ctx, Logger: log, Background: g.background})
	g.delivery = delivery.New(delivery.Options{Logger: log, Channels: opts.Ports, Store: opts.Store, Observer: opts.Observer, Settings: opts.Settings.Delivery, Serialize: g.sends.Lock})
	g.holds = pairingHolds{ctx: ctx, store: opts.Store, delivery: g.delivery, log: log, now: opts.Now, background: g.background}
	g.approvals = approval.New(g.delivery, approvalConfig(opts.Settings), log, opts.Now)
	g.approvals.OnDecided(auditTrail{ctx, opts.Store, log}.tool)
	g.budgets = budget.New(opts.Store, opts.Clock, func() (budget.Rules, *time.Location) {
		set := g.settings()
		return set.Budgets, set.Turn.Location
	})
	g.claude = newClaudeCommands(g)
	g.turns = turn.New(turn.Options{ClaudeCommands: g.claude,
		Logger: log, Agent: opts.Agent, Channels: opts.Ports, Hooks: opts.Ports, Labels: opts.Ports, Output: output{g.delivery, g}, Store: opts.Store,
		Observer: opts.Observer, Settings: turnSettings(opts.Settings), MemoryFlush: opts.MemoryFlush, Now: opts.Now, AgentTools: opts.AgentTools, ProcessTools: opts.ProcessTools, ToolRun: opts.ToolRun,
		Approvals: asker{g}, Meta: g.meta, Waiting: func(key sessionkey.Key) int { return g.queue.Waiting(key) }, Clock: opts.Clock,
		Prices: g.budgets.Prices(), SendingHooked: func() bool { return g.replies.Hooked(g.settings().Replies.Sending.Hooks) },
	})
	g.received = received.New(opts.Ports, g.turns, opts.Store, log)
	g.admission = newAdmission(g)
	g.agents = newAgents(g)
	g.replies = replyroute.New(replyroute.Options{Ctx: ctx, Logger: log, Clock: opts.Clock, Hooks: opts.Ports, Files: g.turns, Outbox: g.delivery,
		Spool: opts.AgentEndSpool, Background: g.background, OnSteps: func(key, line string) { g.work.set(key, "sending", line) }})
	g.pause = usagelimit.New(usagelimit.Options{Store: opts.Store, Clock: opts.Clock, Logger: log, Resume: func(keys []string) {
		// The sessions the pause's end names that this host runs (with
		// several hosts, each looks at its own when its pause ends).
		for _, k := range keys {
			if g.place.RunsHere(k) {
				g.queue.Kick(storedKey(log, k))
			}
		}
	}})
	g.handler = newHandler(g)
	g.queue = queue.New(queue.Options{Logger: log, Journal: opts.Store, Runner: lanes{g}, Observer: opts.Observer, Notifier: notices{g}, Policy: opts.Settings.Queue, SessionMode: sessions{g}.queueMode, Seen: notices{g}.seen})
	return g
}

// pauseCommands is the usage-limit pause for /status and /resume (the
// pause is made after the handler).
type pauseCommands struct{ g *Gateway }

func (p pauseCommands) Paused() (time.Time, string, bool) { return p.g.pause.Paused() }
func (p pauseCommands) Resume(ctx context.Context) bool   { return p.g.pause.Resume(ctx) }

// seen shows the senders of messages that arrived while their chat's turn
// runs that they were taken: the seen reaction on the last one where the
// channel has reactions, else, when messages.queued_notice is on, a short
// notice. ahead < 0: they were steered into the running turn.
func (n notices) seen(key sessionkey.Key, items []queue.Item, ahead int) {
	g := n.g
	set := g.settings()
	m := &items[len(items)-1].Message
	tgt, id := m.Target(), m.MessageID
	if set.SeenReaction != "" && id != "" && g.delivery.CanReact(m.Instance) {
		g.background(func() {
			if err := g.delivery.React(tgt, id, set.SeenReaction); err != nil {
				g.log.Debug("the seen reaction was not set", "instance", tgt.Instance, "error", err)
			}
		})
		return
	}
	if !set.QueuedNotice {
		return
	}
	var text string
	switch {
	case ahead < 0:
		text = "Seen: added to the answer being written."
	case ahead == 0:
		text = "Queued: next after the answer being written."
	default:
		text = fmt.Sprintf("Queued: %d ahead.", ahead)
	}
	g.background(func() { g.delivery.Notify(key, tgt, text) })
}

// AttachFile queues a file the agent's send_file tool sends to chat tgt
// with the reply of the turn running there (turn.Turns.AttachFile).
func (g *Gateway) AttachFile(tgt message.Target, path, caption string) (string, error) {
	return g.turns.AttachFile(tgt, path, caption)
}

// ReactTo sets the bot's reaction (the agent's react tool) on the message
// the turn running in chat tgt answers (turn.Turns.ReactTo).
func (g *Gateway) ReactTo(tgt message.Target, emoji string) error {
	return g.turns.ReactTo(tgt, emoji)
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
	convs := g.conversations(instance, msgs)
	errs := make([]error, len(convs))
	var wg sync.WaitGroup
	for i, c := range convs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.accept(ctx, c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ScheduledRun is a turn a schedule starts: in chat ("<instance>:<chat
// id>", a group when Group), as if Prompt had been written there at At.
type ScheduledRun struct {
	Job    string
	At     time.Time
	Chat   string
	Group  bool
	Prompt string
	// Agent runs the turn; "" for the agent the chat is bound to.
	Agent string
	// Model runs the turn on that model (heartbeat { model }); "" for the
	// session's.
	Model string
	// Sender, for a direct chat, is its person, "<instance>:<sender id>"
	// (command.ScheduleEntry.Sender): the run is theirs, in their
	// session. "" (a schedule block, an entry stored before it was kept):
	// the chat's id stands in, which is the person's on Telegram and
	// WhatsApp but not on Discord or Slack, whose direct chats have ids
	// of their own.
	Sender string
}

// Scheduled starts a scheduled turn: the run becomes a message of its chat,
// accepted into the journal like any other (its id is the job and the due
// time, so a run started twice is answered once) and queued on the chat's
// session behind a running turn. Access control does not apply (the
// configuration asked for it).
func (g *Gateway) Scheduled(ctx context.Context, r ScheduledRun) error {
	select {
	case <-g.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	instance, chat, ok := strings.Cut(r.Chat, ":")
	if !ok || instance == "" || chat == "" {
		return fmt.Errorf("schedule %s: chat %q is not <instance>:<chat id>", r.Job, r.Chat)
	}
	if until, _, paused := g.pause.Paused(); paused {
		// Not into the wall: a heartbeat skips its beat, a schedule is
		// tried again (each minute) and runs once the limit reset.
		if r.Job == turn.HeartbeatJob {
			g.log.Info("heartbeat skipped: claude's usage limit pauses the turns", "until", until)
			return nil
		}
		return fmt.Errorf("schedule %s waits: claude's usage limit pauses the turns until %s", r.Job, until.Format(time.RFC3339))
	}
	set := g.settings()
	peer := chat
	if id, ok := strings.CutPrefix(r.Sender, instance+":"); ok && id != "" && !r.Group {
		peer = id
	}
	m := message.Message{
		Instance: instance, Channel: set.Sources[instance], ChatType: channel.ChatDirect, ChatID: chat,
		MessageID: fmt.Sprintf("schedule:%s:%d", r.Job, r.At.Unix()),
		Sender:    channel.Sender{ID: peer, Name: "schedule " + r.Job},
		From:      instance + ":" + peer, To: instance + ":" + chat,
		Body: r.Prompt, Timestamp: r.At, ReceivedAt: g.opts.Now(), Scheduled: r.Job, Model: r.Model,
	}
	if r.Group {
		m.ChatType = channel.ChatGroup
	}
	if m.Channel == "" {
		m.Channel = instance
	}
	key := agents.BoundKey(set.routing(), &m)
	if r.Agent != "" {
		key.Agent = r.Agent
	}
	return g.accept(ctx, []arrival{{key: key, Item: queue.Item{Message: m}}})
}

// arrival is an accepted message on its way to the arrival stage.
type arrival struct {
	key sessionkey.Key
	queue.Item
}

// Close stops accepting messages, flushes debounce windows, and waits for
// running turns and deliveries to end (or ctx). Messages still queued stay
// in the journal for the next start. Delivery drains first and closes
// last: no new send starts, but a turn whose result arrives during the
// stop still records it, and a send in flight is still marked when it
// returns, so neither is repeated after the restart; ctx bounds that
// grace.
func (g *Gateway) Close(ctx context.Context) {
	g.mu.Lock()
	ds := g.debouncers
	g.debouncers = map[time.Duration]*debounce.Debouncer[arrival]{}
	g.mu.Unlock()
	g.cancel()
	for _, d := range ds {
		d.Close()
	}
	g.pause.Close()
	g.delivery.Drain()
	g.queue.Close(ctx)
	done := make(chan struct{})
	go func() { g.wg.Wait(); g.arrivals.Wait(); g.replies.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	g.delivery.Close()
	g.meta.Release()
}

type nopObserver struct{}

func (nopObserver) MessageIn(string)                        {}
func (nopObserver) MessageOut(string)                       {}
func (nopObserver) Dropped(string, string)                  {}
func (nopObserver) Duplicate(string)                        {}
func (nopObserver) SendError(string, string)                {}
func (nopObserver) Turn(string, time.Duration, string)      {}
func (nopObserver) Usage(string, string, float64, [4]int64) {}
func (nopObserver) RunnerError(string)                      {}
func (nopObserver) SetQueueDepth(int)                       {}
func (nopObserver) SetActiveRuns(int)                       {}
