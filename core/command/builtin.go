package command

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/host"
)

// Builtins are the commands the core answers itself, in /help order. To
// add one: a Spec here and a case in [Handler.builtin].
var Builtins = []Spec{
	{Name: "new", Help: "start a new session (text after it is its first message)"},
	{Name: "reset", Help: "same as /new"},
	{Name: "status", Help: "session, model, usage and queue"},
	{Name: "help", Help: "this list"},
	{Name: "commands", Help: "this list"},
	{Name: "stop", Help: "stop the running reply and clear the queue"},
	{Name: "whoami", Help: "your id, as access.allow_from wants it"},
	{Name: "approve", Help: "approve a pairing code (owners)", OwnerOnly: true},
	{Name: "revoke", Help: "withdraw a pairing approval and drop that sender's schedules: /revoke tg:ID (owners)", OwnerOnly: true},
	{Name: "verbose", Help: "show tool progress: /verbose on|off"},
	{Name: "model", Help: "this chat's model: /model [name|default]"},
	{Name: "effort", Help: "how hard claude thinks: /effort low|medium|high|max|default"},
	{Name: "mode", Help: "claude's permission mode here: /mode [name|default] (changing it: owners)"},
	{Name: "queue", Help: "what a message does while a reply runs: /queue followup|collect|interrupt|steer|default"},
	{Name: "compact", Help: "ask claude to compact this conversation into a summary"},
	{Name: "list", Help: "this chat's earlier sessions"},
	{Name: "switch", Help: "go back to an earlier session: /switch N (from /list)"},
	{Name: "schedule", Help: "turns at set times here: /schedule add NAME MIN HOUR DAY MONTH WEEKDAY text | list | remove NAME (owners)", OwnerOnly: true},
}

// ScheduleEntry is one schedule as /schedule shows it.
type ScheduleEntry struct {
	Name, Cron, Chat, Prompt string
	// Group: the chat is a group.
	Group bool
	// At, for a one-shot entry (the agent's schedule_message), is its
	// time; Cron is empty then.
	At time.Time `json:",omitzero"`
	// FromFile: a schedule block of the configuration (not removable from
	// chat).
	FromFile bool
	// Sender, for an entry that runs in a direct chat, is that chat's
	// sender, "<instance>:<sender id>": revoking their approval drops it.
	// Empty for group chats and for entries stored before it was kept
	// (then the chat, equal to the sender on most platforms, stands in).
	Sender string `json:",omitempty"`
	// Next is the next run, zero if none.
	Next time.Time
}

// Schedules is the port /schedule manages the schedules added from chat
// through; the host implements it (durable, applied at once).
type Schedules interface {
	Add(ctx context.Context, e ScheduleEntry) error
	Remove(ctx context.Context, name string) (bool, error)
	List(ctx context.Context) []ScheduleEntry
}

// QueueModes are the modes /queue takes (core/queue's).
var QueueModes = []string{"followup", "collect", "interrupt", "steer"}

// Efforts are the levels /effort takes (claude's --effort).
var Efforts = []string{"low", "medium", "high", "max"}

// Sessions is the port the built-ins act on a session through; the
// composer implements it over the queue and turn stages.
type Sessions interface {
	// Reset starts a new session (a running turn is aborted).
	Reset(key string, m *message.Message, reason string)
	// Stop aborts the running turn and drops the waiting messages.
	Stop(key string) (aborted bool, dropped int)
	// Running reports whether a turn of the session runs.
	Running(key string) bool
	// Overrides are the session's own settings ("" for the configured
	// default).
	Overrides(ctx context.Context, key string) (Overrides, error)
	// Past are the chat's earlier sessions, newest first.
	Past(ctx context.Context, key string) ([]PastSession, error)
	// Switch makes the n-th earlier session current (1 = newest).
	Switch(ctx context.Context, key string, n int) (PastSession, error)
	// SetOverride stores one of them ("model", "effort", "mode" or
	// "queue"); the next turn applies it (the warm claude process restarts
	// with --resume for the first three).
	SetOverride(ctx context.Context, key, name, value string) error
}

