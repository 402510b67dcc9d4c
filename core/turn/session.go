package turn

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/reply"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Switch makes the chat's n-th earlier session (1 = the newest) current;
// the current one becomes an earlier one. The warm process is stopped, so
// the next turn resumes the chosen session with --resume.
func (t *Turns) Switch(ctx context.Context, skey sessionkey.Key, n int) (session.PastSession, error) {
	key := skey.String()
	var chosen session.PastSession
	_, err := t.opts.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		if err := t.meta().Edit(key, s, func(m *session.Meta) error {
			if n < 1 || n > len(m.Past) {
				return fmt.Errorf("there is no earlier session %d (/list shows %d)", n, len(m.Past))
			}
			chosen = m.Past[n-1]
			m.PushPast(*s)
			m.DropPast(chosen.ID)
			m.Name = chosen.Name
			return nil
		}); err != nil {
			return err
		}
		s.Key = key
		s.SessionID, s.ClaudeSessionID, s.CreatedAt, s.Turns, s.LastMessageAt = uuid.NewString(), chosen.ID, chosen.Started, chosen.Turns, chosen.Last
		return nil
	})
	if err == nil {
		t.opts.Agent.Stop(key)
		t.log.Info("session switched", "session", key, "claude_session", chosen.ID)
	}
	return chosen, err
}

// Adopt makes claude session id the chat's current one — a transcript the
// caller placed where the chat's claude finds it (an owner's terminal
// session, /continue) — with the turns it had and when it was last
// written; the current one becomes an earlier one. edit changes the
// metadata of the new current session (which terminal session it came
// from). The warm process is stopped, so the next turn resumes id with
// --resume.
func (t *Turns) Adopt(ctx context.Context, key, id string, turns int64, edit func(*session.Meta)) error {
	now := t.opts.Now()
	_, err := t.opts.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		if err := t.meta().Edit(key, s, func(m *session.Meta) error {
			m.PushPast(*s)
			m.DropPast(id)
			edit(m)
			return nil
		}); err != nil {
			return err
		}
		s.Key = key
		s.SessionID, s.ClaudeSessionID, s.CreatedAt, s.Turns, s.LastMessageAt = uuid.NewString(), id, now, turns, now
		// claude's running cost of the session is not this chat's to know.
		s.ClaudeCostOf, s.ClaudeCostUSD = "", 0
		return nil
	})
	if err == nil {
		t.opts.Agent.Stop(key)
		t.log.Info("session adopted", "session", key, "claude_session", id)
	}
	return err
}

// pushPast is the chat metadata raw of the session old with old recorded
// as its newest earlier session (when it had a turn).
func (t *Turns) pushPast(raw []byte, old store.Session) []byte {
	if old.ClaudeSessionID == "" || old.Turns == 0 {
		return raw
	}
	m, _ := t.meta().Decode(old.Key, raw)
	m.PushPast(old)
	b, _ := t.meta().Encode(old.Key, m)
	return b
}

// keepOverrides is the chat metadata a new session starts with
// (session.Meta.Kept); nil when there is nothing to keep.
func (t *Turns) keepOverrides(raw []byte) []byte {
	m, _ := t.meta().Decode("", raw)
	kept, ok := m.Kept()
	if !ok {
		return nil
	}
	b, _ := t.meta().Encode("", kept)
	return b
}

// SetOverrides changes the session's /model, /effort, /mode or /queue
// with set, storing them in the session (they survive restarts and /new);
// the next turn restarts the warm claude process with --resume so they
// apply and the conversation goes on. An error of set changes nothing.
func (t *Turns) SetOverrides(ctx context.Context, key sessionkey.Key, set func(*session.Overrides) error) (session.Overrides, error) {
	var out session.Overrides
	_, err := t.meta().Update(ctx, t.opts.Store, key.String(), func(m *session.Meta) error {
		o := m.Overrides()
		was := o
		if err := set(&o); err != nil {
			return err
		}
		m.SetOverrides(o)
		for _, e := range overrideEvents(t.settingsOf(key), was, o) {
			m.AddEvent(e, t.opts.Now())
		}
		out = o
		return nil
	})
	return out, err
}

