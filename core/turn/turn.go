// Package turn runs one agent turn for a batch of queued messages: it
// decides whether the session is still fresh (reset policies), downloads
// attachments, builds the prompt (envelopes, group history, dropped-message
// summaries, the abort hint, before_agent_start hooks), runs the memory
// flush when due, calls the runner and streams its text (blocks or a live
// draft), records usage, and hands back what to deliver. It does not
// deliver the final reply itself: the composer passes the [Outcome] to
// core/delivery, so a turn can be tested without a channel.
//
// It reaches plugins and the chat only through its ports: [Channels] (is
// the instance configured, download media), [Hooks], [Labels] (display
// names for the envelope) and [Output].
package turn

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawhost/clawhost/core/claudecmds"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/internal/recent"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
	"github.com/clawhost/clawhost/core/worktree"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

// Agent runs claude turns; *runner.Runner implements it.
type Agent interface {
	Run(ctx context.Context, req runner.TurnRequest) (*runner.Turn, error)
	// Steer injects text into the session's running turn.
	Steer(key, text string) (bool, error)
	CanSteer() bool
	// Stop ends the session's warm process (a new session follows).
	Stop(key string)
}

// Channels is the port to the channel instances a turn needs.
type Channels interface {
	// Known reports whether the instance is configured (it may be
	// restarting).
	Known(instance string) bool
	// Download waits for the instance to be ready, then streams the media
	// ref into w (at most maxBytes). entry is the journal entry whose
	// message carries ref: a download relayed to another host is made only
	// for a ref that entry of that instance holds.
	Download(ctx context.Context, instance string, entry int64, ref string, maxBytes int64, w io.Writer) (channel.MediaInfo, error)
}

// Hooks is the port to the before_agent_start hook plugins.
type Hooks interface {
	// BeforeAgentStart calls the hook instance, the call bounded by
	// timeout; a hook that is still starting is waited for first (bounded
	// by its start timeout). ok is false when the instance is not a hook
	// plugin (it is skipped).
	BeforeAgentStart(ctx context.Context, instance string, req hook.Request, timeout time.Duration) (resp hook.Response, ok bool, err error)
}

// HeartbeatJob is the heartbeat's schedule name (message.Message.Scheduled):
// its reply is judged as a heartbeat's (a short acknowledgement with
// HEARTBEAT_OK is not delivered).
const HeartbeatJob = "heartbeat"

// Draft is a live draft of a reply (core/delivery's *Draft).
type Draft interface {
	// Update shows the whole streamed text so far.
	Update(text string)
	// Card shows a turn card (text in format: plain, or markdown rendered
	// for the channel) with buttons under it, until the reply streams or
	// ends the turn (core/delivery Draft.Card).
	Card(text string, format channel.Format, buttons [][]channel.Button)
	// Fits reports whether Card can show text in format (one message
	// within the channel's limits, on a draft that has not failed).
	Fits(text string, format channel.Format) bool
	// Final replaces the message, when there is one the reply did not
	// take over, with text and no buttons; it reports whether it did.
	Final(text string) bool
	// Stop ends updates; the final reply takes the draft over.
	Stop()
	// TakeFirst delivers the final reply's first chunk by editing the
	// draft; false when it could not.
	TakeFirst(first string) (id string, ok bool)
	// MessageID is the draft message's platform id ("" when none).
	MessageID() string
	// Interrupted marks the text the draft shows as cut off (note
	// appended), when a draft message exists: the turn ended without a
	// reply (/stop).
	Interrupted(note string)
}

// Output is how a turn reaches the chat while it runs (core/delivery).
type Output interface {
	CanEdit(instance string) bool
	// Typing shows the typing indicator until seal is called, for at
	// most max (0: the dispatcher's default).
	Typing(tgt message.Target, max time.Duration) (seal func())
	// Send sends text outside the outbox, chunked, in session order.
	Send(key sessionkey.Key, tgt message.Target, text string, format channel.Format) []string
	// SendBlock sends a streamed block of the turn of journal entry id
	// (seq 1, 2, …), recorded as its live output before it is sent.
	SendBlock(key sessionkey.Key, id int64, seq int, tgt message.Target, text string) bool
	// NewDraft starts the live draft of the turn of journal entry id,
	// continuing prev (a confirmed draft of an earlier run) if set.
	NewDraft(key sessionkey.Key, id int64, tgt message.Target, prev store.Live) Draft
	// Reply records the turn's final reply in the outbox (as the reply to
	// every entry it covers) and sends it, in session order.
	Reply(r Reply)
	// CanReact reports whether the instance sets reactions; React sets
	// the bot's reaction on message id of chat tgt.
	CanReact(instance string) bool
	React(tgt message.Target, id, emoji string) error
	// CheckFile decides whether the file at path may be sent in session
	// key's chat on instance (a MEDIA: line's check, within the channel's
	// size limit) and returns it resolved.
	CheckFile(key sessionkey.Key, instance, path string) (string, error)
}

