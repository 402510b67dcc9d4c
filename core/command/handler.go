package command

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/hashicorp/go-hclog"
)

// Sessions is the port the built-ins act on a session through; the
// composer implements it over the queue and turn stages.
type Sessions interface {
	// Reset starts a new session (a running turn is aborted).
	Reset(key sessionkey.Key, m *message.Message, reason string)
	// Stop aborts the running turn and drops the waiting messages.
	Stop(key sessionkey.Key) (aborted bool, dropped int)
	// Running reports whether a turn of the session runs.
	Running(key sessionkey.Key) bool
	// Overrides are the session's own settings ("" for the configured
	// default).
	Overrides(ctx context.Context, key sessionkey.Key) (session.Overrides, error)
	// Past are the chat's earlier sessions, newest first.
	Past(ctx context.Context, key sessionkey.Key) ([]session.PastSession, error)
	// Switch makes the n-th earlier session current (1 = newest).
	Switch(ctx context.Context, key sessionkey.Key, n int) (session.PastSession, error)
	// Current is the chat's current session (ok false: none yet), with
	// its name and claude's title.
	Current(ctx context.Context, key sessionkey.Key) (cur session.PastSession, ok bool, err error)
	// Name names the current session (/name; "" clears the name).
	Name(ctx context.Context, key sessionkey.Key, name string) error
	// SetOverride stores one of them (session.Overrides.Set: an unknown
	// name or a value outside a closed set is an error); the next turn
	// applies it (the warm claude process restarts with --resume for all
	// but the queue mode).
	SetOverride(ctx context.Context, key sessionkey.Key, name session.Setting, value string) error
}

// Plugins is the port to the command plugins; core/pluginhost.Ports
// implements it.
type Plugins interface {
	// ListCommands asks every ready command plugin for its commands.
	ListCommands(ctx context.Context) (map[string][]command.Spec, []error)
	// WaitReady blocks until the instance is ready or ctx ends.
	WaitReady(ctx context.Context, instance string) (pluginclient.Description, error)
	// Execute runs a command of a ready plugin.
	Execute(ctx context.Context, instance string, req command.Request) (command.Response, error)
	// PublishMenu sets the command menu of every channel that has one.
	PublishMenu(ctx context.Context, menu []channel.MenuEntry) []error
	// PublishChatMenu sets one chat's menu on instance (ChatID "": the
	// instance's default menu); a channel without menus per chat is left
	// alone.
	PublishChatMenu(ctx context.Context, instance string, menu channel.ChatMenu) error
	// AwaitCommandPlugins waits (each bounded by its start timeout) for
	// the configured plugins that may offer commands and are still
	// starting, and returns the instances that are ready command plugins
	// then. It returns at once when none is starting.
	AwaitCommandPlugins(ctx context.Context) []string
}

// Store is the part of the store the built-ins read and write.
type Store interface {
	Session(ctx context.Context, key string) (store.Session, error)
	UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error)
	CountPending(ctx context.Context, sessionKey string) (int, error)
	ApprovePairing(ctx context.Context, req store.ApproveRequest) (store.ApprovedSender, error)
	PendingPairings(ctx context.Context, instance string) ([]store.PairingCode, error)
	RevokeApproval(ctx context.Context, instance, senderID string) (bool, error)
	ListUsage(ctx context.Context, f store.UsageFilter, limit int) ([]store.TurnUsage, error)
	Audit(ctx context.Context, e store.AuditEvent) error
}