// overrideEvents are the "System:" lines that tell claude what /model,
// /effort and /mode changed (the queue mode is not claude's concern).
func overrideEvents(set Settings, was, now session.Overrides) []string {
	var out []string
	if was.Model != now.Model {
		switch now.Model {
		case "", "default":
			out = append(out, "The model is back to the configured one ("+cmp.Or(set.Model, "claude's default")+"), changed with /model.")
		default:
			out = append(out, "The model is now "+now.Model+", changed with /model.")
		}
	}
	if was.Effort != now.Effort {
		out = append(out, "Your effort level is now "+cmp.Or(string(now.Effort), "claude's default")+", changed with /effort.")
	}
	if was.Mode != now.Mode {
		out = append(out, "The permission mode is now "+cmp.Or(now.Mode, cmp.Or(set.PermissionMode, "the configured one"))+", changed with /mode.")
	}
	return out
}

// resetEvent is the "System:" line that opens a conversation a reset
// started, saying why.
func resetEvent(reason string) string {
	switch {
	case strings.Contains(reason, "prompt too long"):
		return "The previous conversation got too long for the context window; this is a new one, without its messages."
	case strings.Contains(reason, "/"), strings.Contains(reason, "trigger"):
		return "The user started a new conversation (" + strings.TrimPrefix(reason, "trigger ") + "): earlier messages of this chat are not part of it."
	}
	return "A new conversation started (" + reason + "): earlier messages of this chat are not part of it."
}

// lastMessageTime is when the last answered message of sess was written,
// else the end of its last turn.
func (t *Turns) lastMessageTime(sess store.Session) time.Time {
	if meta, ok := t.meta().Decode(sess.Key, sess.Chat); ok && !meta.LastMessage.IsZero() {
		return meta.LastMessage
	}
	return sess.LastMessageAt
}

// session returns the session to run the turn in, starting a new one when
// there is none, or when the reset policy says the old one is stale.
//
// note, when not empty, tells the user why their conversation starts anew
// (the reset policy expired it); it precedes the turn's reply.
func (t *Turns) session(ctx context.Context, set Settings, key string, m *message.Message) (sess store.Session, fresh bool, note string, err error) {
	now := t.opts.Now()
	var staleReason string
	var pol sessionreset.Policy
	// stale decides whether the stored session s must be replaced by a new
	// one, and why (a reset policy's reason; "" for none stored yet).
	stale := func(s *store.Session, found bool) bool {
		staleReason = ""
		if !found || s.ClaudeSessionID == "" {
			return true
		}
		typ := sessionreset.TypeOf(key, m.IsGroup(), m.ThreadID != "")
		pol = sessionreset.Resolve(set.Reset, m.Instance, typ)
		f := sessionreset.Evaluate(pol, sessionreset.Times{UpdatedAt: s.UpdatedAt, StartedAt: s.CreatedAt, LastInteractionAt: s.LastMessageAt}, now, set.Location)
		staleReason = f.StaleReason
		return !f.Fresh
	}
	// The common case, a live session, is a read: no write (and no
	// commit) stands between the journal's start and claude's stdin.
	// Only a new or expired session is written, and decided again inside
	// the write so that it is atomic with it.
	if cur, err := t.opts.Store.Session(ctx, key); err == nil && !stale(&cur, true) {
		return cur, cur.Turns == 0, "", nil
	}
	s, err := t.opts.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		if stale(s, found) {
			*s = store.Session{Key: key, SessionID: uuid.NewString(), ClaudeSessionID: uuid.NewString(), CreatedAt: now, Verbose: s.Verbose, AbortHint: s.AbortHint, Chat: t.keepOverrides(t.pushPast(s.Chat, *s))}
			s.ClaudeCostOf = s.ClaudeSessionID // a new claude session: its running total starts at 0
			fresh = true
			if staleReason != "" {
				_ = t.meta().Edit(key, s, func(m *session.Meta) error {
					m.AddEvent(staleEvent(staleReason, pol), now)
					return nil
				})
			}
		}
		return nil
	})
	// A session no turn of claude's ever completed (claude was missing or
	// failing) has no conversation to resume: it starts as new, so the
	// first real reply does not apologise for an earlier conversation
	// that never was. (Had claude written a transcript after all, the
	// runner resumes it: "already in use".)
	if err == nil && !fresh && s.Turns == 0 {
		fresh = true
	}
	switch staleReason {
	case sessionreset.ReasonIdle:
		note = fmt.Sprintf("(New conversation: the last one had been idle for more than %s.)", spoken.Duration(time.Duration(pol.IdleMinutes)*time.Minute))
	case sessionreset.ReasonDaily:
		note = fmt.Sprintf("(New conversation: conversations start afresh every day at %02d:00.)", pol.AtHour)
	}
	if staleReason != "" {
		t.log.Info("session expired by reset policy; starting a new one", "session", key, "reason", staleReason)
		t.opts.Agent.Stop(key)
		t.history.Clear(HistoryKey(m))
	}
	return s, fresh, note, err
}

