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
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/replyroute"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/agentend"
	"github.com/clawhost/clawhost/core/agenttools"
	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/chunk"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/received"
	"github.com/clawhost/clawhost/core/runner"
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

// Runner maps the agents onto the runner's settings: the default agent's
// Profile as the runner's own, with the host-wide limits (HostWide), each
// agent "<id>" block's in Agents — all by Agent, so a named agent's block
// holds as the default's does (TestProfileHomesEveryField).
func Runner(cfg *config.Config) (runner.Config, error) {
	profiles, err := Agents(cfg)
	if err != nil {
		return runner.Config{}, err
	}
	hw := Host(cfg)
	rc := profiles[0].Runner
	rc.MaxConcurrent, rc.OneShot = hw.MaxConcurrent, hw.OneShot
	if len(profiles) > 1 {
		rc.Agents = map[string]runner.Config{}
	}
	for _, p := range profiles[1:] {
		rc.Agents[p.ID] = p.Runner
	}
	return rc, nil
}

// runnerConfig is the runner configuration of agent a: its claude, the
// sandbox hiding data_dir, the config file's directory and the other agents'
// workspaces (the agent tool endpoint bound back), its claude config
// directory (agentConfigDir) and the user it runs as: Agent's Runner. The
// host-wide limits (max_concurrent, one_shot) are HostWide's.
func runnerConfig(cfg *config.Config, a *config.Agent) (runner.Config, error) {
	rc := runner.Config{
		Name:             a.ID,
		Command:          claudeCommand(a.Command),
		Args:             a.Args,
		Env:              a.Env,
		Workspace:        a.Workspace,
		StateDir:         filepath.Join(cfg.DataDir, "runner"),
		Model:            a.Model,
		FallbackModel:    a.FallbackModel,
		PermissionMode:   a.PermissionMode,
		PermissionModes:  claudeModes(a.PermissionModes),
		AllowedTools:     a.AllowedTools,
		DisallowedTools:  a.DisallowedTools,
		MCPConfig:        a.MCPConfig,
		MCPServers:       mcpServers(a.MCPServers),
		MCPApprovals:     filepath.Join(cfg.DataDir, MCPApprovalsFile),
		AddDirs:          a.AddDirs,
		SystemPrompt:     a.SystemPrompt,
		SystemPromptFile: a.SystemPromptFile,
		Timeout:          a.Timeout.Duration(),
		MaxTurns:         a.MaxTurns,
		IdleTimeout:      a.IdleTimeout.Duration(),
		MaxWarm:          a.MaxWarm,
		WarmMemory:       a.WarmMemory.Bytes(),
		Spare:            a.Spare == nil || *a.Spare,
		// Text deltas, so "blocks" and "draft" streaming show a long
		// reply while it is written, not only once each block is complete.
		PartialMessages: true,
		Settings:        a.Settings,
		Sandbox:         a.Sandbox,
		ConfigDir:       agentConfigDir(cfg, a),
		Hide:            []string{cfg.DataDir},
		Expose:          sandboxExposed(cfg),
	}
	rc.Hide = append(rc.Hide, configDirHidden(cfg)...)
	rc.Hide = append(rc.Hide, otherWorkspaces(cfg, a)...)
	if a.RunAs != "" {
		u, err := runas.Lookup(a.RunAs)
		if err != nil {
			return rc, fmt.Errorf("%s: %w", agentAttr(cfg, a, "run_as"), err)
		}
		rc.RunAs = u
	}
	return rc, nil
}

// agentAttr names attribute name of agent a as the operator wrote it:
// agent.run_as for the default agent, agent "ops" run_as for a named one.
func agentAttr(cfg *config.Config, a *config.Agent, name string) string {
	if a == cfg.Agent {
		return "agent." + name
	}
	return fmt.Sprintf("agent %q %s", a.ID, name)
}

// agentConfigDir is agent a's claude config directory (CLAUDE_CONFIG_DIR):
// "" when its env names one or its settings are "user" (claude then uses
// its user's ~/.claude); <data_dir>/claude for the default agent and every
// agent that runs as the same user; <data_dir>/claude-<id> for an agent
// whose run_as differs from the default agent's — claude's files there
// (its login, the transcripts of its chats) are private to the user that
// writes them, so two users never share one.
func agentConfigDir(cfg *config.Config, a *config.Agent) string {
	if _, own := a.Env["CLAUDE_CONFIG_DIR"]; own || a.Settings == runner.SettingsUser {
		return ""
	}
	if a == cfg.Agent || sameUser(a.RunAs, cfg.Agent.RunAs) {
		return claudeConfigDir(cfg)
	}
	return filepath.Join(cfg.DataDir, "claude-"+a.ID)
}

