// Package delivery gets replies to the chat: media lines, chunking to the
// channel's length limit measured after rendering (markup.Split) and its
// line limit (core/chunk), plain text for a channel that declares no
// markup (markup.Plain), the outbox (a reply and its chunks are recorded
// before the first send; each chunk is marked when the channel accepted
// it), ordered sends per session with retries that honour the platform's
// retry_after, the formatting fallback, live drafts edited in place, and
// the typing indicator.
//
// It reaches channels only through the [Channels] port; core/pluginhost
// implements it over the plugin processes, and tests use a recording fake
// with an injected [Clock]. To add a channel capability: a method on
// Channels (and its pluginhost adapter), used here.
package delivery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/sessionkey"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// Channels is the port to the channel instances.
type Channels interface {
	// Ready returns the description of an instance that is ready now;
	// false when it is unknown, starting or restarting. Never blocks.
	Ready(instance string) (pluginclient.Description, bool)
	// WaitReady blocks until the instance is ready, it is stopped, or ctx
	// ends; an unknown instance fails at once.
	WaitReady(ctx context.Context, instance string) (pluginclient.Description, error)
	// Send waits for the instance like WaitReady, then sends.
	Send(ctx context.Context, instance string, req channel.SendRequest) (channel.SendResponse, error)
	// Edit and SetTyping fail at once when the instance is not ready.
	Edit(ctx context.Context, instance string, req channel.EditRequest) error
	SetTyping(ctx context.Context, instance string, req channel.TypingRequest) error
	// React sets or clears the bot's reaction; it fails at once when the
	// instance is not ready or has no reactions.
	React(ctx context.Context, instance string, req channel.ReactRequest) error
}

// Store is the part of the store delivery writes.
type Store interface {
	RecordReply(ctx context.Context, r store.Reply) error
	MarkAttempt(ctx context.Context, journalID int64, index int) error
	MarkSent(ctx context.Context, s store.ChunkSent) (store.MarkSentResult, error)
	RecordLive(ctx context.Context, l store.Live) error
	Finish(ctx context.Context, req store.FinishRequest) error
}

// Observer receives delivery measurements.
type Observer interface {
	MessageOut(instance string)
	SendError(instance, code string)
}

// Settings are delivery's configurable behaviour.
type Settings struct {
	// TextLimit caps a chunk (the channel's own limit caps it further);
	// ByInstance overrides it. Zero means chunk.DefaultLimit.
	TextLimit           int
	TextLimitByInstance map[string]int
	ChunkMode           chunk.Mode
	// Workspace is where MEDIA:<path> files must be to be sent; of its
	// media directory only the session's own part (see checkMedia).
	// AgentWorkspaces are the named agents' by id: a session's key names
	// its agent (sessionkey.Key).
	Workspace       string
	AgentWorkspaces map[string]string
	// MaxMediaBytes caps a file a MEDIA: line sends to a channel that
	// declares no limit of its own; zero means DefaultMaxMediaBytes.
	MaxMediaBytes int64
}

// Options configure a Dispatcher.
type Options struct {
	Logger   hclog.Logger
	Channels Channels
	Store    Store
	Observer Observer
	Clock    tstime.Clock
	Settings Settings
	// Serialize takes the session's send lock and returns its unlock;
	// core/queue.Locks provides it (per-session order has one owner). Nil
	// means a lock of the dispatcher's own.
	Serialize func(key sessionkey.Key) (unlock func())
}

// Tuning.
const (
	typingMax     = 10 * time.Minute
	draftInterval = time.Second
	sendAttempts  = 6
	firstRetry    = 500 * time.Millisecond
	maxRetryWait  = 30 * time.Second
	maxStoreWait  = 5 * time.Second
	maxRetryAfter = 5 * time.Minute
	readyWait     = 60 * time.Second
	sendTimeout   = 60 * time.Second
)

// Dispatcher delivers replies and notices. Safe for concurrent use; sends
// of one session never interleave.
type Dispatcher struct {
	log   hclog.Logger
	ch    Channels
	store Store
	obs   Observer
	clock tstime.Clock

	// ctx ends with Close (store writes and sends in flight are cut);
	// draining is closed by Drain (no new send or retry starts).
	ctx       context.Context
	cancel    context.CancelFunc
	draining  chan struct{}
	drainOnce sync.Once
	serialize func(key sessionkey.Key) (unlock func())
	// warm runs the typing indicator's calls (see warmCalls).
	warm *warmCalls

	mu  sync.Mutex
	set Settings
	// seen is the description last seen of each instance (see describe).
	seen map[string]pluginclient.Description
}

