// Package gateway is the one place that composes the core: it turns a
// loaded configuration into supervised plugins, routes each inbound message
// of a channel instance through access control, commands, hooks and the
// claude runner, and sends the reply back through the same instance.
//
// This is the thin end-to-end path of the plugin-host foundation: messages
// are processed one at a time per conversation, in memory. The durable
// journal, dedupe, debounce, queue modes, envelope and chunking of the
// conversation pipeline plug in here.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
)

// Agent runs turns; *runner.Runner implements it.
type Agent interface {
	Run(ctx context.Context, req runner.TurnRequest) (*runner.Turn, error)
	Close(ctx context.Context) error
}

// Access decides whether a sender may reach the agent.
type Access struct {
	// Open lets everyone in (dm_policy = "open").
	Open bool
	// Allowed holds "<instance>:<sender id>" entries (allow_from and owners).
	Allowed map[string]bool
}

// Allows reports whether the sender of msg on instance may talk to the agent.
func (a Access) Allows(instance string, msg channel.InboundMessage) bool {
	return a.Open || a.Allowed[instance+":"+msg.Sender.ID] || a.Allowed[instance+":*"]
}

// Options configure a Gateway.
type Options struct {
	Logger hclog.Logger
	Agent  Agent
	Access Access
	// HookTimeout bounds each before_agent_start hook; zero means 5 s.
	HookTimeout time.Duration
	// HookOrder lists hook instances in config order.
	HookOrder []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Gateway routes messages between channel plugins and the agent.
type Gateway struct {
	opts Options
	log  hclog.Logger
	host *pluginhost.Host

	mu       sync.Mutex
	lanes    map[string]*lane
	sessions map[string]string // session key → claude session id
	commands map[string]commandRoute
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

type commandRoute struct {
	instance string
	spec     command.Spec
}

type lane struct {
	queue chan inbound
}

type inbound struct {
	instance string
	msg      channel.InboundMessage
}

// New returns a Gateway. SetHost must be called before messages arrive.
func New(opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Gateway{opts: opts, log: opts.Logger.Named("gateway"), lanes: map[string]*lane{}, sessions: map[string]string{}, commands: map[string]commandRoute{}, ctx: ctx, cancel: cancel}
}

// SetHost connects the gateway to the plugin host.
func (g *Gateway) SetHost(h *pluginhost.Host) { g.host = h }

// SetOptions replaces access and hook settings (on reload).
func (g *Gateway) SetOptions(access Access, hookOrder []string) {
	g.mu.Lock()
	g.opts.Access, g.opts.HookOrder = access, hookOrder
	g.mu.Unlock()
}

// Inbound is the pluginhost.InboundFunc: it accepts messages into their
// conversation's lane.
func (g *Gateway) Inbound(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
	for _, m := range msgs {
		key := SessionKey(instance, m)
		g.mu.Lock()
		l, ok := g.lanes[key]
		if !ok {
			l = &lane{queue: make(chan inbound, 256)}
			g.lanes[key] = l
			g.wg.Add(1)
			go g.serve(key, l)
		}
		g.mu.Unlock()
		select {
		case l.queue <- inbound{instance: instance, msg: m}:
		case <-ctx.Done():
			return ctx.Err()
		case <-g.ctx.Done():
			return errors.New("gateway is stopping")
		}
	}
	return nil
}

// SessionKey returns the conversation key of a message:
// <instance>:direct:<peer>, <instance>:group:<chat> or
// <instance>:channel:<chat>, with :thread:<id> when threaded.
func SessionKey(instance string, m channel.InboundMessage) string {
	var k string
	switch m.ChatType {
	case channel.ChatGroup, channel.ChatChannel:
		k = instance + ":" + string(m.ChatType) + ":" + m.ChatID
	default:
		k = instance + ":direct:" + m.Sender.ID
	}
	if m.ThreadID != "" {
		k += ":thread:" + m.ThreadID
	}
	return k
}

// Close stops accepting messages and waits for running turns to end.
func (g *Gateway) Close(ctx context.Context) {
	g.cancel()
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (g *Gateway) serve(key string, l *lane) {
	defer g.wg.Done()
	for {
		select {
		case in := <-l.queue:
			g.handle(key, in)
		case <-g.ctx.Done():
			return
		}
	}
}

// handle processes one message to completion.
func (g *Gateway) handle(key string, in inbound) {
	log := g.log.With("session", key, "message", in.msg.MessageID)
	text := strings.TrimSpace(in.msg.Text)
	if text == "" && len(in.msg.Media) == 0 {
		log.Debug("empty message ignored")
		return
	}
	g.mu.Lock()
	access := g.opts.Access
	g.mu.Unlock()
	if !access.Allows(in.instance, in.msg) {
		log.Info("sender not allowed; message not passed to the agent", "sender", in.instance+":"+in.msg.Sender.ID)
		if in.msg.ChatType == channel.ChatDirect || in.msg.ChatType == "" {
			g.reply(in, fmt.Sprintf("You are not allowed to talk to this bot. Your id is %s:%s; the owner can add it to access.allow_from.", in.instance, in.msg.Sender.ID))
		}
		return
	}
	ctx, cancel := context.WithCancel(g.ctx)
	defer cancel()
	if name, args, ok := parseCommand(commandText(in.msg)); ok {
		if handled := g.command(ctx, key, in, name, args); handled {
			return
		}
	}
	g.turn(ctx, key, in, log)
}

func commandText(m channel.InboundMessage) string {
	if m.CommandText != "" {
		return strings.TrimSpace(m.CommandText)
	}
	return strings.TrimSpace(m.Text)
}

// parseCommand splits "/name args" (name lowercased, "@bot" suffix removed).
func parseCommand(text string) (name, args string, ok bool) {
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	name, args, _ = strings.Cut(text[1:], " ")
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	if name == "" {
		return "", "", false
	}
	return strings.ToLower(name), strings.TrimSpace(args), true
}

// RefreshCommands rebuilds the command table from the ready command
// plugins; call it when an instance becomes ready or stops.
func (g *Gateway) RefreshCommands(ctx context.Context) {
	table := map[string]commandRoute{}
	for _, inst := range g.host.Instances() {
		plug, desc, ok := inst.Client()
		if !ok || !desc.Command {
			continue
		}
		specs, err := plug.ListCommands(ctx)
		if err != nil {
			g.log.Warn("list commands failed", "instance", inst.Name(), "error", err)
			continue
		}
		for _, s := range specs {
			for _, n := range append([]string{s.Name}, s.Aliases...) {
				n = strings.ToLower(n)
				if prev, dup := table[n]; dup {
					g.log.Warn("command offered twice; first wins", "command", n, "kept", prev.instance, "ignored", inst.Name())
					continue
				}
				table[n] = commandRoute{instance: inst.Name(), spec: s}
			}
		}
	}
	g.mu.Lock()
	g.commands = table
	g.mu.Unlock()
}

// Commands returns the command plugins' commands (for menus and /help).
func (g *Gateway) Commands() []command.Spec {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := map[string]bool{}
	var out []command.Spec
	for _, r := range g.commands {
		if !seen[r.spec.Name] {
			seen[r.spec.Name] = true
			out = append(out, r.spec)
		}
	}
	return out
}

func (g *Gateway) command(ctx context.Context, key string, in inbound, name, args string) bool {
	g.mu.Lock()
	route, ok := g.commands[name]
	g.mu.Unlock()
	if !ok {
		return false
	}
	inst := g.host.Instance(route.instance)
	if inst == nil {
		return false
	}
	// A plugin that is (re)starting gets a moment to become ready.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wctx, wcancel := context.WithTimeout(cctx, 10*time.Second)
	plug, _, err := inst.WaitReady(wctx)
	wcancel()
	if err != nil {
		g.reply(in, fmt.Sprintf("The /%s command is unavailable right now (plugin %s is not ready).", name, route.instance))
		return true
	}
	res, err := plug.Execute(cctx, command.Request{
		Command: route.spec.Name, Args: args, RawText: in.msg.Text,
		Conversation: g.conversation(key, in), Sender: in.msg.Sender,
	})
	if err != nil {
		g.log.Error("command failed", "command", name, "instance", route.instance, "error", err)
		g.reply(in, fmt.Sprintf("The /%s command failed.", name))
		return true
	}
	for _, r := range res.Replies {
		g.send(in, r.Text, r.Format)
	}
	return true
}

func (g *Gateway) conversation(key string, in inbound) command.Conversation {
	ch := ""
	if inst := g.host.Instance(in.instance); inst != nil {
		ch = inst.Status().Source
	}
	return command.Conversation{SessionKey: key, Instance: in.instance, Channel: ch, ChatType: in.msg.ChatType, ChatID: in.msg.ChatID, ThreadID: in.msg.ThreadID}
}

// hooks calls every ready hook concurrently and merges their context in
// config order; failing or slow hooks are logged and skipped.
func (g *Gateway) hooks(ctx context.Context, key string, in inbound, newSession bool) (prepend, system string) {
	g.mu.Lock()
	order := append([]string(nil), g.opts.HookOrder...)
	g.mu.Unlock()
	res := make([]hook.Response, len(order))
	var wg sync.WaitGroup
	for idx, name := range order {
		inst := g.host.Instance(name)
		if inst == nil {
			continue
		}
		plug, desc, ok := inst.Client()
		if !ok || !desc.Hook {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			hctx, cancel := context.WithTimeout(ctx, g.opts.HookTimeout)
			defer cancel()
			r, err := plug.BeforeAgentStart(hctx, hook.Request{Conversation: g.conversation(key, in), Sender: in.msg.Sender, Message: in.msg.Text, NewSession: newSession})
			if err != nil {
				g.log.Warn("before_agent_start hook failed; skipped", "hook", name, "error", err)
				return
			}
			res[idx] = r
		}()
	}
	wg.Wait()
	var pre, sys []string
	for _, r := range res {
		if s := strings.TrimSpace(r.PrependContext); s != "" {
			pre = append(pre, s)
		}
		if s := strings.TrimSpace(r.SystemPrompt); s != "" {
			sys = append(sys, s)
		}
	}
	return strings.Join(pre, "\n\n"), strings.Join(sys, "\n\n")
}

func (g *Gateway) turn(ctx context.Context, key string, in inbound, log hclog.Logger) {
	g.mu.Lock()
	sid, known := g.sessions[key]
	if !known {
		sid = uuid.NewString()
		g.sessions[key] = sid
	}
	g.mu.Unlock()

	stopTyping := g.typing(ctx, in)
	defer stopTyping()

	prepend, system := g.hooks(ctx, key, in, !known)
	prompt := in.msg.Text
	if prepend != "" {
		prompt = prepend + "\n\n" + prompt
	}
	t, err := g.opts.Agent.Run(ctx, runner.TurnRequest{Key: key, SessionID: sid, NewSession: !known, Prompt: prompt, ExtraSystemPrompt: system})
	if err != nil {
		log.Error("agent turn could not start", "error", err)
		g.reply(in, "The agent is unavailable right now.")
		return
	}
	for range t.Events() {
		// Streaming replies belong to the runner issue; the thin path sends
		// the final result only.
	}
	res := t.Wait()
	if res.Err != nil {
		log.Error("agent turn failed", "kind", res.Err.Kind, "detail", res.Err.Detail)
		g.reply(in, res.Err.Notice)
		return
	}
	log.Info("agent turn done", "duration", res.Duration, "input_tokens", res.Usage.InputTokens, "output_tokens", res.Usage.OutputTokens)
	if strings.TrimSpace(res.Text) == "" {
		return
	}
	g.send(in, res.Text, channel.FormatMarkdown)
}

// typing shows the typing indicator until the returned func is called,
// refreshing it every 6 s.
func (g *Gateway) typing(ctx context.Context, in inbound) func() {
	inst := g.host.Instance(in.instance)
	if inst == nil {
		return func() {}
	}
	plug, desc, ok := inst.Client()
	if !ok || !desc.Typing {
		return func() {}
	}
	tctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(6 * time.Second)
		defer t.Stop()
		for {
			c, cc := context.WithTimeout(tctx, 5*time.Second)
			_ = plug.SetTyping(c, channel.TypingRequest{ChatID: in.msg.ChatID, ThreadID: in.msg.ThreadID, On: true})
			cc()
			select {
			case <-tctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		c, cc := context.WithTimeout(g.ctx, 5*time.Second)
		_ = plug.SetTyping(c, channel.TypingRequest{ChatID: in.msg.ChatID, ThreadID: in.msg.ThreadID, On: false})
		cc()
	}
}

func (g *Gateway) reply(in inbound, text string) { g.send(in, text, channel.FormatPlain) }

// send splits text to the channel's limit and sends the parts in order,
// waiting for the instance to be ready (it may be restarting).
func (g *Gateway) send(in inbound, text, format string) {
	inst := g.host.Instance(in.instance)
	if inst == nil {
		g.log.Error("reply dropped: instance is gone", "instance", in.instance)
		return
	}
	ctx, cancel := context.WithTimeout(g.ctx, 60*time.Second)
	defer cancel()
	plug, desc, err := inst.WaitReady(ctx)
	if err != nil {
		g.log.Error("reply dropped", "instance", in.instance, "error", err)
		return
	}
	for _, part := range split(text, desc.Capabilities.MaxTextLength) {
		req := channel.SendRequest{ChatID: in.msg.ChatID, ThreadID: in.msg.ThreadID, Text: part, Format: format}
		if _, err := plug.Send(ctx, req); err != nil {
			if channel.CodeOf(err) == channel.CodeFormattingRejected {
				req.Format = channel.FormatPlain
				_, err = plug.Send(ctx, req)
			}
			if err != nil {
				g.log.Error("send failed", "instance", in.instance, "chat", in.msg.ChatID, "error", err)
				return
			}
		}
	}
}

// split cuts text into parts of at most limit UTF-16 code units, preferring
// newlines. The conversation pipeline's markdown-aware chunker replaces it.
func split(text string, limit int) []string {
	if limit <= 0 {
		limit = 4000
	}
	var out []string
	rs := []rune(text)
	for len(rs) > 0 {
		n, units := 0, 0
		for n < len(rs) {
			u := 1
			if rs[n] >= 0x10000 {
				u = 2
			}
			if units+u > limit {
				break
			}
			units += u
			n++
		}
		if n < len(rs) {
			if nl := lastNewline(rs[:n]); nl > n/2 {
				n = nl + 1
			}
		}
		out = append(out, string(rs[:n]))
		rs = rs[n:]
	}
	return out
}

func lastNewline(rs []rune) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i] == '\n' {
			return i
		}
	}
	return -1
}