// Reply is a turn's final reply (Output.Reply): Text, possibly empty ("no
// reply"), answers the journal entries ID and Covers; Draft, when set, is
// the turn's live draft, which the reply's first chunk replaces.
type Reply struct {
	Key    sessionkey.Key
	ID     int64
	Covers []int64
	Target message.Target
	// ChatType is the type of the chat the turn answers (its message's),
	// for the hooks that see the reply's conversation.
	ChatType channel.ChatType
	Text     string
	Format   channel.Format
	ReplyTo  string
	Draft    Draft
	// Ping is sent as a new message when the reply reached the chat only
	// by editing the draft (a long turn: Settings.PingAfter).
	Ping string
	// Workspace is the workspace of Key's agent, from the settings the
	// turn ran on (Request.Profile): where the reply's MEDIA: files are.
	Workspace string
	// Usage is the turn's row of the usage ledger, recorded with the
	// reply (nil: claude did not run); ClaudeCost claude's running total
	// after the turn, recorded with it in the session's row (the next
	// turn's cost is the difference to it).
	Usage      *store.TurnUsage
	ClaudeCost *store.ClaudeCost
	// Session, when not nil, is the session's bookkeeping of the turn,
	// folded while the reply is shaped: Output takes it (Take) to write
	// it in the reply's transaction (store.Reply.Session) and gives it
	// back (Give) when the reply is not recorded; the turn writes what is
	// not taken once Reply returns.
	Session *store.PendingSession
	// Sender wrote the message that started the turn; Steps are the
	// turn's tool calls; SessionID the claude session it ran in; Aborted:
	// the turn was stopped (/stop, a reset). For the agent_end hooks.
	Sender    channel.Sender
	Steps     []hook.ToolStep
	SessionID string
	Aborted   bool
}

// Approvals asks the chat whether claude may use a tool (core/approval,
// wired by the gateway).
type Approvals interface {
	// Ask asks the approvers about req, a tool use of the turn in chat
	// tgt, and waits for the decision (an answer, the timeout, the
	// question's withdrawal or ctx). from is the message that started the
	// turn, nil for a scheduled turn. card is the turn's card, nil when it
	// shows none: a question asked only in the turn's own chat may go on it.
	// feedbackFrom, for a plan (runner.ExitPlanMode) sent back with Keep
	// planning, is who sent it back ("<instance>:<sender id>"): their
	// next message in the chat is the feedback on it.
	Ask(ctx context.Context, key sessionkey.Key, tgt message.Target, from *message.Message, req *runner.PermissionRequest, card QuestionCard) (d runner.Decision, feedbackFrom string)
	// Auto records a use allowed without asking by rule, one the session
	// stored from an earlier "always".
	Auto(key sessionkey.Key, req *runner.PermissionRequest, rule runner.Rule)
}

// QuestionCard is a running turn's card offered to an approval question
// (core/approval's Card): where the question is asked only in the turn's
// own chat, its text and buttons go on the card, beside Stop, instead of
// in a message of their own.
type QuestionCard interface {
	// Ask shows text (in format: a plan is markdown) and buttons on the
	// card at once; false when the card cannot carry them (the answer
	// already streams in it, it does not fit one message, or the turn
	// ended): the question is then sent as a message.
	Ask(text string, format channel.Format, buttons [][]channel.Button) bool
	// Answered takes the question off the card; line is how it ended
	// ("✅ Allowed by Alice. Bash:\n…"), whose first line the card keeps as
	// a step.
	Answered(line string)
}

// Store is the part of the store a turn uses.
type Store interface {
	Session(ctx context.Context, key string) (store.Session, error)
	UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error)
	Finish(ctx context.Context, req store.FinishRequest) error
	// LiveOutput is what an earlier run of the entry showed (a restart
	// came before its reply was recorded).
	LiveOutput(ctx context.Context, journalID int64) ([]store.Live, error)
}

