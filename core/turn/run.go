package turn

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/hashicorp/go-hclog"
)

// Request is one turn: queued entries of one session, oldest first.
type Request struct {
	// Key is the session's, its agent resolved by the composer.
	Key sessionkey.Key
	// Profile is the settings of Key's agent, resolved by the composer
	// (Turns.Profile); nil: Run resolves them from Key.Agent.
	Profile *Settings
	Entries []store.Entry
	// Covers returns the entries the reply answers besides the first (those
	// a collected batch merged, and those steered into the running turn);
	// read when the reply is recorded. Nil: none.
	Covers func() []int64
	// Messages are the entries' messages when the caller has them decoded
	// (one per entry); else the entries' are decoded.
	Messages []message.Message
	// Collected: several waiting messages merged by collect mode.
	Collected bool
	// Summaries of messages the queue cap dropped.
	Summaries []string
	// Start marks the entries as handed to the agent.
	Start func(ctx context.Context) error
	// Began records that the run truly began (claude read the prompt):
	// only such a run spends the entries' attempts (store.Journal.MarkBegan).
	// Nil: nothing to record.
	Began func(ctx context.Context) error
	// AbortReason says why the run was aborted; called after it ended.
	AbortReason func() string
}

// Outcome is what became of a turn.
type Outcome struct {
	// Retry: a store failure kept the entries queued. Halt: the lane cannot
	// go on (instance gone, host stopping); the entries stay in the journal.
	Retry, Halt bool
	// Park: claude's usage or rate limit refused the turn; nothing was
	// delivered, and the caller parks its entries until ResetAt (zero: no
	// reset time known). LimitReason says which limit.
	Park        bool
	ResetAt     time.Time
	LimitReason string
	// Deliver: Text (possibly empty: "no reply") went to Output.Reply as
	// the reply to the entries, for Target.
	Deliver bool
	Target  message.Target
	Text    string
	Format  channel.Format
	ReplyTo string
	// Draft is the turn's live draft, if any: the reply's first chunk
	// replaced it.
	Draft Draft

	// card: the turn card shows and the answer did not replace it; took:
	// how long the agent ran; usage: the turn's row of the usage ledger
	// (nil when claude did not run); bookkeeping, when not nil, is the
	// session's bookkeeping of the turn (usageUpdate), written with the
	// reply or else by Run.
	card       bool
	took       time.Duration
	usage      *store.TurnUsage
	claudeCost *store.ClaudeCost
	// steps are the run's tool calls; sessionID the claude session it ran
	// in (for agent_end).
	steps     []hook.ToolStep
	sessionID string
	// silent: claude's whole answer was the silent token (NO_REPLY) and
	// no block of it had been streamed.
	silent      bool
	bookkeeping *store.PendingSession
	// logDone logs the finished turn; Run calls it once the reply was
	// handed over (the line is not on the reply's path).
	logDone func()
	// settle tells the runner the reply is delivered, so that what the
	// turn left for later (the agent's next spare claude) starts off the
	// reply's path; Run calls it last.
	settle func()
}

