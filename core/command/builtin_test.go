package command

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
	"github.com/clawhost/clawhost/sdk/channel"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

type fakeSessions struct {
	t             *testing.T
	resets        []string
	running       bool
	aborted       bool
	dropped       int
	model, effort string
	mode, queue   string
	// names are the names /name gave, switched the numbers /switch chose.
	names    []string
	switched []int
}

// tk is the session the tests' commands run in.
var tk = sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: "tg:direct:5"}

func (f *fakeSessions) Overrides(context.Context, sessionkey.Key) (session.Overrides, error) {
	return session.Overrides{Model: f.model, Effort: session.Effort(f.effort), Mode: f.mode, Queue: session.QueueMode(f.queue)}, nil
}

func (f *fakeSessions) Past(context.Context, sessionkey.Key) ([]session.PastSession, error) {
	return []session.PastSession{
		{ID: "0123456789", Started: time.Unix(1_800_000_000, 0).UTC(), Last: time.Unix(1_800_003_600, 0).UTC(), Turns: 4},
		{ID: "abcdef0123", Started: time.Unix(1_799_000_000, 0).UTC(), Last: time.Unix(1_799_003_600, 0).UTC(), Turns: 2, Name: "parser fix", Title: "Fixing the parser"},
		{ID: "fedcba9876", Started: time.Unix(1_798_000_000, 0).UTC(), Last: time.Unix(1_798_003_600, 0).UTC(), Turns: 1, Title: "Deploy staging"},
	}, nil
}

func (f *fakeSessions) Switch(_ context.Context, _ sessionkey.Key, n int) (session.PastSession, error) {
	if n < 1 || n > 3 {
		return session.PastSession{}, fmt.Errorf("there is no earlier session %d (/list shows 3)", n)
	}
	f.switched = append(f.switched, n)
	return session.PastSession{ID: "0123456789", Started: time.Unix(1_800_000_000, 0).UTC(), Turns: 4}, nil
}

func (f *fakeSessions) Current(context.Context, sessionkey.Key) (session.PastSession, bool, error) {
	name := ""
	if len(f.names) > 0 {
		name = f.names[len(f.names)-1]
	}
	return session.PastSession{ID: "99999999aa", Started: time.Unix(1_800_010_000, 0).UTC(), Last: time.Unix(1_800_010_600, 0).UTC(), Turns: 3, Name: name, Title: "Now"}, true, nil
}

func (f *fakeSessions) Name(_ context.Context, _ sessionkey.Key, name string) error {
	f.names = append(f.names, name)
	return nil
}

// SetOverride stores through session.Overrides.Set, as the gateway does:
// a value the handler let through that Set refuses fails the test.
func (f *fakeSessions) SetOverride(ctx context.Context, key sessionkey.Key, name session.Setting, value string) error {
	o, _ := f.Overrides(ctx, key)
	if err := o.Set(name, value); err != nil {
		f.t.Errorf("SetOverride(%q, %q): %v", name, value, err)
		return err
	}
	f.model, f.effort, f.mode, f.queue = o.Model, string(o.Effort), o.Mode, string(o.Queue)
	return nil
}

func (f *fakeSessions) Reset(key sessionkey.Key, _ *message.Message, reason string) {
	f.resets = append(f.resets, key.String()+" "+reason)
}
func (f *fakeSessions) Stop(sessionkey.Key) (bool, int) { return f.aborted, f.dropped }
func (f *fakeSessions) Running(sessionkey.Key) bool     { return f.running }

type fakePlugins struct {
	ready    bool
	executed []sdkcommand.Request
	menus    [][]channel.MenuEntry
	chats    []string // "<instance>/<chat id>: name name …" of each PublishChatMenu
	// starting: the "ops" plugin is still starting (it lists nothing)
	// until AwaitCommandPlugins, which counts its calls in awaited.
	starting bool
	awaited  int
}

func (f *fakePlugins) ListCommands(context.Context) (map[string][]sdkcommand.Spec, []error) {
	if f.starting {
		return map[string][]sdkcommand.Spec{}, nil
	}
	return map[string][]sdkcommand.Spec{"ops": {{Name: "deploy", Description: "ship it", OwnerOnly: true}, {Name: "ping"}}}, nil
}

func (f *fakePlugins) AwaitCommandPlugins(context.Context) []string {
	f.awaited++
	f.starting = false
	return []string{"ops"}
}

func (f *fakePlugins) WaitReady(context.Context, string) (pluginclient.Description, error) {
	if !f.ready {
		return pluginclient.Description{}, errors.New("not ready")
	}
	return pluginclient.Description{Command: true}, nil
}