// Observer receives turn measurements.
type Observer interface {
	Turn(agent string, d time.Duration, outcome string)
	// Usage is a finished turn's cost in US dollars and its input,
	// output, cache-read and cache-creation tokens (its ledger row).
	Usage(agent, instance string, costUSD float64, tokens [4]int64)
	RunnerError(kind string)
	SetActiveRuns(n int)
}

// Streaming says how a reply is shown while it is produced.
type Streaming string

// Streaming modes.
const (
	// StreamAuto is StreamDraft where the channel edits, StreamBlocks
	// elsewhere.
	StreamAuto   Streaming = "auto"
	StreamBlocks Streaming = "blocks"
	StreamDraft  Streaming = "draft"
	StreamOff    Streaming = "off"
)

// Settings are a turn's configurable behaviour.
type Settings struct {
	// HookOrder lists plugin instances in config order; the hooks among
	// them are called before each turn, each bounded by HookTimeout.
	HookOrder   []string
	HookTimeout time.Duration
	// ResetTriggers start a new session; the text after one is the first
	// message. Nil means "/new" and "/reset", empty means none.
	ResetTriggers []string
	Reset         sessionreset.Config
	// Location is the zone of daily resets; nil means local time.
	Location *time.Location
	// GroupHistoryLimit is how many unaddressed group messages are kept as
	// context for the next addressed one; 0 disables.
	GroupHistoryLimit int
	Envelope          envelope.Options
	ResponsePrefix    string
	Streaming         Streaming
	// Verbose shows tool progress lines (/verbose toggles it per session).
	Verbose bool
	// Workspace is claude's working directory; attachments are stored
	// under <Workspace>/media.
	Workspace string
	// Model is the configured model (the reply prefix's {model}); Models
	// are the ones /model offers (agent.models).
	Model  string
	Models []string
	// PermissionMode is the configured mode; PermissionModes, the ones
	// /mode offers (agent.permission_modes).
	PermissionMode  string
	PermissionModes []string
	// Approvals asks the chat about tool uses that need permission
	// (agent.approvals = "chat"); a session's /mode ask turns it on for
	// that session. Needs Options.Approvals.
	Approvals bool
	// InlineImages shows inbound images to claude as image blocks with
	// the prompt (agent.inline_images); their paths are in the prompt
	// either way.
	InlineImages bool
	// Worktrees gives each chat its own git worktree of Workspace
	// (agent.worktrees): claude works there (core/worktree).
	Worktrees bool
	// PromptSection writes the messaging section of the system prompt
	// (core/chatprompt); nil leaves it out (messages { prompt_section =
	// false }).
	PromptSection *chatprompt.Template
	// RequireMention reports whether claude is asked in m's group only
	// when mentioned (the access policy's); nil: never.
	RequireMention func(m *message.Message) bool
	// MaxFileBytes is the largest file claude may send to a channel that
	// declares no limit of its own (channel.Capabilities.MaxFileBytes; the
	// delivery's default), said in the messaging section; 0 unsaid.
	MaxFileBytes int64
	// Timeout is the agent's turn timeout (agent.timeout): the typing
	// indicator lasts the whole turn, at most this long; 0 the default.
	Timeout time.Duration
	// MemoryFlush is the default agent's memory_flush as the configuration
	// in force has it, so that a reload applies it as it does a named
	// agent's (AgentSettings.MemoryFlush); nil: Options.MemoryFlush.
	MemoryFlush *MemoryFlush
	// TurnCard shows a running turn as a live card where the channel
	// edits messages (messages.turn_card "auto"); PingAfter sends a
	// completion ping after a turn this long whose answer came by an edit
	// (messages.ping_after; 0 never).
	TurnCard  bool
	PingAfter time.Duration
	// Agents are the named agents' own settings by id (the agent "<id>" blocks); a
	// session's key names its agent (sessionkey.Key). The fields above are the
	// default agent's. See Turns.Profile.
	Agents map[string]AgentSettings
}

// AgentSettings are what an agent has of its own in Settings: where its claude works and
// what a chat may choose of it.
type AgentSettings struct {
	Workspace       string
	Model           string
	Models          []string
	PermissionMode  string
	PermissionModes []string
	Approvals       bool
	InlineImages    bool
	Worktrees       bool
	// MemoryFlush is the agent's memory_flush (Options.MemoryFlush is the
	// default agent's).
	MemoryFlush MemoryFlush
	Timeout     time.Duration
}