// Run runs the turn.
func (t *Turns) Run(ctx context.Context, req Request) Outcome {
	var set Settings
	if req.Profile != nil {
		set = *req.Profile
	} else {
		set = t.settingsOf(req.Key)
	}
	msgs, ok := slices.Clone(req.Messages), true
	if len(msgs) != len(req.Entries) {
		msgs, ok = t.decode(ctx, req.Entries)
	}
	if !ok {
		return Outcome{}
	}
	last := &msgs[len(msgs)-1]
	log := &turnLog{base: t.log, key: req.Key.String(), entries: req.Entries}
	if !t.opts.Channels.Known(last.Instance) {
		log.get().Warn("message for a disabled or unknown instance; kept in the journal until it is enabled and the host restarts", "instance", last.Instance)
		return Outcome{Halt: true}
	}
	sess, fresh, note, err := t.session(ctx, set, req.Key.String(), last)
	if err != nil {
		log.get().Error("session store failed; message kept queued", "error", err)
		return Outcome{Retry: true}
	}
	if err := req.Start(ctx); err != nil {
		if ctx.Err() == nil {
			log.get().Error("journal start failed; message kept queued", "error", err)
		}
		return Outcome{Retry: ctx.Err() == nil, Halt: ctx.Err() != nil}
	}
	tgt := last.Target()
	ty := newTyping(func() func() { return t.opts.Output.Typing(tgt, set.Timeout) })
	if note != "" {
		// Before the reply (streamed blocks included), once: the reset is
		// stored, so a re-run after a restart does not say it again.
		t.opts.Output.Send(req.Key, last.Target(), note, channel.FormatPlain)
	}
	box := t.files.open(tgt, req.Key, last.MessageID)
	o := t.exchange(ctx, log, set, req, sess, fresh, msgs, ty)
	if queued := t.files.take(tgt, box); len(queued) > 0 && o.Deliver && req.AbortReason() == "" {
		// The files claude sent with send_file go with its reply.
		o.Text = strings.TrimSpace(o.Text + "\n\n" + strings.Join(queued, "\n"))
	}
	if o.silent && !o.card && strings.TrimSpace(o.Text) == "" && !t.files.reacted(box) && last.ChatType == channel.ChatDirect && req.AbortReason() == "" {
		// Silence is a choice in a group; in a direct chat the person
		// asked and would see nothing at all.
		o.Text, o.Format = noteSilentDirect, channel.FormatPlain
	}
	stopped := req.AbortReason() != ""
	if stopped {
		ty.end() // at once: /stop ended the turn
	}
	if o.Deliver {
		// Like the streamed blocks, through the Output port; typing
		// stops once the reply is handed over.
		var covers []int64
		if req.Covers != nil {
			covers = req.Covers()
		}
		r := Reply{Key: req.Key, Workspace: set.Workspace, ID: req.Entries[0].ID, Covers: covers, Target: o.Target, ChatType: last.ChatType, Text: o.Text,
			Format: o.Format, ReplyTo: o.ReplyTo, Draft: o.Draft, Usage: o.usage, ClaudeCost: o.claudeCost, Session: o.bookkeeping,
			Sender: last.Sender, Steps: o.steps, SessionID: o.sessionID, Aborted: stopped}
		if set.PingAfter > 0 && o.took >= set.PingAfter && o.Draft != nil && !stopped {
			r.Ping = "✅ Done — took " + took(o.took) + "."
		}
		t.opts.Output.Reply(r)
	}
	if u := o.bookkeeping.Take(); u != nil {
		// Not written with a reply (none was recorded, or it was refused).
		t.writeSession(ctx, u)
	}
	if o.logDone != nil {
		o.logDone()
	}
	if o.Park && o.card && o.Draft != nil {
		o.Draft.Final("⏸ Paused at claude's usage limit; this message runs again after the reset.")
	}
	if !o.Park && o.Draft != nil && (o.card && strings.TrimSpace(o.Text) == "" || hasMedia(o.Text)) {
		// The card is still what the chat shows: nothing answered in it.
		// A reply with files took the card or the streamed draft with its
		// text (Final does nothing then) unless no text came before the
		// files: the draft would repeat what the files' message says.
		line := "✓ Done in " + took(o.took) + "."
		if stopped {
			line = "⏹ Stopped after " + took(o.took) + "."
		}
		o.Draft.Final(line)
	}
	ty.end()
	if o.settle != nil {
		o.settle()
	}
	return o
}

// SenderOf is who started a turn whose first message is m, as the usage
// ledger and the budgets name them: the sender ("<instance>:<id>"),
// "heartbeat", or "schedule:<name>".
func SenderOf(m *message.Message) string {
	switch {
	case m.Scheduled == HeartbeatJob:
		return HeartbeatJob
	case m.Scheduled != "":
		return "schedule:" + m.Scheduled
	}
	return m.From
}

// hasMedia reports whether a reply has MEDIA: lines (its files go as
// messages of their own, not into the draft).
func hasMedia(text string) bool {
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "MEDIA:") {
			return true
		}
	}
	return false
}

