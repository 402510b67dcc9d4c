package runner

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/envfilter"
	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/internal/sparedir"
)

// Defaults applied by Config.withDefaults (and so by New) to zero fields.
const (
	DefaultCommand       = "claude"
	DefaultTimeout       = 10 * time.Minute
	DefaultIdleTimeout   = 10 * time.Minute
	DefaultMaxConcurrent = 4
	DefaultMaxRetries    = 3
	DefaultKillGrace     = 3 * time.Second
)

// Config configures a Runner. The HCL "agent" block maps onto it; every field has a usable
// zero value (see the Default constants).
type Config struct {
	// Command is the Claude Code CLI executable, a name looked up in PATH or a path
	// (agent.command). Default "claude".
	Command string
	// Args are extra arguments appended after the runner's own flags (agent.args).
	Args []string
	// Env is extra environment for claude (agent.env), applied over the few host variables
	// claude inherits (listed in the package documentation, under Environment; nothing else
	// of the host's environment reaches claude) and the runner's defaults (DISABLE_TELEMETRY=1,
	// DISABLE_ERROR_REPORTING=1, DISABLE_AUTOUPDATER=1,
	// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1, CLAUDE_CODE_MAX_RETRIES). A key set to
	// "" is passed as empty. TMPDIR is always the runner's per-process directory. What the
	// tools claude runs need (a GITHUB_TOKEN for gh, say) goes here too.
	Env map[string]string
	// Workspace is the working directory of every claude process (agent.workspace).
	// Default: the host's current directory. Made absolute by New.
	Workspace string
	// StateDir holds the per-process TMPDIRs and prompt files (removed when the process
	// ends). Default: <os.TempDir()>/clawhost-runner.
	StateDir string
	// Model is passed as --model when set (agent.model).
	Model string
	// FallbackModel is passed as --fallback-model when set (a comma list is allowed).
	FallbackModel string
	// PermissionMode is passed as --permission-mode: acceptEdits, auto,
	// bypassPermissions, manual, dontAsk, plan or default (the default). It is always
	// passed, so a defaultMode in settings claude loads never applies. For a chat bot
	// "dontAsk" (with AllowedTools) is the safe choice.
	PermissionMode string
	// Settings chooses whose Claude Code settings apply (agent.settings): SettingsProject
	// (the default) passes --setting-sources project, so only the workspace's
	// .claude/settings.json applies; SettingsUser passes user,project,local, the
	// operator's own settings included. --strict-mcp-config is always passed: only
	// MCPConfig and the host's own tool server load.
	Settings string
	// ConfigDir, when set, is claude's config directory (CLAUDE_CONFIG_DIR): its login,
	// settings, transcripts. New creates it (0700). The composition sets it to
	// <data_dir>/claude unless agent.env sets CLAUDE_CONFIG_DIR or Settings is
	// SettingsUser; see the package documentation for what it moves.
	ConfigDir string
	// Sandbox is SandboxAuto (the default: bubblewrap when it works here) or SandboxOff;
	// each agent's own (Agents).
	Sandbox string
	// Hide are paths the sandbox makes invisible to claude and its tools (an empty
	// directory or an empty file in their place): data_dir, other agents' workspaces,
	// the config file. A directory bound writable inside one (the TMPDIR, ConfigDir)
	// stays visible. Ignored without a sandbox.
	Hide []string
	// Expose are paths inside a hidden one that the sandbox binds back read-only:
	// the host's tool endpoint socket (under data_dir; each process also gets its own
	// chat's MCP config file and no other), the clawhost executable the tool bridge
	// runs as. Ignored without a sandbox.
	Expose []string
	// RunAs, when set, is the user claude runs as (agent.run_as), each agent's own; the
	// host must run as root. New makes ConfigDir that user's and checks that it can reach
	// the workspace and the state directories.
	RunAs *runas.User
	// PermissionModes are the modes a TurnRequest may ask for (a chat's
	// /mode); validated like PermissionMode.
	PermissionModes []string
	// AllowedTools and DisallowedTools are passed as --allowedTools / --disallowedTools
	// (comma-joined), e.g. ["Read", "Bash(git log:*)"]. DefaultDisallowedTools are
	// always added to DisallowedTools.
	AllowedTools    []string
	DisallowedTools []string
	// MCPConfig are MCP config files or JSON strings, passed as --mcp-config.
	MCPConfig []string
	// MCPServers are the agent's own MCP servers, passed as one more
	// --mcp-config: a 0600 file in the process's TMPDIR (mcpServersFile).
	MCPServers []MCPServer
	// MCPApprovals is the file of the owners' approvals of the workspaces'
	// .mcp.json (core/internal/mcpapproval); "" never loads one.
	MCPApprovals string
	// AddDirs are extra directories the tools may access, each passed as --add-dir.
	AddDirs []string
	// SystemPrompt is text appended to Claude Code's system prompt on every process start.
	SystemPrompt string
	// SystemPromptFile is a file whose content is appended too (read at each process start,
	// after SystemPrompt). The runner writes the combined text (with the turn's
	// ExtraSystemPrompt) to a private file and passes --append-system-prompt-file, so the
	// text never appears in argv, and --system-prompt-snapshot off, so a resumed
	// conversation uses the current text.
	SystemPromptFile string
	// Timeout bounds one turn, from Run until the result (queueing for the session and the
	// concurrency cap included). On expiry the run is killed and reported as timeout.
	// Default 10m.
	Timeout time.Duration
	// MaxTurns is passed as --max-turns when > 0 (agentic round trips per turn).
	MaxTurns int
	// IdleTimeout stops a warm process that has not run a turn for this long (its agent's
	// own). Default 10m.
	IdleTimeout time.Duration
	// MaxWarm is the number of warm processes kept; beyond it the idle one least worth
	// keeping is stopped (used least, cheapest to start again; see the package
	// documentation). 0 (the default): no limit by count, WarmMemory alone decides.
	MaxWarm int
	// WarmMemory is the memory the warm processes may hold together, in bytes
	// (agent.warm_memory): each one's process tree measured after its first turn and
	// then at most once a minute (proportional set size, procmem.Tree), one not measured yet counted as the mean
	// of those that are (≈ 210 MB for the real CLI before any is). Beyond it the idle
	// ones least worth keeping are stopped, as beyond MaxWarm; both limits apply.
	// 0: DefaultWarmMemory of the machine's memory; NoWarmMemoryLimit: none.
	WarmMemory int64
	// Spare keeps one claude of the agent started ahead, without a session, for its next
	// new session (agent.spare; spare.go): adopted by a new session whose start it
	// matches, replaced after, and only while it fits MaxWarm and WarmMemory beside the
	// warm processes (it counts as one of them and is the first stopped to make room).
	// Not with OneShot.
	Spare bool
	// MaxConcurrent caps turns running at once across all sessions; further turns wait,
	// first come first served except that a turn whose session has a warm process may go
	// a little ahead (see the package documentation). Default 4.
	MaxConcurrent int
	// OneShot runs every turn in a fresh process (prompt on stdin, then EOF) instead of
	// keeping processes warm. Slower (≈ 0.9 s start per turn) but holds no memory between turns.
	OneShot bool
	// PartialMessages passes --include-partial-messages so text arrives as deltas
	// (EventTextDelta) while it streams, not only as complete blocks.
	PartialMessages bool
	// MaxRetries sets CLAUDE_CODE_MAX_RETRIES (API retries inside one turn; claude's own
	// default is 10 ≈ 3 minutes on a persistent 529). 0 means DefaultMaxRetries; a negative
	// value means no retries.
	MaxRetries int
	// KillGrace is the wait between SIGTERM and SIGKILL when a run is aborted or timed out,
	// and between closing stdin and SIGTERM when an idle process is stopped. Default 3s.
	KillGrace time.Duration
	// Name is the id of the agent this Config is (the default agent's, "main"); a turn
	// naming it or no agent runs with this Config.
	Name string
	// Agents are the named agents (agent "<id>" blocks) by id; a turn names its agent in
	// TurnRequest.Agent, and a turn naming an agent that is neither Name nor here is
	// refused (never run with another agent's workspace). Each is the agent's whole
	// configuration, mapped from its block as the runner's own is: what claude is, where
	// it works, what it may do and see (Hide, Expose, Sandbox), whose settings apply
	// (Settings, ConfigDir), the user it runs as (RunAs), its timeouts and how many of its
	// processes stay warm. What is the runner's, shared by every agent, is taken from
	// the runner's own fields (see forAgent): StateDir, MaxConcurrent (one count of
	// slots), OneShot, PartialMessages, MaxRetries, KillGrace; and MaxWarm is capped by
	// the runner's.
	Agents map[string]Config
}