// Plugins is the port to the command plugins; core/pluginhost.Ports
// implements it.
type Plugins interface {
	// ListCommands asks every ready command plugin for its commands.
	ListCommands(ctx context.Context) (map[string][]command.Spec, []error)
	// WaitReady blocks until the instance is ready or ctx ends.
	WaitReady(ctx context.Context, instance string) (host.Description, error)
	// Execute runs a command of a ready plugin.
	Execute(ctx context.Context, instance string, req command.Request) (command.Response, error)
	// PublishMenu sets the command menu of every channel that has one.
	PublishMenu(ctx context.Context, menu []channel.MenuEntry) []error
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
}

// Revoker withdraws a sender's approval through pairing; the host
// implements it (the store, and the sender's schedules).
type Revoker interface {
	// Revoke revokes entry ("<instance>:<sender id>"); by is who asked,
	// for the log.
	Revoke(ctx context.Context, entry, by string) (Revocation, error)
}

// Revocation is what a revocation did.
type Revocation struct {
	// Found: the sender had been approved through pairing.
	Found bool
	// Schedules counts the sender's schedules dropped.
	Schedules int
	// Listed names the configuration lists (owners, allow_from) that
	// still admit the sender: revoking a pairing does not change the file.
	Listed []string
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
	// Version is shown by /status; Model returns the configured model;
	// Models, the models /model offers (agent.models; empty: any name).
	Version string
	Model   func() string
	Models  func() []string
	// Mode returns the configured permission mode; Modes, the modes /mode
	// may switch to (agent.permission_modes).
	Mode  func() string
	Modes func() []string
	// QueueMode returns the configured queue mode of a session.
	QueueMode func(key string) string
	// Approvals, when not nil, gives /status's lines about the session's
	// tool-use questions (the open one, the last decisions).
	Approvals func(key string) []string
	// LastTurn, when not nil, says how the session's last turn got to
	// claude (how long it waited for a slot, whether claude was started
	// and why), for /status's "Last turn:" line; "" when no turn ran.
	LastTurn func(key string) string
	// Schedules, when not nil, serves /schedule.
	Schedules Schedules
	// Revoker, when not nil, serves /revoke.
	Revoker Revoker

	refresh sync.Mutex // one Refresh at a time: a late one never undoes a newer one
}

// PastSession is an earlier claude session of a chat (/list, /switch).
type PastSession struct {
	ID      string
	Started time.Time
	Last    time.Time
	Turns   int64
}

// Overrides are a session's own settings: /model, /effort, /mode, /queue.
type Overrides struct {
	Model, Effort, Mode, Queue string
}

// Role is what the sender of a command may do.
type Role struct {
	// Owner: owner-only commands are refused otherwise.
	Owner bool
	// Control: the sender may start the session anew, stop it and see its
	// costs (access.Policy.MayControl); /new, /reset and /stop are refused
	// and /status leaves the costs out otherwise.
	Control bool
}

// controlled are the built-ins that need Role.Control.
var controlled = map[string]bool{"new": true, "reset": true, "stop": true, "model": true, "effort": true, "mode": true, "queue": true, "compact": true, "switch": true}

// Policy is the operator's: a chat's permission mode decides what claude
// may do without asking (and "ask" who approves a tool use), so changing
// it — /mode NAME, /mode default, the picker's buttons — is for owners
// only, and only to a mode agent.permission_modes lists. A sender with
// Role.Control sees the mode (bare /mode). /model stays within agent.models
// and /effort within claude's levels for anyone with Role.Control: neither
// widens what claude may do.
const noticeModeOwners = "Only an owner can change the permission mode."

// Answer runs a parsed command for the sender of m in session key and
// returns the text to answer with (empty: nothing to say).
func (h *Handler) Answer(ctx context.Context, key string, m *message.Message, inv Invocation, who Role) string {
	text, _ := h.AnswerWithButtons(ctx, key, m, inv, who)
	return text
}

