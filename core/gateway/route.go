package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ctlcmd "github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/command"
)

// submit hands an accepted entry to the arrival stage of its conversation.
func (g *Gateway) submit(it item) {
	g.arrivals.do(it.key, func() { g.arrive(it) })
}

// finish moves entries to a terminal state, logging a failure.
func (g *Gateway) finish(ids []int64, state store.State, reason string) {
	if len(ids) == 0 {
		return
	}
	if err := g.store.Finish(g.ctx, store.FinishRequest{IDs: ids, State: state, Reason: reason}); err != nil && g.ctx.Err() == nil {
		g.log.Error("journal finish failed", "ids", ids, "state", state, "error", err)
	}
}

func (g *Gateway) approved(ctx context.Context, instance, sender string) bool {
	ok, err := g.store.IsApproved(ctx, instance, sender)
	if err != nil {
		g.log.Warn("pairing lookup failed; sender treated as unknown", "error", err)
	}
	return ok
}

// arrive is the arrival stage, serialized per conversation: access control
// (with /whoami and pairing), then debounce.
func (g *Gateway) arrive(it item) {
	if g.ctx.Err() != nil {
		return // stays in the journal as accepted; the next start routes it
	}
	set := g.settings()
	m := &it.m
	log := g.log.With("session", it.key, "id", it.id)
	if strings.TrimSpace(m.Body) == "" && len(m.Media) == 0 {
		log.Debug("empty message ignored")
		g.obs.Dropped(m.Instance, "empty")
		g.finish([]int64{it.id}, store.StateDropped, "empty")
		return
	}
	v := set.Access.decide(g.ctx, m, g.approved)
	name, _, isCmd := g.parseCommand(m.Command())
	if isCmd && name == "whoami" && v != ignoreGroup && (v != unaddressed || m.WasMentioned) {
		g.respond(it, fmt.Sprintf("You are %s. To allow you, an owner adds %q to access.allow_from.", m.From, m.From))
		return
	}
	switch v {
	case ignoreGroup:
		log.Debug("group not allowed; message ignored", "group", m.To)
		g.obs.Dropped(m.Instance, "group not allowed")
		g.finish([]int64{it.id}, store.StateDropped, "group not allowed")
		return
	case unaddressed:
		if set.GroupHistoryLimit > 0 {
			g.history.add(historyKey(m), g.historyLine(set, m), set.GroupHistoryLimit)
		}
		g.finish([]int64{it.id}, store.StateDone, "group message not addressed to the bot")
		return
	case refuse:
		log.Info("sender not allowed; message not passed to the agent", "sender", m.From)
		g.obs.Dropped(m.Instance, "not allowed")
		if g.refuseOnce(m.From) {
			g.respond(it, fmt.Sprintf("You are not allowed to talk to this bot. Your id is %s; an owner can add it to access.allow_from.", m.From))
			return
		}
		g.finish([]int64{it.id}, store.StateDropped, "not allowed")
		return
	case pair:
		g.pairing(it)
		return
	}
	g.debouncer(set, m.Instance).Enqueue(it)
}

// refuseOnce reports whether a refusal should be sent to from: at most one
// per sender per hour, so a stranger cannot make the bot talk in a loop.
func (g *Gateway) refuseOnce(from string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.opts.Now()
	if t, ok := g.refused[from]; ok && now.Sub(t) < time.Hour {
		return false
	}
	if len(g.refused) > 10000 {
		g.refused = map[string]time.Time{}
	}
	g.refused[from] = now
	return true
}

// pairing answers an unknown direct sender with a one-time code an owner
// approves (`clawhost pairing approve CODE` or /approve CODE). The code is
// sent once, when created; a sender who writes again while it is pending is
// not answered again until it expires.
func (g *Gateway) pairing(it item) {
	m := &it.m
	res, err := g.store.RequestPairing(g.ctx, store.PairingRequest{Instance: m.Instance, SenderID: m.Sender.ID})
	switch {
	case errors.Is(err, store.ErrTooManyPending):
		g.log.Warn("pairing request refused: too many pending codes for this instance", "sender", m.From)
		g.obs.Dropped(m.Instance, "pairing")
		g.finish([]int64{it.id}, store.StateDropped, "too many pending pairings")
		return
	case err != nil:
		g.log.Error("pairing request failed", "sender", m.From, "error", err)
		g.finish([]int64{it.id}, store.StateFailed, "pairing failed")
		return
	}
	g.obs.Dropped(m.Instance, "pairing")
	if !res.Created {
		g.finish([]int64{it.id}, store.StateDropped, "awaiting pairing approval")
		return
	}
	g.log.Info("pairing code issued; approve with `clawhost pairing approve CODE`", "sender", m.From, "code", res.Code.Code, "expires", res.Code.ExpiresAt)
	g.respond(it, fmt.Sprintf("This bot does not know you yet. Your pairing code is %s (valid for %s). Ask the owner to approve it: clawhost pairing approve %s",
		res.Code.Code, res.Code.ExpiresAt.Sub(res.Code.CreatedAt).Round(time.Minute), res.Code.Code))
}