// forAgent is the configuration of a named agent's turns: a, with what is the runner's
// taken from c (the slots, the state directory, how processes are kept and stopped) and
// a's MaxWarm and WarmMemory capped by c's, the runner's limits. A zero Timeout or IdleTimeout in a
// is c's; other zero fields get the defaults of any Config.
func (c Config) forAgent(a Config) Config {
	a.StateDir, a.MaxConcurrent, a.OneShot = c.StateDir, c.MaxConcurrent, c.OneShot
	a.PartialMessages, a.MaxRetries, a.KillGrace = c.PartialMessages, c.MaxRetries, c.KillGrace
	a.Timeout = cmp.Or(a.Timeout, c.Timeout)
	a.IdleTimeout = cmp.Or(a.IdleTimeout, c.IdleTimeout)
	a.MaxWarm = capLimit(a.MaxWarm, c.MaxWarm)
	if a.WarmMemory < 0 || c.WarmMemory < 0 {
		a.WarmMemory = max(a.WarmMemory, c.WarmMemory) // a limit wins over none
		if a.WarmMemory == 0 {
			a.WarmMemory = c.WarmMemory
		}
	} else {
		a.WarmMemory = capLimit(a.WarmMemory, c.WarmMemory)
	}
	a.Agents = nil
	return a.withDefaults()
}

