package turn

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/reply"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

const progressMaxLen = 120

// streamed is what a run leaves for delivery.
type streamed struct {
	// remainder is the normalized reply text not yet delivered.
	remainder string
	replyTo   reply.ReplyTarget
	draft     Draft
	// card: the turn card was shown and the answer never replaced it.
	card bool
	// silent: the final text was the silent token, and no block had been
	// streamed before it.
	silent bool
	// steps are the run's tool calls, in order (for agent_end).
	steps []hook.ToolStep
	// settle tells the runner the turn's reply is delivered
	// (runner.Turn.Settle); nil when claude did not run.
	settle func()
}

// streamer shows one run's text while it is produced: blocks are sent as
// they are coalesced (800–1200 characters, paragraph breaks preferred, 1 s
// idle flush), or shown as a live draft from the first text on, edited at
// most once a second.
type streamer struct {
	t   *Turns
	ctx context.Context
	key string
	// skey is key typed, for the chat's outputs.
	skey sessionkey.Key
	// typing is paused while a permission question waits; asker is the
	// message that started the turn (nil: a scheduled turn).
	typing *typing
	asker  *message.Message
	// asks: the session asks about tool use (Turns.asks); a plan-mode
	// turn that does not asks only about plans and claude's questions.
	asks bool
	// always are the session's always-allowed rules (runner.Rule strings):
	// those at the start and those granted during the turn.
	alwaysMu sync.Mutex
	always   []string
	id       int64 // the journal entry the live output is recorded for
	// hooked: message_sending hooks shape the replies (Options.SendingHooked),
	// so tool lines name the tool only.
	hooked  bool
	blocks  int // streamed blocks sent so far
	tgt     message.Target
	mode    Streaming
	verbose bool
	opts    reply.Options
	c       *chunk.Coalescer
	acc     strings.Builder // the whole streamed text, for the draft
	// previewAt is when the draft first shows the streamed text (zero:
	// no delta yet, or shown: previewed).
	previewAt time.Time
	previewed bool
	out       streamed
	card      *card // nil: no turn card
	// began records that the run truly began (Request.Began); nil: none.
	began func(ctx context.Context) error
}

// streamMode resolves the streaming setting for a target.
func (t *Turns) streamMode(set Settings, instance string) Streaming {
	if set.Streaming != StreamAuto && set.Streaming != StreamDraft {
		return set.Streaming
	}
	if t.opts.Output.CanEdit(instance) {
		return StreamDraft
	}
	return StreamBlocks
}

// agentRun is one run of claude for a turn: the session (key, its row,
// fresh for its first turn), the journal entry it answers (id) and the
// live output an earlier run of it left (prev), what claude is sent
// (prompt, system, images), the message it answers (last), the turn's
// typing indicator, and began, told once claude read the prompt (the
// journal's began mark).
type agentRun struct {
	key            sessionkey.Key
	id             int64
	prev           store.Live
	sess           store.Session
	fresh          bool
	prompt, system string
	last           *message.Message
	typing         *typing
	images         []runner.Image
	began          func(context.Context) error
}