// forAgent is s for the turns of agent id: its own settings in place of the default
// agent's (its memory flush in MemoryFlush); s itself for the default agent or an id s
// does not know.
func (s Settings) forAgent(id string) Settings {
	a, ok := s.Agents[id]
	if !ok {
		return s
	}
	s.Workspace, s.Model, s.Models, s.PermissionMode, s.PermissionModes = a.Workspace, a.Model, a.Models, a.PermissionMode, a.PermissionModes
	s.Approvals, s.InlineImages, s.Worktrees = a.Approvals, a.InlineImages, a.Worktrees
	mf := a.MemoryFlush
	s.MemoryFlush = &mf
	if a.Timeout > 0 {
		s.Timeout = a.Timeout
	}
	return s
}

// settingsOf is the settings of the session key's agent, for what is
// asked of a session outside a turn (a turn's Request carries them).
func (t *Turns) settingsOf(key sessionkey.Key) Settings { return t.Profile(key.Agent) }

// Profile is the resolved settings of agent's turns as the configuration
// in force has them (the default agent's for "" or an unknown id): the
// composer resolves a turn's agent once and hands them to Run with the
// Request (Request.Profile).
func (t *Turns) Profile(agent string) Settings { return t.settings().forAgent(agent) }

func withDefaults(s Settings) Settings {
	if s.HookTimeout <= 0 {
		s.HookTimeout = 5 * time.Second
	}
	if s.ResetTriggers == nil {
		s.ResetTriggers = sessionreset.DefaultTriggers
	}
	if s.Streaming == "" {
		s.Streaming = StreamAuto
	}
	return s
}

// Options configure Turns.
type Options struct {
	Logger   hclog.Logger
	Agent    Agent
	Channels Channels
	Hooks    Hooks
	// Labels names instances in the envelope; nil means each instance's
	// source, title-cased.
	Labels   Labels
	Output   Output
	Store    Store
	Observer Observer
	Settings Settings
	// MemoryFlush decides the pre-compaction memory-flush turn
	// (agent.memory_flush; set Disabled to turn it off).
	MemoryFlush MemoryFlush
	// Now is the clock; nil means time.Now. Clock times the turn card;
	// nil means the real clock.
	Now   func() time.Time
	Clock tstime.Clock
	// Waiting says how many messages of session key wait behind its
	// running turn (the turn card's count); nil: not shown.
	Waiting func(key sessionkey.Key) int
	// AgentTools, when not nil, gives the MCP config (JSON) of the host's
	// own tools for the chat of m and the tool names to allow; "" for
	// none.
	AgentTools func(key sessionkey.Key, m *message.Message) (mcpConfig string, tools []string)
	// ProcessTools, with AgentTools, lets a claude started before any chat (the
	// agent's spare) carry host tools of its own, bound to the chat that adopts it
	// (runner.TurnRequest.LateTools); nil: a new chat's tools are fixed at its
	// claude's start (a spare serves only the chat it was started for).
	ProcessTools ProcessTools
	// ToolRun, when not nil, is told before each run of claude for the
	// chat of m which turn the run's plugin tool calls belong to: journal
	// is the turn's first journal entry (the same when the turn runs again
	// after a crash, so a call made again gets the same idempotency key),
	// 0 for a run that is no turn's own (the memory flush: its calls get
	// no key).
	ToolRun func(key sessionkey.Key, m *message.Message, journal int64)
	// SendingHooked, when not nil, reports whether message_sending hooks
	// may shape the replies (they may redact them). A turn then shows no
	// text they have not seen: its streaming is off (no draft, no blocks:
	// the reply is sent whole, after the hooks) and its card names the
	// tools claude runs without what claude passed them.
	SendingHooked func() bool
	// MaxMediaBytes caps one downloaded attachment; zero means 20 MiB.
	MaxMediaBytes int64
	// Approvals, when not nil, asks the chat about claude's tool use
	// (Settings.Approvals, /mode ask); nil: claude's permission mode
	// decides alone.
	Approvals Approvals
	// Meta is the decode cache of the sessions' metadata, owned by the
	// composer (which reads the same sessions); nil decodes every time.
	Meta *session.Cache
	// BoundaryID returns the id of an untrusted block; nil means
	// envelope.NewBoundaryID (random). Tests fix it.
	BoundaryID func() string
	// Prices price the turns claude did not (a cut turn's tokens); nil:
	// the built-in prices and what completed turns showed.
	Prices *usage.Prices
	// ClaudeCommands, when not nil, are the agents' claude commands: a
	// message naming one runs as claude's own command, and each turn's
	// init lists are recorded in it.
	ClaudeCommands *claudecmds.Catalog
}