// Handler answers commands: the built-ins itself, plugin commands through
// the Plugins port.
type Handler struct {
	Registry *Registry
	Sessions Sessions
	Plugins  Plugins
	Store    Store
	Logger   hclog.Logger
	// Now is the clock; Started is when the host started (for /status).
	Now     func() time.Time
	Started time.Time
	// Version is shown by /status; Model returns the configured model of
	// a session's agent; Models, the models /model offers it
	// (agent.models; empty: any name).
	Version string
	Model   func(key sessionkey.Key) string
	Models  func(key sessionkey.Key) []string
	// Mode returns the configured permission mode of a session's agent;
	// Modes, the modes /mode may switch it to (agent.permission_modes).
	Mode  func(key sessionkey.Key) string
	Modes func(key sessionkey.Key) []string
	// Agents, when not nil, are the chat's agents (/agent).
	Agents Agents
	// QueueMode returns the configured queue mode of the chats on instance
	// (queue.by_channel, else queue.mode).
	QueueMode func(instance string) string
	// Approvals, when not nil, gives /status's lines about the session's
	// tool-use questions (the open one, the last decisions).
	Approvals func(key sessionkey.Key) []string
	// LastTurn, when not nil, says how the session's last turn got to
	// claude (how long it waited for a slot, whether claude was started
	// and why), for /status's "Last turn:" line; "" when no turn ran.
	LastTurn func(key sessionkey.Key) string
	// HookWork, when set, is what the lifecycle hooks last did for a
	// session, a line each ("🎙 transcribed 3 s of audio in 1.2 s"): /status
	// shows them.
	HookWork func(key sessionkey.Key) []string
	// Pause, when not nil, is the usage-limit pause: /status's "Paused
	// until" line and /resume.
	Pause Pause
	// Schedules, when not nil, serves /schedule.
	Schedules Schedules
	// Revoker, when not nil, serves /revoke.
	Revoker Revoker
	// OnApproved, when not nil, is called (in its own goroutine) with the
	// sender an owner's /approve let in ("<instance>:<sender id>").
	OnApproved func(ctx context.Context, entry string)
	// Claude, when not nil, is an agent's claude commands for the
	// command menu; a name clawhost has a command of is left out (the
	// chat reaches it as /cc name).
	Claude func(agent string) []channel.MenuEntry
	// MenuChats, when not nil, are the chats (and whole instances) whose
	// menu is another agent's than the default agent's (see MenuChat).
	MenuChats func() []MenuChat
	// Exporter, when not nil, serves /export.
	Exporter Exporter
	// Terminal, when not nil, serves /continue and /desktop: the owner's
	// own claude sessions.
	Terminal Terminal
	// Location, when not nil, is the zone of /usage's days
	// (messages.timezone); nil: local time.
	Location func() *time.Location
	// Workdir, when not nil, is the directory of a session's chat that
	// command plugins are told (command.Request.Workdir): the chat's
	// worktree and its branch when its agent has worktrees, else the
	// agent's workspace and "".
	Workdir func(key sessionkey.Key) (dir, branch string)
	// Detach, when not nil, serves /detach (core/attach).
	Detach func(key sessionkey.Key, m *message.Message) string

	refresh sync.Mutex // one Refresh at a time: a late one never undoes a newer one
}

// Pause is claude's usage-limit pause as the commands see it
// (core/usagelimit).
type Pause interface {
	// Paused says until when and why the turns are paused; ok false when
	// they are not.
	Paused() (until time.Time, reason string, ok bool)
	// Resume ends the pause now; false when there was none.
	Resume(ctx context.Context) bool
}

// Role is what the sender of a command may do.
type Role struct {
	// Owner: owner-only commands are refused otherwise.
	Owner bool
	// Control: the sender may start the session anew, stop it and see its
	// costs (access.Policy.MayControl); /new, /reset and /stop are refused
	// and /status leaves the costs out otherwise.
	Control bool
	// Member: the sender is one of access.members (access.Policy.IsMember);
	// command plugins are told (command.Request.SenderIsMember).
	Member bool
	// NotOwnersChat is why the chat is not one only owners reach
	// (access.Policy.OwnersOnlyChat); nil when it is. /continue and
	// /desktop are refused with it.
	NotOwnersChat error
}

