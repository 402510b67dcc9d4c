package config

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Defaults of the agent block.
const (
	DefaultAgentCommand       = "claude"
	DefaultAgentWorkspace     = "./workspace"
	DefaultAgentTimeout       = Duration("10m")
	DefaultAgentIdleTimeout   = Duration("30m")
	DefaultAgentMaxConcurrent = 4
	DefaultApprovalTimeout    = Duration("5m")
	DefaultMediaKeep          = Duration("30d")
	// DefaultAgentID is the id of the unlabelled agent {} block.
	DefaultAgentID = "main"
)

// Approval settings (agent.approvals, agent.approvers).
var (
	ApprovalModes = []string{"off", "chat"}
	Approvers     = []string{"owners", "sender"}
)

// Values of agent.settings and agent.sandbox (the runner's SettingsModes and
// SandboxModes: TestSandboxEnumsMatch).
var (
	SettingsModes = []string{"project", "user"}
	SandboxModes  = []string{"auto", "off"}
)

// geteuid is the user clawhost runs as (run_as needs root); tests replace it.
var geteuid = os.Geteuid

// PermissionModes are the values agent.permission_mode accepts (those of the
// Claude Code CLI's --permission-mode).
var PermissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan", "default"}

// ModeAsk in agent.permission_modes lets /mode turn tool approvals on for
// one chat (what approvals = "chat" does for all); it is no claude mode,
// so agent.permission_mode does not take it.
const ModeAsk = "ask"

// OfferedModes are the values agent.permission_modes accepts.
var OfferedModes = append(slices.Clone(PermissionModes), ModeAsk)