// staleEvent is the "System:" line of a conversation the reset policy
// started.
func staleEvent(reason string, pol sessionreset.Policy) string {
	switch reason {
	case sessionreset.ReasonIdle:
		return fmt.Sprintf("A new conversation started: the last one had been idle for more than %s.", spoken.Duration(time.Duration(pol.IdleMinutes)*time.Minute))
	case sessionreset.ReasonDaily:
		return fmt.Sprintf("A new conversation started: conversations start afresh every day at %02d:00.", pol.AtHour)
	}
	return "A new conversation started (" + reason + ")."
}

// Reset starts a new session under key: the claude process is stopped and
// the next turn starts a new claude session; the chat's group history is
// cleared. Queued messages stay (aborting a running turn is the queue's).
func (t *Turns) Reset(ctx context.Context, skey sessionkey.Key, m *message.Message, reason string) {
	key := skey.String()
	t.opts.Agent.Stop(key)
	if _, err := t.opts.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		*s = store.Session{Key: key, Verbose: s.Verbose, Chat: t.pushPast(s.Chat, *s), LastTarget: s.LastTarget}
		_ = t.meta().Edit(key, s, func(m *session.Meta) error {
			m.Events = nil // the old conversation's
			m.AddEvent(resetEvent(reason), t.opts.Now())
			return nil
		})
		return nil
	}); err != nil {
		t.log.Error("session reset failed", "session", key, "error", err)
	}
	t.history.Clear(HistoryKey(m))
	t.log.Info("session reset", "session", key, "reason", reason)
}

// recordUsage adds the turn to the session's bookkeeping.
func (t *Turns) recordUsage(ctx context.Context, key string, entry int64, sess store.Session, res runner.Result, cost usage.Cost, m *message.Message) {
	t.writeSession(ctx, t.usageUpdate(key, entry, sess, res, cost, m))
}

// writeSession makes the session update u on its own (not with a reply).
func (t *Turns) writeSession(ctx context.Context, u *store.SessionUpdate) {
	if _, err := t.opts.Store.UpdateSession(ctx, u.Key, u.Fn); err != nil && ctx.Err() == nil {
		t.log.Error("session update failed", "session", u.Key, "error", err)
	}
}

