// Package doctor checks what a configuration needs of this machine
// without starting the host (clawhost doctor, and the status page's
// Doctor button): the claude CLI of every agent, data_dir and the
// workspaces, the database, the plugin binaries and each plugin's live
// checks, the ports, claude's sandbox and whether its boundary holds here
// (user namespace, seccomp, Landlock), and memory. Each finding is a Check
// with a verdict and what to do.
package doctor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/internal/bubblewrap"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/clawhost/clawhost/core/settings"
)

// Verdicts of a doctor check.
const (
	VerdictOK   = "ok"
	VerdictWarn = "warn"
	VerdictFail = "fail"
	VerdictSkip = "skip"
)

// Check is one finding of `clawhost doctor`.
type Check struct {
	// Name says what was checked ("claude CLI", "data_dir", …).
	Name string `json:"name"`
	// Verdict is ok, warn, fail or skip.
	Verdict string `json:"verdict"`
	// Found is what was found; Do what to do about it ("" when ok).
	Found string `json:"found"`
	Do    string `json:"do,omitempty"`
}

// Run checks what a configuration needs of this machine, without
// starting the host: the claude CLI of every agent (found, its version
// against the tested one, logged in — `claude auth status` — and answering:
// one minimal real request, doctorRequest), data_dir and the workspaces (there, writable), free disk,
// the database (opens and migrates; a running host holding it is fine),
// the plugin binaries, their checksums and releases, each plugin's live checks
// (doctorChannels: a channel's credentials with its platform), the admin
// endpoint's and the web chat's ports, claude's sandbox (bubblewrap, and
// whether the host would refuse to start without it; where it works, each
// part of its boundary: boundary.Assess), the agents' mcp_server commands,
// and memory for agent.max_warm warm claude processes.
func Run(ctx context.Context, cfg *config.Config) []Check {
	return InHost(ctx, cfg, nil)
}

// InHost runs the checks; inHost (the status page's checks, run by the
// host itself with its plugin supervisor; nil: Run's) leaves out the
// database, which the host holds open and reports as its store item.
func InHost(ctx context.Context, cfg *config.Config, inHost *pluginhost.Supervisor) []Check {
	var out []Check
	for _, c := range checkers {
		if inHost != nil && !c.inHost {
			continue
		}
		out = append(out, c.run(ctx, cfg, inHost)...)
	}
	return out
}

// checker is one of doctor's checks, as tailscale's health checks are
// values: what it looks at, and the function that looks, adding a Check
// per finding. ph is the host's plugin supervisor (nil outside a host).
type checker struct {
	name string
	run  func(ctx context.Context, cfg *config.Config, ph *pluginhost.Supervisor) []Check
	// inHost: the host's own run (the status page's) includes it.
	inHost bool
}

// checkers are doctor's checks in the order their findings are shown.
var checkers = []checker{
	{"claude CLI", doctorClaude, true},
	{"directories", doctorDirs, true},
	{"database", doctorDatabase, false},
	{"plugin binaries", doctorBinaries, true},
	{"plugins' live checks", doctorChannels, true},
	{"ports", doctorPorts, true},
	{"sandbox", doctorSandbox, true},
	{"MCP servers", doctorMCPServers, true},
	{"memory", doctorMemory, true},
}