// capLimit is an agent's limit a within the runner's c, where 0 means none: the smaller
// of the two that are set.
func capLimit[T int | int64](a, c T) T {
	switch {
	case a <= 0:
		return c
	case c <= 0:
		return a
	}
	return min(a, c)
}

// NoWarmMemoryLimit in Config.WarmMemory keeps warm processes without a memory budget
// (MaxWarm and the idle timeout alone stop them).
const NoWarmMemoryLimit int64 = -1

// DefaultWarmMemory is the warm_memory budget of a machine with total bytes of memory:
// a quarter of it, at least minWarmMemory (one warm claude fits) and at most
// maxDefaultWarmMemory; 2 GB when total is unknown (0).
func DefaultWarmMemory(total int64) int64 {
	if total <= 0 {
		return 2 << 30
	}
	return min(max(total/4, minWarmMemory), maxDefaultWarmMemory)
}

// The bounds of DefaultWarmMemory: one warm claude of the real CLI (≈ 210 MB) fits in the
// least; the most is about 75 of them, more than one host's slots keep busy.
const (
	minWarmMemory        int64 = 256 << 20
	maxDefaultWarmMemory int64 = 16 << 30
)

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Command == "" {
		c.Command = DefaultCommand
	}
	if c.Workspace == "" {
		if wd, err := os.Getwd(); err == nil {
			c.Workspace = wd
		}
	}
	if c.StateDir == "" {
		c.StateDir = filepath.Join(os.TempDir(), "clawhost-runner")
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.WarmMemory == 0 {
		c.WarmMemory = DefaultWarmMemory(procmem.MemTotal())
	}
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.KillGrace <= 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.Settings == "" {
		c.Settings = SettingsProject
	}
	if c.Sandbox == "" {
		c.Sandbox = SandboxAuto
	}
	return c
}

var permissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan", "default"}

// DefaultPermissionMode is passed as --permission-mode when neither the turn
// nor Config names one.
const DefaultPermissionMode = "default"

// Setting sources (Config.Settings, agent.settings).
const (
	// SettingsProject loads only the workspace's .claude/settings.json.
	SettingsProject = "project"
	// SettingsUser loads the operator's settings too (~/.claude/settings.json,
	// then the project's, then .claude/settings.local.json).
	SettingsUser = "user"
)

// SettingsModes are the values Config.Settings accepts.
var SettingsModes = []string{SettingsProject, SettingsUser}

// settingSources is --setting-sources for a Config.Settings value.
func settingSources(settings string) string {
	if settings == SettingsUser {
		return "user,project,local"
	}
	return "project"
}