func (f *fakePlugins) Execute(_ context.Context, _ string, req sdkcommand.Request) (sdkcommand.Response, error) {
	f.executed = append(f.executed, req)
	switch req.Args {
	case "":
		return sdkcommand.Response{}, channel.Errorf(channel.CodeInvalidRequest, "usage: /ping TEXT")
	case "quota":
		return sdkcommand.Response{}, channel.Errorf(channel.CodeRateLimited, "quota used up")
	case "crash":
		return sdkcommand.Response{}, errors.New("plugin exited")
	case "many":
		return sdkcommand.Response{Replies: []sdkcommand.Reply{
			{Text: "Total: **10**", Format: channel.FormatMarkdown},
			{Text: " "},
			{Text: "plain *as is*", Format: "html"},
			{Media: []channel.OutboundMedia{{Path: "/tmp/report.pdf", Kind: channel.MediaDocument}}},
			{Buttons: [][]channel.Button{{{ID: "/ping again", Label: "Again"}}}},
		}}, nil
	}
	return sdkcommand.Response{Replies: []sdkcommand.Reply{{Text: "pong " + req.Args}, {Text: " "}}}, nil
}

func (f *fakePlugins) PublishMenu(_ context.Context, menu []channel.MenuEntry) []error {
	f.menus = append(f.menus, menu)
	return nil
}

func (f *fakePlugins) PublishChatMenu(_ context.Context, instance string, menu channel.ChatMenu) error {
	names := make([]string, len(menu.Commands))
	for i, e := range menu.Commands {
		names[i] = e.Name
	}
	f.chats = append(f.chats, instance+"/"+menu.ChatID+": "+strings.Join(names, " "))
	return nil
}

// firstMessage is the text and buttons of the first message of an answer.
func firstMessage(msgs []Message) (string, [][]channel.Button) {
	if len(msgs) == 0 {
		return "", nil
	}
	return msgs[0].Text, msgs[0].Buttons
}

// TestPluginRepliesAreMessages: each reply of a command plugin is a message
// of its own, in its format (markdown kept as markdown for the channel to
// render, anything else plain), with its files and buttons; a blank reply
// is none, and a reply of buttons alone gets a line to hang them under.
func TestPluginRepliesAreMessages(t *testing.T) {
	t.Parallel()
	h, _, _, _ := newHandler(t)
	inv, ok := h.Registry.Parse("/ping many")
	if !ok {
		t.Fatal("/ping is not registered")
	}
	m := &message.Message{Instance: "tg", From: "tg:5", Body: "/ping many", Sender: channel.Sender{ID: "5"}}
	msgs := h.Messages(context.Background(), tk, m, inv, Role{})
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4 (the blank reply is none): %+v", len(msgs), msgs)
	}
	if msgs[0].Text != "Total: **10**" || msgs[0].Format != channel.FormatMarkdown {
		t.Errorf("markdown reply: %+v", msgs[0])
	}
	if msgs[1].Text != "plain *as is*" || msgs[1].Format != channel.FormatPlain {
		t.Errorf("a reply in an unknown format is plain: %+v", msgs[1])
	}
	if len(msgs[2].Media) != 1 || msgs[2].Media[0].Path != "/tmp/report.pdf" || msgs[2].Text != "" {
		t.Errorf("media reply: %+v", msgs[2])
	}
	if len(msgs[3].Buttons) != 1 || msgs[3].Text == "" {
		t.Errorf("buttons reply: %+v", msgs[3])
	}
	if got := h.Answer(context.Background(), tk, m, inv, Role{}); !strings.HasPrefix(got, "Total: **10**\n\nplain *as is*") {
		t.Errorf("Answer joins the messages' text: %q", got)
	}
}