// Turns runs turns. Safe for concurrent use (one turn per session at a
// time is the queue's rule).
type Turns struct {
	opts    Options
	prices  *usage.Prices
	log     hclog.Logger
	history *History
	active  atomic.Int64
	set     atomic.Pointer[Settings]
	// waits is how recent sessions' last turns got to claude (runner.Wait
	// by key), at most maxWaits of them: the status page lists the most
	// recently active sessions, and a daemon that served 100,000 chats
	// keeps no entry for each.
	waits *recent.Map[string, runner.Wait]
	// files are the files the agent's send_file tool queued for the
	// running turns' replies.
	files files
	// cards are the running turns' cards by session key (CardState).
	cards sync.Map
}

// maxWaits bounds Turns.waits.
const maxWaits = 1024

// New returns Turns.
func New(opts Options) *Turns {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Clock == nil {
		opts.Clock = tstime.Std{}
	}
	if opts.MaxMediaBytes <= 0 {
		opts.MaxMediaBytes = 20 << 20
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	if opts.BoundaryID == nil {
		opts.BoundaryID = envelope.NewBoundaryID
	}
	if opts.Prices == nil {
		opts.Prices = usage.NewPrices(nil)
	}
	t := &Turns{opts: opts, prices: opts.Prices, log: opts.Logger.Named("turn"), history: NewHistory(1000), waits: recent.New[string, runner.Wait](maxWaits)}
	t.SetSettings(opts.Settings)
	return t
}

// SetSettings replaces the settings (on reload); running turns keep theirs.
func (t *Turns) SetSettings(s Settings) {
	s = withDefaults(s)
	t.set.Store(&s)
}

func (t *Turns) settings() Settings { return *t.set.Load() }

func (t *Turns) meta() *session.Cache { return t.opts.Meta }

// LastWait is how the session's last turn since the start got to claude: how long it
// waited for a slot and whether a claude process was started for it (zero: none ran,
// or the session was not among the last maxWaits to run one).
func (t *Turns) LastWait(key string) runner.Wait {
	w, _ := t.waits.Get(key)
	return w
}

// MatchTrigger matches the configured reset triggers (none when the list
// is empty).
func (t *Turns) MatchTrigger(text string) sessionreset.TriggerMatch {
	set := t.settings()
	if len(set.ResetTriggers) == 0 {
		return sessionreset.TriggerMatch{}
	}
	return sessionreset.MatchTrigger(text, sessionreset.TriggerOptions{Triggers: set.ResetTriggers, Authorized: true})
}

// Steer injects messages into the session's running turn.
func (t *Turns) Steer(key string, msgs []message.Message) bool {
	if !t.opts.Agent.CanSteer() || slices.ContainsFunc(msgs, isSlashWord) {
		// A "/word" may be one of claude's commands, which runs only as
		// a turn's whole prompt: it waits for its own turn.
		return false
	}
	set := t.settings()
	parts := make([]string, len(msgs))
	for i := range msgs {
		parts[i] = t.envelopeOf(set, &msgs[i], time.Time{})
	}
	ok, err := t.opts.Agent.Steer(key, strings.Join(parts, "\n"))
	return err == nil && ok
}

type nopObserver struct{}

func (nopObserver) Turn(string, time.Duration, string)      {}
func (nopObserver) Usage(string, string, float64, [4]int64) {}
func (nopObserver) RunnerError(string)                      {}
func (nopObserver) SetActiveRuns(int)                       {}

// workDir is the directory claude works in for the session: its agent's
// workspace, or with worktrees the chat's own worktree of it, made on its
// first turn.
func (t *Turns) workDir(ctx context.Context, set Settings, key sessionkey.Key) (string, error) {
	if !set.Worktrees {
		return "", nil
	}
	w, made, err := worktree.Ensure(ctx, set.Workspace, key.Dir())
	if err != nil {
		return "", err
	}
	if made {
		t.log.Info("made the chat's worktree", "session", key.String(), "path", w.Path, "branch", w.Branch)
	}
	return w.Path, nil
}
