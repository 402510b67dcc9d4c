package gateway

// In-process tests of the composer: the pipeline over recording fake ports
// (no plugin process), a scripted agent (no claude process) and the store
// in a temporary directory. What they wait for is an event — a send the
// ports recorded, a turn the agent was asked for — never time. lo
// (lo_test.go) dresses the same parts as env's loopback pipeline for the
// tests moved off it.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// recPorts records what the pipeline sends; every instance is a ready
// channel that posts whatever it is given.
type recPorts struct {
	mu      sync.Mutex
	sent    []channel.SendRequest
	more    chan struct{} // a send or a reaction was recorded
	react   bool          // the channel has reactions
	reacted []channel.ReactRequest
	typing  bool // the channel has a typing indicator
	buttons bool // the channel shows buttons
	typed   []channel.TypingRequest
	// caps, when set, are the channel's capabilities (else markdown,
	// 4096 characters, documents out).
	caps *channel.Capabilities
	// name is the channel's display name (the envelope's label); ""
	// shows "Fake".
	name string
	// answer, when set, is the command plugin "ops" and its /report's
	// answer.
	answer *command.Response
	// hold, when set, runs before a send is recorded, with the number of
	// sends before it; an error fails the send.
	hold func(ctx context.Context, n int) error
}

func newRecPorts() *recPorts { return &recPorts{more: make(chan struct{}, 1024)} }

func (p *recPorts) Ready(string) (pluginclient.Description, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := pluginclient.Description{Name: "fake", Channel: true, Reactions: p.react, Typing: p.typing}
	if p.caps != nil {
		d.Capabilities = *p.caps
	}
	if p.buttons {
		d.Capabilities, _ = p.Capabilities("")
		d.Capabilities.Buttons = true
	}
	return d, true
}
func (p *recPorts) WaitReady(context.Context, string) (pluginclient.Description, error) {
	d, _ := p.Ready("")
	return d, nil
}
func (p *recPorts) Send(ctx context.Context, _ string, req channel.SendRequest) (channel.SendResponse, error) {
	if p.hold != nil {
		p.mu.Lock()
		n := len(p.sent)
		p.mu.Unlock()
		if err := p.hold(ctx, n); err != nil {
			return channel.SendResponse{}, err
		}
	}
	var n int
	p.note(func() {
		p.sent = append(p.sent, req)
		n = len(p.sent)
	})
	return channel.SendResponse{MessageIDs: []string{fmt.Sprint(n)}}, nil
}

// note records a call by rec under the lock and signals more.
func (p *recPorts) note(rec func()) {
	p.mu.Lock()
	rec()
	p.mu.Unlock()
	p.more <- struct{}{}
}
func (p *recPorts) Edit(context.Context, string, channel.EditRequest) error { return nil }
func (p *recPorts) SetTyping(_ context.Context, _ string, req channel.TypingRequest) error {
	p.note(func() { p.typed = append(p.typed, req) })
	return nil
}
func (p *recPorts) React(_ context.Context, _ string, req channel.ReactRequest) error {
	p.note(func() { p.reacted = append(p.reacted, req) })
	return nil
}
func (p *recPorts) Known(string) bool { return true }
func (p *recPorts) DisplayName(string) string {
	if p.name != "" {
		return p.name
	}
	return "Fake"
}
func (p *recPorts) Capabilities(string) (channel.Capabilities, bool) {
	if p.caps != nil {
		return *p.caps, true
	}
	return channel.Capabilities{Markup: channel.MarkupMarkdown, MaxTextLength: 4096, MediaOut: []channel.MediaKind{channel.MediaDocument}}, true
}
func (p *recPorts) PublishMenu(context.Context, []channel.MenuEntry) []error        { return nil }
func (p *recPorts) PublishChatMenu(context.Context, string, channel.ChatMenu) error { return nil }
func (p *recPorts) AwaitCommandPlugins(context.Context) []string                    { return nil }
func (p *recPorts) ListCommands(context.Context) (map[string][]command.Spec, []error) {
	if p.answer == nil {
		return nil, nil
	}
	return map[string][]command.Spec{"ops": {{Name: "report", Description: "a report"}}}, nil
}
func (p *recPorts) Execute(context.Context, string, command.Request) (command.Response, error) {
	if p.answer == nil {
		return command.Response{}, fmt.Errorf("no command plugins")
	}
	return *p.answer, nil
}
func (p *recPorts) Download(context.Context, string, int64, string, int64, io.Writer) (channel.MediaInfo, error) {
	return channel.MediaInfo{}, fmt.Errorf("no media")
}
func (p *recPorts) BeforeAgentStart(context.Context, string, hook.Request, time.Duration) (hook.Response, bool, error) {
	return hook.Response{}, false, nil
}
func (p *recPorts) MessageReceived(context.Context, string, hook.ReceivedRequest, time.Duration) (hook.ReceivedResponse, bool, error) {
	return hook.ReceivedResponse{}, false, nil
}
func (p *recPorts) IsReceivedHook(string) bool { return false }
func (p *recPorts) MessageSending(context.Context, string, hook.SendingRequest, time.Duration) (hook.SendingResponse, bool, error) {
	return hook.SendingResponse{}, false, nil
}
func (p *recPorts) IsSendingHook(string) bool { return false }
func (p *recPorts) IsEndHook(string) bool     { return false }
func (p *recPorts) AgentEnd(context.Context, string, hook.End, time.Duration) (bool, error) {
	return false, nil
}