// AnswerWithButtons is Answer with the buttons a command plugin offers
// under its reply (command.Reply.Buttons): each button's id is the text
// its press stands for. The caller shows them where the channel has
// buttons, else lists them (ButtonsAsText).
func (h *Handler) AnswerWithButtons(ctx context.Context, key string, m *message.Message, inv Invocation, who Role) (string, [][]channel.Button) {
	if !inv.Builtin() && (!inv.OwnerOnly || who.Owner) {
		return h.plugin(ctx, key, m, inv)
	}
	text := h.answer(ctx, key, m, inv, who)
	if inv.Builtin() && inv.Name == "mode" && strings.TrimSpace(inv.Args) == "" && who.Owner && h.Modes != nil {
		// A picker for owners (see noticeModeOwners): one button per mode
		// on offer, pressing it is "/mode <name>".
		var row []channel.Button
		var rows [][]channel.Button
		for _, mode := range append(h.Modes(), "default") {
			if len(row) == 3 {
				rows, row = append(rows, row), nil
			}
			row = append(row, channel.Button{ID: "/mode " + mode, Label: mode})
		}
		if len(h.Modes()) > 0 {
			return text, append(rows, row)
		}
	}
	return text, nil
}

func (h *Handler) answer(ctx context.Context, key string, m *message.Message, inv Invocation, who Role) string {
	switch {
	case inv.OwnerOnly && !who.Owner && inv.Builtin():
		return "Only an owner can use /" + inv.Name + "."
	case inv.OwnerOnly && !who.Owner:
		return fmt.Sprintf("The /%s command is for owners only.", inv.Name)
	case controlled[inv.Name] && !who.Control:
		return "In this group only an owner can use /" + inv.Name + "."
	case inv.Name == "status":
		return h.status(ctx, key, who.Control)
	case inv.Builtin() && inv.Name == "mode" && strings.TrimSpace(inv.Args) != "" && !who.Owner:
		return noticeModeOwners
	case inv.Builtin() && inv.Name == "mode":
		return h.mode(ctx, key, strings.TrimSpace(inv.Args), who.Owner)
	}
	return h.builtin(ctx, key, m, inv)
}

func (h *Handler) builtin(ctx context.Context, key string, m *message.Message, inv Invocation) string {
	switch inv.Name {
	case "new", "reset":
		h.Sessions.Reset(key, m, "/"+inv.Name)
		return "New session started."
	case "status":
		return h.status(ctx, key, true)
	case "help", "commands":
		return h.Registry.Help()
	case "stop":
		return stopText(h.Sessions.Stop(key))
	case "whoami":
		return fmt.Sprintf("You are %s.", m.From)
	case "approve":
		return h.approve(ctx, m, inv.Args)
	case "revoke":
		return h.revoke(ctx, m, strings.TrimSpace(inv.Args))
	case "verbose":
		return h.verbose(ctx, key, inv.Args)
	case "model":
		return h.model(ctx, key, strings.TrimSpace(inv.Args))
	case "effort":
		return h.effort(ctx, key, strings.ToLower(strings.TrimSpace(inv.Args)))
	case "queue":
		return h.queueMode(ctx, key, strings.ToLower(strings.TrimSpace(inv.Args)))
	case "schedule":
		return h.schedule(ctx, m, strings.TrimSpace(inv.Args))
	case "list":
		return h.list(ctx, key)
	case "switch":
		return h.switchTo(ctx, key, strings.TrimSpace(inv.Args))
	}
	return ""
}

func stopText(aborted bool, dropped int) string {
	switch {
	case aborted && dropped > 0:
		return fmt.Sprintf("Stopped. %d queued message(s) dropped.", dropped)
	case aborted:
		return "Stopped."
	case dropped > 0:
		return fmt.Sprintf("Nothing was running; %d queued message(s) dropped.", dropped)
	}
	return "Nothing is running."
}