// Message is one message a command answers with: a built-in's answer, or
// one reply of a command plugin (command.Reply), which is one message of
// its own.
type Message struct {
	Text string
	// Format is channel.FormatPlain or channel.FormatMarkdown (rendered
	// for the channel as an agent's reply is).
	Format channel.Format
	// Media are files the plugin sends with the reply.
	Media []channel.OutboundMedia
	// Buttons are offered under the message: each button's id is the text
	// its press stands for. The caller shows them where the channel has
	// buttons, else lists them (ButtonsAsText).
	Buttons [][]channel.Button
}

// Answer runs a parsed command for the sender of m in session key and
// returns the text to answer with (empty: nothing to say); the messages of
// a plugin's several replies are joined.
func (h *Handler) Answer(ctx context.Context, key sessionkey.Key, m *message.Message, inv Invocation, who Role) string {
	var parts []string
	for _, msg := range h.Messages(ctx, key, m, inv, who) {
		parts = append(parts, msg.Text)
	}
	return strings.Join(parts, "\n\n")
}

// Messages runs a parsed command for the sender of m in session key and
// returns the messages to answer with (none: nothing to say). A built-in
// answers with one plain-text message, with buttons for /agent and an
// owner's /mode; a command plugin with one message per reply that has text
// or files, in the reply's format.
func (h *Handler) Messages(ctx context.Context, key sessionkey.Key, m *message.Message, inv Invocation, who Role) []Message {
	if !inv.Builtin() && (!inv.OwnerOnly || who.Owner) {
		return h.plugin(ctx, key, m, inv, who)
	}
	text := h.answer(ctx, key, m, inv, who)
	var buttons [][]channel.Button
	switch {
	case inv.Builtin() && inv.Name == "agent" && strings.TrimSpace(inv.Args) == "" && who.Control:
		buttons = h.agentButtons(ctx, m)
	case inv.Builtin() && inv.Name == "mode" && strings.TrimSpace(inv.Args) == "" && who.Owner && h.Modes != nil && len(h.Modes(key)) > 0:
		// A picker for owners (see noticeModeOwners): one button per mode
		// on offer, pressing it is "/mode <name>".
		var row []channel.Button
		for _, mode := range append(h.Modes(key), "default") {
			if len(row) == 3 {
				buttons, row = append(buttons, row), nil
			}
			row = append(row, channel.Button{ID: "/mode " + mode, Label: mode})
		}
		buttons = append(buttons, row)
	}
	if strings.TrimSpace(text) == "" && len(buttons) == 0 {
		return nil
	}
	return []Message{{Text: text, Format: channel.FormatPlain, Buttons: buttons}}
}

// plain is a one-message plain-text answer.
func plain(text string) []Message {
	return []Message{{Text: text, Format: channel.FormatPlain}}
}

// plugin runs a command plugin's command and returns its replies, one
// message each. The plugin is told the sender's role and the chat's
// directory.
func (h *Handler) plugin(ctx context.Context, key sessionkey.Key, m *message.Message, inv Invocation, who Role) []Message {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := h.Plugins.WaitReady(wctx, inv.Instance)
	wcancel()
	if err != nil {
		return plain(fmt.Sprintf("The /%s command is unavailable right now (plugin %s is not ready).", inv.Name, inv.Instance))
	}
	req := command.Request{
		Command: inv.Plugin.Name, Args: inv.Args, RawText: m.Body,
		Conversation: m.Conversation(key.String()), Sender: m.Sender,
		SenderIsOwner: who.Owner, SenderIsMember: who.Member,
	}
	if h.Workdir != nil {
		req.Workdir, req.WorktreeBranch = h.Workdir(key)
	}
	res, err := h.Plugins.Execute(ctx, inv.Instance, req)
	var ce *channel.Error
	switch {
	case errors.As(err, &ce) && ce.Code == channel.CodeInvalidRequest && ce.Message != "":
		// The plugin's own answer to a wrong invocation (usage, a bad
		// argument): the user's mistake, not the host's.
		h.Logger.Debug("command refused the request", "command", inv.Name, "instance", inv.Instance, "reason", ce.Message)
		return plain(ce.Message)
	case errors.As(err, &ce):
		h.Logger.Warn("command failed", "command", inv.Name, "instance", inv.Instance, "code", string(ce.Code), "error", ce.Message)
		return plain(fmt.Sprintf("The /%s command failed: %s", inv.Name, ce.Message))
	case err != nil:
		h.Logger.Error("command failed", "command", inv.Name, "instance", inv.Instance, "error", err)
		return plain(fmt.Sprintf("The /%s command failed.", inv.Name))
	}
	var out []Message
	for _, r := range res.Replies {
		msg := Message{Text: r.Text, Format: channel.FormatPlain, Media: r.Media, Buttons: validButtons(r.Buttons)}
		if r.Format == channel.FormatMarkdown {
			msg.Format = channel.FormatMarkdown
		}
		if strings.TrimSpace(msg.Text) == "" && len(msg.Media) == 0 {
			if len(msg.Buttons) == 0 {
				continue // an empty reply says nothing
			}
			msg.Text = "Choose:" // buttons need a message to hang under
		}
		out = append(out, msg)
	}
	return out
}