// Agent is an agent block: how the Claude Code CLI is run for the turns of
// the chats it serves. The unlabelled agent {} block is the default agent
// (id "main"); each agent "<id>" {} block adds one, inheriting every
// attribute it does not set from the default block (but chats, switchable
// and worktrees, which are the agent's own). What a named block sets applies
// to that agent's claude — its run_as, sandbox and settings too — except
// max_concurrent, one_shot, approvers and approval_timeout, which are the
// host's: set in the default block only (validate refuses them in a named
// one).
type Agent struct {
	// ID is the agent's id: DefaultAgentID for the unlabelled block, the
	// label otherwise.
	ID string

	// Chats are what the agent serves (chats): "<instance>:<chat id>" (a
	// direct chat, group or channel), "<instance>:<chat id>:<thread or
	// topic id>" (a Telegram forum topic, a Discord thread) or
	// "<instance>:*" (everything on that instance). The most specific
	// binding of all agents wins; a chat no agent binds talks to the
	// default agent. See Config.Bindings.
	Chats []string `hcl:"chats,optional"`

	// Switchable lets every chat switch to this agent with /agent <id>
	// (switchable); a chat may always switch to the agent it is bound to.
	// Default false.
	Switchable bool `hcl:"switchable,optional"`

	// Worktrees gives each chat (or topic, or thread) the agent serves its
	// own git worktree of Workspace, which must then be a git repository
	// with a commit (worktrees): <workspace>/.clawhost/worktrees/<chat> on
	// the branch clawhost/<chat>, made on the chat's first turn. Default
	// false.
	Worktrees bool `hcl:"worktrees,optional"`

	// Command is the Claude Code CLI (command): a name looked up in PATH, or
	// a path; a relative path (one containing "/") is resolved against the
	// directory of the config file. Default "claude".
	Command string `hcl:"command,optional"`

	// Args are extra command-line arguments appended after clawhost's own
	// flags (args).
	Args []string `hcl:"args,optional"`

	// Env is extra environment for claude, over the host's environment
	// (env), e.g. { ANTHROPIC_BASE_URL = "http://127.0.0.1:8080" }.
	Env map[string]string `hcl:"env,optional"`

	// Workspace is the working directory of every claude run (workspace).
	// Default "./workspace", resolved against the directory of the config
	// file.
	Workspace string `hcl:"workspace,optional"`

	// OwnerClaudeDir is where the owner's own Claude Code keeps its
	// sessions (owner_claude_dir): the CLAUDE_CONFIG_DIR of the person who
	// runs claude in a terminal in this agent's workspace. /continue lists
	// its sessions of the workspace for an owner's chat, /desktop hands the
	// chat's session back into it (docs/continue.md). Default "~/.claude"
	// of the user clawhost runs as; a leading "~/" is that user's home, a
	// relative path is resolved against the directory of the config file.
	OwnerClaudeDir string `hcl:"owner_claude_dir,optional"`

	// MediaKeep is how long inbound attachments are kept (media_keep):
	// files under <workspace>/media older than this (by modification time)
	// are deleted, checked at start and hourly, with the session
	// directories they leave empty. "0s" keeps them forever. Default "30d"
	// (a duration; "d" counts days).
	MediaKeep Duration `hcl:"media_keep,optional"`

	// Model is passed as --model when set (model), e.g. "sonnet".
	Model string `hcl:"model,optional"`

	// PermissionModes are the permission modes /mode may switch a chat to
	// (permission_modes): claude's modes, and "ask" (ModeAsk) for tool
	// approvals asked in the chat (not with one_shot). Only an owner
	// switches; empty: /mode only shows the mode. Nothing outside this list
	// is ever offered: a chat cannot give itself "ask" unless it is here.
	PermissionModes []string `hcl:"permission_modes,optional"`

	// Models are the models /model offers a chat (models), e.g. ["opus",
	// "sonnet"]; empty: /model takes any model name or alias.
	Models []string `hcl:"models,optional"`

	// FallbackModel is passed as --fallback-model when set (fallback_model).
	FallbackModel string `hcl:"fallback_model,optional"`

	// PermissionMode is passed as --permission-mode (permission_mode):
	// acceptEdits, auto, bypassPermissions, manual, dontAsk, plan or
	// default. Empty means "default"; it is always passed, so a defaultMode
	// in settings claude reads never decides. "plan" makes every turn plan
	// first (the plan is shown with Approve / Keep planning; /plan does it
	// for one message whatever this is). For a chat bot "dontAsk" with
	// AllowedTools is the safe choice. bypassPermissions is refused by
	// claude when it runs as root unless IS_SANDBOX=1 is in Env (Load
	// warns).
	PermissionMode string `hcl:"permission_mode,optional"`

	// Settings chooses whose Claude Code settings apply (settings):
	// "project" (default) — only the workspace's .claude/settings.json, and
	// claude keeps its login, settings and transcripts in a directory of the
	// bot's own, <data_dir>/claude (CLAUDE_CONFIG_DIR, unless Env sets
	// one; <data_dir>/claude-<id> for a named agent whose run_as is not the
	// default agent's); "user" — the operator's own settings too (~/.claude
	// of the user claude runs as, or the CLAUDE_CONFIG_DIR clawhost was
	// started with): their allow rules, defaultMode, hooks and MCP servers
	// then apply to every chat of the agent. Only mcp_config and clawhost's
	// own tools load as MCP servers either way.
	Settings string `hcl:"settings,optional"`

	// Sandbox (sandbox): "auto" (default) — claude runs under bubblewrap
	// when bwrap is installed and works here: the filesystem read-only but
	// for the workspace, its TMPDIR and its config directory; data_dir, the
	// config file, the operator's ~/.claude and other chats' media
	// invisible; its own pid namespace. Without a working bwrap (not
	// installed, user namespaces disabled, macOS) it runs without one only
	// while nobody but the owners can reach the agent (clawhost status says
	// so, the log warns); when anyone else can (pairing or open DMs on a
	// chat platform, a non-owner in allow_from, groups) clawhost refuses to
	// start, and validate fails, saying how to install bubblewrap. "off" —
	// no sandbox, whoever can reach the agent: the operator accepts that
	// they run its tools with all of clawhost's user's access. Each
	// agent's own: the status says it per agent where they differ.
	Sandbox string `hcl:"sandbox,optional"`

	// RunAs is a user claude runs as (run_as), when clawhost runs as root:
	// a name or a uid. That user must be able to write the workspace and
	// enter data_dir (clawhost makes the agent's claude config directory and
	// the runner's temporary directories its own). Each agent's own: a named
	// agent whose run_as is not the default agent's keeps its login and
	// transcripts in <data_dir>/claude-<id> (log it in there, or give it
	// ANTHROPIC_API_KEY in env). Empty: claude runs as clawhost's user.
	RunAs string `hcl:"run_as,optional"`

	// AllowedTools are passed as --allowedTools (allowed_tools), e.g.
	// ["Read", "Bash(git log:*)"].
	AllowedTools []string `hcl:"allowed_tools,optional"`

	// DisallowedTools are passed as --disallowedTools (disallowed_tools),
	// after runner.DefaultDisallowedTools, which are always disallowed.
	DisallowedTools []string `hcl:"disallowed_tools,optional"`

	// Tools are the plugin tools the agent is offered (tools):
	// "<instance>.<tool>" (e.g. "git.status"), "<instance>.*" (every tool of
	// that plugin instance) or a glob over "<instance>.<tool>". claude sees
	// each as mcp__clawhost__<instance>__<tool>; its permission rules
	// (allowed_tools, an approval's "Always") decide whether a call runs
	// without asking, as for any MCP tool. A tool runs in its plugin's
	// process, outside the sandbox: granting one is granting what that
	// plugin can do. Default: none.
	Tools []string `hcl:"tools,optional"`

	// MCPConfig are MCP server config files or JSON strings, passed as
	// --mcp-config (mcp_config). They are passed as written: a relative file
	// name is relative to Workspace, claude's working directory.
	MCPConfig []string `hcl:"mcp_config,optional"`

	// MCPServers are the agent's own MCP servers (mcp_server "<name>"
	// blocks), started by its claude beside clawhost's tool server.
	MCPServers []MCPServer `hcl:"mcp_server,block"`

	// AddDirs are extra directories claude's tools may access, each passed as
	// --add-dir (add_dirs). Relative ones are resolved against the directory
	// of the config file.
	AddDirs []string `hcl:"add_dirs,optional"`

	// SystemPrompt is text appended to Claude Code's system prompt
	// (system_prompt).
	SystemPrompt string `hcl:"system_prompt,optional"`

	// SystemPromptFile is a file whose content is appended to the system
	// prompt after SystemPrompt (system_prompt_file), read at every process
	// start. Resolved against the directory of the config file.
	SystemPromptFile string `hcl:"system_prompt_file,optional"`

	// Timeout bounds one turn, waiting included; on expiry the run is killed
	// (timeout). Default "10m".
	Timeout Duration `hcl:"timeout,optional"`

	// MaxTurns is passed as --max-turns when > 0 (max_turns): agentic round
	// trips per turn. 0 means claude's own limit.
	MaxTurns int `hcl:"max_turns,optional"`

	// IdleTimeout stops a warm claude process that has not run a turn for
	// this long (idle_timeout), each agent's processes after its own.
	// Default "30m".
	IdleTimeout Duration `hcl:"idle_timeout,optional"`

	// MaxWarm caps how many warm claude processes are kept (max_warm); beyond
	// it the idle one least worth keeping (used least, cheapest to start
	// again) is stopped. 0 (the default): no cap by count, warm_memory alone
	// decides. Both apply when both are set: a process is stopped when either
	// is exceeded. A named agent's caps its own processes within the default
	// block's.
	MaxWarm int `hcl:"max_warm,optional"`

	// WarmMemory is the memory the warm claude processes may hold together
	// (warm_memory), a size such as "2GB": each one is measured after its
	// first turn and then at most once a minute after a turn (the proportional
	// set size of claude and what it started; the real CLI holds about 210
	// MB), and while they hold more the idle ones
	// least worth keeping are stopped — the order of max_warm, used least and
	// cheapest to start again first. Default: a quarter of the machine's
	// memory, at least 256 MB and at most 16 GB (2 GB where the machine's
	// memory cannot be read). A named agent's caps its own processes within
	// the default block's.
	WarmMemory Size `hcl:"warm_memory,optional"`

	// Spare keeps one claude of the agent started ahead, without a session,
	// for its next new session (spare): a new chat, /new or a reset whose
	// claude would start the same way (system prompt section, model, effort,
	// permission mode, the chat's MCP config and tools, directory; with the
	// sandbox on, either the same chat, whose claude state and media are
	// bound at the start, or a brand-new chat, which takes over the spare's
	// own directories) adopts it and answers without waiting for claude to
	// start; another is started after. One is started after two new sessions
	// alike in a row (two brand-new chats, or one chat's), or once one was
	// adopted. It counts as a warm process in max_warm and warm_memory,
	// starts only when it fits beside the warm ones without stopping any, is
	// the first stopped to make room, stops after idle_timeout when no new
	// session adopted it, and a reload that changes the agent's settings
	// stops it. One that cannot be started or adopted is a failing state in
	// clawhost status and on the status page. Default true.
	Spare *bool `hcl:"spare,optional"`

	// MaxConcurrent caps turns running at once across all sessions and
	// agents (max_concurrent); further turns wait. At least 1. Default 4.
	// Default block only: one count of slots for the whole host.
	MaxConcurrent int `hcl:"max_concurrent,optional"`

	// OneShot runs every turn in a fresh claude process (one_shot): slower
	// (≈ 0.9 s start per turn) but holds no memory between turns. Default
	// false. Default block only: it applies to every agent.
	OneShot bool `hcl:"one_shot,optional"`

	// MemoryFlush configures the memory-flush turn (memory_flush block):
	// before claude compacts a conversation by itself, a turn asks it to
	// write durable notes to the workspace.
	MemoryFlush *MemoryFlush `hcl:"memory_flush,block"`

	// Approvals (approvals): "off" (default) — a tool use that needs
	// permission is decided by the permission mode alone (denied when it
	// would prompt); "chat" — the Approvers are asked: the message names
	// the tool and shows its whole input, with Allow / Deny / Always
	// buttons (or a typed yes / no / always where the channel has no
	// buttons). With "ask" in PermissionModes an owner turns it on for one
	// chat with /mode ask. Not with one_shot.
	Approvals string `hcl:"approvals,optional"`

	// ApprovalTimeout denies an unanswered question after this long
	// (approval_timeout). Default "5m". The wait does not count toward
	// timeout. Default block only: one approval policy for every agent.
	ApprovalTimeout Duration `hcl:"approval_timeout,optional"`

	// Approvers (approvers) answer the approval questions: "owners"
	// (default) — owners only: the question about a turn another person
	// started goes to each owner's direct chat (the turn's chat is told it
	// waits for an owner), and without owners nothing is approved;
	// "sender" — the person whose message started the turn, and owners
	// (in a group, a member could approve their own tool use: validate
	// warns). Default block only: one approval policy for every agent.
	Approvers string `hcl:"approvers,optional"`

	// InlineImages shows inbound images to claude as image blocks with the
	// message (inline_images), downscaled to 1568 pixels on the long edge
	// and at most 3.75 MB each, up to 8 per turn; their file paths are in
	// the prompt either way. Default true.
	InlineImages bool `hcl:"inline_images,optional"`

	// Budget is the agent's own budget {} block: each attribute it sets
	// replaces the top-level budget's for this agent's turns, counted over
	// this agent's turns only. The same attributes may be written straight
	// in the agent block (per_sender_daily_usd = 2); OwnBudget folds them.
	Budget *Budget `hcl:"budget,block"`
	// The budget attributes written straight in the agent block.
	PerSenderDailyUSD  float64 `hcl:"per_sender_daily_usd,optional"`
	PerChatDailyUSD    float64 `hcl:"per_chat_daily_usd,optional"`
	PerAgentMonthlyUSD float64 `hcl:"per_agent_monthly_usd,optional"`
	WarnAt             string  `hcl:"warn_at,optional"`

	// block is the agent "<id>" block, nil for the default agent.
	block *hclsyntax.Block
}

