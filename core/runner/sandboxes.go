package runner

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
)

// ZygoteEnv in the host's environment chooses how a sandboxed claude's sandbox is made
// (issue 58): "0" a bubblewrap per start, the escape hatch; "1" the agent's recycled
// sandboxes (zygote_linux.go, Linux only) whatever the binary, tests' way to use a test
// binary as the helper; unset (or anything else), recycled sandboxes when the binary is a
// helper (EnableSandboxHelper) and they work here (root, a bubblewrap with --as-pid-1, a
// probe start that passes), else a bubblewrap per start. SandboxState says which an agent
// gets and why.
const ZygoteEnv = "CLAWHOST_SANDBOX_HELPER"

// helperBinary is set by EnableSandboxHelper.
var helperBinary atomic.Bool

// EnableSandboxHelper declares that the process's executable, run with the single argument
// ZygoteArg, runs ZygoteMain: clawhost's main calls it, and then the runner starts
// sandboxed claudes in recycled sandboxes by default. Without it (a binary that embeds the
// runner but is no helper, such as another package's test binary) only ZygoteEnv=1 does.
func EnableSandboxHelper() { helperBinary.Store(true) }

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
	sbs := map[sandboxKey]sandbox{}
	for _, c := range r.profiles() {
		k := sandboxKeyOf(c)
		sb, ok := sbs[k]
		if !ok {
			sb = probeSandbox(*c)
			sbs[k] = sb
		}
		if sb.bwrap == "" && c.Sandbox != SandboxOff {
			r.log.Warn("claude runs without a sandbox: its tools can read everything its user can", "agent", c.Name, "sandbox", sb.state)
		} else {
			r.log.Debug("claude sandbox", "agent", c.Name, "sandbox", sb.state)
		}
	}
	r.sandboxes.Store(&sbs)
}

// sandboxOf is the sandbox the processes of the agent configured by c run in, once the
// probe found it (bounded by probeTimeout). Whether it is recycled (its helper field) is
// decided once waitZygotes returns.
func (r *Runner) sandboxOf(c *Config) sandbox {
	if r.sandboxDone != nil {
		<-r.sandboxDone
	}
	return (*r.sandboxes.Load())[sandboxKeyOf(c)]
}

// StartSandboxHelpers begins deciding, in the background, whether the agents' claudes start
// in recycled sandboxes: where they may, the sandbox helper's probe start (a bubblewrap, the
// helper and one start of true in it), whose helper is stopped once it passed: the status
// page says what the agents get from the host's start on, and an idle host holds no helper
// (the agent's first claude start starts its sandboxes). The host
// calls it once its start is done, so that the probe's processes do not compete with the
// plugins' for the machine; the first claude start begins it if nothing did. Calling it
// again does nothing.
func (r *Runner) StartSandboxHelpers() {
	if r.zygoteDone == nil {
		return
	}
	r.helpers.Do(func() {
		go func() {
			defer close(r.zygoteDone)
			<-r.sandboxDone
			r.setupZygotes()
		}()
	})
}

// waitZygotes returns once setupZygotes has decided which agents' claudes start in
// recycled sandboxes, beginning it if nothing did (StartSandboxHelpers); at once but in a
// host's first moments (bounded by probeTimeout and zygoteProbeTimeout).
func (r *Runner) waitZygotes() {
	if r.zygoteDone != nil {
		r.StartSandboxHelpers()
		<-r.zygoteDone
	}
}

// profiles are the runner's own configuration, then its agents' by id.
func (r *Runner) profiles() []*Config {
	out := []*Config{&r.cfg}
	for _, id := range slices.Sorted(maps.Keys(r.agents)) {
		out = append(out, r.agents[id])
	}
	return out
}

// SandboxState is the sandbox claude runs in, as the status page says it, once the
// probe found it (New started it; this waits for it): "bubblewrap",
// "off" (agent.sandbox = "off"), or "unavailable (why)" — agent.sandbox = "auto" found no
// working bubblewrap. Where New tried recycled sandboxes (ZygoteEnv), "bubblewrap
// (recycled)" (the agent's recycled sandboxes) or "bubblewrap (per start: why)" (the
// sandbox helper cannot run here, or ZygoteEnv=0), and in the host's first moments, while
// the helper's probe start runs, zygoteStarting. When the agents' differ (their own
// sandbox or run_as), it says it
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