// exchange runs the agent for the started entries and says what to deliver.
func (t *Turns) exchange(ctx context.Context, log *turnLog, set Settings, req Request, sess store.Session, fresh bool, msgs []message.Message, ty *typing) Outcome {
	last := &msgs[len(msgs)-1]
	for i := range msgs {
		t.fetchMedia(ctx, set, req.Key, &msgs[i], req.Entries[i].ID)
	}
	compact := len(msgs) == 1 && IsCompact(last)
	if compact && fresh {
		return Outcome{Deliver: true, Target: last.Target(), Format: channel.FormatPlain, Text: "Nothing to compact yet: this conversation has no history."}
	}
	prompt, system := t.turnPrompt(ctx, set, req, &sess, msgs, fresh, compact)
	prev := t.earlierRun(ctx, log, req, last)
	t.opts.Observer.SetActiveRuns(int(t.active.Add(1)))
	started := t.opts.Now()
	var images []runner.Image
	if set.InlineImages && !compact {
		images = t.images(msgs)
	}
	res, out := t.runAgent(ctx, set, agentRun{key: req.Key, id: req.Entries[0].ID, prev: prev, sess: sess, fresh: fresh,
		prompt: prompt, system: system, last: last, typing: ty, images: images, began: req.Began})
	t.opts.Observer.SetActiveRuns(int(t.active.Add(-1)))
	if c := res.Commands; c != nil {
		t.opts.ClaudeCommands.Saw(req.Key.Agent, c.Slash, c.Skills, c.Terminal)
	}
	if ctx.Err() != nil {
		if res.Err != nil {
			// Shutting down: the run was cut by the stop, not by the user.
			// The entries stay in processing; the next start runs them
			// again.
			log.get().Info("turn interrupted by shutdown; it runs again after the restart")
			return Outcome{Halt: true}
		}
		// The result is in hand: it is recorded, not thrown away to be
		// produced a second time after the restart.
		log.get().Info("turn finished during shutdown; its reply is recorded")
		ctx = context.WithoutCancel(ctx)
	}
	outcome := "ok"
	if res.Err != nil {
		outcome = string(res.Err.Kind)
		t.opts.Observer.RunnerError(outcome)
	}
	t.opts.Observer.Turn(req.Key.Agent, t.opts.Now().Sub(started), outcome)
	cost := t.turnCost(sess, res)
	var bookkeeping *store.PendingSession
	if res.Err == nil {
		// The session's bookkeeping is folded while the reply is prepared
		// and written in the reply's own transaction (store.Reply.Session:
		// one commit on a warm turn's outbound path, not two); Run writes
		// it itself when the reply did not take it. A failed turn may
		// reset the session (outcome): its bookkeeping comes first, on its
		// own, as it did.
		bookkeeping = store.NewPendingSession()
		go func() {
			bookkeeping.Set(t.usageUpdate(req.Key.String(), req.Entries[0].ID, sess, res, cost, last))
		}()
	} else {
		t.recordUsage(ctx, req.Key.String(), req.Entries[0].ID, sess, res, cost, last)
	}
	if res.Wait.Start != "" {
		t.waits.Put(req.Key.String(), res.Wait)
	}
	o := t.outcome(ctx, log, req, res, out, last)
	o.card, o.took, o.bookkeeping = out.card, t.opts.Now().Sub(started), bookkeeping
	o.silent = res.Err == nil && out.silent && out.remainder == ""
	o.claudeCost = &store.ClaudeCost{Key: req.Key.String(), Of: claudeSessionOf(sess, res), USD: cost.Total}
	o.steps, o.sessionID, o.settle = out.steps, claudeSessionOf(sess, res), out.settle
	tok := turnTokens(res.Usage)
	o.usage = &store.TurnUsage{At: t.opts.Now(), Agent: req.Key.Agent, Instance: last.Instance, ChatID: last.ChatID, Sender: SenderOf(&msgs[0]),
		Model: res.Model, InputTokens: tok.Input, OutputTokens: tok.Output, CacheReadTokens: tok.CacheRead, CacheCreationTokens: tok.CacheCreation,
		CostUSD: cost.USD, Estimate: cost.Estimate, Duration: o.took, Outcome: outcome}
	t.opts.Observer.Usage(o.usage.Agent, o.usage.Instance, o.usage.CostUSD,
		[4]int64{o.usage.InputTokens, o.usage.OutputTokens, o.usage.CacheReadTokens, o.usage.CacheCreationTokens})
	// One line per finished turn, for the operator (the ledger has the
	// same figures).
	u := o.usage
	o.logDone = func() {
		log.get().Info("turn done", "sender", u.Sender, "outcome", outcome, "duration", res.Duration.Round(time.Millisecond),
			"input_tokens", u.InputTokens+u.CacheReadTokens+u.CacheCreationTokens, "output_tokens", u.OutputTokens,
			"cost_usd", u.CostUSD, "new_process", res.NewProcess, "start", res.Wait.Start)
	}
	if compact && res.Err == nil {
		o.Format, o.Text = channel.FormatPlain, "Conversation compacted: claude goes on from a summary of it."
		if !res.Compacted {
			o.Text = "claude did not compact the conversation (it may be too short)."
		}
	}
	return o
}