// OwnBudget is the agent's budget: its budget {} block with the
// attributes written straight in the agent block over it; nil when it
// sets none.
func (a *Agent) OwnBudget() *Budget {
	flat := &Budget{PerSenderDailyUSD: a.PerSenderDailyUSD, PerChatDailyUSD: a.PerChatDailyUSD, PerAgentMonthlyUSD: a.PerAgentMonthlyUSD, WarnAt: a.WarnAt}
	if a.Budget == nil && flat.PerSenderDailyUSD == 0 && flat.PerChatDailyUSD == 0 && flat.PerAgentMonthlyUSD == 0 && flat.WarnAt == "" {
		return nil
	}
	return a.Budget.Over(flat)
}

// MemoryFlush is the agent's memory_flush block. The flush runs once per
// compaction cycle when the last prompt reached context_window -
// reserve_tokens - soft_threshold_tokens.
type MemoryFlush struct {
	// Enabled turns it on or off (enabled). Default true.
	Enabled *bool `hcl:"enabled,optional"`
	// ContextWindow is the model's window in tokens (context_window); 0:
	// the window claude reports, else 200,000.
	ContextWindow int `hcl:"context_window,optional"`
	// ReserveTokens is how far below the window claude compacts by itself
	// (reserve_tokens). Default 23,000 (claude 2.1.330, measured).
	ReserveTokens int `hcl:"reserve_tokens,optional"`
	// SoftThresholdTokens is the margin before that point
	// (soft_threshold_tokens); 0: a twentieth of the window, at least
	// 4,000.
	SoftThresholdTokens int `hcl:"soft_threshold_tokens,optional"`
	// Prompt and SystemPrompt replace the flush turn's texts (prompt,
	// system_prompt).
	Prompt       string `hcl:"prompt,optional"`
	SystemPrompt string `hcl:"system_prompt,optional"`
}