// Validate reports every problem in c at once, naming the agent.* setting. It checks the
// rule claude enforces at run time: --dangerously-skip-permissions and
// --permission-mode bypassPermissions are refused as root unless IS_SANDBOX=1 (with
// RunAs claude is not root).
func (c Config) Validate() error { return c.validate(os.Geteuid(), os.Getenv("IS_SANDBOX")) }

func (c Config) validate(euid int, hostSandbox string) error {
	var errs []error
	if c.PermissionMode != "" && !slices.Contains(permissionModes, c.PermissionMode) {
		errs = append(errs, fmt.Errorf("agent.permission_mode %q is not one of %s", c.PermissionMode, strings.Join(permissionModes, ", ")))
	}
	for _, m := range c.PermissionModes {
		if !slices.Contains(permissionModes, m) {
			errs = append(errs, fmt.Errorf("agent.permission_modes: %q is not one of %s", m, strings.Join(permissionModes, ", ")))
		}
	}
	bypass := c.PermissionMode == "bypassPermissions" || slices.Contains(c.PermissionModes, "bypassPermissions") || slices.Contains(c.Args, "--dangerously-skip-permissions")
	sandbox := hostSandbox
	if v, ok := c.Env["IS_SANDBOX"]; ok {
		sandbox = v
	}
	if bypass && euid == 0 && c.RunAs == nil && sandbox != "1" {
		setting := `agent.permission_mode = "bypassPermissions"`
		if c.PermissionMode != "bypassPermissions" && slices.Contains(c.PermissionModes, "bypassPermissions") {
			setting = `agent.permission_modes with "bypassPermissions"`
		} else if c.PermissionMode != "bypassPermissions" {
			setting = `agent.args "--dangerously-skip-permissions"`
		}
		errs = append(errs, fmt.Errorf("%s: claude refuses it when running as root; run clawhost as another user, choose another permission mode, or set agent.env IS_SANDBOX = \"1\" if this host is a disposable sandbox", setting))
	}
	if c.Settings != "" && !slices.Contains(SettingsModes, c.Settings) {
		errs = append(errs, fmt.Errorf("agent.settings %q is not one of %s", c.Settings, strings.Join(SettingsModes, ", ")))
	}
	if c.Sandbox != "" && !slices.Contains(SandboxModes, c.Sandbox) {
		errs = append(errs, fmt.Errorf("agent.sandbox %q is not one of %s", c.Sandbox, strings.Join(SandboxModes, ", ")))
	}
	if c.RunAs != nil && euid != 0 {
		errs = append(errs, fmt.Errorf("agent.run_as %q: clawhost must run as root to start claude as another user", c.RunAs.Name))
	}
	if c.Timeout < 0 || c.IdleTimeout < 0 || c.KillGrace < 0 {
		errs = append(errs, errors.New("agent: timeout, idle_timeout and kill_grace must not be negative"))
	}
	if c.MaxTurns < 0 || c.MaxWarm < 0 || c.MaxConcurrent < 0 {
		errs = append(errs, errors.New("agent: max_turns, max_warm and max_concurrent must not be negative"))
	}
	return errors.Join(errs...)
}

// launch describes one process start.
type launch struct {
	// cfg is the configuration of the turn's agent (Runner.profile); dir
	// the directory claude works in when not cfg.Workspace.
	cfg       *Config
	dir       string
	sessionID string
	resume    bool
	warm      bool
	// promptFile is the --append-system-prompt-file path, "" for none.
	promptFile string
	// model overrides Config.Model; effort is --effort ("" for none); mode
	// overrides Config.PermissionMode.
	model, effort, mode string
	// mcp is the session's own MCP config (the host's tools for its chat)
	// and tools the tools it allows without asking.
	mcp   string
	tools []string
	// servers is the file of Config.MCPServers, project the approved
	// workspace .mcp.json's copy; "" for none.
	servers, project string
	// mcpAsked is the MCP config the turn named: mcp may be a copy of it the process's
	// user can read; a warm process is matched by the one named.
	mcpAsked string
	// ask routes permission prompts to the host (--permission-prompt-tool
	// stdio): EventPermission.
	ask bool
	// media is the directory under <workspace>/media the sandbox leaves
	// visible ("" none).
	media string
	// env is claude's environment but its TMPDIR (Config.baseEnv), made once per start.
	env []string
	// stateKey is the conversation whose claude state the sandbox binds (chatStateDir),
	// when not the key the process starts under (a spare started for a chat: spare.go).
	stateKey string
	// own is a spare's own directories, for a brand-new chat to adopt (spare.go): its
	// sandbox shows them in the place of a chat's media directory and claude state.
	own *sparedir.Dirs
	// late is a spare's own host tools (proc.late), set before its reaper runs.
	late *lateTools
}