// next waits for the next send to chat and returns its text.
func (p *recPorts) next(t *testing.T, chat string, seen *int) string {
	t.Helper()
	for {
		p.mu.Lock()
		for *seen < len(p.sent) {
			r := p.sent[*seen]
			*seen++
			if r.ChatID == chat {
				p.mu.Unlock()
				return r.Text
			}
		}
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-time.After(time.Until(sdktest.WaitDeadline(t))): // a bound on a failing test, not a wait for time (10 s failed beside two CPU burners)
			t.Fatalf("nothing sent to %s", chat)
		}
	}
}

// scripted is the agent: each turn answers "re: " and the first line of
// its prompt (the message's envelope); a turn whose prompt holds "hold"
// waits until release.
type scripted struct {
	mu      sync.Mutex
	prompts []string
	reqs    []runner.TurnRequest
	held    chan struct{} // a held turn started
	release chan struct{}
	abort   chan struct{} // Abort ends a held turn as aborted
	holding int
	// limit, when set, is every turn's error (claude's usage limit).
	limit *runner.Error
	// cost is what each turn reports it cost; whole: the answer quotes
	// the whole prompt (a group's intro and context come first).
	cost  float64
	whole bool
	// steer: the agent takes messages into its running turn (a warm
	// claude process); steered has what it was given.
	steer   bool
	steered []string
	// echo: answer as the fake claude does, "echo: " and the whole
	// prompt, NO_REPLY for #silent, HEARTBEAT_OK for #heartbeat-ok (see
	// lo).
	echo bool
}

func newScripted() *scripted {
	return &scripted{held: make(chan struct{}, 8), release: make(chan struct{}), abort: make(chan struct{}, 8)}
}

func (a *scripted) Run(ctx context.Context, req runner.TurnRequest) (*runner.Turn, error) {
	a.mu.Lock()
	a.prompts = append(a.prompts, req.Prompt)
	a.reqs = append(a.reqs, req)
	a.mu.Unlock()
	if strings.Contains(req.Prompt, "hold") {
		a.mu.Lock()
		a.holding++
		a.mu.Unlock()
		a.held <- struct{}{}
		select {
		case <-a.release:
		case <-ctx.Done():
			// As the runner's: the caller's context ended, the run was
			// killed.
			return runner.FinishedTurn(runner.Result{Err: &runner.Error{Kind: runner.KindAborted}, SessionID: req.SessionID}), nil
		case <-a.abort:
			return runner.FinishedTurn(runner.Result{Err: &runner.Error{Kind: runner.KindAborted}, SessionID: req.SessionID}), nil
		}
	}
	a.mu.Lock()
	limit := a.limit
	a.mu.Unlock()
	if limit != nil {
		return runner.FinishedTurn(runner.Result{Err: limit, SessionID: req.SessionID}), nil
	}
	first, _, _ := strings.Cut(strings.TrimSpace(req.Prompt), "\n")
	a.mu.Lock()
	cost := a.cost
	if a.whole {
		first = req.Prompt
	}
	answer := "re: " + first
	switch {
	case a.echo && strings.Contains(req.Prompt, "#silent"):
		answer = "NO_REPLY"
	case a.echo && strings.Contains(req.Prompt, "#heartbeat-ok"):
		answer = "HEARTBEAT_OK"
	case a.echo:
		answer = "echo: " + req.Prompt
	}
	a.mu.Unlock()
	return runner.FinishedTurn(runner.Result{Text: answer, SessionID: req.SessionID, Usage: runner.Usage{CostUSD: cost, PerTurnCost: true, InputTokens: 1000}}), nil
}
func (a *scripted) Steer(_ string, text string) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.steer {
		a.steered = append(a.steered, text)
	}
	return a.steer, nil
}
func (a *scripted) CanSteer() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.steer
}
func (a *scripted) Stop(string) {}
func (a *scripted) Abort(string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.holding == 0 {
		return false
	}
	a.holding--
	a.abort <- struct{}{}
	return true
}

