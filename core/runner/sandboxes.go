package runner

import (
	"cmp"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/sandbox"
)

// ZygoteEnv in the host's environment chooses how a sandboxed claude's sandbox is made:
// sandbox.ZygoteEnv.
const ZygoteEnv = sandbox.ZygoteEnv

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
	sbs := map[sandboxKey]agentSandbox{}
	for _, c := range r.profiles() {
		k := sandboxKeyOf(c)
		sb, ok := sbs[k]
		if !ok {
			found := sandbox.Probe(c.Sandbox, c.RunAs)
			sb = agentSandbox{bwrap: found.Bwrap, state: found.State}
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
func (r *Runner) sandboxOf(c *Config) agentSandbox {
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

// zygoteStarting is an agent's sandbox state while the sandbox helper's probe start runs.
const zygoteStarting = "bubblewrap (recycled: its sandbox helper is starting)"

// planZygotes finds, without starting anything, whether recycled sandboxes will be tried
// (sandbox.HelperWanted): where they cannot (ZygoteEnv=0, no user namespaces…) it decides "per
// start" at once; where the helper's probe start decides, the agents' sandbox state says
// zygoteStarting until setupZygotes did.
func (r *Runner) planZygotes() {
	want, why := sandbox.HelperWanted()
	if !want {
		return
	}
	if why == "" {
		why = sandbox.HelperUnsupported()
	}
	exe, err := os.Executable()
	if why == "" && err != nil {
		why = "the host's executable: " + err.Error()
	}
	if err == nil {
		exe = sandbox.HelperExecutable(exe)
	}
	if why != "" {
		r.decideZygotes(why, exe) // per start: nothing to start for it
		return
	}
	r.helperExe = exe
	sbs := maps.Clone(*r.sandboxes.Load())
	for k, sb := range sbs {
		if sb.bwrap != "" && sb.helper == "" {
			sb.state = zygoteStarting
			sbs[k] = sb
		}
	}
	r.sandboxes.Store(&sbs)
}

// setupZygotes decides whether each sandboxed agent's claudes start in recycled sandboxes
// (planZygotes), and says so in its sandbox state; StartSandboxHelpers runs it in the
// background. Where that takes the helper's probe start (30–45 ms on the 2-core
// development machine, more under load), a claude's start waits for it (waitZygotes).
// Both ways claude is sandboxed: only how its sandbox is made waits.
func (r *Runner) setupZygotes() {
	if r.helperExe != "" {
		r.decideZygotes("", r.helperExe)
	}
}

// decideZygotes is setupZygotes' decision for each agent, with the helper's probe start
// where why is "" (nothing stands in the way yet); it stores the agents' sandboxes and
// the pool.
func (r *Runner) decideZygotes(why, exe string) {
	forced := os.Getenv(ZygoteEnv) == "1"
	sbs := maps.Clone(*r.sandboxes.Load())
	var zp *sandbox.Pool
	for _, c := range r.profiles() {
		k := sandboxKeyOf(c)
		sb := sbs[k]
		if sb.bwrap == "" || sb.helper != "" {
			continue
		}
		if why == "" && zp == nil {
			if err := probeHelper(sb.bwrap, exe); err != nil {
				why = "the sandbox helper failed: " + truncate(err.Error(), 200)
			} else {
				// The probe's helper was stopped, not kept as a spare: an idle host holds
				// no sandbox helper (two processes, 5.6 MB, issue 84); the agent's first
				// claude start starts one, and its spare.
				zp = sandbox.NewPool(sb.bwrap, exe, r.log.Named("sandbox"), r.cfg.MaxConcurrent)
			}
		}
		if why != "" {
			sb.helper, sb.state = "per start", "bubblewrap (per start: "+why+")"
			if forced {
				r.log.Warn("claude's sandbox is made per start", "agent", c.Name, "why", why)
			} else {
				r.log.Info("claude's sandbox is made per start", "agent", c.Name, "why", why)
			}
		} else {
			sb.helper, sb.state = "recycled", "bubblewrap (recycled)"
		}
		sbs[k] = sb
	}
	r.zygotes = zp
	r.sandboxes.Store(&sbs)
}

// probeHelper is sandbox.ProbeHelper; tests hold it back.
var probeHelper = sandbox.ProbeHelper

// launcherFor is what starts c's claudes: its recycled sandboxes (the pool), a bubblewrap
// each, or, unsandboxed, the host's own child on the lifeline.
func (r *Runner) launcherFor(c *Config) sandbox.Launcher {
	sb := r.sandboxOf(c)
	if sb.bwrap == "" {
		return sandbox.Direct{Lifeline: r.lifeline, WaitDelay: r.cfg.KillGrace}
	}
	r.waitZygotes()
	if r.zygotes != nil && r.sandboxOf(c).helper == "recycled" {
		return r.zygotes
	}
	return sandbox.PerStart{Bwrap: sb.bwrap, WaitDelay: r.cfg.KillGrace}
}

// ProbeSandbox is what [Runner.SandboxState] would say for cfg on this
// machine, without a Runner: `clawhost validate` and `clawhost doctor`
// tell whether the host would refuse to start unsandboxed.
func ProbeSandbox(cfg Config) string { return sandbox.Probe(cfg.Sandbox, cfg.RunAs).State }

// ProbeBoundary is what this machine gives the sandbox of the agent cfg configures
// (sandbox.Boundary): `clawhost doctor` and `clawhost security audit` say it.
func ProbeBoundary(cfg Config) boundary.Facts { return sandbox.Boundary(cfg.Sandbox, cfg.RunAs) }