// doctorSandbox checks claude's sandbox the way the runner will find it
// (runner.ProbeBoundary): bubblewrap works, and then whether claude's
// boundary holds here — a user namespace of its own, the syscall filter,
// Landlock — one check each (boundary.Assess); or it does not and only
// owners can reach the agent (a warning with the fix); or the host refuses
// to start (sandboxreach.Check).
func doctorSandbox(_ context.Context, cfg *config.Config, ph *pluginhost.Supervisor) []Check {
	const name = "sandbox"
	if cfg.Agent.Sandbox == runner.SandboxOff {
		return []Check{{Name: name, Verdict: VerdictWarn, Found: `agent.sandbox = "off": claude's tools run with all of clawhost's user's access`,
			Do: `sandbox = "auto" with bubblewrap (` + bubblewrap.Advice() + `)`}}
	}
	rc, err := settings.Runner(cfg)
	if err != nil {
		return nil // doctorClaude reports it
	}
	facts := runner.ProbeBoundary(rc)
	v := boundary.Assess(facts)
	why, unavailable := runner.SandboxUnavailable(facts.Sandbox)
	if !unavailable {
		return append([]Check{{Name: name, Verdict: VerdictOK, Found: "bubblewrap works: claude runs sandboxed"}}, boundaryChecks(v)...)
	}
	fix := v.Parts[0].Fix // the user namespace's: bubblewrap installed, or namespaces allowed
	set, err := settings.Pipeline(cfg)
	if err != nil {
		return nil
	}
	if err := sandboxreach.Check(cfg, set.Access, facts.Sandbox, sandboxreach.Probe(ph)); err != nil {
		return []Check{{Name: name, Verdict: VerdictFail, Found: "claude cannot be sandboxed (" + why + ") and people besides the owners can reach it: the host refuses to start",
			Do: fix + `, or write sandbox = "off" in the agent block to accept the risk`}}
	}
	return []Check{{Name: name, Verdict: VerdictWarn, Found: "claude cannot be sandboxed (" + why + "); only owners can reach the agent, so the host starts",
		Do: fix + " (the host refuses to start unsandboxed once anyone else can reach the agent)"}}
}

// boundaryChecks are v's parts as checks ("boundary: seccomp"): one that
// holds is ok, Landlock missing a warning (the mounts still hold), anything
// else missing a failure.
func boundaryChecks(v boundary.Verdict) []Check {
	verdicts := map[boundary.Status]string{boundary.Holds: VerdictOK, boundary.Weaker: VerdictWarn, boundary.Missing: VerdictFail}
	var out []Check
	for _, p := range v.Parts {
		out = append(out, Check{Name: "boundary: " + p.Name, Verdict: verdicts[p.Status], Found: p.Found, Do: p.Fix})
	}
	return out
}

// doctorDirs checks data_dir and the workspaces, and the free disk.
func doctorDirs(_ context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	add := func(name, verdict, found, do string) {
		out = append(out, Check{Name: name, Verdict: verdict, Found: found, Do: do})
	}
	for _, d := range append([]struct{ name, path string }{{"data_dir", cfg.DataDir}}, workspaces(cfg)...) {
		fi, err := os.Stat(d.path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			parent := filepath.Dir(d.path)
			if werr := Writable(parent); werr != nil {
				add(d.name, VerdictFail, d.path+" does not exist and "+parent+" is not writable: "+werr.Error(), "create it, or give the user clawhost runs as write access to "+parent)
			} else {
				add(d.name, VerdictOK, d.path+" does not exist yet; clawhost makes it at start", "")
			}
		case err != nil:
			add(d.name, VerdictFail, err.Error(), "fix the path or its permissions")
		case !fi.IsDir():
			add(d.name, VerdictFail, d.path+" is not a directory", "point it at a directory")
		default:
			if werr := Writable(d.path); werr != nil {
				add(d.name, VerdictFail, d.path+" is not writable: "+werr.Error(), "give the user clawhost runs as write access")
			} else if d.name == "data_dir" && fi.Mode().Perm()&0o077 != 0 && fi.Mode().Perm() != 0o711 {
				add(d.name, VerdictWarn, fmt.Sprintf("%s is mode %o: others may read the database and tokens", d.path, fi.Mode().Perm()), "chmod 700 "+d.path)
			} else {
				add(d.name, VerdictOK, d.path, "")
			}
		}
	}

	// Free disk where the database is.
	var st syscall.Statfs_t
	if dir := existing(cfg.DataDir); syscall.Statfs(dir, &st) == nil {
		free := st.Bavail * uint64(st.Bsize)
		switch {
		case free < 100<<20:
			add("disk", VerdictFail, fmt.Sprintf("%d MB free at %s", free>>20, dir), "free some space: with a full disk no message can be taken in")
		case free < 1<<30:
			add("disk", VerdictWarn, fmt.Sprintf("%d MB free at %s", free>>20, dir), "free some space: the journal, media and claude's transcripts grow")
		default:
			add("disk", VerdictOK, fmt.Sprintf("%.1f GB free at %s", float64(free)/(1<<30), dir), "")
		}
	}
	return out
}

