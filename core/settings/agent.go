package settings

import (
	"cmp"
	"os"
	"path/filepath"
	"time"

	"github.com/clawhost/clawhost/core/approval"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/turn"
)

// Profile is one agent block — the default agent's or an agent "<id>"
// block — mapped onto everything that runs it. Agent makes it, for every
// agent alike; Runner, Pipeline and the host read the agents through it
// only, so each field of config.Agent has one home here or in HostWide
// (TestProfileHomesEveryField).
type Profile struct {
	// ID is the agent's id; Default whether it is the default agent (the
	// unlabelled agent block).
	ID      string
	Default bool
	// Runner is the agent's claude: what runs, where, what it may see and
	// do, as whom, and its own timeouts and warm processes. The host-wide
	// limits are not in it (HostWide; Runner adds them).
	Runner runner.Config
	// Turn is the pipeline's per-agent turn settings.
	Turn turn.AgentSettings
	// Switchable: /agent may switch a chat to it (agent.switchable).
	Switchable bool
	// Budget is its own budget block (config.Agent.OwnBudget); nil: none.
	Budget *config.Budget
	// TranscriptDir is the claude config directory its transcripts are
	// in: agent.env's CLAUDE_CONFIG_DIR, else the one clawhost gives it
	// (agentConfigDir); "" when claude uses its user's ~/.claude.
	TranscriptDir string
	// MediaKeep is how long the attachments under its workspace's media
	// directory are kept (agent.media_keep; 0: for ever).
	MediaKeep time.Duration
	// Tools are the plugin tools its claude is granted (agent.tools).
	Tools []string
	// OwnerClaudeDir is where the owner's own claude keeps its sessions
	// (agent.owner_claude_dir, else ~/.claude of the user clawhost runs
	// as; "" when that user has no home): /continue and /desktop.
	OwnerClaudeDir string
}

// HostWide are the settings of the default agent block that are the
// host's, not an agent's (config.DefaultAgentOnly refuses them in an agent
// "<id>" block): the limits of all agents' claude processes together, and
// the one approval policy.
type HostWide struct {
	// MaxConcurrent caps the turns running at once, all agents together
	// (agent.max_concurrent).
	MaxConcurrent int
	// OneShot: no agent's claude is kept warm between turns
	// (agent.one_shot).
	OneShot bool
	// Approval is the approval policy of every agent's tool questions
	// (agent.approvers, agent.approval_timeout).
	Approval approval.Config
}

// Agent maps agent a of cfg — the default agent or a named one, by one
// rule — onto its Profile. The error is the run_as user's that does not
// exist; the Profile is whole all the same, without that user.
func Agent(cfg *config.Config, a *config.Agent) (Profile, error) {
	rc, err := runnerConfig(cfg, a)
	return Profile{
		ID: a.ID, Default: a == cfg.Agent,
		Runner: rc, Turn: turnAgent(a),
		Switchable: a.Switchable, Budget: a.OwnBudget(),
		TranscriptDir:  cmp.Or(a.Env["CLAUDE_CONFIG_DIR"], agentConfigDir(cfg, a)),
		MediaKeep:      a.MediaKeep.Duration(),
		Tools:          a.Tools,
		OwnerClaudeDir: ownerClaudeDir(a),
	}, err
}

// ownerClaudeDir is agent.owner_claude_dir, else ~/.claude of the user
// clawhost runs as ("" without a home).
func ownerClaudeDir(a *config.Agent) string {
	if a.OwnerClaudeDir != "" {
		return a.OwnerClaudeDir
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".claude")
	}
	return ""
}

// Agents are the Profiles of every agent of cfg: the default agent's
// first, then the agent "<id>" blocks' in file order. The error is the
// first agent's whose run_as user does not exist (Agent).
func Agents(cfg *config.Config) ([]Profile, error) {
	var (
		out   []Profile
		first error
	)
	for _, a := range cfg.AllAgents() {
		p, err := Agent(cfg, a)
		if err != nil && first == nil {
			first = err
		}
		out = append(out, p)
	}
	return out, first
}

// Host is cfg's HostWide settings, from the default agent block.
func Host(cfg *config.Config) HostWide {
	a := cfg.Agent
	return HostWide{
		MaxConcurrent: a.MaxConcurrent, OneShot: a.OneShot,
		Approval: approval.Config{Timeout: a.ApprovalTimeout.Duration(), OwnersOnly: a.Approvers == "owners", DirectChats: map[string]bool{}},
	}
}