// debouncer returns the debouncer for an instance's delay.
func (g *Gateway) debouncer(set Settings, instance string) *debounce.Debouncer[item] {
	delay := debounce.Resolve(nil, set.Debounce, instance)
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.debouncers[delay]
	if d == nil {
		d = debounce.New(debounce.Config[item]{
			Delay: delay,
			Key:   func(it item) string { return it.key },
			ShouldDebounce: func(it item) bool {
				return len(it.m.Media) == 0 && !strings.HasPrefix(it.m.Command(), "/")
			},
			Flush: func(key string, items []item) { g.route(key, items) },
		})
		g.debouncers[delay] = d
	}
	return d
}

// route handles a batch (one message, or several a debounce window merged):
// reset triggers, built-in and plugin commands, abort words; everything
// else is queued for the session's lane.
func (g *Gateway) route(key string, items []item) {
	if g.ctx.Err() != nil {
		return
	}
	set := g.settings()
	head := items[0]
	m := &head.m
	text := m.Command()
	if len(items) == 1 {
		if trig := matchTrigger(set, text); trig.Triggered {
			g.resetSession(key, m, "trigger "+trig.Trigger)
			if strings.TrimSpace(trig.Payload) == "" {
				g.respond(head, "New session started.")
				return
			}
			// The payload becomes the first message of the new session; the
			// lane strips the trigger again when it builds the prompt.
		} else if name, args, ok := g.parseCommand(text); ok {
			if g.command(key, head, name, args) {
				return
			}
		} else if ctlcmd.IsAbortTrigger(text) {
			g.command(key, head, "stop", "")
			return
		}
	}
	g.enqueue(set, key, items)
}

// builtinNames are the commands the gateway answers itself.
var builtinNames = []string{"new", "reset", "status", "help", "commands", "stop", "whoami", "approve", "verbose"}

var builtinHelp = map[string]string{
	"new":      "start a new session (text after it is its first message)",
	"reset":    "same as /new",
	"status":   "session, model, usage and queue",
	"help":     "this list",
	"commands": "this list",
	"stop":     "stop the running reply and clear the queue",
	"whoami":   "your id, as access.allow_from wants it",
	"approve":  "approve a pairing code (owners)",
	"verbose":  "show tool progress: /verbose on|off",
}

// parseCommand recognizes "/name args" for built-ins and plugin commands
// ("@bot" suffixes are removed by the channel). Unknown /words are not
// commands: they go to the agent.
func (g *Gateway) parseCommand(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") || len(t) < 2 {
		return "", "", false
	}
	name, args, _ = strings.Cut(t[1:], " ")
	if n, rest, found := strings.Cut(name, "\n"); found {
		name, args = n, rest+" "+args
	}
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	name = strings.ToLower(strings.TrimSuffix(name, ":"))
	for _, b := range builtinNames {
		if b == name {
			return name, strings.TrimSpace(args), true
		}
	}
	g.mu.Lock()
	_, plugged := g.commands[name]
	g.mu.Unlock()
	return name, strings.TrimSpace(args), plugged
}

// command runs a built-in or plugin command; false means it is not one.
func (g *Gateway) command(key string, it item, name, args string) bool {
	set := g.settings()
	m := &it.m
	switch name {
	case "new", "reset":
		g.resetSession(key, m, "/"+name)
		g.respond(it, "New session started.")
	case "status":
		g.respond(it, g.status(key, m))
	case "help", "commands":
		g.respond(it, g.help())
	case "stop":
		g.respond(it, g.stop(key))
	case "whoami":
		g.respond(it, fmt.Sprintf("You are %s.", m.From))
	case "approve":
		g.respond(it, g.approve(set, m, args))
	case "verbose":
		g.respond(it, g.verbose(key, args))
	default:
		return g.pluginCommand(key, it, name, args)
	}
	return true
}

func (g *Gateway) help() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, n := range builtinNames {
		fmt.Fprintf(&b, "/%s — %s\n", n, builtinHelp[n])
	}
	for _, s := range g.Commands() {
		fmt.Fprintf(&b, "/%s — %s\n", s.Name, s.Description)
	}
	b.WriteString("Anything else goes to the agent.")
	return b.String()
}