// usageUpdate is the turn's session bookkeeping, to be written with its
// reply (store.Reply.Session) or on its own (writeSession).
func (t *Turns) usageUpdate(key string, entry int64, sess store.Session, res runner.Result, cost usage.Cost, m *message.Message) *store.SessionUpdate {
	now := t.opts.Now()
	// The chat metadata is folded in here, outside the store's writer (a
	// JSON decode and encode: ~7 % of the single writer's time per
	// message); the writer redoes it only when the session changed since
	// the turn read it.
	// The events the prompt carried (session.Meta.Events) are marked as
	// this entry's in the same write, once claude read the prompt, and
	// dropped by the next entry's turn; the ones added while the turn ran
	// stay for the next.
	carried := int64(0)
	if res.Err == nil || res.Usage.OutputTokens > 0 || res.Err.Kind == runner.KindAborted || res.Err.Kind == runner.KindTimeout {
		carried = t.meta().Of(sess).LastEvent()
	}
	chat := t.updateMeta(key, sess.Chat, res, m, entry, carried)
	return &store.SessionUpdate{Key: key, Fn: func(s *store.Session, found bool) error {
		if s.SessionID != sess.SessionID && found {
			return nil // reset meanwhile
		}
		if !found {
			*s = sess
		}
		if res.Wait.Start == runner.StartSpare && res.SessionID != "" && s.ClaudeSessionID == sess.ClaudeSessionID {
			// The new session ran on the agent's spare claude, started ahead under
			// a session id of its own (TurnRequest.AdoptSpare): that is the
			// conversation the next turn resumes.
			if s.ClaudeCostOf == s.ClaudeSessionID {
				s.ClaudeCostOf = res.SessionID
			}
			s.ClaudeSessionID = res.SessionID
		}
		if res.Err == nil || res.Usage.OutputTokens > 0 {
			s.Turns++
		}
		s.Usage.InputTokens += int64(res.Usage.InputTokens)
		s.Usage.OutputTokens += int64(res.Usage.OutputTokens)
		s.Usage.CacheReadTokens += int64(res.Usage.CacheReadInputTokens)
		s.Usage.CacheCreationTokens += int64(res.Usage.CacheCreationInputTokens)
		s.CostUSD += cost.USD
		if res.Model != "" {
			s.Model = res.Model
		}
		s.LastMessageAt = now
		s.LastTarget = store.Target{Instance: m.Instance, ChatID: m.ChatID, ThreadID: m.ThreadID}
		// The next prompt says the run was cut short (/stop, interrupt
		// mode, the turn timeout).
		s.AbortHint = res.Err != nil && (res.Err.Kind == runner.KindAborted || res.Err.Kind == runner.KindTimeout)
		if bytes.Equal(s.Chat, sess.Chat) {
			s.Chat = chat
		} else {
			s.Chat = t.updateMeta(key, s.Chat, res, m, entry, carried)
		}
		return nil
	}}
}

// updateMeta folds the turn into the session's chat metadata.
func (t *Turns) updateMeta(key string, raw []byte, res runner.Result, m *message.Message, entry, carried int64) []byte {
	meta, _ := t.meta().Decode(key, raw)
	meta.CarryEvents(entry, carried)
	if (res.Err == nil || res.Usage.OutputTokens > 0) && meta.FeedbackOf(entry, m.From) {
		meta.PlanFeedback = nil // this turn carried the feedback to claude
	}
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
	if !m.Timestamp.IsZero() {
		meta.LastMessage = m.Timestamp
	}
	if m.Scheduled != "" && m.Scheduled != HeartbeatJob && res.Err == nil {
		// The chat's next turn is told, once, that a schedule ran here
		// (a heartbeat's acknowledgement is nobody's business).
		meta.AddEvent(scheduleEvent(t.settings().Location, m), t.opts.Now())
	}
	b, _ := t.meta().Encode(key, meta)
	return b
}

// scheduleEvent is the "System:" line of a schedule that ran in the chat.
func scheduleEvent(loc *time.Location, m *message.Message) string {
	if loc == nil {
		loc = time.Local
	}
	return fmt.Sprintf("The schedule %q ran at %s (its prompt came from \"schedule %s\"; your answer went to the chat).",
		m.Scheduled, m.Timestamp.In(loc).Format("15:04"), m.Scheduled)
}

// flushOf is the memory flush of an agent's resolved settings (its own,
// or the default agent's as configured, else Options.MemoryFlush).
func (t *Turns) flushOf(set Settings) MemoryFlush {
	if set.MemoryFlush != nil {
		return *set.MemoryFlush
	}
	return t.opts.MemoryFlush
}