// inproc runs a gateway over recording ports and a scripted agent.
func inproc(t *testing.T, set func(*Settings), with ...func(*Options)) (*Gateway, *recPorts, *scripted) {
	t.Helper()
	g, ports, agent, _ := inprocAt(t, t.TempDir(), set, with...)
	return g, ports, agent
}

// inprocAt is inproc over the store in dir; stop closes the gateway and
// the store (a restart opens dir again), also at the test's end.
func inprocAt(t *testing.T, dir string, set func(*Settings), with ...func(*Options)) (g *Gateway, ports *recPorts, agent *scripted, stop func()) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), dir, sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	ports, agent = newRecPorts(), newScripted()
	s := Settings{
		Access:  access.Policy{DMPolicy: access.PolicyAllowlist, AllowFrom: []string{"tg:*"}},
		Sources: map[string]string{"tg": "telegram"},
		Turn:    turn.Settings{Streaming: turn.StreamOff, Workspace: t.TempDir()},
	}
	s.Delivery.Workspace = s.Turn.Workspace
	if set != nil {
		set(&s)
	}
	opts := Options{Logger: hclog.NewNullLogger(), Store: db, Agent: agent, Ports: ports, Settings: s, Version: "test"}
	for _, w := range with {
		w(&opts)
	}
	g = New(opts)
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			g.Close(ctx)
			_ = db.Close()
		})
	}
	t.Cleanup(stop)
	return g, ports, agent, stop
}

// sendDM hands g a direct message from chat id on the "tg" instance and
// fails the test if the gateway refuses it.
func sendDM(t *testing.T, ctx context.Context, g *Gateway, id, text string) {
	t.Helper()
	if err := g.Inbound(ctx, "tg", []channel.InboundMessage{dmFrom(id, text)}); err != nil {
		t.Fatal(err)
	}
}

func dmFrom(id, text string) channel.InboundMessage {
	return channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: id, MessageID: fmt.Sprintf("%s-%d", id, time.Now().UnixNano()),
		Sender: channel.Sender{ID: id, Name: "User " + id}, Text: text, Timestamp: time.Now()}
}