// runAgent runs the turn and streams its text. What the final result adds
// to what was streamed is returned for the outbox; nothing is shown twice.
func (t *Turns) runAgent(ctx context.Context, set Settings, r agentRun) (runner.Result, streamed) {
	skey, id, prev, sess, fresh, m, ty, began := r.key, r.id, r.prev, r.sess, r.fresh, r.last, r.typing, r.began
	prompt, system, images := r.prompt, r.system, r.images
	meta := t.meta().Of(sess)
	ov := meta.Overrides()
	key := skey.String()
	mcp, tools := t.agentTools(skey, m)
	t.toolRun(skey, m, id)
	dir, err := t.workDir(ctx, set, skey)
	if err != nil {
		return runner.Result{Err: &runner.Error{Kind: runner.KindCrash, Notice: "This chat's git worktree could not be made, so the agent did not run; the operator's log says why.", Detail: err.Error()}}, streamed{}
	}
	model := t.modelOf(set, ov)
	if m.Scheduled != "" && m.Model != "" {
		model = m.Model // heartbeat { model }
	}
	mode := t.streamMode(set, m.Instance)
	hooked := t.opts.SendingHooked != nil && t.opts.SendingHooked()
	if hooked {
		mode = StreamOff // nothing the message_sending hooks have not seen
	}
	if m.Scheduled == HeartbeatJob {
		mode = StreamOff // a heartbeat's acknowledgement is never shown, not even live
	}
	s := &streamer{
		t: t, ctx: ctx, key: key, skey: skey, id: id, tgt: m.Target(), mode: mode, hooked: hooked, verbose: sess.Verbose || set.Verbose, typing: ty, always: meta.Always,
		opts: reply.Options{ResponsePrefix: set.ResponsePrefix, PrefixContext: reply.PrefixContext{Model: reply.ShortModel(set.Model), ModelFull: set.Model, Provider: "anthropic"},
			Heartbeat: m.Scheduled == HeartbeatJob},
		// Blocks are separate messages, each with balanced code fences; a
		// draft joins them into one.
		c:     chunk.NewCoalescer(chunk.CoalesceConfig{Joined: mode == StreamDraft}, t.opts.Now),
		began: began,
	}
	if s.mode == StreamDraft {
		s.out.draft = t.opts.Output.NewDraft(skey, id, s.tgt, prev)
	}
	if set.TurnCard && m.Scheduled != HeartbeatJob && (mode == StreamDraft || mode == StreamOff) && t.opts.Output.CanEdit(m.Instance) &&
		(!m.IsGroup() || m.WasMentioned) {
		// The card counts from here: waiting for claude is part of the
		// turn. In a group, only a turn someone asked for shows one: the
		// chatter claude reads with require_mention off (and mostly
		// answers NO_REPLY) leaves no cards behind.
		if s.out.draft == nil {
			s.out.draft = t.opts.Output.NewDraft(skey, id, s.tgt, prev)
		}
		s.card = t.newCard(skey, s.out.draft, s.verbose)
		if m.Received != nil {
			// What the message_received hooks did before the turn (a
			// voice note transcribed, and how long it took).
			for _, st := range m.Received.Steps {
				s.card.step(st)
			}
		}
	}
	if m.Scheduled == "" {
		s.asker = m
	}
	pmode := t.permissionMode(set, ov)
	s.asks = t.asks(set, ov)
	ask := s.asks
	if plan, _ := t.planning(set, ov, meta, id, m); plan {
		pmode, ask = runner.PlanMode, ask || t.opts.Approvals != nil
	}
	run, err := t.opts.Agent.Run(ctx, runner.TurnRequest{Key: key, SessionID: sess.ClaudeSessionID, NewSession: fresh, AdoptSpare: fresh, Prompt: prompt, ExtraSystemPrompt: system,
		Agent: skey.Agent, Dir: dir, Model: model, Effort: string(ov.Effort), PermissionMode: pmode, MCPConfig: mcp, Tools: tools, LateTools: t.lateTools(skey, m, mcp), MediaDir: skey.Dir(), AskPermission: ask, Images: images})
	if err != nil {
		s.stopLive()
		return runner.Result{Err: &runner.Error{Kind: runner.KindCrash, Notice: "The agent is unavailable right now.", Detail: err.Error()}}, s.out
	}
	s.out.settle = run.Settle
	res := s.consume(run.Events())
	s.stopLive()
	if res.Model != "" {
		// {model} in response_prefix names the model that answered, not
		// the one configured (an alias, a fallback, or none).
		s.opts.PrefixContext.Model, s.opts.PrefixContext.ModelFull = reply.ShortModel(res.Model), res.Model
	}
	if res.Err == nil {
		s.finish(res.Text)
	}
	return res, s.out
}

// stopLive ends the card's and the draft's updates.
func (s *streamer) stopLive() {
	if s.card != nil {
		s.out.card = s.card.stop()
	}
	if s.out.draft != nil {
		s.out.draft.Stop()
	}
}

// consume reads the run's events until it ends, streaming text and tool
// progress, and returns its result.
func (s *streamer) consume(events <-chan runner.Event) runner.Result {
	var res runner.Result
	var timer *time.Timer
	var timerC <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return res
			}
			s.event(e, &res)
		case <-timerC:
			for _, b := range s.c.Poll() {
				s.emit(b)
			}
			if !s.previewAt.IsZero() && !s.t.opts.Now().Before(s.previewAt) {
				s.previewAt, s.previewed = time.Time{}, true
				s.preview()
			}
		}
		timerC = nil
		at, ok := s.c.Deadline()
		if !s.previewAt.IsZero() && (!ok || s.previewAt.Before(at)) {
			at, ok = s.previewAt, true
		}
		if ok && s.mode != StreamOff {
			wait := max(at.Sub(s.t.opts.Now()), time.Millisecond)
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			timerC = timer.C
		}
	}
}

func (s *streamer) event(e runner.Event, res *runner.Result) {
	switch e.Kind {
	case runner.EventResult:
		*res = *e.Result
	case runner.EventPermission:
		if s.t.opts.Approvals == nil {
			e.Permission.Answer(runner.Decision{Message: "This gateway has no way to ask the user."})
			return
		}
		if !s.asks && !asksOnly(e.Permission) {
			// Asked only because the turn plans: what it asks about is
			// denied as without approvals.
			e.Permission.Answer(runner.Decision{Message: "This tool use needs approval, which this chat does not ask for; it is denied."})
			return
		}
		// What was written before the question is shown before it.
		if s.mode != StreamOff {
			for _, b := range s.c.Flush() {
				s.emit(b)
			}
		}
		go s.permission(s.ctx, e.Permission)
	case runner.EventBegan:
		if s.began != nil {
			// Before anything else of the turn is handled: from here an
			// interruption spends one of the message's attempts.
			if err := s.began(s.ctx); err != nil && s.ctx.Err() == nil {
				s.t.log.Warn("recording that the turn began failed; an interruption now would not count as a run", "key", s.key, "error", err)
			}
		}
	case runner.EventToolUse:
		if e.Tool != nil {
			s.out.steps = append(s.out.steps, hook.ToolStep{Name: e.Tool.Name, Summary: e.Tool.Summary})
		}
		switch {
		case e.Tool == nil:
		case s.card != nil:
			// The card shows the step (a verbose card, each step).
			s.card.step(s.progressLine(e.Tool))
		case s.verbose:
			s.t.opts.Output.Send(s.skey, s.tgt, s.progressLine(e.Tool), channel.FormatPlain)
		}
	default:
		if s.mode != StreamOff {
			for _, b := range coalesce(s.c, e) {
				s.emit(b)
			}
		}
		if s.mode == StreamDraft && e.Kind == runner.EventTextDelta {
			switch {
			case s.previewed:
				s.preview()
			case s.previewAt.IsZero():
				s.previewAt = s.t.opts.Now().Add(draftFirstWait)
			}
		}
	}
}