func (h *Handler) approve(ctx context.Context, m *message.Message, code string) string {
	if code == "" {
		return "Usage: /approve CODE"
	}
	s, err := h.Store.ApprovePairing(ctx, store.ApproveRequest{Code: code, By: m.From})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "Unknown pairing code."
	case errors.Is(err, store.ErrExpired):
		return "That pairing code expired."
	case errors.Is(err, store.ErrTooManyAttempts):
		return "Too many wrong pairing codes were tried recently; pending codes were voided and approvals are paused for a few minutes."
	case err != nil:
		h.Logger.Error("approve failed", "error", err)
		return "Approval failed; see the gateway log."
	}
	h.Logger.Info("pairing approved", "sender", s.Entry(), "by", m.From)
	return fmt.Sprintf("Approved %s.", s.Entry())
}

// revoke answers /revoke <instance:id>: the sender's approval through
// pairing is withdrawn (they are asked to pair again) and their schedules
// dropped.
func (h *Handler) revoke(ctx context.Context, m *message.Message, entry string) string {
	instance, id, ok := strings.Cut(entry, ":")
	if !ok || instance == "" || id == "" || strings.ContainsAny(entry, " \t\n") {
		return "Usage: /revoke INSTANCE:ID (the sender's id as /whoami shows it, e.g. /revoke tg:123456789)"
	}
	if h.Revoker == nil {
		return "Revoking is not available."
	}
	r, err := h.Revoker.Revoke(ctx, entry, m.From)
	if err != nil {
		h.Logger.Error("revoke failed", "sender", entry, "error", err)
		return "Revoking failed; see the gateway log."
	}
	var b strings.Builder
	if r.Found {
		fmt.Fprintf(&b, "Revoked %s: they will be asked to pair again.", entry)
	} else {
		fmt.Fprintf(&b, "%s was not approved through pairing.", entry)
	}
	if r.Schedules > 0 {
		fmt.Fprintf(&b, " %d of their schedule(s) dropped.", r.Schedules)
	}
	if len(r.Listed) > 0 {
		fmt.Fprintf(&b, " They are still admitted by access.%s in the configuration file.", strings.Join(r.Listed, " and access."))
	}
	return b.String()
}