// chatState is the claude state directory the sandbox of key's process l binds.
func (l launch) chatState(stateDir, key string) string {
	if l.own != nil {
		return l.own.State
	}
	return chatStateDir(stateDir, cmp.Or(l.stateKey, key))
}

// args builds claude's argv (without the command) for one process start.
func (c Config) args(l launch) []string {
	a := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if l.warm {
		a = append(a, "--input-format", "stream-json")
	}
	if c.PartialMessages {
		a = append(a, "--include-partial-messages")
	}
	if l.resume {
		a = append(a, "--resume", l.sessionID)
	} else {
		a = append(a, "--session-id", l.sessionID)
	}
	if model := cmp.Or(l.model, c.Model); model != "" {
		a = append(a, "--model", model)
	}
	if l.effort != "" {
		a = append(a, "--effort", l.effort)
	}
	if c.FallbackModel != "" {
		a = append(a, "--fallback-model", c.FallbackModel)
	}
	// Always explicit, and the setting sources pinned: the settings claude
	// would otherwise load (the operator's ~/.claude/settings.json) decide
	// neither the mode nor the rules, hooks and MCP servers.
	a = append(a, "--permission-mode", cmp.Or(l.mode, c.PermissionMode, DefaultPermissionMode),
		"--setting-sources", settingSources(c.Settings), "--strict-mcp-config")
	if allowed := append(slices.Clone(c.AllowedTools), l.tools...); len(allowed) > 0 {
		a = append(a, "--allowedTools", strings.Join(allowed, ","))
	}
	a = append(a, "--disallowedTools", strings.Join(disallowed(c.DisallowedTools), ","))
	for _, m := range c.MCPConfig {
		a = append(a, "--mcp-config", m)
	}
	if l.mcp != "" {
		a = append(a, "--mcp-config", l.mcp)
	}
	for _, m := range []string{l.project, l.servers} {
		if m != "" {
			a = append(a, "--mcp-config", m)
		}
	}
	for _, d := range c.AddDirs {
		a = append(a, "--add-dir", d)
	}
	if c.MaxTurns > 0 {
		a = append(a, "--max-turns", strconv.Itoa(c.MaxTurns))
	}
	if l.ask {
		// claude asks the host over stdin/stdout (a can_use_tool control
		// request) instead of denying what would prompt.
		a = append(a, "--permission-prompt-tool", "stdio")
	}
	if l.promptFile != "" {
		a = append(a, "--append-system-prompt-file", l.promptFile, "--system-prompt-snapshot", "off")
	}
	return append(a, c.Args...)
}

// inheritedEnv names the host variables claude inherits when they are set: what claude
// and the tools it runs (Bash) need to find programs (PATH), the user's home, where claude
// keeps its login and transcripts (HOME), who runs them (USER, LOGNAME), the shell the
// Bash tool starts (SHELL), the locale (LANG and every LC_* variable), the terminal type
// (TERM) and the time zone (TZ). TMPDIR is not inherited: each process gets its own.
var inheritedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TERM", "TZ"}

// claudeEnv names claude's own settings, passed through from the host environment when
// they are set, because they are meant for claude and a user who exports them for the
// claude CLI expects the bot's claude to use them too (agent.env overrides them):
//
//	ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,  claude's credentials (without one, claude
//	CLAUDE_CODE_OAUTH_TOKEN                   (claude setup-token's, clawhost init writes it)
//	                                          uses the login under HOME or
//	                                          CLAUDE_CONFIG_DIR)
//	ANTHROPIC_BASE_URL                        the Messages API endpoint (a gateway, a fake)
//	ANTHROPIC_MODEL, ANTHROPIC_SMALL_FAST_MODEL,
//	ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL  model choice
//	CLAUDE_CONFIG_DIR                         where claude keeps its login and settings
//	HTTPS_PROXY, HTTP_PROXY, NO_PROXY (and lower-case)  the way to the API
//	NODE_EXTRA_CA_CERTS                       the CA of such a proxy
//	IS_SANDBOX                                Config.Validate honours the host's value,
//	                                          so claude must see the same one
//
// The variables that keep claude offline (DISABLE_TELEMETRY and the others listed at
// Config.Env) are not inherited: the runner always sets them. Everything else — above
// all the host's secrets (TELEGRAM_BOT_TOKEN, a DISCORD_BOT_TOKEN, cloud credentials) —
// stays out of claude's environment, and so out of reach of the tools the model runs.
var claudeEnv = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
	"ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
	"ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
	"CLAUDE_CONFIG_DIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS",
	"IS_SANDBOX",
}

