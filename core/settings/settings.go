// Package settings maps a loaded configuration onto what the daemon runs:
// the pipeline's settings (Pipeline), the claude runner's (Runner), the
// plugin host's specs (Plugins) and the store (OpenStore). The host, its
// reload, doctor and the subcommands all map through here, so one block
// means one thing wherever it is read.
package settings

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/replyroute"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/agentend"
	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/received"
	"github.com/clawhost/clawhost/core/sending"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/schema"
)

// specs turns the enabled plugin blocks into what the plugin host runs.
func Plugins(cfg *config.Config) []pluginhost.Spec {
	var out []pluginhost.Spec
	for _, p := range cfg.EnabledPlugins() {
		out = append(out, Plugin(cfg, p))
	}
	return out
}

// Plugin is what the plugin host runs for plugin block p of cfg. Its
// Decode formats the config block's diagnostics into the error; its
// Explain formats the plugin's own at their file:line:col in the block.
func Plugin(cfg *config.Config, p *config.Plugin) pluginhost.Spec {
	return pluginhost.Spec{
		Instance:     p.Name,
		Source:       p.Source,
		Path:         p.Path,
		SHA256:       p.SHA256,
		StartTimeout: p.StartTimeout.Duration(),
		Env:          config.EnvSlice(p.Env),
		DataDir:      filepath.Join(cfg.DataDir, "plugins", p.Name),
		RunAs:        p.RunAs,
		Untrusted:    p.UntrustedInput,
		ReadOnly:     mediaDirs(cfg, p),
		Fingerprint:  p.Fingerprint(),
		Decode: func(s schema.Schema) ([]byte, error) {
			js, diags := config.DecodePluginConfig(p, s)
			if diags.HasErrors() {
				var buf bytes.Buffer
				config.FormatDiagnostics(&buf, diags, cfg.Files())
				return nil, errors.New(buf.String())
			}
			return js, nil
		},
		Explain: func(s schema.Schema, d schema.Diagnostics) string {
			var buf bytes.Buffer
			config.FormatDiagnostics(&buf, config.PluginDiagnostics(p, s, d), cfg.Files())
			return buf.String()
		},
	}
}

