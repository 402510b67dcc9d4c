package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/reply"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
)

// lane is a session's run state. The queue itself is in the journal (the
// session's queued entries); the lane runs one turn at a time over it
// (the claude CLI loses a turn when two runs resume one session).
type lane struct {
	key     string
	running bool // a goroutine is draining the queue
	dirty   bool // work was added since the goroutine last looked
	active  *activeRun
	// batch maps entry ids a debounce window merged to the first id.
	batch map[int64]int64
}

// activeRun is the turn a lane is running.
type activeRun struct {
	ids    []int64
	covers []int64 // steered entries the turn answers too
	reason string  // why it was aborted, if it was
}

func (g *Gateway) lane(key string) *lane {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.lanes[key]
	if l == nil {
		l = &lane{key: key, batch: map[int64]int64{}}
		g.lanes[key] = l
	}
	return l
}

// kick makes the session's lane look at its queue.
func (g *Gateway) kick(key string) {
	l := g.lane(key)
	g.mu.Lock()
	l.dirty = true
	start := !l.running && g.ctx.Err() == nil
	if start {
		l.running = true
		g.wg.Add(1)
	}
	g.mu.Unlock()
	if start {
		go g.drain(l)
	}
}

// drain runs the lane's queued entries, oldest first, until none is left.
func (g *Gateway) drain(l *lane) {
	defer g.wg.Done()
	for {
		g.mu.Lock()
		l.dirty = false
		g.mu.Unlock()
		var pending []store.Entry
		var err error
		if g.ctx.Err() == nil {
			pending, err = g.store.ListPending(g.ctx, l.key, 0)
			if err != nil && g.ctx.Err() == nil {
				g.log.Error("reading the session queue failed", "session", l.key, "error", err)
			}
		}
		if len(pending) == 0 {
			g.mu.Lock()
			if !l.dirty || g.ctx.Err() != nil || err != nil {
				l.running = false
				if l.active == nil && len(l.batch) == 0 {
					delete(g.lanes, l.key)
				}
				g.mu.Unlock()
				return
			}
			g.mu.Unlock()
			continue
		}
		g.obs.SetQueueDepth(int(max(g.queued.Load(), 0)))
		batch, collected := g.pick(l, pending)
		if !g.turn(l, batch, collected) {
			g.mu.Lock()
			l.running = false
			g.mu.Unlock()
			return
		}
	}
}