// memoryFlush runs the pre-compaction memory-flush turn when the session's
// prompt approaches the context window, once per compaction cycle. Its
// NO_REPLY is suppressed; any other answer is sent like a notice.
func (t *Turns) memoryFlush(ctx context.Context, set Settings, skey sessionkey.Key, sess *store.Session, m *message.Message) {
	tgt := m.Target()
	mf := t.flushOf(set)
	key := skey.String()
	meta, _ := t.meta().Decode(key, sess.Chat)
	var flushed *int
	if sess.MemoryFlushCycle > 0 {
		c := int(sess.MemoryFlushCycle - 1)
		flushed = &c
	}
	if !mf.Due(FlushState{PromptTokens: meta.PromptTokens, ReportedContextWindow: meta.Window, CompactionCount: meta.Compactions, FlushedAtCompaction: flushed}) {
		return
	}
	prompt, system := mf.Texts()
	t.log.Info("running the memory-flush turn before compaction", "session", key, "prompt_tokens", meta.PromptTokens)
	ov := t.meta().Of(*sess).Overrides()
	mcp, tools := t.agentTools(skey, m)
	t.toolRun(skey, m, 0)
	dir, err := t.workDir(ctx, set, skey)
	if err != nil {
		return
	}
	run, err := t.opts.Agent.Run(ctx, runner.TurnRequest{Key: key, SessionID: sess.ClaudeSessionID, Prompt: prompt, ExtraSystemPrompt: system,
		Agent: skey.Agent, Dir: dir, Model: t.modelOf(set, ov), Effort: string(ov.Effort), PermissionMode: t.permissionMode(set, ov), MCPConfig: mcp, Tools: tools, MediaDir: skey.Dir(),
		// The same process as the session's turns (not restarted for the
		// flush); nobody is asked during it: Wait denies.
		AskPermission: t.asks(set, ov)})
	if err != nil {
		return
	}
	res := run.Wait()
	cycle := int64(meta.Compactions) + 1
	if res.Compacted {
		// claude compacted within the flush turn: the compaction counts,
		// so the new cycle gets its own flush at its threshold; this one
		// saw only the summary.
		t.log.Warn("claude compacted during the memory-flush turn; the flush saw only the summary (lower agent.memory_flush thresholds)", "session", key)
	}
	_, _ = t.opts.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		s.MemoryFlushCycle = cycle
		if res.Compacted {
			_ = t.meta().Edit(key, s, func(m *session.Meta) error { m.Compactions++; return nil })
		}
		return nil
	})
	sess.MemoryFlushCycle = cycle
	if res.Err != nil {
		t.log.Warn("memory-flush turn failed", "session", key, "kind", res.Err.Kind)
		return
	}
	if p, skip := reply.Normalize(reply.Payload{Text: res.Text}, reply.Options{}); skip == reply.Deliver && strings.TrimSpace(p.Text) != "" {
		t.opts.Output.Send(skey, tgt, p.Text, channel.FormatPlain)
	}
}

// permissionMode is the session's /mode when the configuration still
// offers it (a mode removed from agent.permission_modes falls back to the
// configured one). "ask" is no claude mode: its turns run in the
// configured one, asking (asks).
func (t *Turns) permissionMode(set Settings, o session.Overrides) string {
	if o.Mode != "" && o.Mode != ModeAsk && slices.Contains(set.PermissionModes, o.Mode) {
		return o.Mode
	}
	return ""
}

// agentTools is the host's MCP config and allowed tools for m's chat and
// the agent of session key.
func (t *Turns) agentTools(key sessionkey.Key, m *message.Message) (string, []string) {
	if t.opts.AgentTools == nil || m == nil {
		return "", nil
	}
	return t.opts.AgentTools(key, m)
}

// ProcessTools are the host's tools of a claude started before any chat (the agent's
// spare): core/agenttools's Endpoint.
type ProcessTools interface {
	// ProcessTools makes the MCP config file of one process of agent, bound to no
	// chat: its path and the handle the others name it by.
	ProcessTools(agent string) (mcp, handle string, err error)
	// BindProcess binds the process of handle to m's chat for key's agent (it does
	// not block).
	BindProcess(handle string, key sessionkey.Key, m *message.Message) error
	// DropProcess forgets the process of handle (it ended).
	DropProcess(handle string)
}