// validButtons keeps the buttons a channel can carry: an id of 1 to
// channel.MaxButtonID bytes and a label; at most 5 per row and 10 rows.
func validButtons(rows [][]channel.Button) [][]channel.Button {
	var out [][]channel.Button
	for _, row := range rows {
		var r []channel.Button
		for _, b := range row {
			if b.ID != "" && len(b.ID) <= channel.MaxButtonID && strings.TrimSpace(b.Label) != "" && len(r) < 5 {
				r = append(r, b)
			}
		}
		if len(r) > 0 && len(out) < 10 {
			out = append(out, r)
		}
	}
	return out
}

// ButtonsAsText lists buttons for a channel without them: what to type
// for each.
func ButtonsAsText(text string, rows [][]channel.Button) string {
	if len(rows) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(text, "\n"))
	b.WriteString("\n\nReply with one of:")
	for _, row := range rows {
		for _, btn := range row {
			fmt.Fprintf(&b, "\n• %s — %s", btn.ID, btn.Label)
		}
	}
	return b.String()
}

// Resolve parses text as a registered command. A "/word" that names none
// may be a command of a plugin still starting: Resolve then waits for the
// command plugins that are starting (Plugins.AwaitCommandPlugins, bounded
// by their start timeouts) and, when a ready one has not been listed yet
// (it just became ready), refreshes the plugin commands and parses again.
// Text that is not a "/word", and a "/word" while no plugin is starting, is
// decided at once.
func (h *Handler) Resolve(ctx context.Context, text string) (Invocation, bool) {
	if inv, ok := h.Registry.Parse(text); ok {
		return inv, true
	}
	if _, _, cmd := split(text); !cmd {
		return Invocation{}, false
	}
	if !h.Registry.Lists(h.Plugins.AwaitCommandPlugins(ctx)) {
		h.Refresh(ctx)
	}
	return h.Registry.Parse(text)
}

// Refresh rebuilds the plugin commands from the ready command plugins and
// publishes the command menu (built-ins and plugin commands) to every
// ready channel that has one; call it when an instance becomes ready or
// stops.
func (h *Handler) Refresh(ctx context.Context) {
	h.refresh.Lock()
	defer h.refresh.Unlock()
	offers, errs := h.Plugins.ListCommands(ctx)
	for _, err := range errs {
		h.Logger.Warn("listing commands failed", "error", err)
	}
	names := make([]string, 0, len(offers))
	for n := range offers {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]PluginCommands, len(names))
	for i, n := range names {
		list[i] = PluginCommands{Instance: n, Specs: offers[n]}
	}
	for _, w := range h.Registry.SetPlugins(list) {
		h.Logger.Warn(w)
	}
	h.publishMenus(ctx)
}