// New returns a Dispatcher.
func New(opts Options) *Dispatcher {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	opts.Clock = tstime.Or(opts.Clock)
	if opts.Serialize == nil {
		var mu sync.Mutex
		opts.Serialize = func(sessionkey.Key) func() { mu.Lock(); return mu.Unlock }
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Dispatcher{log: opts.Logger.Named("delivery"), ch: opts.Channels, store: opts.Store, obs: opts.Observer, clock: opts.Clock, ctx: ctx, cancel: cancel, draining: make(chan struct{}), serialize: opts.Serialize, warm: newWarmCalls(ctx), set: withDefaults(opts.Settings)}
}

func withDefaults(s Settings) Settings {
	if s.TextLimit <= 0 {
		s.TextLimit = chunk.DefaultLimit
	}
	if s.ChunkMode == "" {
		s.ChunkMode = chunk.ModeLength
	}
	return s
}

// SetSettings replaces the settings (on reload).
func (d *Dispatcher) SetSettings(s Settings) {
	d.mu.Lock()
	d.set = withDefaults(s)
	d.mu.Unlock()
}

func (d *Dispatcher) settings() Settings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.set
}

// Drain is the first step of a shutdown: no new send, edit or retry
// starts, but replies are still recorded and a send in flight is still
// marked when it returns (so a result in hand and a delivered chunk are
// not lost to the shutdown). Unsent chunks stay in the outbox for the
// next start. Call Close after the grace period.
func (d *Dispatcher) Drain() { d.drainOnce.Do(func() { close(d.draining) }) }

// Close ends everything still in flight (Drain first, then Close after a
// bounded grace); unsent chunks stay in the outbox for the next start.
func (d *Dispatcher) Close() { d.Drain(); d.cancel() }

// halted reports whether the dispatcher is draining or closed: nothing new
// is sent, and a failure is the shutdown's, not the chat's.
func (d *Dispatcher) halted() bool {
	select {
	case <-d.draining:
		return true
	default:
		return d.ctx.Err() != nil
	}
}

// CanEdit reports whether the instance is ready and edits messages (live
// drafts are possible).
func (d *Dispatcher) CanEdit(instance string) bool {
	desc, ok := d.ch.Ready(instance)
	return ok && desc.Edit
}

// CanReact reports whether the instance reacts to messages
// (channel.Reactor), as it described itself when last ready: a plugin
// not ready for a moment (degraded, restarting) keeps its reactions.
func (d *Dispatcher) CanReact(instance string) bool {
	desc, ok := d.known(instance)
	return ok && desc.Reactions
}

// reactWait bounds React's wait for its instance: under the agent's tool
// call's own timeout (10 s), so claude hears why rather than a timeout.
const reactWait = 5 * time.Second

// React sets the bot's reaction emoji on message id of chat tgt (emoji ""
// clears it), waiting up to reactWait for the instance to be ready. A
// reaction is not a reply: it is neither recorded nor retried.
func (d *Dispatcher) React(tgt message.Target, id, emoji string) error {
	wctx, wcancel := context.WithTimeout(d.ctx, reactWait)
	_, err := d.ch.WaitReady(wctx, tgt.Instance)
	wcancel()
	if err != nil {
		return fmt.Errorf("react: %s is not ready: %w", tgt.Instance, err)
	}
	ctx, cancel := context.WithTimeout(d.ctx, sendTimeout)
	defer cancel()
	return d.ch.React(ctx, tgt.Instance, channel.ReactRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, MessageID: id, Emoji: emoji, Remove: emoji == ""})
}

// HasButtons reports whether the instance is ready and shows buttons
// under messages (channel capability buttons).
func (d *Dispatcher) HasButtons(instance string) bool {
	desc, ok := d.ch.Ready(instance)
	return ok && desc.Capabilities.Buttons
}

// VoiceNoteFormat is the audio format the instance shows as a voice note
// (channel capability voice_note_format), "" when it has none or is not
// ready.
func (d *Dispatcher) VoiceNoteFormat(instance string) string {
	desc, _ := d.ch.Ready(instance)
	return desc.Capabilities.VoiceNoteFormat
}

// Fits reports whether text in format is one message on the instance's
// channel: within its length (markdown counted as rendered) and line
// limits.
func (d *Dispatcher) Fits(instance, text string, format channel.Format) bool {
	sh := d.shapeOf(d.ctx, instance)
	text, format = sh.render(text, format)
	return sh.fitsAs(text, format)
}

// Limit is the chunk limit for an instance in UTF-16 units: the
// configured limit capped by the channel's capability (waiting for the
// instance to be ready); a third of a limit counted in bytes.
func (d *Dispatcher) Limit(ctx context.Context, instance string) int {
	return d.shapeOf(ctx, instance).utf16Limit()
}

type nopObserver struct{}

func (nopObserver) MessageOut(string)        {}
func (nopObserver) SendError(string, string) {}