func newHandler(t *testing.T) (*Handler, *fakeSessions, *fakePlugins, *sqlite.DB) {
	t.Helper()
	db := sqlitetest.Open(t, t.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	s, p := &fakeSessions{t: t}, &fakePlugins{ready: true}
	start := time.Unix(1_800_000_000, 0)
	h := &Handler{Registry: NewRegistry(Builtins), Sessions: s, Plugins: p, Store: db, Logger: hclog.NewNullLogger(),
		Now: func() time.Time { return start.Add(90 * time.Second) }, Started: start, Version: "v9", Model: func(sessionkey.Key) string { return "opus" }}
	h.Refresh(context.Background())
	return h, s, p, db
}

// TestResolveWaitsForStartingCommandPlugins: a "/word" that names no
// registered command waits for the command plugins still starting and is
// parsed again once one is ready; other text never waits, and a "/word"
// with nothing starting is decided at once (no command).
func TestResolveWaitsForStartingCommandPlugins(t *testing.T) {
	t.Parallel()
	h, _, p, _ := newHandler(t)
	p.starting = true
	h.Refresh(context.Background())
	if _, ok := h.Registry.Parse("/ping x"); ok {
		t.Fatal("/ping is registered while its plugin is starting")
	}
	for _, text := range []string{"hello", "/status", "ping x", "/"} {
		h.Resolve(context.Background(), text)
	}
	if p.awaited != 0 {
		t.Fatalf("waited %d times for text that is not an unknown /word", p.awaited)
	}
	inv, ok := h.Resolve(context.Background(), "/ping x")
	if !ok || inv.Instance != "ops" || inv.Name != "ping" || inv.Args != "x" || p.awaited != 1 {
		t.Fatalf("/ping while starting: %+v %v (awaited %d), want ops' ping", inv, ok, p.awaited)
	}
	if _, ok := h.Resolve(context.Background(), "/nosuch"); ok || p.awaited != 2 {
		t.Errorf("/nosuch: ok %v awaited %d, want no command after one (immediate) wait", ok, p.awaited)
	}
	// ops is listed now: an unknown /word refreshes nothing (no menu is
	// published again).
	menus := len(p.menus)
	h.Resolve(context.Background(), "/nosuch")
	if len(p.menus) != menus {
		t.Errorf("an unknown /word with every ready plugin listed refreshed the commands")
	}
}

func answer(t *testing.T, h *Handler, text string, owner bool) string {
	t.Helper()
	inv, ok := h.Registry.Parse(text)
	if !ok {
		t.Fatalf("%q is not a command", text)
	}
	m := &message.Message{Instance: "tg", From: "tg:5", Body: text, Sender: channel.Sender{ID: "5"}}
	return h.Answer(context.Background(), tk, m, inv, Role{Owner: owner, Control: true})
}

func TestBuiltins(t *testing.T) {
	t.Parallel()
	h, s, _, _ := newHandler(t)
	cases := []struct {
		text  string
		owner bool
		want  string
	}{
		{"/whoami", false, "You are tg:5."},
		{"/new", false, "New session started."},
		{"/approve ABC", false, "Only an owner can use /approve."},
		{"/approve", true, "Usage: /approve CODE"},
		{"/approve NOPE", true, "Unknown pairing code."},
		{"/stop", false, "Nothing is running."},
		{"/verbose on", false, "Tool progress will be shown."},
		{"/verbose", false, "Tool progress will not be shown."},
		{"/status", false, "Session: agent:main:tg:direct:5\nNo conversation yet.\nAgent: main, idle, 0 queued\nUptime: 1m30s\nclawhost v9"},
	}
	for _, c := range cases {
		if got := answer(t, h, c.text, c.owner); got != c.want {
			t.Errorf("%s: %q, want %q", c.text, got, c.want)
		}
	}
	// How the last turn got to claude, before the agent's state.
	h.LastTurn = func(key sessionkey.Key) string {
		if key != tk {
			return ""
		}
		return "waited 1.2 s for a free slot (4 of 4 running), started claude in 0.9 s (no warm process: 4 of 4 warm, 4 in use)"
	}
	if got, want := answer(t, h, "/status", false), "No conversation yet.\nLast turn: waited 1.2 s for a free slot (4 of 4 running), started claude in 0.9 s (no warm process: 4 of 4 warm, 4 in use)\nAgent: main, idle"; !strings.Contains(got, want) {
		t.Errorf("/status: %q lacks %q", got, want)
	}
	h.LastTurn = nil
	// What the lifecycle hooks last did (a voice plugin's timings).
	h.HookWork = func(key sessionkey.Key) []string {
		return []string{"🎙 transcribed in 1.4 s", "🔊 spoken in 0.8 s"}
	}
	if got, want := answer(t, h, "/status", false), "Hooks: 🎙 transcribed in 1.4 s · 🔊 spoken in 0.8 s\n"; !strings.Contains(got, want) {
		t.Errorf("/status: %q lacks %q", got, want)
	}
	h.HookWork = nil
	if len(s.resets) != 1 || s.resets[0] != "agent:main:tg:direct:5 /new" {
		t.Errorf("resets %q", s.resets)
	}
	s.aborted, s.dropped = true, 2
	if got := answer(t, h, "/stop", false); got != "Stopped. 2 queued message(s) dropped." {
		t.Errorf("/stop: %q", got)
	}
	if got := answer(t, h, "/help", false); !strings.Contains(got, "/verbose — show tool progress") || !strings.Contains(got, "/deploy — ship it") {
		t.Errorf("/help: %q", got)
	}
}

func TestApproveWithAPendingCode(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	res, err := db.RequestPairing(context.Background(), store.PairingRequest{Instance: "tg", SenderID: "77"})
	if err != nil {
		t.Fatal(err)
	}
	if got := answer(t, h, "/approve "+res.Code.Code, true); got != "Approved tg:77." {
		t.Errorf("%q", got)
	}
}

func TestPluginCommands(t *testing.T) {
	t.Parallel()
	h, _, p, _ := newHandler(t)
	if len(p.menus) != 1 || len(p.menus[0]) != len(Builtins)+2 {
		t.Fatalf("menu published once with every command: %v", p.menus)
	}
	if got := answer(t, h, "/deploy prod", false); got != "The /deploy command is for owners only." {
		t.Errorf("owner-only: %q", got)
	}
	if got := answer(t, h, "/ping x", false); got != "pong x" || p.executed[0].Command != "ping" || p.executed[0].Conversation.SessionKey != tk.String() {
		t.Errorf("ping: %q %+v", got, p.executed)
	}
	for args, want := range map[string]string{
		"":      "usage: /ping TEXT", // the plugin's usage text reaches the user
		"quota": "The /ping command failed: quota used up",
		"crash": "The /ping command failed.",
	} {
		if got := answer(t, h, strings.TrimSpace("/ping "+args), false); got != want {
			t.Errorf("/ping %s: %q, want %q", args, got, want)
		}
	}
	p.ready = false
	if got := answer(t, h, "/ping", false); got != "The /ping command is unavailable right now (plugin ops is not ready)." {
		t.Errorf("not ready: %q", got)
	}
}

// A group member who does not control the session cannot start it anew or
// stop it, and /status leaves the costs out for them.
func TestControlRole(t *testing.T) {
	t.Parallel()
	h, s, _, db := newHandler(t)
	if _, err := db.UpdateSession(context.Background(), "agent:main:tg:group:-5", func(x *store.Session, _ bool) error {
		x.SessionID, x.ClaudeSessionID, x.Turns, x.CostUSD = "s", "c", 3, 1.25
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m := &message.Message{Instance: "tg", ChatType: channel.ChatGroup, ChatID: "-5", From: "tg:5", Sender: channel.Sender{ID: "5"}}
	ask := func(text string, who Role) string {
		inv, ok := h.Registry.Parse(text)
		if !ok {
			t.Fatalf("%q is not a command", text)
		}
		return h.Answer(context.Background(), sessionkey.Key{Agent: "main", Chat: "tg:group:-5"}, m, inv, who)
	}
	member, owner := Role{}, Role{Owner: true, Control: true}
	for _, cmd := range []string{"/new", "/reset", "/stop"} {
		if got := ask(cmd, member); got != "In this group only an owner can use "+cmd+"." {
			t.Errorf("%s by a member: %q", cmd, got)
		}
	}
	if len(s.resets) != 0 {
		t.Errorf("a member reset the session: %q", s.resets)
	}
	if got := ask("/status", member); strings.Contains(got, "Cost") || strings.Contains(got, "Tokens") || !strings.Contains(got, "Turns: 3") {
		t.Errorf("/status for a member: %q", got)
	}
	if got := ask("/status", owner); !strings.Contains(got, "Cost: $1.2500") {
		t.Errorf("/status for an owner: %q", got)
	}
	if got := ask("/new", owner); got != "New session started." {
		t.Errorf("/new by an owner: %q", got)
	}
}

func TestModelAndEffort(t *testing.T) {
	t.Parallel()
	h, s, _, _ := newHandler(t)
	h.Model = func(sessionkey.Key) string { return "opus" }
	offered := []string{"opus", "sonnet"}
	h.Models = func(sessionkey.Key) []string { return offered }
	for _, c := range []struct{ text, want string }{
		{"/model", "Model: opus.\nAvailable: opus, sonnet. Change with /model NAME."},
		{"/model haiku", `"haiku" is not offered here. Available: opus, sonnet.`},
		{"/model sonnet", "Model: sonnet from the next message on. The conversation goes on."},
		{"/model", "Model: sonnet (set with /model; /model default goes back to opus).\nAvailable: opus, sonnet. Change with /model NAME."},
		{"/effort", "Effort: claude's default. Change with /effort low|medium|high|max or default."},
		{"/effort extreme", "Effort is one of low, medium, high, max, or default."},
		{"/effort HIGH", "Effort: high from the next message on."},
		{"/model default", "Model: back to opus. The conversation goes on."},
	} {
		if got := answer(t, h, c.text, false); got != c.want {
			t.Errorf("%s: %q, want %q", c.text, got, c.want)
		}
	}
	if s.model != "" || s.effort != "high" {
		t.Errorf("stored model %q effort %q", s.model, s.effort)
	}
	offered = nil // agent.models unset: any name
	if got := answer(t, h, "/model claude-haiku-4-5", false); got != "Model: claude-haiku-4-5 from the next message on. The conversation goes on." || s.model != "claude-haiku-4-5" {
		t.Errorf("any name: %q (%q)", got, s.model)
	}
	if got := answer(t, h, "/model rm -rf", false); got != `"rm -rf" is not a model name.` {
		t.Errorf("bad name: %q", got)
	}
}

func TestPermissionMode(t *testing.T) {
	t.Parallel()
	h, s, _, _ := newHandler(t)
	h.Mode = func(sessionkey.Key) string { return "dontAsk" }
	var offered []string
	h.Modes = func(sessionkey.Key) []string { return offered }
	if got := answer(t, h, "/mode acceptEdits", true); got != "The configuration offers no other permission mode (agent.permission_modes)." || s.mode != "" {
		t.Errorf("no list: %q (%q)", got, s.mode)
	}
	offered = []string{"dontAsk", "acceptEdits", "ask"}
	for _, c := range []struct {
		text  string
		owner bool
		want  string
	}{
		{"/mode", true, "Permission mode: dontAsk. Available: dontAsk, acceptEdits, ask. Change with /mode NAME."},
		{"/mode", false, "Permission mode: dontAsk. Available: dontAsk, acceptEdits, ask. An owner can change it."},
		{"/mode bypassPermissions", true, `"bypassPermissions" is not offered here. Available: dontAsk, acceptEdits, ask.`},
		// Changing the mode is the operator's: a non-owner is refused,
		// whatever the mode, even one on offer.
		{"/mode ask", false, "Only an owner can change the permission mode."},
		{"/mode acceptEdits", false, "Only an owner can change the permission mode."},
		{"/mode acceptEdits", true, "Permission mode: acceptEdits from the next message on. The conversation goes on."},
		{"/mode default", false, "Only an owner can change the permission mode."},
		{"/mode", false, "Permission mode: acceptEdits. Available: dontAsk, acceptEdits, ask. An owner can change it."},
	} {
		if got := answer(t, h, c.text, c.owner); got != c.want {
			t.Errorf("%s (owner %v): %q, want %q", c.text, c.owner, got, c.want)
		}
	}
	if s.mode != "acceptEdits" {
		t.Errorf("stored %q", s.mode)
	}
	if got := answer(t, h, "/mode ask", true); !strings.HasPrefix(got, "Permission mode: ask from the next message on") || s.mode != "ask" {
		t.Errorf("/mode ask by an owner: %q (%q)", got, s.mode)
	}
}

// TestModePickerOwnersOnly: the bare /mode's buttons (each a /mode NAME)
// go to owners only; a controller sees the mode without them.
func TestModePickerOwnersOnly(t *testing.T) {
	t.Parallel()
	h, _, _, _ := newHandler(t)
	h.Modes = func(sessionkey.Key) []string { return []string{"plan", "ask"} }
	inv, _ := h.Registry.Parse("/mode")
	m := &message.Message{Instance: "tg", From: "tg:5", Body: "/mode", Sender: channel.Sender{ID: "5"}}
	for _, tt := range []struct {
		who  Role
		rows int
	}{
		{Role{Owner: true, Control: true}, 1},
		{Role{Control: true}, 0},
		{Role{}, 0},
	} {
		text, buttons := firstMessage(h.Messages(context.Background(), tk, m, inv, tt.who))
		if len(buttons) != tt.rows {
			t.Errorf("%+v: %d rows of buttons (%q), want %d", tt.who, len(buttons), text, tt.rows)
		}
		if tt.rows > 0 && (len(buttons[0]) != 3 || buttons[0][1].ID != "/mode ask" || buttons[0][2].ID != "/mode default") {
			t.Errorf("picker %+v", buttons)
		}
	}
}

func TestQueueModeCommand(t *testing.T) {
	t.Parallel()
	h, s, _, _ := newHandler(t)
	h.QueueMode = func(string) string { return "collect" }
	for _, c := range []struct{ text, want string }{
		{"/queue", "Queue: collect. Change with /queue followup|collect|interrupt|steer or default."},
		{"/queue sideways", "Queue mode is one of followup, collect, interrupt, steer, or default."},
		{"/queue Interrupt", "Queue: interrupt from the next message on."},
		{"/queue", "Queue: interrupt. Change with /queue followup|collect|interrupt|steer or default."},
		{"/queue default", "Queue: collect from the next message on."},
	} {
		if got := answer(t, h, c.text, false); got != c.want {
			t.Errorf("%s: %q, want %q", c.text, got, c.want)
		}
	}
	if s.queue != "" {
		t.Errorf("stored %q", s.queue)
	}
}

type fakeSchedules struct{ added []ScheduleEntry }

func (f *fakeSchedules) Add(_ context.Context, e ScheduleEntry) error {
	f.added = append(f.added, e)
	return nil
}
func (f *fakeSchedules) Remove(_ context.Context, name string) (bool, error) {
	return name == "standup", nil
}
func (f *fakeSchedules) List(context.Context) []ScheduleEntry { return f.added }

func TestScheduleCommand(t *testing.T) {
	t.Parallel()
	h, _, _, _ := newHandler(t)
	sch := &fakeSchedules{}
	h.Schedules = sch
	if got := answer(t, h, "/schedule add standup 0 9 * * 1-5 Summarize yesterday", false); got != "Only an owner can use /schedule." {
		t.Errorf("non-owner: %q", got)
	}
	if got := answer(t, h, "/schedule add standup 0 9 * * 1-5 Summarize yesterday", true); got != `Schedule standup added: "0 9 * * 1-5", in this chat.` {
		t.Errorf("add: %q", got)
	}
	if len(sch.added) != 1 || sch.added[0].Chat != "tg:" || sch.added[0].Prompt != "Summarize yesterday" || sch.added[0].Sender != "tg:5" {
		t.Errorf("added %+v", sch.added)
	}
	if got := answer(t, h, "/schedule add x 0 9", true); !strings.HasPrefix(got, "Usage:") {
		t.Errorf("short add: %q", got)
	}
	if got := answer(t, h, "/schedule list", true); !strings.Contains(got, `standup: "0 9 * * 1-5" in tg:, next never (added in chat): Summarize yesterday`) {
		t.Errorf("list: %q", got)
	}
	if got := answer(t, h, "/schedule remove standup", true); got != "Schedule standup removed." {
		t.Errorf("remove: %q", got)
	}
	if got := answer(t, h, "/schedule remove nope", true); !strings.Contains(got, "No schedule") {
		t.Errorf("remove unknown: %q", got)
	}
}

// TestListAndSwitch: /list shows the current and earlier sessions with
// their names, claude's titles, dates and turns; /switch takes a number,
// a name or the start of a name or title; /name names the current one.
func TestListAndSwitch(t *testing.T) {
	t.Parallel()
	h, s, _, _ := newHandler(t)
	got := answer(t, h, "/list", false)
	for _, want := range []string{
		"This session: Now, started 2027-01-15 10:46, last 2027-01-15 10:56, 3 turns (99999999)",
		"1. started 2027-01-15 08:00, last 2027-01-15 09:00, 4 turns (01234567)",
		`2. "parser fix" (Fixing the parser), started`,
		"3. Deploy staging, started",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/list lacks %q:\n%s", want, got)
		}
	}
	if got := answer(t, h, "/switch 1", false); got != "Switched to the session started 2027-01-15 08:00 (4 turns); the conversation goes on from there." {
		t.Errorf("/switch 1: %q", got)
	}
	if got := answer(t, h, "/switch 4", false); !strings.HasPrefix(got, "Not switched: there is no earlier session 4") {
		t.Errorf("/switch 4: %q", got)
	}
	for _, arg := range []string{"Parser Fix", "parser", "fixing", "deploy"} {
		answer(t, h, "/switch "+arg, false)
	}
	if !slices.Equal(s.switched, []int{1, 2, 2, 2, 3}) {
		t.Errorf("/switch by name chose %v, want [1 2 2 2 3]", s.switched)
	}
	if got := answer(t, h, "/switch x", false); !strings.HasPrefix(got, "Not switched: no earlier session is named") {
		t.Errorf("/switch x: %q", got)
	}
	if got := answer(t, h, "/name   the  big refactor ", false); got != `This session is now named "the big refactor".` {
		t.Errorf("/name: %q", got)
	}
	if got := answer(t, h, "/list", false); !strings.Contains(got, `This session: "the big refactor" (Now), started`) {
		t.Errorf("/list after /name: %q", got)
	}
	if got := answer(t, h, "/name", false); !strings.HasPrefix(got, "Usage: /name") || len(s.names) != 1 {
		t.Errorf("bare /name: %q (%v)", got, s.names)
	}
	if got := answer(t, h, "/name "+strings.Repeat("x", 81), false); !strings.Contains(got, "at most 80") {
		t.Errorf("a long /name: %q", got)
	}
}

// modelName accepts exactly what the regular expression it replaced did.
func TestModelNameMatchesThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@\[\]-]{0,99}$`)
	cases := []string{"", "a", "sonnet", "opus", "claude-sonnet-4-5@20250929", "us.anthropic.claude:0", "[x]", "x[1m]",
		"-x", ".x", "x y", "x/y", "é", "x\n", strings.Repeat("a", 100), strings.Repeat("a", 101), "a" + strings.Repeat("-", 99), "A_b", "a_b"}
	for c := byte(0); c < 128; c++ {
		cases = append(cases, "a"+string(c), string(c)+"a")
	}
	for _, s := range cases {
		if got, want := modelName(s), re.MatchString(s); got != want {
			t.Errorf("modelName(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}

// fakeRevoker records revocations; tg:7 is approved and has two
// schedules, tg:8 is on allow_from too.
type fakeRevoker struct{ calls []string }

func (f *fakeRevoker) Revoke(_ context.Context, entry, by string) (Revocation, error) {
	f.calls = append(f.calls, entry+" by "+by)
	switch entry {
	case "tg:7":
		return Revocation{Found: true, Schedules: 2}, nil
	case "tg:8":
		return Revocation{Found: true, Listed: []string{"allow_from"}}, nil
	case "tg:err":
		return Revocation{}, errors.New("disk full")
	}
	return Revocation{}, nil
}

func TestRevokeCommand(t *testing.T) {
	t.Parallel()
	h, _, _, _ := newHandler(t)
	rv := &fakeRevoker{}
	h.Revoker = rv
	for _, c := range []struct {
		text  string
		owner bool
		want  string
	}{
		{"/revoke tg:7", false, "Only an owner can use /revoke."},
		{"/revoke", true, "Usage: /revoke INSTANCE:ID (the sender's id as /whoami shows it, e.g. /revoke tg:123456789)"},
		{"/revoke 7", true, "Usage: /revoke INSTANCE:ID (the sender's id as /whoami shows it, e.g. /revoke tg:123456789)"},
		{"/revoke tg:", true, "Usage: /revoke INSTANCE:ID (the sender's id as /whoami shows it, e.g. /revoke tg:123456789)"},
		{"/revoke tg:7", true, "Revoked tg:7: they will be asked to pair again. 2 of their schedule(s) dropped."},
		{"/revoke tg:8", true, "Revoked tg:8: they will be asked to pair again. They are still admitted by access.allow_from in the configuration file."},
		{"/revoke tg:9", true, "tg:9 was not approved through pairing."},
		{"/revoke tg:err", true, "Revoking failed; see the gateway log."},
	} {
		if got := answer(t, h, c.text, c.owner); got != c.want {
			t.Errorf("%s: %q, want %q", c.text, got, c.want)
		}
	}
	if want := "tg:7 by tg:5,tg:8 by tg:5,tg:9 by tg:5,tg:err by tg:5"; strings.Join(rv.calls, ",") != want {
		t.Errorf("calls %q, want %q", rv.calls, want)
	}
	h.Revoker = nil
	if got := answer(t, h, "/revoke tg:7", true); got != "Revoking is not available." {
		t.Errorf("without a revoker: %q", got)
	}
}

// TestApproveRecordsTheOwner: /approve stores who approved.
func TestApproveRecordsTheOwner(t *testing.T) {
	t.Parallel()
	h, _, _, db := newHandler(t)
	res, err := db.RequestPairing(context.Background(), store.PairingRequest{Instance: "tg", SenderID: "77"})
	if err != nil {
		t.Fatal(err)
	}
	answer(t, h, "/approve "+res.Code.Code, true)
	list, err := db.ApprovedSenders(context.Background(), "")
	if err != nil || len(list) != 1 || list[0].ApprovedBy != "tg:5" {
		t.Fatalf("approved = %+v, %v", list, err)
	}
}

// fakeAgents is a chat's agents: bound first, the active one switched by
// SwitchAgent (resumed when that agent talked in the chat before).
type fakeAgents struct {
	choices  []string
	active   string
	talked   map[string]bool
	switched []string
	branch   string // the chat's worktree; "" for none
	reset    WorktreeReset
	resets   int
}

func (f *fakeAgents) Worktree(context.Context, *message.Message) (string, string, bool) {
	return f.branch, "/ws/.clawhost/worktrees/x", f.branch != ""
}

func (f *fakeAgents) ResetWorktree(context.Context, *message.Message) (WorktreeReset, error) {
	f.resets++
	return f.reset, nil
}

func (f *fakeAgents) AgentChoices(context.Context, *message.Message) ([]string, string) {
	return f.choices, f.active
}

func (f *fakeAgents) SwitchAgent(_ context.Context, _ *message.Message, a string) (bool, error) {
	f.switched = append(f.switched, a)
	resumed := f.talked[a]
	f.talked[f.active], f.active = true, a
	return resumed, nil
}

func TestAgentCommand(t *testing.T) {
	t.Parallel()
	h, _, _, _ := newHandler(t)
	if got := answer(t, h, "/agent", false); got != "This gateway runs one agent." {
		t.Errorf("without agents: %q", got)
	}
	f := &fakeAgents{choices: []string{"main"}, active: "main", talked: map[string]bool{}}
	h.Agents = f
	if got := answer(t, h, "/agent", false); got != "Agent: main. This chat talks to no other agent." {
		t.Errorf("one agent: %q", got)
	}
	f.choices = []string{"main", "ops", "docs"}
	for _, c := range []struct{ text, want string }{
		{"/agent", "Agent: main.\nAvailable: main, ops, docs. Switch with /agent NAME."},
		{"/agent main", "This chat already talks to agent main."},
		{"/agent nope", `There is no agent "nope" for this chat. Available: main, ops, docs.`},
		{"/agent ops", "Now talking to agent ops: a new conversation. /agent main goes back."},
		{"/agent main", "Now talking to agent main: its conversation in this chat goes on. /agent ops goes back."},
	} {
		if got := answer(t, h, c.text, false); got != c.want {
			t.Errorf("%s: %q, want %q", c.text, got, c.want)
		}
	}
	if len(f.switched) != 2 {
		t.Errorf("switched %v", f.switched)
	}
	inv, _ := h.Registry.Parse("/agent")
	m := &message.Message{Instance: "tg", From: "tg:5", Sender: channel.Sender{ID: "5"}}
	_, buttons := firstMessage(h.Messages(context.Background(), tk, m, inv, Role{Control: true}))
	if len(buttons) != 1 || len(buttons[0]) != 2 || buttons[0][0].ID != "/agent ops" || buttons[0][1].ID != "/agent docs" {
		t.Errorf("picker %+v, want the agents other than the active one", buttons)
	}
	if _, b := firstMessage(h.Messages(context.Background(), tk, m, inv, Role{})); b != nil {
		t.Errorf("a sender who may not switch got buttons %+v", b)
	}
}

func TestWorktreeCommand(t *testing.T) {
	t.Parallel()
	h, _, _, _ := newHandler(t)
	f := &fakeAgents{choices: []string{"main"}, active: "main", talked: map[string]bool{}}
	h.Agents = f
	if got := answer(t, h, "/worktree", true); got != "This chat's agent works without worktrees." {
		t.Errorf("none: %q", got)
	}
	f.branch = "clawhost/x"
	if got := answer(t, h, "/agent", false); !strings.HasSuffix(got, "\nBranch: clawhost/x (this chat's own worktree).") {
		t.Errorf("/agent does not show the branch: %q", got)
	}
	if got := answer(t, h, "/worktree", false); got != "Branch: clawhost/x\nWorktree: /ws/.clawhost/worktrees/x\n/worktree reset (owners) makes it anew from the repository's HEAD." {
		t.Errorf("bare: %q", got)
	}
	if got := answer(t, h, "/worktree reset", false); got != "Only an owner can reset the worktree." || f.resets != 0 {
		t.Errorf("a member reset it: %q", got)
	}
	for _, c := range []struct {
		r    WorktreeReset
		want string
	}{
		{WorktreeReset{Branch: "clawhost/x"}, "A new worktree on clawhost/x, from the repository's HEAD."},
		{WorktreeReset{Branch: "clawhost/x", Kept: "clawhost/x-1"}, "A new worktree on clawhost/x, from the repository's HEAD. The old branch's commits are kept on clawhost/x-1."},
		{WorktreeReset{Branch: "clawhost/x", Dirty: true}, "The worktree of clawhost/x has uncommitted changes, so it was kept as it is. Commit or discard them, then /worktree reset."},
		{WorktreeReset{Running: true}, "A reply is running in the worktree; /stop it or wait, then /worktree reset."},
	} {
		f.reset = c.r
		if got := answer(t, h, "/worktree reset", true); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}

// TestPluginToldRoleAndWorkdir: a command plugin is told the sender's role
// and the chat's directory (command.Request.Workdir), which the git plugin
// works in.
func TestPluginToldRoleAndWorkdir(t *testing.T) {
	t.Parallel()
	h, _, p, _ := newHandler(t)
	h.Workdir = func(key sessionkey.Key) (string, string) {
		return "/ws/.clawhost/worktrees/" + key.Chat, "clawhost/" + key.Chat
	}
	m := &message.Message{Instance: "tg", ChatType: channel.ChatDirect, ChatID: "5", From: "tg:5", Sender: channel.Sender{ID: "5"}}
	for _, who := range []Role{{Owner: true, Control: true}, {Member: true, Control: true}, {}} {
		inv, ok := h.Registry.Parse("/ping x")
		if !ok {
			t.Fatal("/ping is not a command")
		}
		h.Messages(context.Background(), sessionkey.Key{Agent: "main", Chat: "k1"}, m, inv, who)
		got := p.executed[len(p.executed)-1]
		if got.SenderIsOwner != who.Owner || got.SenderIsMember != who.Member ||
			got.Workdir != "/ws/.clawhost/worktrees/k1" || got.WorktreeBranch != "clawhost/k1" {
			t.Errorf("%+v: the plugin was told %+v", who, got)
		}
	}
}