// sameUser reports whether run_as values x and y name one user ("" is
// clawhost's own).
func sameUser(x, y string) bool {
	if x == y {
		return true
	}
	if x == "" || y == "" {
		return false
	}
	ux, errx := runas.Lookup(x)
	uy, erry := runas.Lookup(y)
	return errx == nil && erry == nil && ux.UID == uy.UID
}

// otherWorkspaces are the workspaces of the agents other than a, which a's
// sandbox hides (a workspace that contains a's, or is a's, stays visible).
func otherWorkspaces(cfg *config.Config, a *config.Agent) []string {
	var out []string
	for _, o := range cfg.AllAgents() {
		if o == a || o.Workspace == a.Workspace || strings.HasPrefix(a.Workspace+string(filepath.Separator), o.Workspace+string(filepath.Separator)) {
			continue
		}
		out = append(out, o.Workspace)
	}
	return out
}

// claudeConfigDir is the claude config directory of the bot's own,
// <data_dir>/claude: CLAUDE_CONFIG_DIR for claude unless agent.env sets
// one or agent.settings is "user".
func claudeConfigDir(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "claude") }

// claudeModes are the modes of agent.permission_modes claude is started
// with: all but "ask", which is clawhost's (approvals for one chat).
func claudeModes(modes []string) []string {
	var out []string
	for _, m := range modes {
		if m != config.ModeAsk {
			out = append(out, m)
		}
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

// configDirHidden are the paths beside the configuration a sandbox hides:
// the config file's whole directory (clawhost init's clawhost.env is there,
// and whatever else the operator keeps beside it) — unless it is the root —
// and, by name, the config file and clawhost.env themselves, which stay
// hidden when a workspace or another bound path holds them.
func configDirHidden(cfg *config.Config) []string {
	p := cfg.Path()
	if p == "" {
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil
	}
	out := []string{abs, filepath.Join(filepath.Dir(abs), "clawhost.env")}
	if d := filepath.Dir(abs); d != "/" {
		out = append(out, d)
	}
	return out
}

// sandboxExposed are the paths inside hidden ones a sandbox binds back
// read-only: the agent tool endpoint's socket (each process also gets its
// own chat's MCP config file, and no other) and the clawhost executable
// that file starts as the tool bridge. (agent.mcp_config files the runner
// binds back itself.)
func sandboxExposed(cfg *config.Config) []string {
	out := []string{filepath.Join(AgentRunDir(cfg), agenttools.SocketName)}
	if exe, err := os.Executable(); err == nil {
		out = append(out, exe)
	}
	return out
}

// AgentRunDir is the directory (0700) holding the agent tool endpoint's
// unix socket and the per-chat MCP config files (0600) passed to claude as
// --mcp-config (core/agenttools): <data_dir>/run/agent. The sandbox around
// claude, which hides data_dir, binds back the socket and the one chat's
// file, never the directory.
func AgentRunDir(cfg *config.Config) string {
	return filepath.Join(cfg.DataDir, "run", "agent")
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

// claudeCommand is agent.command as the runner runs it: the file
// installpath finds (PATH, then claude's install places for "claude"), or
// the command as written when it is nowhere (the runner says so and each
// turn fails with what to do).
func claudeCommand(command string) string {
	if f, err := installpath.FindCommand(command); err == nil {
		return f.Path
	}
	return command
}

// MCPApprovalsFile is where, in data_dir, the owners' approvals of the
// workspaces' .mcp.json are kept (clawhost mcp-approve).
const MCPApprovalsFile = "mcp-approvals.json"

// mcpServers are an agent's mcp_server blocks as the runner takes them.
func mcpServers(in []config.MCPServer) []runner.MCPServer {
	var out []runner.MCPServer
	for _, s := range in {
		out = append(out, runner.MCPServer{Name: s.Name, Command: s.Command, Args: s.Args, Env: s.Env})
	}
	return out
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