// A direct message becomes a turn of the agent, and its reply goes out
// through the channel port, in process.
func TestInProcessReply(t *testing.T) {
	g, ports, agent := inproc(t, nil)
	if err := g.Inbound(context.Background(), "tg", []channel.InboundMessage{dmFrom("5", "hello there")}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	if got := ports.next(t, "5", &seen); !strings.HasPrefix(got, "re: [Fake User 5 id:5") || !strings.HasSuffix(got, "User 5: hello there") {
		t.Errorf("reply %q", got)
	}
	if len(agent.prompts) != 1 || !strings.Contains(agent.prompts[0], "hello there") {
		t.Errorf("prompts %q", agent.prompts)
	}
}

// Messages that arrive while a turn runs are answered after it, one turn
// each, in order (followup): the held turn is released by the test.
func TestInProcessFollowupOrder(t *testing.T) {
	g, ports, agent := inproc(t, nil)
	ctx := context.Background()
	sendDM(t, ctx, g, "5", "first hold")
	<-agent.held
	for _, w := range []string{"second", "third"} {
		sendDM(t, ctx, g, "5", w)
	}
	close(agent.release)
	seen := 0
	for _, w := range []string{"first hold", "second", "third"} {
		if got := ports.next(t, "5", &seen); !strings.Contains(got, w) {
			t.Fatalf("reply %q, want %q next", got, w)
		}
	}
}

// TestInProcessSeen: a message that arrives while its chat's turn runs
// gets the seen reaction where the channel has reactions; where it has
// none, with messages.queued_notice on, a notice says how many are ahead;
// the message that starts a turn gets neither.
func TestInProcessSeen(t *testing.T) {
	t.Run("reaction", func(t *testing.T) {
		g, ports, agent := inproc(t, func(s *Settings) { s.SeenReaction = "👀" })
		ports.react = true
		ctx := context.Background()
		sendDM(t, ctx, g, "5", "first hold")
		<-agent.held
		second := dmFrom("5", "second")
		if err := g.Inbound(ctx, "tg", []channel.InboundMessage{second}); err != nil {
			t.Fatal(err)
		}
		for {
			ports.mu.Lock()
			n := len(ports.reacted)
			ports.mu.Unlock()
			if n > 0 {
				break
			}
			select {
			case <-ports.more:
			case <-time.After(10 * time.Second): // a bound on a failing test
				t.Fatal("no reaction")
			}
		}
		close(agent.release)
		seen := 0
		for _, w := range []string{"first hold", "second"} {
			if got := ports.next(t, "5", &seen); !strings.Contains(got, w) {
				t.Fatalf("reply %q, want %q next", got, w)
			}
		}
		ports.mu.Lock()
		defer ports.mu.Unlock()
		if len(ports.reacted) != 1 || ports.reacted[0].MessageID != second.MessageID || ports.reacted[0].Emoji != "👀" || ports.reacted[0].ChatID != "5" {
			t.Errorf("reactions %+v", ports.reacted)
		}
	})
	t.Run("notice", func(t *testing.T) {
		g, ports, agent := inproc(t, func(s *Settings) { s.SeenReaction, s.QueuedNotice = "👀", true })
		seen := queueTwo(t, g, ports, agent)
		for _, w := range []string{"first hold", "second", "third"} {
			if got := ports.next(t, "5", &seen); !strings.Contains(got, w) {
				t.Fatalf("reply %q, want %q next", got, w)
			}
		}
	})
	// steer: the message goes into the running turn, and the notice says
	// so (not "queued"); no turn of its own follows.
	t.Run("steer", func(t *testing.T) {
		_, agent := steerOne(t)
		agent.mu.Lock()
		defer agent.mu.Unlock()
		if len(agent.steered) != 1 || !strings.Contains(agent.steered[0], "also this") || len(agent.prompts) != 1 {
			t.Errorf("steered %q, prompts %q: want the second message steered, one turn", agent.steered, agent.prompts)
		}
	})
	// collect: the messages that wait are told how many are ahead, and
	// then answered together in one turn.
	t.Run("collect", func(t *testing.T) {
		g, ports, agent := inproc(t, func(s *Settings) { s.QueuedNotice, s.Queue.Mode = true, queue.Collect })
		seen := queueTwo(t, g, ports, agent)
		if got := ports.next(t, "5", &seen); !strings.Contains(got, "first hold") {
			t.Fatalf("reply %q", got)
		}
		ports.next(t, "5", &seen)
		agent.mu.Lock()
		defer agent.mu.Unlock()
		if len(agent.prompts) != 2 || !strings.Contains(agent.prompts[1], "second") || !strings.Contains(agent.prompts[1], "third") {
			t.Errorf("prompts %q: want the two waiting messages collected in one turn", agent.prompts)
		}
	})
}

// queueTwo holds a turn on "first hold" in chat 5, sends "second" and
// "third" behind it, checks each is told its place in the queue, then
// lets the turn go; it returns the replies seen so far (for ports.next).
func queueTwo(t *testing.T, g *Gateway, ports *recPorts, agent *scripted) int {
	t.Helper()
	ctx := context.Background()
	sendDM(t, ctx, g, "5", "first hold")
	<-agent.held
	seen := 0
	for i, w := range []string{"second", "third"} {
		sendDM(t, ctx, g, "5", w)
		want := []string{"Queued: next after the answer being written.", "Queued: 1 ahead."}[i]
		if got := ports.next(t, "5", &seen); got != want {
			t.Errorf("notice %q, want %q", got, want)
		}
	}
	close(agent.release)
	return seen
}

// steerOne holds a turn on "first hold" in chat 5 with queue mode steer,
// sends "also this" into it, checks the chat is told it was added to the
// running answer, lets the turn go and waits for its reply.
func steerOne(t *testing.T) (*Gateway, *scripted) {
	t.Helper()
	g, ports, agent := inproc(t, func(s *Settings) { s.QueuedNotice, s.Queue.Mode = true, queue.Steer })
	agent.mu.Lock()
	agent.steer = true
	agent.mu.Unlock()
	ctx := context.Background()
	sendDM(t, ctx, g, "5", "first hold")
	<-agent.held
	sendDM(t, ctx, g, "5", "also this")
	seen := 0
	if got := ports.next(t, "5", &seen); got != "Seen: added to the answer being written." {
		t.Fatalf("notice %q, want the message steered", got)
	}
	close(agent.release)
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "first hold") {
		t.Fatalf("reply %q", got)
	}
	return g, agent
}