// turnPrompt is what claude is sent for msgs: the envelope (feedback on a
// plan labelled as such), claude's own /compact, or one of claude's own
// commands as its raw line; and the turn's system prompt. A turn that is
// not /compact flushes memory first (sess updated).
func (t *Turns) turnPrompt(ctx context.Context, set Settings, req Request, sess *store.Session, msgs []message.Message, fresh, compact bool) (prompt, system string) {
	last := &msgs[len(msgs)-1]
	prompt, system = t.prompt(ctx, set, req, *sess, msgs, fresh)
	if meta := t.meta().Of(*sess); meta.FeedbackOf(req.Entries[0].ID, last.From) && last.Scheduled == "" {
		prompt = feedbackLabel(last) + "\n\n" + prompt
	}
	if compact {
		// claude's own /compact: it summarizes the conversation and goes
		// on from the summary (the hooks' system prompt stays, so the
		// warm process is kept).
		return "/compact", system
	}
	if line, ok := t.claudeCommand(req.Key.Agent, msgs); ok {
		prompt = line // claude's own command, the raw line the CLI expands (claudecmd.go)
	}
	t.memoryFlush(ctx, set, req.Key, sess, last)
	return prompt, system
}

// IsCompact reports whether m is the /compact command, which the gateway
// queues as a turn of its session (in order with its messages).
func IsCompact(m *message.Message) bool {
	cmd, _, _ := strings.Cut(strings.TrimSpace(m.Command()), " ")
	return strings.EqualFold(cmd, "/compact")
}

// noteSilentDirect is sent in a direct chat when claude answered only
// NO_REPLY (and reacted to nothing, sent no file): the person would
// otherwise see nothing at all.
const noteSilentDirect = "(claude answered NO_REPLY: it had nothing to say to this. Ask again if you expected an answer.)"

// NoteSessionReset starts the reply of a turn whose session claude could
// not resume (its transcript missing): the conversation starts anew.
const NoteSessionReset = "(The earlier conversation could not be restored; this reply starts a new session.)"

// noteStopped ends the draft of a turn that was stopped (/stop, or a new
// message in interrupt mode).
const noteStopped = "(stopped)"