// pick chooses the entries of the next turn: in collect mode everything
// waiting; otherwise the oldest entry and the entries its debounce window
// merged with it.
func (g *Gateway) pick(l *lane, pending []store.Entry) ([]store.Entry, bool) {
	set := g.settings()
	mode := set.QueueMode
	if v := set.QueueModeByInstance[pending[0].Instance]; v != "" {
		mode = v
	}
	if mode == ModeCollect {
		return pending, len(pending) > 1
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	head, ok := l.batch[pending[0].ID]
	if !ok {
		return pending[:1], false
	}
	out := pending[:0:0]
	for _, e := range pending {
		if l.batch[e.ID] == head {
			out = append(out, e)
			delete(l.batch, e.ID)
		}
	}
	return out, false
}

// abort ends the session's running turn, if any.
func (g *Gateway) abort(key, reason string) bool {
	g.mu.Lock()
	l := g.lanes[key]
	var run *activeRun
	if l != nil {
		run = l.active
	}
	if run != nil && run.reason == "" {
		run.reason = reason
	}
	g.mu.Unlock()
	if run == nil {
		return false
	}
	return g.agent.Abort(key)
}

// chatMeta is what the session store keeps as chat metadata, plus the
// memory-flush bookkeeping the runner's MemoryFlush decision needs.
type chatMeta struct {
	Instance     string `json:"instance"`
	Channel      string `json:"channel"`
	ChatType     string `json:"chat_type"`
	ChatID       string `json:"chat_id"`
	ThreadID     string `json:"thread_id,omitempty"`
	Title        string `json:"title,omitempty"`
	SenderName   string `json:"sender_name,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	Window       int    `json:"context_window,omitempty"`
	Compactions  int    `json:"compactions,omitempty"`
}

// session returns the session to run the turn in, starting a new one when
// there is none, or when the reset policy says the old one is stale.
func (g *Gateway) session(set Settings, key string, m *Message) (store.Session, bool, error) {
	now := g.opts.Now()
	var fresh bool
	var staleReason string
	s, err := g.store.UpdateSession(g.ctx, key, func(s *store.Session, found bool) error {
		stale := !found || s.ClaudeSessionID == ""
		if !stale {
			typ := sessionreset.TypeOf(key, m.IsGroup(), m.ThreadID != "")
			pol := sessionreset.Resolve(set.Reset, m.Instance, typ)
			f := sessionreset.Evaluate(pol, sessionreset.Times{UpdatedAt: s.UpdatedAt, StartedAt: s.CreatedAt, LastInteractionAt: s.LastMessageAt}, now, set.Location)
			if !f.Fresh {
				stale, staleReason = true, f.StaleReason
			}
		}
		if stale {
			*s = store.Session{Key: key, SessionID: uuid.NewString(), ClaudeSessionID: uuid.NewString(), CreatedAt: now, Verbose: s.Verbose, AbortHint: s.AbortHint}
			fresh = true
		}
		return nil
	})
	if staleReason != "" {
		g.log.Info("session expired by reset policy; starting a new one", "session", key, "reason", staleReason)
		g.agent.Stop(key)
		g.history.clear(historyKey(m))
	}
	return s, fresh, err
}

// turn runs one agent turn for entries (oldest first) and delivers its
// reply.
//
// It returns false when the lane cannot go on (the entries' instance is
// gone): the entries stay queued in the journal.
func (g *Gateway) turn(l *lane, entries []store.Entry, collected bool) bool {
	set := g.settings()
	key := l.key
	ids := make([]int64, len(entries))
	msgs := make([]Message, 0, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
		m, err := decodeMessage(e.Message)
		if err != nil {
			g.log.Error("journal entry unreadable; marked failed", "id", e.ID, "error", err)
			g.finish([]int64{e.ID}, store.StateFailed, "unreadable")
			return true
		}
		msgs = append(msgs, m)
	}
	last := &msgs[len(msgs)-1]
	tgt := targetOf(last)
	log := g.log.With("session", key, "ids", ids)

	if g.host != nil && g.host.Instance(last.Instance) == nil {
		log.Warn("message for a disabled or unknown instance; kept in the journal until it is enabled and the host restarts", "instance", last.Instance)
		return false
	}

	sess, fresh, err := g.session(set, key, last)
	if err != nil {
		log.Error("session store failed; message kept queued", "error", err)
		g.backoff()
		return true
	}
	if err := g.store.Start(g.ctx, ids...); err != nil {
		if g.ctx.Err() == nil {
			log.Error("journal start failed; message kept queued", "error", err)
			g.backoff()
		}
		return true
	}
	g.queued.Add(-int64(len(ids)))
	g.obs.SetQueueDepth(int(max(g.queued.Load(), 0)))

	typing := g.startTyping(tgt)
	defer typing.seal()

	for i := range msgs {
		g.fetchMedia(set, &msgs[i], ids[i])
	}
	g.mu.Lock()
	summaries := g.summaries[key]
	delete(g.summaries, key)
	g.mu.Unlock()
	prompt := g.buildPrompt(set, sess, msgs, collected, summaries)
	prepend, system := g.hooks(set, key, last, fresh)
	if prepend != "" {
		prompt = prepend + "\n\n" + prompt
	}

	g.memoryFlush(set, key, &sess, tgt)

	run := &activeRun{ids: ids}
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	g.mu.Lock()
	l.active = run
	g.mu.Unlock()
	g.active.Add(1)
	g.obs.SetActiveRuns(int(g.active.Load()))
	started := g.opts.Now()
	res, streamed := g.runAgent(ctx, set, key, sess, fresh, prompt, system, tgt, last)
	g.active.Add(-1)
	g.obs.SetActiveRuns(int(g.active.Load()))
	g.mu.Lock()
	l.active = nil
	covers := append(append([]int64(nil), ids[1:]...), run.covers...)
	reason := run.reason
	g.mu.Unlock()

	if g.ctx.Err() != nil {
		// Shutting down: the run was cut by the stop, not by the user. The
		// entries stay in processing; the next start runs them again.
		log.Info("turn interrupted by shutdown; it runs again after the restart")
		return false
	}
	outcome := "ok"
	if res.Err != nil {
		outcome = string(res.Err.Kind)
		g.obs.RunnerError(string(res.Err.Kind))
	}
	g.obs.Turn(g.opts.Now().Sub(started), outcome)
	g.recordUsage(key, sess, res, last, fresh)

	var text string
	format := formatMarkdown
	switch {
	case res.Err == nil:
		text = streamed.remainder
		if res.SessionReset {
			text = strings.TrimSpace("(The earlier conversation could not be restored; this reply starts a new session.)\n\n" + text)
		}
	case res.Err.Kind == runner.KindAborted:
		log.Info("turn aborted", "reason", reason)
		g.deliver(key, ids[0], covers, tgt, "", formatPlain, "")
		return true
	case res.Err.Kind == runner.KindPromptTooLong:
		log.Warn("conversation too long for the context window; starting a new session", "detail", res.Err.Detail)
		g.resetSession(key, last, "prompt too long")
		text, format = "This conversation got too long for the model's context, so I started a new session. Please send your last message again.", formatPlain
	default:
		log.Error("agent turn failed", "kind", res.Err.Kind, "detail", res.Err.Detail)
		text, format = res.Err.Notice, formatPlain
	}
	log.Debug("agent turn done", "duration", res.Duration, "outcome", outcome, "new_process", res.NewProcess)
	replyTo := ""
	if streamed.replyTo.Current {
		replyTo = last.MessageID
	} else if streamed.replyTo.MessageID != "" {
		replyTo = streamed.replyTo.MessageID
	}
	var first func(string) (string, bool)
	if streamed.draft != nil {
		first = streamed.draft.takeFirst
	}
	g.deliverWith(key, ids[0], covers, tgt, text, format, replyTo, first)
	return true
}

func (g *Gateway) backoff() {
	select {
	case <-g.ctx.Done():
	case <-time.After(time.Second):
	}
}

// recordUsage adds the turn to the session's bookkeeping.
func (g *Gateway) recordUsage(key string, sess store.Session, res runner.Result, m *Message, fresh bool) {
	now := g.opts.Now()
	_, err := g.store.UpdateSession(g.ctx, key, func(s *store.Session, found bool) error {
		if s.SessionID != sess.SessionID && found {
			return nil // reset meanwhile
		}
		if !found {
			*s = sess
		}
		if res.Err == nil || res.Usage.OutputTokens > 0 {
			s.Turns++
		}
		s.Usage.InputTokens += int64(res.Usage.InputTokens)
		s.Usage.OutputTokens += int64(res.Usage.OutputTokens)
		s.Usage.CacheReadTokens += int64(res.Usage.CacheReadInputTokens)
		s.Usage.CacheCreationTokens += int64(res.Usage.CacheCreationInputTokens)
		s.CostUSD += res.Usage.CostUSD
		if res.Model != "" {
			s.Model = res.Model
		}
		s.LastMessageAt = now
		s.LastTarget = store.Target{Instance: m.Instance, ChatID: m.ChatID, ThreadID: m.ThreadID}
		// The next prompt says the run was cut short (/stop, interrupt
		// mode, the turn timeout).
		s.AbortHint = res.Err != nil && (res.Err.Kind == runner.KindAborted || res.Err.Kind == runner.KindTimeout)
		var meta chatMeta
		_ = json.Unmarshal(s.Chat, &meta)
		meta.Instance, meta.Channel, meta.ChatType, meta.ChatID, meta.ThreadID = m.Instance, m.Channel, string(m.ChatType), m.ChatID, m.ThreadID
		if m.ChatTitle != "" {
			meta.Title = m.ChatTitle
		}
		if m.Sender.Name != "" && !m.IsGroup() {
			meta.SenderName = m.Sender.Name
		}
		if p := res.Usage.PromptTokens(); p > 0 {
			meta.PromptTokens = p
		}
		if res.ContextWindow > 0 {
			meta.Window = res.ContextWindow
		}
		if res.Compacted {
			meta.Compactions++
		}
		s.Chat, _ = json.Marshal(meta)
		return nil
	})
	if err != nil && g.ctx.Err() == nil {
		g.log.Error("session update failed", "session", key, "error", err)
	}
}

// memoryFlush runs the pre-compaction memory-flush turn when the session's
// prompt approaches the context window, once per compaction cycle. Its
// NO_REPLY is suppressed; any other answer is delivered like a reply.
func (g *Gateway) memoryFlush(set Settings, key string, sess *store.Session, tgt target) {
	cfg, ok := g.agent.(interface{ Config() runner.Config })
	if !ok {
		return
	}
	mf := cfg.Config().MemoryFlush
	var meta chatMeta
	_ = json.Unmarshal(sess.Chat, &meta)
	var flushed *int
	if sess.MemoryFlushCycle > 0 {
		c := int(sess.MemoryFlushCycle - 1)
		flushed = &c
	}
	if !mf.Due(runner.FlushState{PromptTokens: meta.PromptTokens, ReportedContextWindow: meta.Window, CompactionCount: meta.Compactions, FlushedAtCompaction: flushed}) {
		return
	}
	prompt, system := mf.Texts()
	g.log.Info("running the memory-flush turn before compaction", "session", key, "prompt_tokens", meta.PromptTokens)
	t, err := g.agent.Run(g.ctx, runner.TurnRequest{Key: key, SessionID: sess.ClaudeSessionID, Prompt: prompt, ExtraSystemPrompt: system})
	if err != nil {
		return
	}
	res := t.Wait()
	cycle := int64(meta.Compactions) + 1
	_, _ = g.store.UpdateSession(g.ctx, key, func(s *store.Session, found bool) error { s.MemoryFlushCycle = cycle; return nil })
	sess.MemoryFlushCycle = cycle
	if res.Err != nil {
		g.log.Warn("memory-flush turn failed", "session", key, "kind", res.Err.Kind)
		return
	}
	if p, skip := reply.Normalize(reply.Payload{Text: res.Text}, reply.Options{}); skip == reply.Deliver && strings.TrimSpace(p.Text) != "" {
		g.notify(key, tgt, p.Text)
	}
}

// Status of the gateway for /status and the admin page.
func (g *Gateway) status(key string, m *Message) string {
	s, err := g.store.Session(g.ctx, key)
	queued, _ := g.store.CountPending(g.ctx, key)
	g.mu.Lock()
	running := g.lanes[key] != nil && g.lanes[key].active != nil
	g.mu.Unlock()
	set := g.settings()
	var b strings.Builder
	fmt.Fprintf(&b, "Session: %s\n", key)
	if errors.Is(err, store.ErrNotFound) || s.SessionID == "" {
		b.WriteString("No conversation yet.\n")
	} else {
		model := s.Model
		if model == "" {
			model = set.Model
		}
		if model == "" {
			model = "default"
		}
		fmt.Fprintf(&b, "Session id: %s\nModel: %s\nTurns: %d\nTokens: %d in, %d out (cache %d read, %d written)\nCost: $%.4f\n",
			s.SessionID, model, s.Turns, s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheCreationTokens, s.CostUSD)
		if !s.LastMessageAt.IsZero() {
			fmt.Fprintf(&b, "Last activity: %s ago\n", g.opts.Now().Sub(s.LastMessageAt).Round(time.Second))
		}
	}
	state := "idle"
	if running {
		state = "running"
	}
	fmt.Fprintf(&b, "Agent: %s, %d queued\nUptime: %s", state, queued, g.opts.Now().Sub(g.started).Round(time.Second))
	if g.opts.Version != "" {
		fmt.Fprintf(&b, "\nclawhost %s", g.opts.Version)
	}
	return b.String()
}

// target is where a reply goes.
type target struct {
	Instance, ChatID, ThreadID string
}

func targetOf(m *Message) target { return target{m.Instance, m.ChatID, m.ThreadID} }