func (g *Gateway) approve(set Settings, m *Message, code string) string {
	if !set.Access.IsOwner(m) {
		return "Only an owner can approve pairing codes."
	}
	code = strings.TrimSpace(code)
	if code == "" {
		return "Usage: /approve CODE"
	}
	s, err := g.store.ApprovePairing(g.ctx, code)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "Unknown pairing code."
	case errors.Is(err, store.ErrExpired):
		return "That pairing code expired."
	case err != nil:
		g.log.Error("approve failed", "error", err)
		return "Approval failed; see the gateway log."
	}
	g.log.Info("pairing approved", "sender", s.Entry(), "by", m.From)
	return fmt.Sprintf("Approved %s.", s.Entry())
}

func (g *Gateway) verbose(key, args string) string {
	s, err := g.store.UpdateSession(g.ctx, key, func(s *store.Session, found bool) error {
		switch strings.ToLower(strings.TrimSpace(args)) {
		case "on", "true", "1", "yes":
			s.Verbose = true
		case "off", "false", "0", "no":
			s.Verbose = false
		default:
			s.Verbose = !s.Verbose
		}
		return nil
	})
	switch {
	case err != nil:
		return "Could not change the setting."
	case s.Verbose:
		return "Tool progress will be shown."
	}
	return "Tool progress will not be shown."
}

// stop aborts the running turn and clears the session's queue; the next
// turn's prompt says the previous one was aborted.
func (g *Gateway) stop(key string) string {
	aborted := g.abort(key, "stopped by /stop")
	pending, _ := g.store.ListPending(g.ctx, key, 0)
	var ids []int64
	for _, e := range pending {
		ids = append(ids, e.ID)
	}
	g.finish(ids, store.StateDropped, "cleared by /stop")
	g.queued.Add(-int64(len(ids)))
	g.mu.Lock()
	delete(g.summaries, key)
	g.mu.Unlock()
	switch {
	case aborted && len(ids) > 0:
		return fmt.Sprintf("Stopped. %d queued message(s) dropped.", len(ids))
	case aborted:
		return "Stopped."
	case len(ids) > 0:
		return fmt.Sprintf("Nothing was running; %d queued message(s) dropped.", len(ids))
	}
	return "Nothing is running."
}

func (g *Gateway) pluginCommand(key string, it item, name, args string) bool {
	g.mu.Lock()
	route, ok := g.commands[name]
	g.mu.Unlock()
	if !ok || g.host == nil {
		return false
	}
	inst := g.host.Instance(route.instance)
	if inst == nil {
		return false
	}
	m := &it.m
	ctx, cancel := context.WithTimeout(g.ctx, 30*time.Second)
	defer cancel()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	plug, _, err := inst.WaitReady(wctx)
	wcancel()
	if err != nil {
		g.respond(it, fmt.Sprintf("The /%s command is unavailable right now (plugin %s is not ready).", name, route.instance))
		return true
	}
	set := g.settings()
	if route.spec.OwnerOnly && !set.Access.IsOwner(m) {
		g.respond(it, fmt.Sprintf("The /%s command is for owners only.", name))
		return true
	}
	res, err := plug.Execute(ctx, command.Request{
		Command: route.spec.Name, Args: args, RawText: m.Body,
		Conversation: g.conversation(key, m), Sender: m.Sender,
	})
	if err != nil {
		g.log.Error("command failed", "command", name, "instance", route.instance, "error", err)
		g.respond(it, fmt.Sprintf("The /%s command failed.", name))
		return true
	}
	var parts []string
	for _, r := range res.Replies {
		if strings.TrimSpace(r.Text) != "" {
			parts = append(parts, r.Text)
		}
	}
	g.respond(it, strings.Join(parts, "\n\n"))
	return true
}

func (g *Gateway) conversation(key string, m *Message) command.Conversation {
	return command.Conversation{SessionKey: key, Instance: m.Instance, Channel: m.Channel, ChatType: m.ChatType, ChatID: m.ChatID, ThreadID: m.ThreadID}
}

// respond answers an entry without the agent: the text is recorded in the
// outbox (the entry is done once it is delivered).
func (g *Gateway) respond(it item, text string) {
	if strings.TrimSpace(text) == "" {
		g.finish([]int64{it.id}, store.StateDone, "")
		return
	}
	g.deliver(it.key, it.id, nil, targetOf(&it.m), text, formatPlain, "")
}

// enqueue puts a batch in the session's queue, applying the queue mode
// against a running turn and the cap with its drop policy.
func (g *Gateway) enqueue(set Settings, key string, items []item) {
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.id
		if err := g.store.Enqueue(g.ctx, it.id, key); err != nil {
			g.log.Error("enqueue failed; the message stays in the journal for the next start", "id", it.id, "error", err)
			return
		}
	}
	g.queued.Add(int64(len(ids)))
	m := &items[len(items)-1].m
	mode := set.QueueMode
	if v := set.QueueModeByInstance[m.Instance]; v != "" {
		mode = v
	}
	l := g.lane(key)
	g.mu.Lock()
	if len(items) > 1 {
		for _, id := range ids {
			l.batch[id] = ids[0]
		}
	}
	run := l.active
	g.mu.Unlock()
	if run != nil {
		switch mode {
		case ModeInterrupt:
			g.abort(key, "interrupted by a new message")
		case ModeSteer:
			if g.agent.CanSteer() && g.steer(set, key, run, items) {
				return
			}
		}
	}
	g.applyCap(set, key, m.Instance)
	g.kick(key)
}