func defaultAgent() *Agent {
	return &Agent{
		ID:              DefaultAgentID,
		Command:         DefaultAgentCommand,
		Workspace:       DefaultAgentWorkspace,
		MediaKeep:       DefaultMediaKeep,
		Timeout:         DefaultAgentTimeout,
		IdleTimeout:     DefaultAgentIdleTimeout,
		MaxConcurrent:   DefaultAgentMaxConcurrent,
		Approvals:       "off",
		ApprovalTimeout: DefaultApprovalTimeout,
		Approvers:       "owners",
		InlineImages:    true,
		Settings:        "project",
		Sandbox:         "auto",
	}
}

func (a *Agent) check(k *checker) {
	if a.Budget != nil {
		bk := k.block("budget")
		a.Budget.check(bk)
		for _, pb := range bk.blocks("price", "model") {
			bk.errorf(pb.DefRange.Ptr(), "Price in an agent's budget",
				"Prices are the same for every agent: write price blocks in the top-level budget block.")
		}
	}
	(&Budget{PerSenderDailyUSD: a.PerSenderDailyUSD, PerChatDailyUSD: a.PerChatDailyUSD, PerAgentMonthlyUSD: a.PerAgentMonthlyUSD, WarnAt: a.WarnAt}).check(k)
	if a.Command == "" {
		k.errorf(k.valueRange("command"), "Invalid value for agent.command", "The command must not be empty.")
	}
	if a.PermissionMode != "" {
		k.enum("permission_mode", a.PermissionMode, PermissionModes)
	}
	k.duration("timeout", a.Timeout)
	if a.MediaKeep == "" {
		k.errorf(k.valueRange("media_keep"), "Invalid duration for "+k.qualified("media_keep"),
			"Write how long attachments are kept, such as \"30d\" or \"12h\", or \"0s\" to keep them forever.")
	} else {
		k.optionalDuration("media_keep", a.MediaKeep)
	}
	k.enum("settings", a.Settings, SettingsModes)
	k.enum("sandbox", a.Sandbox, SandboxModes)
	if a.Settings == "user" {
		k.emit(warning(k.valueRange("settings"), "The operator's own Claude Code settings apply to every chat",
			"With settings = \"user\", the allow rules, defaultMode, hooks and MCP servers in ~/.claude/settings.json govern the turns of everyone who may write to the bot. "+
				"Put what the bot needs in the workspace's .claude/settings.json and remove this line."))
	}
	k.runAs("run_as", a.RunAs)
	a.checkMCPServers(k)
	k.enum("approvals", a.Approvals, ApprovalModes)
	k.enum("approvers", a.Approvers, Approvers)
	k.duration("approval_timeout", a.ApprovalTimeout)
	if a.Approvals == "chat" && a.OneShot {
		k.errorf(k.valueRange("approvals"), "Approvals need a warm claude process",
			"agent.one_shot closes claude's input after the prompt, so nothing could answer its questions. Turn one_shot off or set approvals = \"off\".")
	}
	a.checkApprovers(k)
	k.duration("idle_timeout", a.IdleTimeout)
	k.atLeast("max_turns", a.MaxTurns, 0)
	k.atLeast("max_warm", a.MaxWarm, 0)
	k.size("warm_memory", a.WarmMemory)
	k.atLeast("max_concurrent", a.MaxConcurrent, 1)

	for i, tool := range a.AllowedTools {
		if strings.EqualFold(strings.TrimSpace(tool), "ExitPlanMode") {
			// claude would carry out every plan without showing it: each
			// plan is approved on its own (docs/approvals-and-roles.md).
			k.errorf(k.elemRange("allowed_tools", i, len(a.AllowedTools)), "No plan is allowed in advance",
				"ExitPlanMode in allowed_tools would let claude carry out every plan without anyone reading it. Remove it: each plan is shown in the chat with Approve and Keep planning.")
		}
	}

	for i, m := range a.PermissionModes {
		switch {
		case !slices.Contains(OfferedModes, m):
			k.errorf(k.elemRange("permission_modes", i, len(a.PermissionModes)), "Invalid value for "+k.qualified("permission_modes"),
				"%q is not one of %s.%s", m, quoteList(OfferedModes), didYouMean(m, OfferedModes))
		case m == ModeAsk && a.OneShot:
			k.errorf(k.elemRange("permission_modes", i, len(a.PermissionModes)), "Approvals need a warm claude process",
				"agent.one_shot closes claude's input after the prompt, so nothing could answer the questions /mode ask turns on. Turn one_shot off or remove \"ask\".")
		}
	}

	if mf := a.MemoryFlush; mf != nil {
		mk := k.block("memory_flush")
		mk.atLeast("context_window", mf.ContextWindow, 0)
		mk.atLeast("reserve_tokens", mf.ReserveTokens, 0)
		mk.atLeast("soft_threshold_tokens", mf.SoftThresholdTokens, 0)
	}

	const skipFlag = "--dangerously-skip-permissions"
	subject := k.valueRange("permission_mode")
	bypass := a.PermissionMode == "bypassPermissions"
	if i := slices.Index(a.PermissionModes, "bypassPermissions"); i >= 0 && !bypass {
		bypass = true
		subject = k.elemRange("permission_modes", i, len(a.PermissionModes))
	}
	if i := slices.Index(a.Args, skipFlag); i >= 0 {
		bypass = true
		subject = k.elemRange("args", i, len(a.Args))
	}
	if bypass && a.Env["IS_SANDBOX"] != "1" {
		k.emit(warning(subject, "Permission checks skipped outside a sandbox",
			"Claude Code refuses bypassPermissions and "+skipFlag+" when it runs as root unless IS_SANDBOX=1 is set. "+
				"If clawhost runs as root in a container, add IS_SANDBOX = \"1\" to agent.env; otherwise run it as an unprivileged user."))
	}
}