func (h *Handler) verbose(ctx context.Context, key, args string) string {
	s, err := h.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
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

// status is the answer of /status; costs leaves out the tokens and the
// cost (a group member who does not control the session).
func (h *Handler) status(ctx context.Context, key string, costs bool) string {
	s, err := h.Store.Session(ctx, key)
	queued, _ := h.Store.CountPending(ctx, key)
	now := h.Now()
	var b strings.Builder
	fmt.Fprintf(&b, "Session: %s\n", key)
	if errors.Is(err, store.ErrNotFound) || s.SessionID == "" {
		b.WriteString("No conversation yet.\n")
	} else {
		model := s.Model
		if model == "" && h.Model != nil {
			model = h.Model()
		}
		if model == "" {
			model = "default"
		}
		// The id the logs show (the runner's session=) and that
		// `claude --resume` takes; the core's own session id is internal.
		if o, _ := h.Sessions.Overrides(ctx, key); o != (Overrides{}) {
			if o.Model != "" && o.Model != "default" {
				model = o.Model + " (set with /model)"
			}
			if o.Effort != "" {
				model += ", effort " + o.Effort
			}
			if o.Mode != "" {
				model += ", permission mode " + o.Mode
			}
			if o.Queue != "" {
				model += ", queue " + o.Queue
			}
		}
		fmt.Fprintf(&b, "Claude session: %s\nModel: %s\nTurns: %d\n", s.ClaudeSessionID, model, s.Turns)
		if costs {
			fmt.Fprintf(&b, "Tokens: %d in, %d out (cache %d read, %d written)\nCost: $%.4f\n",
				s.Usage.InputTokens, s.Usage.OutputTokens, s.Usage.CacheReadTokens, s.Usage.CacheCreationTokens, s.CostUSD)
		}
		if !s.LastMessageAt.IsZero() {
			fmt.Fprintf(&b, "Last activity: %s ago\n", now.Sub(s.LastMessageAt).Round(time.Second))
		}
	}
	if h.Approvals != nil {
		for _, l := range h.Approvals(key) {
			b.WriteString(l + "\n")
		}
	}
	if h.LastTurn != nil {
		if l := h.LastTurn(key); l != "" {
			b.WriteString("Last turn: " + l + "\n")
		}
	}
	state := "idle"
	if h.Sessions.Running(key) {
		state = "running"
	}
	fmt.Fprintf(&b, "Agent: %s, %d queued\nUptime: %s", state, queued, now.Sub(h.Started).Round(time.Second))
	if h.Version != "" {
		fmt.Fprintf(&b, "\nclawhost %s", h.Version)
	}
	return b.String()
}

// plugin runs a command plugin's command and returns its answer.
func (h *Handler) plugin(ctx context.Context, key string, m *message.Message, inv Invocation) (string, [][]channel.Button) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := h.Plugins.WaitReady(wctx, inv.Instance)
	wcancel()
	if err != nil {
		return fmt.Sprintf("The /%s command is unavailable right now (plugin %s is not ready).", inv.Name, inv.Instance), nil
	}
	res, err := h.Plugins.Execute(ctx, inv.Instance, command.Request{
		Command: inv.Plugin.Name, Args: inv.Args, RawText: m.Body,
		Conversation: m.Conversation(key), Sender: m.Sender,
	})
	var ce *channel.Error
	switch {
	case errors.As(err, &ce) && ce.Code == channel.CodeInvalidRequest && ce.Message != "":
		// The plugin's own answer to a wrong invocation (usage, a bad
		// argument): the user's mistake, not the host's.
		h.Logger.Debug("command refused the request", "command", inv.Name, "instance", inv.Instance, "reason", ce.Message)
		return ce.Message, nil
	case errors.As(err, &ce):
		h.Logger.Warn("command failed", "command", inv.Name, "instance", inv.Instance, "code", string(ce.Code), "error", ce.Message)
		return fmt.Sprintf("The /%s command failed: %s", inv.Name, ce.Message), nil
	case err != nil:
		h.Logger.Error("command failed", "command", inv.Name, "instance", inv.Instance, "error", err)
		return fmt.Sprintf("The /%s command failed.", inv.Name), nil
	}
	var parts []string
	var buttons [][]channel.Button
	for _, r := range res.Replies {
		if strings.TrimSpace(r.Text) != "" {
			parts = append(parts, r.Text)
		}
		buttons = append(buttons, validButtons(r.Buttons)...)
	}
	return strings.Join(parts, "\n\n"), buttons
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
	for _, err := range h.Plugins.PublishMenu(ctx, h.Registry.Menu()) {
		h.Logger.Warn("publishing the command menu failed", "error", err)
	}
}

// modelName is what /model accepts as a model when agent.models is not
// set: an alias or a model id.
// (A function rather than the regular expression
// ^[A-Za-z0-9][A-Za-z0-9._:@\[\]-]{0,99}$, whose hundredfold repetition
// took a millisecond to compile at every start.)
func modelName(s string) bool {
	if len(s) == 0 || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._:@[]-", rune(c))) {
			return false
		}
	}
	return true
}

// model answers /model: bare, the session's model and the ones offered;
// "default" clears the override; a name sets it.
func (h *Handler) model(ctx context.Context, key, arg string) string {
	var offered []string
	if h.Models != nil {
		offered = h.Models()
	}
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	cur := o.Model
	if cur == "default" {
		cur = "" // cleared: see below
	}
	def := ""
	if h.Model != nil {
		def = h.Model()
	}
	switch {
	case arg == "":
		var b strings.Builder
		switch {
		case cur != "":
			fmt.Fprintf(&b, "Model: %s (set with /model; /model default goes back to %s).", cur, cmp.Or(def, "claude's default"))
		default:
			fmt.Fprintf(&b, "Model: %s.", cmp.Or(def, "claude's default"))
		}
		if len(offered) > 0 {
			fmt.Fprintf(&b, "\nAvailable: %s. Change with /model NAME.", strings.Join(offered, ", "))
		} else {
			b.WriteString("\nChange with /model NAME (a model name or alias, e.g. opus or sonnet).")
		}
		return b.String()
	case strings.EqualFold(arg, "default"):
		// claude resumes a session on the model it last used unless told
		// otherwise, so going back from an override is "--model default"
		// (or the configured model), not the absence of --model.
		arg = ""
		if cur != "" && def == "" {
			arg = "default"
		}
	case len(offered) > 0 && !slices.Contains(offered, arg):
		return fmt.Sprintf("%q is not offered here. Available: %s.", arg, strings.Join(offered, ", "))
	case !modelName(arg):
		return fmt.Sprintf("%q is not a model name.", arg)
	}
	if err := h.Sessions.SetOverride(ctx, key, "model", arg); err != nil {
		return "The model could not be changed; try again."
	}
	if arg == "" || arg == "default" {
		return fmt.Sprintf("Model: back to %s. The conversation goes on.", cmp.Or(def, "claude's default"))
	}
	return fmt.Sprintf("Model: %s from the next message on. The conversation goes on.", arg)
}