// steer injects the batch into the running turn; the turn's reply then
// answers these entries too.
func (g *Gateway) steer(set Settings, key string, run *activeRun, items []item) bool {
	var parts []string
	for _, it := range items {
		parts = append(parts, g.envelopeOf(set, &it.m, time.Time{}))
	}
	ok, err := g.agent.Steer(key, strings.Join(parts, "\n"))
	if err != nil || !ok {
		return false
	}
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = it.id
	}
	if err := g.store.Start(g.ctx, ids...); err != nil {
		g.log.Error("journal start of steered messages failed", "error", err)
	}
	g.queued.Add(-int64(len(ids)))
	g.mu.Lock()
	run.covers = append(run.covers, ids...)
	g.mu.Unlock()
	g.log.Debug("message steered into the running turn", "session", key, "ids", ids)
	return true
}

// applyCap enforces the queue cap: old drops the oldest waiting messages,
// new the newest, summarize drops the oldest but keeps a one-line summary
// of each for the next turn.
func (g *Gateway) applyCap(set Settings, key, instance string) {
	n, err := g.store.CountPending(g.ctx, key)
	if err != nil || n <= set.QueueCap {
		return
	}
	pending, err := g.store.ListPending(g.ctx, key, 0)
	if err != nil {
		return
	}
	over := len(pending) - set.QueueCap
	if over <= 0 {
		return
	}
	var drop []store.Entry
	if set.QueueDrop == DropNew {
		drop = pending[len(pending)-over:]
	} else {
		drop = pending[:over]
	}
	ids := make([]int64, len(drop))
	for i, e := range drop {
		ids[i] = e.ID
	}
	g.finish(ids, store.StateDropped, "queue full")
	g.queued.Add(-int64(len(ids)))
	for range ids {
		g.obs.Dropped(instance, "queue full")
	}
	g.log.Warn("queue full; messages dropped", "session", key, "policy", set.QueueDrop, "dropped", len(ids), "cap", set.QueueCap)
	if set.QueueDrop == DropSummarize {
		g.mu.Lock()
		sum := g.summaries[key]
		for _, e := range drop {
			if m, err := decodeMessage(e.Message); err == nil {
				sum = append(sum, summaryLine(&m))
			}
		}
		if len(sum) > set.QueueCap {
			sum = sum[len(sum)-set.QueueCap:]
		}
		g.summaries[key] = sum
		g.mu.Unlock()
	}
}

func summaryLine(m *Message) string {
	name := m.Sender.Name
	if name == "" {
		name = m.Sender.ID
	}
	body := strings.Join(strings.Fields(m.Body), " ")
	if r := []rune(body); len(r) > 140 {
		body = string(r[:139]) + "…"
	}
	return "- " + envelope.SanitizeHeaderPart(name) + ": " + body
}

// resetSession starts a new session under key: the old claude process is
// stopped, a running turn aborted and the queue left as it is.
func (g *Gateway) resetSession(key string, m *Message, reason string) {
	g.abort(key, "session reset")
	g.agent.Stop(key)
	if _, err := g.store.UpdateSession(g.ctx, key, func(s *store.Session, found bool) error {
		*s = store.Session{Key: key, Verbose: s.Verbose, Chat: s.Chat, LastTarget: s.LastTarget}
		return nil
	}); err != nil {
		g.log.Error("session reset failed", "session", key, "error", err)
	}
	g.history.clear(historyKey(m))
	g.log.Info("session reset", "session", key, "reason", reason)
}

// historyKey is the group-history key of a message's chat.
func historyKey(m *Message) string {
	kind := sessionkey.Group
	if m.ChatType != "group" {
		kind = sessionkey.Channel
	}
	return sessionkey.WithThread(sessionkey.HistoryKey(m.Instance, kind, m.ChatID), m.ThreadID)
}

// matchTrigger matches the configured reset triggers (none when the list
// is empty).
func matchTrigger(set Settings, text string) sessionreset.TriggerMatch {
	if len(set.ResetTriggers) == 0 {
		return sessionreset.TriggerMatch{}
	}
	return sessionreset.MatchTrigger(text, sessionreset.TriggerOptions{Triggers: set.ResetTriggers, Authorized: true})
}