// doctorDatabase opens (and so migrates) the database.
func doctorDatabase(ctx context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	add := func(name, verdict, found, do string) {
		out = append(out, Check{Name: name, Verdict: verdict, Found: found, Do: do})
	}
	if cfg.Storage.Engine == config.EnginePostgres || dirExists(cfg.DataDir) {
		octx, cancel := context.WithTimeout(ctx, 15*time.Second)
		db, err := settings.OpenStore(octx, cfg, settings.HostID(cfg), nil)
		cancel()
		switch {
		case err != nil && strings.Contains(err.Error(), "in use by another process"):
			add("database", VerdictOK, "held by the running clawhost", "")
		case err != nil:
			add("database", VerdictFail, err.Error(), "see the error; for PostgreSQL check storage.url and that the server is reachable")
		default:
			db.Close()
			add("database", VerdictOK, settings.StorageName(cfg)+" opens, schema up to date", "")
		}
	}
	return out
}

// doctorBinaries checks the enabled plugins' binaries and checksums, and
// that none is of another installed release than this clawhost.
func doctorBinaries(_ context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	add := func(name, verdict, found, do string) {
		out = append(out, Check{Name: name, Verdict: verdict, Found: found, Do: do})
	}
	self, _ := os.Executable()
	for _, p := range cfg.EnabledPlugins() {
		name := fmt.Sprintf("plugin %q", p.Name)
		if c, ok := otherRelease(self, p.Path); ok {
			c.Name = name
			out = append(out, c)
		}
		f, err := os.Open(p.Path)
		if err != nil {
			add(name, VerdictFail, p.Path+": "+err.Error(), "make build (or set path) for "+p.Source)
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		sum := hex.EncodeToString(h.Sum(nil))
		switch {
		case err != nil:
			add(name, VerdictFail, err.Error(), "")
		case p.SHA256 != "" && !strings.EqualFold(p.SHA256, sum):
			add(name, VerdictFail, "the binary's sha256 is "+sum+", not the configured "+p.SHA256, "build the pinned version, or update sha256 if you trust this binary")
		case p.SHA256 == "":
			add(name, VerdictOK, p.Path+" (not pinned: sha256 = \""+sum+"\" would pin it)", "")
		default:
			add(name, VerdictOK, p.Path+", checksum matches", "")
		}
	}
	return out
}

// otherRelease is a warning when the plugin binary at plugin is in
// another install.sh release directory than the clawhost at self (an
// upgrade left plugin_dir naming the old release): a plugin is built
// with its release's host and protocol in mind.
func otherRelease(self, plugin string) (Check, bool) {
	mine, theirs, other := installpath.OtherRelease(self, plugin)
	if !other {
		return Check{}, false
	}
	dir := filepath.Dir(self)
	if real, err := filepath.EvalSymlinks(self); err == nil {
		dir = filepath.Dir(real)
	}
	return Check{Verdict: VerdictWarn,
		Found: fmt.Sprintf("%s is clawhost %s's plugin; this clawhost is %s", plugin, theirs, mine),
		Do:    fmt.Sprintf("use this release's plugins: plugin_dir = %q (or the plugin's path), then restart", installpath.Current(dir))}, true
}

// doctorPorts checks the addresses the host binds.
func doctorPorts(_ context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	add := func(name, verdict, found, do string) {
		out = append(out, Check{Name: name, Verdict: verdict, Found: found, Do: do})
	}
	host, hostUp := runningHost(cfg.DataDir)
	for _, l := range listens(cfg) {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			answers := running(l.addr)
			switch {
			case answers && cfg.Admin.Listen == "":
				// No admin endpoint, so no admin.RuntimeFile to tell a running
				// host by: likely this configuration's own.
				add(l.name, VerdictOK, l.addr+" answers (clawhost is running, most likely)", "")
			case answers && hostUp:
				add(l.name, VerdictOK, fmt.Sprintf("%s answers (clawhost is running: pid %d, admin endpoint %s)", l.addr, host.PID, host.Listen), "")
			case answers:
				add(l.name, VerdictFail, l.addr+" is in use by another program: no clawhost of this data_dir runs ("+admin.RuntimeFile+" names no live process)",
					"stop what listens there (ss -ltnp shows it) or choose another address")
			default:
				add(l.name, VerdictFail, l.addr+": "+err.Error(), "stop what listens there or choose another address")
			}
			continue
		}
		ln.Close()
		add(l.name, VerdictOK, l.addr+" is free", "")
	}
	return out
}

