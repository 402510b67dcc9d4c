package runner

import (
	"cmp"
	"maps"
	"slices"
	"strings"
)

// ZygoteEnv, set to "1" in the host's environment, runs sandboxed claudes in recycled
// sandboxes (zygote_linux.go, Linux only) instead of a bubblewrap per start. Off by default
// while the recycling is new (issue 58); SandboxState says which one an agent uses and why.
const ZygoteEnv = "CLAWHOST_SANDBOX_HELPER"

// sandboxKey is what decides an agent's sandbox: its mode (Config.Sandbox) and the user
// claude runs as (the probe runs as that user: bubblewrap may work for root and not for
// another user, or the other way round).
type sandboxKey struct {
	mode string
	uid  int64 // uidOf(Config.RunAs)
}

func sandboxKeyOf(c *Config) sandboxKey { return sandboxKey{mode: c.Sandbox, uid: uidOf(c.RunAs)} }

// probeSandboxes probes the sandbox once for each distinct sandbox mode and user among the
// runner's own configuration and its agents', and logs what each agent gets.
func (r *Runner) probeSandboxes() {
	r.sandboxes = map[sandboxKey]sandbox{}
	for _, c := range r.profiles() {
		k := sandboxKeyOf(c)
		sb, ok := r.sandboxes[k]
		if !ok {
			sb = probeSandbox(*c)
			r.sandboxes[k] = sb
		}
		if sb.bwrap == "" && c.Sandbox != SandboxOff {
			r.log.Warn("claude runs without a sandbox: its tools can read everything its user can", "agent", c.Name, "sandbox", sb.state)
		} else {
			r.log.Debug("claude sandbox", "agent", c.Name, "sandbox", sb.state)
		}
	}
}

// sandboxOf is the sandbox the processes of the agent configured by c run in.
func (r *Runner) sandboxOf(c *Config) sandbox { return r.sandboxes[sandboxKeyOf(c)] }

// profiles are the runner's own configuration, then its agents' by id.
func (r *Runner) profiles() []*Config {
	out := []*Config{&r.cfg}
	for _, id := range slices.Sorted(maps.Keys(r.agents)) {
		out = append(out, r.agents[id])
	}
	return out
}

// SandboxState is the sandbox claude runs in, as the status page says it: "bubblewrap",
// "off" (agent.sandbox = "off"), or "unavailable (why)" — agent.sandbox = "auto" found no
// working bubblewrap. With ZygoteEnv set, "bubblewrap (recycled)" (the agent's recycled
// sandboxes) or "bubblewrap (per start: why)" (the sandbox helper cannot run here). When the agents' differ (their own sandbox or run_as), it says it
// per agent: "main: bubblewrap; public: off".
func (r *Runner) SandboxState() string {
	var parts []string
	same := true
	first := r.sandboxOf(&r.cfg).state
	for _, c := range r.profiles() {
		st := r.sandboxOf(c).state
		same = same && st == first
		parts = append(parts, cmp.Or(c.Name, "default")+": "+st)
	}
	if same {
		return first
	}
	return strings.Join(parts, "; ")
}

// SandboxUnavailable reads a SandboxState (or ProbeSandbox) sentence: whether an agent's
// sandbox = "auto" found no working bubblewrap, and why. The sentence's format is
// SandboxState's; this is its one reader.
func SandboxUnavailable(state string) (why string, unavailable bool) {
	for _, part := range strings.Split(state, "; ") {
		if i := strings.Index(part, "unavailable"); i >= 0 {
			return strings.Trim(strings.TrimSpace(part[i+len("unavailable"):]), "()"), true
		}
	}
	return "", false
}
