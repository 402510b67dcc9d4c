// The runner's side of the mapping: what each agent's claude is started with.

package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawhost/clawhost/core/agenttools"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/runner"
)

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