// lateTools is the runner.LateTools of a turn of m's chat whose host tools are mcp;
// nil without Options.ProcessTools or host tools.
func (t *Turns) lateTools(key sessionkey.Key, m *message.Message, mcp string) runner.LateTools {
	if t.opts.ProcessTools == nil || mcp == "" || m == nil {
		return nil
	}
	return chatTools{pt: t.opts.ProcessTools, key: key, m: m}
}

// chatTools binds a spare's host tools to the chat of one turn.
type chatTools struct {
	pt  ProcessTools
	key sessionkey.Key
	m   *message.Message
}

func (c chatTools) Process(agent string) (string, string, error) { return c.pt.ProcessTools(agent) }
func (c chatTools) Bind(handle string) error                     { return c.pt.BindProcess(handle, c.key, c.m) }
func (c chatTools) Drop(handle string)                           { c.pt.DropProcess(handle) }

// toolRun tells the host's tools which turn the next run of claude in m's
// chat serves (Options.ToolRun).
func (t *Turns) toolRun(key sessionkey.Key, m *message.Message, journal int64) {
	if t.opts.ToolRun != nil && m != nil {
		t.opts.ToolRun(key, m, journal)
	}
}

// modelOf is the model to ask for: the session's /model; "default" (an
// override cleared, so claude does not resume on the model it last used)
// gives way to a configured model.
func (t *Turns) modelOf(set Settings, o session.Overrides) string {
	if o.Model == "default" && set.Model != "" {
		return ""
	}
	return o.Model
}

// claudeSessionOf is the claude session the turn ran in.
func claudeSessionOf(sess store.Session, res runner.Result) string {
	if res.SessionID != "" {
		return res.SessionID
	}
	return sess.ClaudeSessionID
}

// turnCost is the turn's own cost (usage.TurnCost) from res, with the
// running total sess kept of its claude session (recorded with the
// previous turn's reply): known when it is of the session the turn ran
// in, or 0 when claude started that session afresh (a new one, or a
// transcript it could not resume).
func (t *Turns) turnCost(sess store.Session, res runner.Result) usage.Cost {
	u := res.Usage
	r := usage.Reported{Result: !res.UsageSeen, PerTurn: u.PerTurnCost, TurnUSD: u.CostUSD, SessionUSD: u.SessionCostUSD, Model: res.Model,
		Tokens: turnTokens(u)}
	for name, m := range u.Models {
		if r.Models == nil {
			r.Models = map[string]usage.ModelCost{}
		}
		r.Models[name] = usage.ModelCost{USD: m.CostUSD, Tokens: usage.TurnTokens{Input: int64(m.InputTokens), Output: int64(m.OutputTokens),
			CacheRead: int64(m.CacheReadInputTokens), CacheCreation: int64(m.CacheCreationInputTokens)}}
	}
	prior := usage.Prior{USD: sess.ClaudeCostUSD, Known: sess.ClaudeCostOf != "" && sess.ClaudeCostOf == claudeSessionOf(sess, res)}
	if res.SessionReset {
		prior = usage.Prior{Known: true}
	}
	if res.Err != nil && !res.UsageSeen && u.SessionCostUSD == 0 && !u.PerTurnCost {
		// No result line and nothing seen: nothing was spent that anyone
		// reported (a crash before claude's first request).
		return usage.Cost{Total: prior.USD}
	}
	return usage.TurnCost(r, prior, t.prices)
}

// turnTokens are the turn's whole tokens: its per-model figures when
// claude gave them (they hold a sub-agent's and a compaction's requests,
// which claude's usage leaves out), else its usage.
func turnTokens(u runner.Usage) usage.TurnTokens {
	if len(u.Models) == 0 {
		return usage.TurnTokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens), CacheRead: int64(u.CacheReadInputTokens),
			CacheCreation: int64(u.CacheCreationInputTokens)}
	}
	var t usage.TurnTokens
	for _, m := range u.Models {
		t.Input += int64(m.InputTokens)
		t.Output += int64(m.OutputTokens)
		t.CacheRead += int64(m.CacheReadInputTokens)
		t.CacheCreation += int64(m.CacheCreationInputTokens)
	}
	return t
}