// doctorMemory checks memory for agent.max_warm warm claude processes.
func doctorMemory(_ context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	add := func(name, verdict, found, do string) {
		out = append(out, Check{Name: name, Verdict: verdict, Found: found, Do: do})
	}
	total := procmem.MemTotal()
	if w := WarmMemoryWarning(cfg.Agent, total); w != "" {
		add("memory", VerdictWarn, w, "lower agent.warm_memory")
	} else if total > 0 {
		ceiling, setting := warmCeiling(cfg.Agent, total)
		add("memory", VerdictOK, fmt.Sprintf("%d MB; warm claude processes hold up to %d MB (%s)", total>>20, ceiling>>20, setting), "")
	}
	return out
}

// doctorClaude checks every agent's claude CLI.
func doctorClaude(ctx context.Context, cfg *config.Config, _ *pluginhost.Supervisor) []Check {
	var out []Check
	rc, err := settings.Runner(cfg)
	if err != nil {
		return []Check{{Name: "claude CLI", Verdict: VerdictFail, Found: err.Error(), Do: "fix the agent blocks (clawhost validate)"}}
	}
	seen := map[string]bool{}
	profiles := append([]*config.Agent{cfg.Agent}, cfg.Agents...)
	for _, a := range profiles {
		if seen[a.Command] {
			continue
		}
		seen[a.Command] = true
		name := "claude CLI (agent " + a.ID + ")"
		found, err := installpath.FindCommand(a.Command)
		if err != nil {
			out = append(out, Check{Name: name, Verdict: VerdictFail, Found: err.Error(), Do: "npm install -g @anthropic-ai/claude-code (or make claude-cli), or set agent.command to its path"})
			continue
		}
		at := " at " + found.Path + " (" + found.Where + ")"
		c := rc
		if a.ID != cfg.Agent.ID {
			for _, ag := range rc.Agents {
				if ag.Name == a.ID {
					c = ag
				}
			}
		}
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		v, auth, err := c.Probe(pctx, 0)
		cancel()
		switch {
		case err != nil:
			out = append(out, Check{Name: name, Verdict: VerdictWarn, Found: err.Error(), Do: "run the command by hand to see why"})
		case !auth.LoggedIn:
			out = append(out, Check{Name: name, Verdict: VerdictFail, Found: "claude " + v + at + " is not logged in (claude auth status)",
				Do: "log it in with CLAUDE_CONFIG_DIR=" + c.ConfigDir + " (claude /login, or claude setup-token), or set ANTHROPIC_API_KEY in agent.env"})
		case v != TestedClaudeVersion:
			out = append(out, Check{Name: name, Verdict: VerdictWarn, Found: "claude " + v + at + ", logged in with " + auth.AuthMethod + "; clawhost is tested with " + TestedClaudeVersion,
				Do: "it usually works; npm install -g @anthropic-ai/claude-code@" + TestedClaudeVersion + " for the tested one"})
		default:
			out = append(out, Check{Name: name, Verdict: VerdictOK, Found: "claude " + v + at + ", logged in with " + auth.AuthMethod})
		}
		if err == nil && auth.LoggedIn {
			out = append(out, doctorRequest(ctx, a.ID, c))
		}
	}
	return out
}

// doctorRequest makes one minimal real request with agent id's claude (runner.Config.Ask):
// `claude auth status` only reads files, so a key the API refuses, or a login that
// expired, shows only here.
func doctorRequest(ctx context.Context, id string, c runner.Config) Check {
	name := "claude answers (agent " + id + ")"
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	a, err := c.Ask(actx)
	switch {
	case err != nil:
		return Check{Name: name, Verdict: VerdictWarn, Found: "one request through claude did not run: " + err.Error(), Do: "run claude -p by hand with the bot's CLAUDE_CONFIG_DIR to see why"}
	case a.OK:
		return Check{Name: name, Verdict: VerdictOK, Found: "one minimal request was answered"}
	case a.Refused():
		return Check{Name: name, Verdict: VerdictFail, Found: "the API refused claude's credentials: " + a.Message,
			Do: "set a valid ANTHROPIC_API_KEY in agent.env (or clawhost.env), or log claude in again with CLAUDE_CONFIG_DIR=" + c.ConfigDir + " (claude /login, or claude setup-token)"}
	default:
		return Check{Name: name, Verdict: VerdictWarn, Found: "one minimal request was not answered: " + a.Message, Do: "check the network, a proxy in agent.env, or try again later"}
	}
}