// env builds claude's environment: the host variables inheritedEnv and claudeEnv name,
// the RunAs user's HOME, USER and LOGNAME, the runner's defaults, ConfigDir as
// CLAUDE_CONFIG_DIR, Config.Env, then TMPDIR (exec keeps the last value of a duplicated
// name).
func (c Config) env(host []string, tmpdir string) []string {
	return withTmpdir(c.baseEnv(host), tmpdir)
}

// withTmpdir is base, claude's environment without TMPDIR (baseEnv), with it.
func withTmpdir(base []string, tmpdir string) []string {
	// exec uses the last value of a duplicated key.
	return append(slices.Clip(base), "TMPDIR="+tmpdir)
}

// baseEnv is env without TMPDIR: a start computes it once, before its TMPDIR is made.
func (c Config) baseEnv(host []string) []string {
	e := envfilter.Keep(host, append(slices.Clone(inheritedEnv), claudeEnv...)...)
	if u := c.RunAs; u != nil {
		e = append(e, u.Env()...)
	}
	e = append(e,
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// claude's auto-memory (projects/<cwd>/memory/MEMORY.md, loaded
		// into every later session in that directory as instructions) is
		// off: one chat's claude could write standing orders for the
		// others', and clawhost's MEMORY.md is the agent's memory. In the
		// sandbox each chat's would be its own (chatstate.go), so agent.env
		// may turn it on.
		"CLAUDE_CODE_DISABLE_AUTO_MEMORY=1",
	)
	retries := c.MaxRetries
	if retries < 0 {
		retries = 0
	}
	e = append(e, "CLAUDE_CODE_MAX_RETRIES="+strconv.Itoa(retries))
	if c.ConfigDir != "" {
		e = append(e, "CLAUDE_CONFIG_DIR="+c.ConfigDir)
	}
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e = append(e, k+"="+c.Env[k])
	}
	// Last, so that agent.env cannot turn it off: see NoBackgroundTasks.
	return append(e, NoBackgroundTasks)
}

// NoBackgroundTasks keeps claude's work inside the turn that started it. claude
// 2.1.330 starts every Agent (Task) sub-agent in the background unless told
// otherwise (run_in_background unset counts as background): the turn's result
// comes at once, and when the sub-agent finishes, claude starts a turn of its own
// whose result (result_index 1) nobody asked for — in a process the host may have
// stopped by then (idle timeout, eviction, /stop, a restart), with the work gone.
// With this variable the Agent and Bash tools lose their run_in_background
// parameter and a sub-agent runs in the foreground: its report is the tool's
// result in the same turn. It is set last, whatever agent.env says.
const NoBackgroundTasks = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1"

// DefaultDisallowedTools are claude's tools that produce output after the
// turn that used them has ended: a wake-up or cron job claude schedules for
// itself, a monitor, a command or a sub-agent left running in the background
// (NoBackgroundTasks already takes run_in_background from their schemas; the
// rules deny it to a claude that ignores the variable). clawhost reads
// claude's output only during a turn, so what they produced reached nobody (a
// ScheduleWakeup fired 89 s later, the API was called and the reply was
// dropped). They are disallowed in every process, whatever the config says;
// OpenClaw disallows the same.
var DefaultDisallowedTools = []string{"ScheduleWakeup", "CronCreate", "CronDelete", "CronList", "Monitor", "Bash(run_in_background:true)", "Agent(run_in_background:true)"}

// disallowed is DefaultDisallowedTools followed by the configured ones not
// among them.
func disallowed(configured []string) []string {
	out := slices.Clone(DefaultDisallowedTools)
	for _, t := range configured {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