// effort answers /effort: bare, the session's level; "default" clears it; a
// level sets it.
func (h *Handler) effort(ctx context.Context, key, arg string) string {
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	cur := o.Effort
	switch {
	case arg == "":
		return fmt.Sprintf("Effort: %s. Change with /effort %s or default.", cmp.Or(cur, "claude's default"), strings.Join(Efforts, "|"))
	case arg == "default":
		arg = ""
	case !slices.Contains(Efforts, arg):
		return fmt.Sprintf("Effort is one of %s, or default.", strings.Join(Efforts, ", "))
	}
	if err := h.Sessions.SetOverride(ctx, key, "effort", arg); err != nil {
		return "The effort could not be changed; try again."
	}
	return fmt.Sprintf("Effort: %s from the next message on.", cmp.Or(arg, "claude's default"))
}

// mode answers /mode: bare, the session's permission mode and the ones
// agent.permission_modes offers; "default" clears it; a name sets it (only
// one the configuration offers). Only an owner changes it (answer refuses
// the others first); owner says whether to tell how.
func (h *Handler) mode(ctx context.Context, key, arg string, owner bool) string {
	var offered []string
	if h.Modes != nil {
		offered = h.Modes()
	}
	def := ""
	if h.Mode != nil {
		def = h.Mode()
	}
	def = cmp.Or(def, "default")
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	cur := o.Mode
	switch {
	case arg == "":
		if len(offered) == 0 {
			return fmt.Sprintf("Permission mode: %s. The configuration offers no other (agent.permission_modes).", def)
		}
		if !owner {
			return fmt.Sprintf("Permission mode: %s. Available: %s. An owner can change it.", cmp.Or(cur, def), strings.Join(offered, ", "))
		}
		return fmt.Sprintf("Permission mode: %s. Available: %s. Change with /mode NAME.", cmp.Or(cur, def), strings.Join(offered, ", "))
	case strings.EqualFold(arg, "default"):
		arg = ""
	case !slices.Contains(offered, arg):
		if len(offered) == 0 {
			return "The configuration offers no other permission mode (agent.permission_modes)."
		}
		return fmt.Sprintf("%q is not offered here. Available: %s.", arg, strings.Join(offered, ", "))
	}
	if err := h.Sessions.SetOverride(ctx, key, "mode", arg); err != nil {
		return "The permission mode could not be changed; try again."
	}
	if arg == "ask" {
		return "Permission mode: ask from the next message on: before claude uses a tool that needs permission, the approvers are asked (Allow, Deny or Always). The conversation goes on."
	}
	return fmt.Sprintf("Permission mode: %s from the next message on. The conversation goes on.", cmp.Or(arg, def))
}

// queueMode answers /queue: bare, this chat's mode; "default" clears it; a
// mode sets it from the next message on.
func (h *Handler) queueMode(ctx context.Context, key, arg string) string {
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	def := "followup"
	if h.QueueMode != nil {
		def = cmp.Or(h.QueueMode(key), def)
	}
	switch {
	case arg == "":
		return fmt.Sprintf("Queue: %s. Change with /queue %s or default.", cmp.Or(o.Queue, def), strings.Join(QueueModes, "|"))
	case arg == "default":
		arg = ""
	case !slices.Contains(QueueModes, arg):
		return fmt.Sprintf("Queue mode is one of %s, or default.", strings.Join(QueueModes, ", "))
	}
	if err := h.Sessions.SetOverride(ctx, key, "queue", arg); err != nil {
		return "The queue mode could not be changed; try again."
	}
	return fmt.Sprintf("Queue: %s from the next message on.", cmp.Or(arg, def))
}