type dirCheck = struct{ name, path string }

// workspaces are the agents' workspaces, each once.
func workspaces(cfg *config.Config) []dirCheck {
	var out []dirCheck
	seen := map[string]bool{}
	for _, a := range cfg.AllAgents() {
		if !seen[a.Workspace] {
			seen[a.Workspace] = true
			out = append(out, dirCheck{"workspace (agent " + a.ID + ")", a.Workspace})
		}
	}
	return out
}

type listenCheck struct{ name, addr string }

// listens are the addresses the host binds: the admin endpoint, and each
// enabled plugin block's listen attribute (the web chat's page): by
// convention a plugin's listen is the address it serves people on. A
// block without one is not checked here (its default is the plugin's; its
// probe says where it serves).
func listens(cfg *config.Config) []listenCheck {
	var out []listenCheck
	if cfg.Admin.Listen != "" {
		out = append(out, listenCheck{"admin endpoint", cfg.Admin.Listen})
	}
	for _, p := range cfg.EnabledPlugins() {
		if a := cfg.Attribute("plugin", p.Name, "config", "listen"); a != nil {
			if v, ok := cfg.StringValue(a); ok && v != "" {
				out = append(out, listenCheck{fmt.Sprintf("plugin %q listen", p.Name), v})
			}
		}
	}
	return out
}

// runningHost is the host data_dir's admin.RuntimeFile names when that process
// is alive: then an address of this configuration in use is (most likely)
// that host's own, not another program's.
func runningHost(dataDir string) (admin.Runtime, bool) {
	r, err := admin.ReadRuntime(dataDir)
	if err != nil || r.PID <= 0 {
		return r, false
	}
	p, err := os.FindProcess(r.PID)
	if err != nil {
		return r, false
	}
	return r, p.Signal(syscall.Signal(0)) == nil
}

// running reports whether something answers HTTP at addr.
func running(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// existing is p or its nearest existing parent.
func existing(p string) string {
	for !dirExists(p) && filepath.Dir(p) != p {
		p = filepath.Dir(p)
	}
	return p
}

// TestedClaudeVersion is the claude CLI version clawhost is tested with
// (the Makefile's CLAUDE_VERSION); another works, and the status page
// says it differs.
const TestedClaudeVersion = "2.1.330"

// claudeRSS is what one warm claude process holds resident (measured with
// the CLI 2.1.330: 184–210 MB; shared/reference/claude-cli.md §10).
const claudeRSS = 210 << 20

// warmCeiling is what the default agent's warm claude processes may hold
// together on a machine of total bytes (0 unknown), and the setting that
// says so: agent.warm_memory (or its default), or agent.max_warm × ~210 MB
// when that is less.
func warmCeiling(a *config.Agent, total int64) (int64, string) {
	budget, setting := a.WarmMemory.Bytes(), fmt.Sprintf("agent.warm_memory = %q", a.WarmMemory)
	if budget == 0 {
		budget, setting = runner.DefaultWarmMemory(total), "agent.warm_memory (default: a quarter of the machine's memory)"
	}
	if a.MaxWarm > 0 && int64(a.MaxWarm)*claudeRSS < budget {
		budget, setting = int64(a.MaxWarm)*claudeRSS, fmt.Sprintf("agent.max_warm = %d", a.MaxWarm)
	}
	return budget, setting
}

// WarmMemoryWarning is the warning for warm processes on a machine of
// total bytes ("" none; none when total is unknown).
func WarmMemoryWarning(a *config.Agent, total int64) string {
	ceiling, setting := warmCeiling(a, total)
	if total == 0 || ceiling <= total/3 {
		return ""
	}
	return fmt.Sprintf("%s lets warm claude processes (~210 MB each) hold up to %d MB on a machine with %d MB: more than a third of its memory. Lower it (a chat whose claude was stopped starts one again, ~1 s) or add memory.",
		setting, ceiling>>20, total>>20)
}

// Writable checks that a file can be made in dir (doctor's data_dir
// check, and the daemon's before any plugin starts).
func Writable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