// runAs checks a run_as attribute: clawhost must run as root, and the user
// must exist.
func (k *checker) runAs(name, value string) {
	if value == "" {
		return
	}
	if _, err := runas.Lookup(value); err != nil {
		k.errorf(k.valueRange(name), "Unknown user in "+k.qualified(name),
			"There is no user %q on this machine (%v). Create it (useradd --system %s) or name an existing one.", value, errors.Unwrap(err), value)
		return
	}
	if geteuid() != 0 {
		k.errorf(k.valueRange(name), "Invalid value for "+k.qualified(name),
			"Starting a process as %q needs clawhost to run as root; it runs as uid %d. Remove run_as or start clawhost as root.", value, geteuid())
	}
}

// checkApprovers warns about approval settings that leave tool use
// unguarded or unapprovable: "sender" where a group reaches the agent (a
// member could approve their own tool use), and "owners" with no owners
// (every question would be denied).
func (a *Agent) checkApprovers(k *checker) {
	asks := a.Approvals == "chat"
	subject := k.valueRange("approvals")
	if i := slices.Index(a.PermissionModes, ModeAsk); i >= 0 {
		if !asks {
			subject = k.elemRange("permission_modes", i, len(a.PermissionModes))
		}
		asks = true
	}
	if !asks {
		return
	}
	acc := k.cfg.Access
	if acc == nil {
		acc = defaultAccess()
	}
	switch a.Approvers {
	case "sender":
		if groups := len(acc.Groups) > 0 || len(acc.GroupRules) > 0 || acc.GroupPolicy == "open"; groups {
			k.emit(warning(k.valueRange("approvers"), "Group members approve their own tool use",
				"With approvers = \"sender\" the person whose message started a turn answers its approval questions, and groups reach the agent here "+
					"(access.groups, access.group or group_policy = \"open\"): a group member could approve their own tool use — "+
					"a shell command runs as clawhost's user. Use approvers = \"owners\" unless everyone who can write in those groups is trusted."))
		}
	case "owners":
		if len(acc.Owners) == 0 {
			k.emit(warning(subject, "No approver",
				"Approval questions go to the owners (agent.approvers = \"owners\"), and access.owners is empty: every tool use that needs permission will be denied. "+
					"Set access.owners, e.g. [\"tg:1001\"] (/whoami tells a sender their id)."))
		}
	}
}