// waitTyping waits until the typing indicator was set to on in chat.
func (p *recPorts) waitTyping(t *testing.T, chat string, on bool) {
	t.Helper()
	for {
		p.mu.Lock()
		for _, r := range p.typed {
			if r.ChatID == chat && r.On == on {
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		select {
		case <-p.more:
		case <-time.After(10 * time.Second): // a bound on a failing test; the turn's timeout is 10 min
			t.Fatalf("typing never set to %v in %s", on, chat)
		}
	}
}

// TestInProcessStopEndsTyping: /stop switches the typing indicator off as
// the turn ends, not when the turn's timeout (10 min) would have.
func TestInProcessStopEndsTyping(t *testing.T) {
	g, ports, agent := inproc(t, func(s *Settings) { s.Turn.Timeout = 10 * time.Minute })
	ports.mu.Lock()
	ports.typing = true
	ports.mu.Unlock()
	ctx := context.Background()
	sendDM(t, ctx, g, "5", "long hold")
	<-agent.held
	ports.waitTyping(t, "5", true)
	ports.mu.Lock()
	for _, r := range ports.typed {
		if !r.On {
			t.Fatalf("typing off while the turn runs: %+v", ports.typed)
		}
	}
	ports.mu.Unlock()
	sendDM(t, ctx, g, "5", "/stop")
	seen := 0
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "Stopped") {
		t.Errorf("/stop answered %q", got)
	}
	ports.waitTyping(t, "5", false)
	agent.mu.Lock()
	defer agent.mu.Unlock()
	if len(agent.prompts) != 1 {
		t.Errorf("prompts %q", agent.prompts)
	}
}

// A built-in command is answered by the gateway itself, without a turn.
func TestInProcessCommand(t *testing.T) {
	g, ports, agent := inproc(t, nil)
	if err := g.Inbound(context.Background(), "tg", []channel.InboundMessage{dmFrom("5", "/whoami")}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "tg:5") {
		t.Errorf("/whoami: %q", got)
	}
	if len(agent.prompts) != 0 {
		t.Errorf("a command reached the agent: %q", agent.prompts)
	}
}

// turn returns the agent's n-th turn request (0-based).
func (a *scripted) turn(t *testing.T, n int) runner.TurnRequest {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if n >= len(a.reqs) {
		t.Fatalf("%d turns, want turn %d", len(a.reqs), n+1)
	}
	return a.reqs[n]
}

// Inline directives (seed 000 §9-10): a directive with text applies as
// the directive alone would and the text runs as the message, without the
// directive; OpenClaw's /think and its levels are /effort's; a directive
// alone is answered without a turn; a refused one is told and its text
// runs all the same.
func TestInProcessInlineDirectives(t *testing.T) {
	g, ports, agent := inproc(t, nil)
	ctx := context.Background()
	seen := 0
	send := func(text string) string {
		t.Helper()
		sendDM(t, ctx, g, "5", text)
		return ports.next(t, "5", &seen)
	}
	send("/model opus explain this")
	if r := agent.turn(t, 0); r.Model != "opus" || strings.Contains(r.Prompt, "/model opus") || !strings.Contains(r.Prompt, "User 5: explain this") {
		t.Errorf("turn 1: model %q, prompt %q", r.Model, r.Prompt)
	}
	send("/think xhigh why is the sky blue?")
	if r := agent.turn(t, 1); r.Effort != "max" || r.Model != "opus" || strings.Contains(r.Prompt, "/think xhigh") || !strings.Contains(r.Prompt, "User 5: why is the sky blue?") {
		t.Errorf("turn 2: effort %q model %q prompt %q", r.Effort, r.Model, r.Prompt)
	}
	if got := send("/t low"); got != "Effort: low from the next message on." {
		t.Errorf("a directive alone: %q", got)
	}
	// The refusal and the answer, in either order (the refusal is sent
	// beside the turn).
	got := send("/queue sideways do it anyway") + "\n" + ports.next(t, "5", &seen)
	if !strings.Contains(got, "Queue mode is one of") || !strings.Contains(got, "re: ") {
		t.Errorf("a refused directive: %q, want the refusal and the answer to its text", got)
	}
	if r := agent.turn(t, 2); r.Effort != "low" || !strings.Contains(r.Prompt, "User 5: do it anyway") {
		t.Errorf("turn 3: effort %q after /t low, prompt %q", r.Effort, r.Prompt)
	}
}

// The messaging section reaches every turn's system prompt, the same text
// for the session's turns (its warm claude keeps it): the channel, the
// kind of chat, what it renders, NO_REPLY.
func TestInProcessPromptSection(t *testing.T) {
	g, ports, agent := inproc(t, func(s *Settings) { s.Turn.PromptSection = chatprompt.Default })
	ctx := context.Background()
	seen := 0
	for _, text := range []string{"one", "two"} {
		sendDM(t, ctx, g, "5", text)
		ports.next(t, "5", &seen)
	}
	first, second := agent.turn(t, 0).ExtraSystemPrompt, agent.turn(t, 1).ExtraSystemPrompt
	// NO_REPLY is group guidance: a direct chat's section does not offer it.
	if strings.Contains(first, "NO_REPLY") {
		t.Errorf("a direct chat's section offers NO_REPLY:\n%s", first)
	}
	for _, want := range []string{"## Messaging", "a direct chat on Fake", "Write Markdown", "up to 4096 characters", "MEDIA:<path>"} {
		if !strings.Contains(first, want) {
			t.Errorf("the section lacks %q:\n%s", want, first)
		}
	}
	if first != second {
		t.Errorf("the section changed between two turns of a session:\n%s\n---\n%s", first, second)
	}
	// messages { prompt_section = false }: no section.
	g, ports, agent = inproc(t, func(s *Settings) { s.Turn.PromptSection = nil })
	seen = 0
	sendDM(t, ctx, g, "5", "three")
	ports.next(t, "5", &seen)
	if sys := agent.turn(t, 0).ExtraSystemPrompt; strings.Contains(sys, "## Messaging") {
		t.Errorf("prompt_section = false, and the system prompt has the section:\n%s", sys)
	}
}

// System events: what /model, /new and /stop changed reaches claude's
// next prompt as "System:" lines, once each — the turn after it does not
// carry them again.
func TestInProcessSystemEvents(t *testing.T) {
	g, ports, agent := inproc(t, func(s *Settings) {
		s.Turn.PermissionModes, s.Access.Owners = []string{"default", "plan"}, []string{"tg:5"}
	})
	ctx := context.Background()
	seen := 0
	send := func(text string) string {
		t.Helper()
		sendDM(t, ctx, g, "5", text)
		return ports.next(t, "5", &seen)
	}
	count := func(n int, s string) int { return strings.Count(agent.turn(t, n).Prompt, s) }
	send("hello")
	send("/model opus")
	send("/effort high")
	send("/mode plan")
	send("first after the change")
	if count(1, "System: The model is now opus, changed with /model.") != 1 || count(1, "System: Your effort level is now high") != 1 ||
		count(1, "System: The permission mode is now plan, changed with /mode.") != 1 {
		t.Errorf("turn 2's prompt:\n%s", agent.turn(t, 1).Prompt)
	}
	send("second after the change")
	if count(2, "System:") != 0 {
		t.Errorf("turn 3 repeats an event:\n%s", agent.turn(t, 2).Prompt)
	}
	send("/new")
	send("after the reset")
	if count(3, "System: The user started a new conversation (/new)") != 1 || count(3, "now opus") != 0 {
		t.Errorf("turn 4's prompt:\n%s", agent.turn(t, 3).Prompt)
	}
	// /stop while a turn runs.
	sendDM(t, ctx, g, "5", "long job hold")
	<-agent.held
	send("/stop")
	send("what now?")
	if count(5, "System: The user used /stop: your answer in progress was stopped.") != 1 {
		t.Errorf("turn 6's prompt:\n%s", agent.turn(t, 5).Prompt)
	}
	send("and then?")
	if count(6, "System:") != 0 {
		t.Errorf("turn 7 repeats an event:\n%s", agent.turn(t, 6).Prompt)
	}
}

// A scheduled run with a model (heartbeat { model }) runs on that model;
// the chat's next turn is back on the session's.
func TestInProcessHeartbeatModel(t *testing.T) {
	g, ports, agent := inproc(t, nil)
	ctx := context.Background()
	if err := g.Scheduled(ctx, ScheduledRun{Job: "heartbeat", At: time.Now(), Chat: "tg:5", Prompt: "beat", Model: "haiku"}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	ports.next(t, "5", &seen)
	sendDM(t, ctx, g, "5", "hi")
	ports.next(t, "5", &seen)
	if m1, m2 := agent.turn(t, 0).Model, agent.turn(t, 1).Model; m1 != "haiku" || m2 != "" {
		t.Errorf("models %q, %q; want haiku for the heartbeat, then the session's", m1, m2)
	}
}

// TestInProcessUsageLimit: claude's usage limit stops a turn; its message
// parks in the journal and the turns of every chat wait for the reset:
// each chat is told once, a schedule due meanwhile waits and a heartbeat
// is skipped, /status says until when. At the reset (the fake clock)
// every message runs once, in order in its chat.
func TestInProcessUsageLimit(t *testing.T) {
	clk := tstimetest.NewFake(time.Now())
	g, ports, agent := inproc(t, nil, func(o *Options) { o.Clock = clk })
	ctx := context.Background()
	reset := clk.Now().Add(time.Hour)
	agent.mu.Lock()
	agent.limit = &runner.Error{Kind: runner.KindUsageLimit, ResetAt: reset, Notice: "limit"}
	agent.mu.Unlock()
	send := func(chat, text string) {
		t.Helper()
		sendDM(t, ctx, g, chat, text)
	}
	seen := map[string]*int{"5": new(int), "6": new(int), "7": new(int)}
	send("5", "a1")
	if got := ports.next(t, "5", seen["5"]); !strings.HasPrefix(got, "Claude's usage limit is reached. Your messages are kept; I'll continue at") {
		t.Fatalf("chat 5 was told %q", got)
	}
	send("6", "b1")
	send("7", "c1")
	for _, c := range []string{"6", "7"} {
		if got := ports.next(t, c, seen[c]); !strings.Contains(got, "usage limit is reached") {
			t.Fatalf("chat %s was told %q", c, got)
		}
	}
	send("5", "a2")
	send("6", "b2")
	if err := g.Scheduled(ctx, ScheduledRun{Job: "daily", Chat: "tg:5", Prompt: "daily report", At: clk.Now()}); err == nil || !strings.Contains(err.Error(), "usage limit") {
		t.Errorf("a schedule due during the pause: %v", err)
	}
	if err := g.Scheduled(ctx, ScheduledRun{Job: turn.HeartbeatJob, Chat: "tg:5", Prompt: "beat", At: clk.Now()}); err != nil {
		t.Errorf("a heartbeat during the pause: %v", err)
	}
	send("6", "/status")
	if got := ports.next(t, "6", seen["6"]); !strings.Contains(got, "paused until") {
		t.Errorf("/status during the pause:\n%s", got)
	}
	agent.mu.Lock()
	agent.limit = nil
	ran := len(agent.prompts)
	agent.mu.Unlock()
	if ran != 1 {
		t.Fatalf("%d turns reached claude during the pause, want the one that hit the limit", ran)
	}
	clk.Advance(time.Hour)
	for chat, want := range map[string][]string{"5": {"a1", "a2"}, "6": {"b1", "b2"}, "7": {"c1"}} {
		for _, w := range want {
			if got := ports.next(t, chat, seen[chat]); !strings.HasPrefix(got, "re: ") || !strings.HasSuffix(got, ": "+w) {
				t.Fatalf("chat %s: %q, want the answer to %q", chat, got, w)
			}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g.Close(cctx)
	ports.mu.Lock()
	defer ports.mu.Unlock()
	count := map[string]int{}
	for _, r := range ports.sent {
		count[r.ChatID+" "+r.Text]++
	}
	for k, n := range count {
		if n > 1 {
			t.Errorf("sent %d times: %q", n, k)
		}
	}
	if len(ports.sent) != 3+1+5 {
		t.Errorf("%d sends, want 3 notices, /status and 5 answers: %+v", len(ports.sent), ports.sent)
	}
}

// The queue modes as the composed pipeline shows them to claude (the
// rules themselves are core/queue's): collect merges what waited into one
// prompt, the cap's dropped messages arrive as summaries before the next,
// and interrupt aborts the running turn and says so in the next prompt.
func TestInProcessQueueModesReachThePrompt(t *testing.T) {
	// during holds a turn of held, then sends then and waits until wait
	// of them were queued behind it (each gets the seen reaction).
	during := func(t *testing.T, set func(*Settings), wait int, held string, then ...string) (*recPorts, *scripted) {
		t.Helper()
		g, ports, agent := inproc(t, func(s *Settings) {
			s.SeenReaction = "👀"
			set(s)
		})
		ports.react = true
		ctx := context.Background()
		sendDM(t, ctx, g, "5", held)
		<-agent.held
		for _, w := range then {
			sendDM(t, ctx, g, "5", w)
		}
		for {
			ports.mu.Lock()
			n := len(ports.reacted)
			ports.mu.Unlock()
			if n >= wait {
				return ports, agent
			}
			select {
			case <-ports.more:
			case <-time.After(10 * time.Second): // a bound on a failing test
				t.Fatalf("%d of %d messages queued", n, wait)
			}
		}
	}
	t.Run("collect", func(t *testing.T) {
		ports, agent := during(t, func(s *Settings) { s.Queue.Mode = queue.Collect }, 2, "first hold", "second", "third")
		close(agent.release)
		seen := 0
		ports.next(t, "5", &seen)
		ports.next(t, "5", &seen)
		contains(t, agent.turn(t, 1).Prompt, "[Queued messages while agent was busy]", "Queued #1", "second", "Queued #2", "third")
	})
	t.Run("cap", func(t *testing.T) {
		ports, agent := during(t, func(s *Settings) { s.Queue.Cap = 2 }, 4, "busy hold", "m1", "m2", "m3", "m4")
		close(agent.release)
		seen := 0
		for range 3 {
			ports.next(t, "5", &seen)
		}
		contains(t, agent.turn(t, 1).Prompt, "[Messages dropped while the queue was full", "m1", "m2", "m3")
		contains(t, agent.turn(t, 2).Prompt, "m4")
	})
	t.Run("interrupt", func(t *testing.T) {
		ports, agent := during(t, func(s *Settings) { s.Queue.Mode = queue.Interrupt }, 0, "slow hold", "newer")
		seen := 0
		if got := ports.next(t, "5", &seen); strings.Contains(got, "slow") {
			t.Fatalf("the interrupted turn was answered: %q", got)
		}
		contains(t, agent.turn(t, 1).Prompt, "newer", turn.AbortHint)
	})
}

// A command plugin's replies are messages of their own, each rendered per
// its format the way an agent's reply is (this channel declares no
// markdown, so a markdown reply arrives as plain text without its
// asterisks; a plain reply arrives as written), and a reply's file is
// sent with it.
func TestInProcessCommandReplies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(file, []byte("%PDF-1.4 report"), 0o600); err != nil {
		t.Fatal(err)
	}
	g, ports, _ := inproc(t, nil, func(o *Options) {
		o.Ports.(*recPorts).answer = &command.Response{Replies: []command.Reply{
			{Text: "Total: **10**", Format: channel.FormatMarkdown},
			{Text: "literal *stars*"},
			{Text: "the file", Media: []channel.OutboundMedia{{Path: file, Kind: channel.MediaDocument}}},
			{Media: []channel.OutboundMedia{{Path: filepath.Join(t.TempDir(), "gone.pdf")}}},
		}}
	})
	g.RefreshCommands(context.Background()) // as the host does once a plugin is ready
	if err := g.Inbound(context.Background(), "tg", []channel.InboundMessage{dmFrom("5", "/report")}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, want := range []string{"Total: 10", "literal *stars*", "the file", "(gone.pdf was not sent: no such file.)"} {
		if got := ports.next(t, "5", &seen); got != want {
			t.Errorf("message %d: %q, want %q", seen, got, want)
		}
	}
	ports.mu.Lock()
	defer ports.mu.Unlock()
	if len(ports.sent) != 4 {
		t.Fatalf("%d messages sent, want one per reply: %+v", len(ports.sent), ports.sent)
	}
	if m := ports.sent[2].Media; len(m) != 1 || m[0].Path != file {
		t.Errorf("the file went as %+v", m)
	}
	for i, r := range ports.sent {
		if r.Format != channel.FormatPlain || (i != 2 && len(r.Media) > 0) {
			t.Errorf("message %d: format %q, media %+v", i, r.Format, r.Media)
		}
	}
}