// schedule answers /schedule (owners): add a schedule running in this chat,
// list them, remove one added from chat.
func (h *Handler) schedule(ctx context.Context, m *message.Message, args string) string {
	if h.Schedules == nil {
		return "Schedules are not available."
	}
	const usage = "Usage: /schedule add NAME MIN HOUR DAY MONTH WEEKDAY text (e.g. /schedule add standup 0 9 * * 1-5 Summarize yesterday), /schedule list, /schedule remove NAME."
	verb, rest, _ := strings.Cut(args, " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(verb) {
	case "list", "":
		list := h.Schedules.List(ctx)
		if len(list) == 0 {
			return "No schedules. " + usage
		}
		var b strings.Builder
		for _, e := range list {
			src := "added in chat"
			if e.FromFile {
				src = "config file"
			}
			next := "never"
			if !e.At.IsZero() {
				e.Cron, e.Next = "once", e.At
			}
			if !e.Next.IsZero() {
				next = e.Next.Format("Mon 2006-01-02 15:04 MST")
			}
			fmt.Fprintf(&b, "%s: %q in %s, next %s (%s): %s\n", e.Name, e.Cron, e.Chat, next, src, e.Prompt)
		}
		return strings.TrimSpace(b.String())
	case "add":
		f := strings.Fields(rest)
		if len(f) < 7 {
			return usage
		}
		e := ScheduleEntry{Name: f[0], Cron: strings.Join(f[1:6], " "), Chat: m.Instance + ":" + m.ChatID, Group: m.IsGroup(), Prompt: strings.Join(f[6:], " ")}
		if !m.IsGroup() {
			e.Sender = m.From
		}
		if err := h.Schedules.Add(ctx, e); err != nil {
			return "Not added: " + err.Error()
		}
		return fmt.Sprintf("Schedule %s added: %q, in this chat.", e.Name, e.Cron)
	case "remove", "rm", "delete":
		ok, err := h.Schedules.Remove(ctx, rest)
		switch {
		case err != nil:
			return "Not removed: " + err.Error()
		case !ok:
			return fmt.Sprintf("No schedule %q was added in chat (schedules of the config file are removed there).", rest)
		}
		return fmt.Sprintf("Schedule %s removed.", rest)
	}
	return usage
}

// list answers /list: the chat's current and earlier sessions.
func (h *Handler) list(ctx context.Context, key string) string {
	past, err := h.Sessions.Past(ctx, key)
	if err != nil {
		return "The sessions could not be read; try again."
	}
	if len(past) == 0 {
		return "No earlier sessions in this chat (/new starts one and keeps this one here)."
	}
	var b strings.Builder
	b.WriteString("Earlier sessions (/switch N goes back to one; this one is kept):\n")
	for i, p := range past {
		fmt.Fprintf(&b, "%d. started %s, last %s, %d turns (%s)\n", i+1, p.Started.Format("2006-01-02 15:04"), p.Last.Format("2006-01-02 15:04"), p.Turns, shortID(p.ID))
	}
	return strings.TrimSpace(b.String())
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// switchTo answers /switch N.
func (h *Handler) switchTo(ctx context.Context, key, arg string) string {
	n, err := strconv.Atoi(arg)
	if err != nil {
		return "Usage: /switch N, with N from /list."
	}
	p, err := h.Sessions.Switch(ctx, key, n)
	if err != nil {
		return "Not switched: " + err.Error() + "."
	}
	return fmt.Sprintf("Switched to the session started %s (%d turns); the conversation goes on from there.", p.Started.Format("2006-01-02 15:04"), p.Turns)
}