// outcome turns the runner's result into what to deliver.
func (t *Turns) outcome(ctx context.Context, log *turnLog, req Request, res runner.Result, out streamed, last *message.Message) Outcome {
	o := Outcome{Deliver: true, Target: last.Target(), Format: channel.FormatMarkdown, Draft: out.draft}
	switch {
	case res.Err == nil:
		o.Text = out.remainder
		if res.SessionReset {
			o.Text = strings.TrimSpace(NoteSessionReset + "\n\n" + o.Text)
		}
	case res.Err.Kind == runner.KindAborted:
		log.get().Info("turn aborted", "reason", req.AbortReason())
		if out.draft != nil && !out.card {
			// The draft shows a reply cut off: say so, rather than leave
			// it looking like the whole answer.
			out.draft.Interrupted(noteStopped)
		}
		return Outcome{Deliver: true, Target: last.Target(), Format: channel.FormatPlain, Draft: out.draft}
	case res.Err.Kind == runner.KindUsageLimit || res.Err.Kind == runner.KindRateLimited:
		log.get().Warn("claude's limit refused the turn; it is parked until the reset", "kind", res.Err.Kind, "reset", res.Err.ResetAt, "detail", res.Err.Detail)
		return Outcome{Park: true, Target: last.Target(), ResetAt: res.Err.ResetAt, LimitReason: string(res.Err.Kind), Draft: out.draft}
	case res.Err.Kind == runner.KindPromptTooLong:
		log.get().Warn("conversation too long for the context window; starting a new session", "detail", res.Err.Detail)
		t.Reset(ctx, req.Key, last, "prompt too long")
		o.Text, o.Format = "This conversation got too long for the model's context, so I started a new session. Please send your last message again.", channel.FormatPlain
	default:
		log.get().Error("agent turn failed", "kind", res.Err.Kind, "detail", res.Err.Detail)
		o.Text, o.Format = res.Err.Notice, channel.FormatPlain
	}
	if out.replyTo.Current {
		o.ReplyTo = last.MessageID
	} else if out.replyTo.MessageID != "" {
		o.ReplyTo = out.replyTo.MessageID
	}
	return o
}

// restartNotice precedes a run of a turn whose earlier run showed the user
// something that cannot be continued (streamed blocks, or a draft whose
// send was never confirmed): the user is told the reply starts again
// rather than silently getting a second copy of its beginning.
const restartNotice = "(The gateway restarted while answering; the reply starts again.)"

// earlierRun reads what an earlier run of the turn showed before a restart
// (the store's live output of its first entry) and returns the draft to
// continue, if any. Anything else that was shown is announced with
// restartNotice before the run.
func (t *Turns) earlierRun(ctx context.Context, log *turnLog, req Request, last *message.Message) store.Live {
	if req.Entries[0].Attempts < 1 {
		return store.Live{}
	}
	live, err := t.opts.Store.LiveOutput(ctx, req.Entries[0].ID)
	if err != nil {
		log.get().Warn("reading the earlier run's output failed", "error", err)
		return store.Live{}
	}
	var draft store.Live
	announce := false
	for _, l := range live {
		if l.Kind == store.LiveDraft && l.Confirmed() {
			draft = l
		} else {
			announce = true
		}
	}
	if announce {
		t.opts.Output.Send(req.Key, last.Target(), restartNotice, channel.FormatPlain)
	}
	return draft
}

// decode reads the entries' messages; an unreadable entry fails alone and
// the turn is skipped (the lane picks the rest again).
func (t *Turns) decode(ctx context.Context, entries []store.Entry) ([]message.Message, bool) {
	msgs := make([]message.Message, 0, len(entries))
	for _, e := range entries {
		m, err := message.Decode(e.Message)
		if err != nil {
			t.log.Error("journal entry unreadable; marked failed", "id", e.ID, "error", err)
			if ferr := t.opts.Store.Finish(ctx, store.FinishRequest{IDs: []int64{e.ID}, State: store.StateFailed, Reason: "unreadable"}); ferr != nil {
				t.log.Error("journal finish failed", "id", e.ID, "error", ferr)
			}
			return nil, false
		}
		msgs = append(msgs, m)
	}
	return msgs, true
}

func ids(entries []store.Entry) []int64 {
	out := make([]int64, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

// turnLog is a turn's logger, with its session and entry ids attached,
// made on first use: a turn that goes well logs nothing above debug, and
// hclog's With copies the logger (about ten allocations a turn).
type turnLog struct {
	base    hclog.Logger
	key     string
	entries []store.Entry
	l       hclog.Logger
}

func (t *turnLog) get() hclog.Logger {
	if t.l == nil {
		t.l = t.base.With("session", t.key, "ids", ids(t.entries))
	}
	return t.l
}