// mediaDirs are the agents' media directories (<workspace>/media), which
// an untrusted plugin reads: the attachments a hook is handed are there.
// None for a plugin that is not confined.
func mediaDirs(cfg *config.Config, p *config.Plugin) []string {
	if !p.UntrustedInput {
		return nil
	}
	var out []string
	for _, a := range cfg.AllAgents() {
		out = append(out, filepath.Join(a.Workspace, sessionkey.MediaDir))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hookOrder lists the enabled plugin instances in config order; the gateway
// calls the ones that turn out to be hooks.
func hookOrder(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.EnabledPlugins() {
		out = append(out, p.Name)
	}
	return out
}

// holdingHooks are the enabled plugin instances whose failure holds a
// reply (on_error = "hold"); nil when none.
func holdingHooks(cfg *config.Config) map[string]bool {
	var out map[string]bool
	for _, p := range cfg.EnabledPlugins() {
		if p.OnError == "hold" {
			if out == nil {
				out = map[string]bool{}
			}
			out[p.Name] = true
		}
	}
	return out
}

// receivedHooks are the enabled plugin instances in config order with
// their on_error, the message_received stage's candidates.
func receivedHooks(cfg *config.Config) []received.Hook {
	var out []received.Hook
	for _, p := range cfg.EnabledPlugins() {
		out = append(out, received.Hook{Instance: p.Name, Drop: p.OnError == "drop" || p.OnError == "hold"})
	}
	return out
}

// Pipeline maps the configuration onto the pipeline settings.
func Pipeline(cfg *config.Config) (gateway.Settings, error) {
	a, sess, msg := cfg.Access, cfg.Session, cfg.Messages
	// A run_as user that does not exist is Runner's error: the pipeline's
	// settings hold no user.
	profiles, _ := Agents(cfg)
	hw := Host(cfg)
	set := gateway.Settings{
		Access: access.Policy{
			DMPolicy: a.DMPolicy, Owners: a.Owners, AllowFrom: a.AllowFrom, PairingTTL: a.PairingTTL.Duration(),
			GroupPolicy: a.GroupPolicy, Groups: a.Groups, GroupAllowFrom: a.GroupAllowFrom, Members: a.Members, GroupRules: groupRules(a.GroupRules), RequireMention: a.RequireMention, TriggerWords: a.TriggerWords,
		},
		Sources: map[string]string{},
		DMScope: sessionkey.DMScope(sess.DMScope), IdentityLinks: sess.IdentityLinks,
		Turn:     turnSettings(cfg, profiles),
		Received: received.Settings{Hooks: receivedHooks(cfg), Timeout: msg.HookTimeout.Duration()},
		Replies: replyroute.Settings{
			Sending:  sending.Settings{Hooks: hookOrder(cfg), Timeout: msg.HookTimeout.Duration(), Hold: holdingHooks(cfg)},
			AgentEnd: agentend.Settings{Hooks: hookOrder(cfg), Timeout: msg.HookTimeout.Duration()},
		},
		Delivery: delivery.Settings{
			TextLimit: msg.TextLimit, TextLimitByInstance: map[string]int{},
			ChunkMode: chunk.Mode(msg.ChunkMode), Workspace: cfg.Agent.Workspace, AgentWorkspaces: map[string]string{},
		},
		Approval:     hw.Approval,
		SeenReaction: msg.SeenReaction, QueuedNotice: msg.QueuedNotice,
		Budgets:   budget.Rules{Top: cfg.Budget, Agents: map[string]*config.Budget{}},
		AuditKeep: cfg.Audit.Keep.Duration(),
	}
	// Owners made by "/owner CODE" (clawhost init's one-time code) are
	// listed in data_dir, beside the file's.
	claimed, err := ownerclaim.Owners(cfg.DataDir)
	if err != nil {
		return set, err
	}
	for _, o := range claimed {
		if !slices.Contains(set.Access.Owners, o) {
			set.Access.Owners = append(slices.Clone(set.Access.Owners), o)
		}
	}
	// Each chat's own claude state (the sandbox's, core/runner/chatstate.go)
	// first, then the shared directories.
	set.TranscriptDirs = []string{filepath.Join(cfg.DataDir, "runner", "chats"), claudeConfigDir(cfg)}
	set.OwnerClaudeDirs = map[string]string{}
	if home, err := os.UserHomeDir(); err == nil {
		set.TranscriptDirs = append(set.TranscriptDirs, filepath.Join(home, ".claude"))
	}
	if n, per, ok := a.Rate.Parse(); ok {
		set.Rate = gateway.Rate{N: n, Per: per}
	}
	if len(cfg.Agents) > 0 {
		set.Agents = cfg.Bindings()
		set.MenuChats = menuChats(cfg)
	}
	for _, p := range profiles {
		if !p.Default {
			set.Delivery.AgentWorkspaces[p.ID] = p.Runner.Workspace
		}
		if p.Switchable {
			set.Switchable = append(set.Switchable, p.ID)
		}
		if p.Budget != nil {
			set.Budgets.Agents[p.ID] = p.Budget
		}
		set.OwnerClaudeDirs[p.ID] = p.OwnerClaudeDir
		if d := p.TranscriptDir; d != "" && !slices.Contains(set.TranscriptDirs, d) {
			set.TranscriptDirs = append(set.TranscriptDirs, d)
		}
	}
	if set.Queue, err = queuePolicy(cfg); err != nil {
		return set, err
	}
	if set.Turn.PromptSection, err = promptSection(msg); err != nil {
		return set, err
	}
	if d := cfg.Queue.Debounce.Duration(); d > 0 {
		set.Debounce.Global = &d
	}
	set.Debounce.ByInstance = map[string]time.Duration{}
	for _, p := range cfg.EnabledPlugins() {
		set.Sources[p.Name] = p.Source
		set.Approval.DirectChats[p.Name] = cfg.DirectToSender(p.Name)
		if p.TextLimit > 0 {
			set.Delivery.TextLimitByInstance[p.Name] = p.TextLimit
		}
		if p.Debounce != "" {
			set.Debounce.ByInstance[p.Name] = p.Debounce.Duration()
		}
	}
	return set, nil
}

// queuePolicy parses the queue block and the plugins' queue_mode (config
// has checked them against core/internal/queuemode's list, the queue's).
func queuePolicy(cfg *config.Config) (queue.Policy, error) {
	q := cfg.Queue
	pol := queue.Policy{ByInstance: map[string]queue.Mode{}, Cap: q.Cap}
	var err error
	if pol.Mode, err = queue.ParseMode(q.Mode); err != nil {
		return pol, err
	}
	if pol.Drop, err = queue.ParseDrop(q.Drop); err != nil {
		return pol, err
	}
	for _, p := range cfg.EnabledPlugins() {
		if p.QueueMode == "" {
			continue
		}
		if pol.ByInstance[p.Name], err = queue.ParseMode(p.QueueMode); err != nil {
			return pol, fmt.Errorf("plugin %s: %w", p.Name, err)
		}
	}
	return pol, nil
}

// promptSection is the messaging section's template: nil when
// messages.prompt_section is false, the operator's file when
// prompt_template names one, else the built-in text.
func promptSection(msg *config.Messages) (*chatprompt.Template, error) {
	switch {
	case !msg.PromptSection:
		return nil, nil
	case msg.PromptTemplate != "":
		t, err := chatprompt.ParseFile(msg.PromptTemplate)
		if err != nil {
			return nil, fmt.Errorf("messages.prompt_template: %w", err)
		}
		return t, nil
	}
	return chatprompt.Default, nil
}

// turnSettings are the turn stage's settings: the default agent's Profile
// as Settings' own, each named one's in Agents.
func turnSettings(cfg *config.Config, profiles []Profile) turn.Settings {
	sess, msg := cfg.Session, cfg.Messages
	set := turn.Settings{
		HookOrder:         hookOrder(cfg),
		HookTimeout:       msg.HookTimeout.Duration(),
		ResetTriggers:     sess.ResetTriggers,
		Reset:             sessionreset.Config{Default: resetRule(sess.Reset), ByType: map[sessionreset.Type]*sessionreset.Rule{}, ByInstance: map[string]*sessionreset.Rule{}},
		Location:          msg.Location(),
		GroupHistoryLimit: msg.GroupHistoryLimit,
		Envelope:          envelope.Options{TimeZone: msg.Timezone},
		ResponsePrefix:    msg.ResponsePrefix,
		Streaming:         turn.Streaming(msg.Streaming),
		Verbose:           msg.Verbose,
		TurnCard:          msg.TurnCard != "off",
		PingAfter:         msg.PingAfter.Duration(),
	}
	d := profiles[0].Turn // the default agent's are Settings' own
	set.Workspace, set.Model, set.Models, set.PermissionMode, set.PermissionModes = d.Workspace, d.Model, d.Models, d.PermissionMode, d.PermissionModes
	set.Approvals, set.Worktrees, set.InlineImages, set.Timeout = d.Approvals, d.Worktrees, d.InlineImages, d.Timeout
	set.MemoryFlush = &d.MemoryFlush // applied by a reload as a named agent's is
	if len(cfg.Agents) > 0 {
		set.Agents = map[string]turn.AgentSettings{}
	}
	for _, p := range profiles[1:] {
		set.Agents[p.ID] = p.Turn
	}
	if len(sess.ResetTriggers) == 0 {
		set.ResetTriggers = []string{"/\x00none"} // triggers turned off
	}
	for _, t := range sess.ResetByType {
		set.Reset.ByType[sessionreset.Type(t.Type)] = resetRule(t.Rule())
	}
	for _, p := range cfg.EnabledPlugins() {
		if p.Reset != nil {
			set.Reset.ByInstance[p.Name] = resetRule(p.Reset)
		}
	}
	return set
}

// turnAgent maps agent a onto the pipeline's per-agent turn settings, for
// the default agent as for a named one.
func turnAgent(a *config.Agent) turn.AgentSettings {
	return turn.AgentSettings{
		Workspace: a.Workspace, Model: a.Model, Models: a.Models, PermissionMode: a.PermissionMode, PermissionModes: a.PermissionModes,
		Approvals: a.Approvals == "chat", InlineImages: a.InlineImages && !a.OneShot, Worktrees: a.Worktrees,
		MemoryFlush: MemoryFlush(a.MemoryFlush), Timeout: a.Timeout.Duration(),
	}
}

func resetRule(r *config.ResetRule) *sessionreset.Rule {
	if r == nil {
		return nil
	}
	out := &sessionreset.Rule{Mode: sessionreset.Mode(r.Mode)}
	if r.AtHour != nil {
		h := float64(*r.AtHour)
		out.AtHour = &h
	}
	if r.IdleMinutes != nil {
		m := float64(*r.IdleMinutes)
		out.IdleMinutes = &m
	}
	return out
}

// MemoryFlush maps agent.memory_flush onto the turn's settings.
func MemoryFlush(m *config.MemoryFlush) turn.MemoryFlush {
	if m == nil {
		return turn.MemoryFlush{}
	}
	return turn.MemoryFlush{
		Disabled: m.Enabled != nil && !*m.Enabled, ContextWindow: m.ContextWindow, ReserveTokens: m.ReserveTokens,
		SoftThresholdTokens: m.SoftThresholdTokens, Prompt: m.Prompt, SystemPrompt: m.SystemPrompt,
	}
}

// groupRules maps access.group blocks by group id.
func groupRules(rules []*config.GroupRule) map[string]access.GroupRule {
	if len(rules) == 0 {
		return nil
	}
	out := make(map[string]access.GroupRule, len(rules))
	for _, r := range rules {
		out[r.ID] = access.GroupRule{AllowFrom: r.AllowFrom, Members: r.Members, RequireMention: r.RequireMention}
	}
	return out
}

// HostID is this host's id among the hosts sharing a database:
// storage.host_id, else the machine's host name.
func HostID(cfg *config.Config) string {
	if cfg.Storage.HostID != "" {
		return cfg.Storage.HostID
	}
	if n, err := os.Hostname(); err == nil && n != "" {
		return n
	}
	return "clawhost"
}

// menuChats are the chats bound to agents (agent.chats), for their
// command menus (gateway.Settings.MenuChats). A topic or thread has no
// menu of its own and is left out; "<instance>:*" is that instance's
// default menu (ChatID "").
func menuChats(cfg *config.Config) []gateway.MenuChat {
	var out []gateway.MenuChat
	for _, a := range cfg.AllAgents() {
		for _, e := range a.Chats {
			x, err := config.ParseBinding(e)
			if err != nil || x.Thread != "" {
				continue
			}
			if x.Chat == "*" {
				x.Chat = ""
			}
			out = append(out, gateway.MenuChat{Instance: x.Instance, ChatID: x.Chat, Agent: a.ID})
		}
	}
	return out
}