// coalesce gives the coalescer the text of one event and returns the
// blocks due: the deltas when the turn streams them, the complete blocks
// otherwise. The result is not given here: finish reconciles it.
func coalesce(c *chunk.Coalescer, e runner.Event) []string {
	switch e.Kind {
	case runner.EventTextDelta:
		return c.Delta(e.Text)
	case runner.EventBlockEnd:
		c.EndBlock()
	case runner.EventText:
		return c.Block(e.Text)
	}
	return nil
}

// draftFirstWait is how long a live draft waits after the reply's first
// streamed words before it shows them: a reply that ends sooner (most
// short answers) arrives as one message, not as a draft posted and at
// once edited to the final text (two API calls, and a turn card's edit
// rate broken). The first visible text of a longer reply comes after it.
const draftFirstWait = 150 * time.Millisecond

// preview shows a live draft's text: the blocks so far and the text the
// coalescer still holds. Blocks wait for their size or for a pause
// (separate messages must read well on their own); a draft is one
// message edited in place, which the draft throttles (at most one edit a
// second), so its text need not wait for either: the first preview comes
// draftFirstWait after the first delta, the next with each delta. Only a
// streamed turn (deltas) previews: a whole assistant message comes with
// its result close behind, which delivers it as one message.
func (s *streamer) preview() {
	pending := strings.TrimSpace(s.c.Buffered())
	if pending == "" {
		return
	}
	text := s.acc.String()
	if text != "" {
		text += "\n\n"
	}
	if s.card != nil {
		s.card.streaming()
	}
	s.out.draft.Update(text + pending)
}

// emit shows one coalesced block.
func (s *streamer) emit(block string) {
	switch s.mode {
	case StreamBlocks:
		p, skip := reply.Normalize(reply.Payload{Text: block}, s.opts)
		if skip != reply.Deliver || strings.TrimSpace(p.Text) == "" {
			return
		}
		if !p.ReplyTo.IsZero() && s.out.replyTo.IsZero() {
			s.out.replyTo = p.ReplyTo
		}
		s.blocks++
		s.t.opts.Output.SendBlock(s.skey, s.id, s.blocks, s.tgt, p.Text)
	case StreamDraft:
		if s.acc.Len() > 0 {
			s.acc.WriteString("\n\n")
		}
		s.acc.WriteString(block)
		if s.card != nil {
			s.card.streaming()
		}
		s.out.draft.Update(s.acc.String())
	}
}

// finish reconciles the final result with what was streamed and keeps the
// rest, normalized, for delivery.
func (s *streamer) finish(text string) {
	final := text
	if s.mode != StreamOff {
		blocks, diverged := s.c.Finish(text)
		if diverged {
			s.t.log.Debug("final result differs from the streamed text; delivered in full", "session", s.key)
		}
		if s.mode == StreamDraft {
			// The draft shows the streamed text; the final message is the
			// whole reply.
			final = strings.TrimSpace(s.acc.String() + "\n\n" + strings.Join(blocks, "\n\n"))
		} else {
			final = strings.Join(blocks, "\n\n")
		}
	}
	p, skip := reply.Normalize(reply.Payload{Text: final}, s.opts)
	if skip != reply.Deliver {
		s.out.silent = skip == reply.SkipSilent && s.blocks == 0
		return
	}
	s.out.remainder = p.Text
	if s.out.replyTo.IsZero() {
		s.out.replyTo = p.ReplyTo
	}
}

// progressLine is t's step line as this turn shows it: without claude's
// summary of the call when message_sending hooks shape the replies (the
// summary is claude's text, which they never saw).
func (s *streamer) progressLine(t *runner.ToolUse) string {
	if s.hooked {
		return progressLine(&runner.ToolUse{Name: t.Name})
	}
	return progressLine(t)
}

// progressLine is the line of a tool step: its name and summary.
func progressLine(t *runner.ToolUse) string {
	s := "⚙ " + t.Name
	if t.Summary != "" {
		s += ": " + t.Summary
	}
	if r := []rune(s); len(r) > progressMaxLen {
		s = string(r[:progressMaxLen-1]) + "…"
	}
	return s
}
