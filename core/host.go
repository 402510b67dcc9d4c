// Package core assembles the clawhost daemon: [Host] opens the store,
// starts the claude runner, the plugin host and the conversation pipeline
// (core/gateway) with its stages, serves the admin endpoint, and reloads or
// shuts all of it down. The subcommands are core/cli; core/cmd/clawhost is
// their main. This package holds the daemon's lifecycle only (at most
// 2,000 lines and 10 exported names: core/archtest); what it composes are
// packages of their own, which never import it:
//
//	core/settings        the configuration mapped onto the pipeline, the
//	                     runner, the plugin specs and the store
//	core/doctor          clawhost doctor's checks
//	core/pairing         the pairing lifecycle (admin endpoint, CLI, /revoke)
//	core/schedules       the configured and chat-added schedules
//	core/sandboxreach    no unsandboxed claude for strangers
//	core/pluginprobe     a plugin checked, described or run outside the pipeline
//	core/configaudit     clawhost security audit's view of the file
//	core/reports         the usage ledger and audit trail as the admin endpoint shows them
//	core/health          the agent and store items of the host's health
//
// Packages of the core, by layer (core/archtest enforces the direction;
// docs/architecture.md lists them all, docs/where-a-change-goes.md says
// which one a change belongs in):
//
//	core                 this package: composition of the daemon
//	core/gateway         composition of the pipeline (intake, routing, built-ins)
//	core/access, command, queue, turn, delivery
//	                     the pipeline's stages; none imports another
//	core/store (+ engines), runner, pluginhost, config, admin, metrics,
//	message, chunk, envelope, reply, sessionkey, sessionreset, debounce,
//	redact, securityaudit
//	                     leaves: each imports no other core package
//	                     (message and the store contract aside)
//
// Lifecycle, as caddy's modules: New (decode and provision: open and
// check everything, start nothing that serves) → Run (apply the plugins,
// recover the journal, serve) → Reload (validated config; the running set
// changes only by what changed) → Shutdown (stop intake, finish or park
// turns, stop plugins and claude, close the store), also after a partial
// start.
package core

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/agenttools"
	"github.com/clawhost/clawhost/core/cluster"
	"github.com/clawhost/clawhost/core/health"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/clawhost/clawhost/core/schedules"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/core/workspace"
	"github.com/clawhost/clawhost/core/worktree"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/attach"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/procpace"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/mediaprune"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/redact"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/status"
)

// LogTimeFormat is the time at the start of every log line: RFC 3339 with
// milliseconds and the offset as +01:00 (hclog's default writes +0100,
// which RFC 3339 parsers refuse).
const LogTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Options configure a Host.
type Options struct {
	// Version is shown by /status, the status page and the log.
	Version string
	// ReloadEnv, when not nil, reads the environment file again (clawhost.env beside
	// the configuration) before a reload loads the configuration, so that a token added
	// there is seen; it returns the names of the variables that changed. An error
	// refuses the reload.
	ReloadEnv func() ([]string, error)
	// LogOutput receives the log; nil means os.Stderr.
	LogOutput io.Writer
	// Terminal, when not nil, is the operator's terminal: the links that
	// hold a secret (the status page's and a plugin's, with their tokens)
	// are printed there at start, never through the log. The command sets
	// it to stderr when stderr is a terminal; nil (a service, a pipe) has
	// the log say where the token is kept instead.
	Terminal io.Writer
}

// Host is a running clawhost.
type Host struct {
	opts    Options
	cfg     *config.Config
	log     hclog.InterceptLogger
	ring    *admin.ErrorRing
	started time.Time
	// redact replaces the configured secrets by value in the log, the
	// status snapshot and New's errors.
	redact *redact.Redactor

	db store.Store
	// agentHealth and storeHealth are the agent and store items of the
	// health (/healthz, the status page, clawhost status).
	agentHealth *health.Agent
	storeHealth *health.Store
	agent       *runner.Runner
	attach      *attach.Hub // the chats a terminal claude is attached to, in front of agent
	metrics     *metrics.Metrics
	gw          *gateway.Gateway
	plugins     *pluginhost.Supervisor
	// ready is the one readiness gate: the gateway closes it once the
	// journal is recovered. The plugins start before the gateway exists;
	// their messages wait on it.
	ready chan struct{}
	quit  chan struct{} // closed at Shutdown
	admin *admin.Server

	reloadMu   sync.Mutex
	reloading  sync.Mutex    // one reload at a time (SIGHUP, POST /reload)
	lastReload *admin.Reload // nil until the first reload
	doctor     doctorRuns    // the status page's checks

	schedules *schedules.Scheduler
	tools     *agenttools.Endpoint // the agent's own tools
	// toolGrants are the agents' plugin tools as the tools endpoint reads
	// them (a reload swaps the configuration).
	toolGrants *pluginToolGrants
	turns      *agentTurns // the gateway as the tools see it
	// media deletes attachments older than agent.media_keep.
	media *mediaprune.Pruner
	// agentMedia prune the named agents' workspaces' media, by agent id.
	agentMedia map[string]*mediaprune.Pruner

	linksMu sync.Mutex
	links   map[string]string // instance -> the link last announced
	cluster *cluster.Cluster  // nil unless the database is shared

	// sandbox is the agent's sandbox as the runner found it at the start
	// (runner.Runner.SandboxState): a reload keeps it.
	sandbox string
}

// New provisions a Host for a valid configuration: directories, the
// store, the runner, the plugin host and the pipeline. Nothing is started;
// on error everything opened so far is closed.
func New(cfg *config.Config, opts Options) (*Host, error) {
	if opts.LogOutput == nil {
		opts.LogOutput = os.Stderr
	}
	h := &Host{opts: opts, cfg: cfg, quit: make(chan struct{}), ring: admin.NewErrorRing(admin.DefaultErrorRingSize), started: time.Now(), redact: redact.New(configSecrets(cfg)...)}
	h.log = hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name: "clawhost", Level: hclog.LevelFromString(cfg.LogLevel), Output: h.redact.Writer(opts.LogOutput), JSONFormat: cfg.LogFormat == "json",
		TimeFormat: LogTimeFormat,
	})
	h.media = mediaprune.New(mediaprune.Options{Logger: h.log})
	h.log.RegisterSink(h.ring)
	if err := h.provision(); err != nil {
		if h.plugins != nil {
			h.plugins.Stop()
		}
		if h.db != nil {
			_ = h.db.Close()
		}
		return nil, h.redact.Error(err)
	}
	return h, nil
}

// prepareDirs checks the agents' worktree workspaces and makes data_dir.
func prepareDirs(cfg *config.Config) error {
	dirs := []string{cfg.DataDir}
	for _, a := range cfg.AllAgents() {
		if a.Worktrees {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := worktree.Check(ctx, a.Workspace)
			cancel()
			if err != nil {
				return fmt.Errorf("agent %q: worktrees: %w", a.ID, err)
			}
		}
	}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
	}
	return nil
}

// Logger is the host's logger.
func (h *Host) Logger() hclog.Logger { return h.log }

func (h *Host) provision() error {
	if err := h.prepareWorkspaces(); err != nil {
		return err
	}
	rc, err := settings.Runner(h.cfg)
	if err != nil {
		return fmt.Errorf("agent configuration: %w", err)
	}
	if err := rc.Validate(); err != nil {
		return fmt.Errorf("agent configuration: %w", err)
	}
	logClaudeCommands(h.cfg, h.log)
	// runner.New names its logger "runner" itself; it probes the sandbox in
	// the background.
	if h.agent, err = runner.New(rc, h.log); err != nil {
		return fmt.Errorf("agent configuration: %w", err)
	}
	// The plugins start meanwhile, held before their configuration (none
	// reaches its platform or takes a message) until the host knows it may
	// start: without a sandbox, a configuration that lets strangers reach
	// the agent is refused. Each plugin's binary runs once: the forms of the
	// configuration's ids are what its process declares of itself
	// (normalizeDeclaredIDs), not a probe process's.
	hold := make(chan struct{})
	if err := h.startPlugins(hold); err != nil {
		return err
	}
	h.sandbox = h.agent.SandboxState()
	var set gateway.Settings
	_, unsandboxed := runner.SandboxUnavailable(h.sandbox)
	if unsandboxed {
		if set, err = h.pipelineSettings(); err != nil {
			return err
		}
		if err := sandboxreach.Check(h.cfg, set.Access, h.sandbox, sandboxreach.Probe(nil)); err != nil {
			return err
		}
	}
	close(hold)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := settings.OpenStore(ctx, h.cfg, settings.HostID(h.cfg), h.log.Named("store"))
	if err != nil {
		return fmt.Errorf("%w%s", err, settings.StorageAt(h.cfg))
	}
	h.log.Debug("storage open", "storage", settings.StorageName(h.cfg))
	h.db = db
	if !unsandboxed {
		if set, err = h.pipelineSettings(); err != nil {
			return err
		}
	}
	// The data directory is this host's now (the store's lock): what a run killed with -9
	// left of its claudes' TMPDIRs goes.
	h.agent.RemoveLeftovers()
	h.metrics = metrics.New()
	h.agentHealth = health.NewAgent(h.cfg, h.agent.Config(), h.log)
	warnWarmMemory(h.cfg, h.log)
	h.storeHealth = health.NewStore(h.metrics.StoreError)
	h.schedules = schedules.New(db, h.log.Named("schedule"), func(ctx context.Context, r gateway.ScheduledRun) error { return h.gw.Scheduled(ctx, r) }, schedules.Poll(h.cfg))
	h.turns = &agentTurns{}
	h.toolGrants = &pluginToolGrants{}
	h.toolGrants.set(h.cfg)
	h.tools = agenttools.New(agenttools.Options{Logger: h.log, Schedules: h.schedules, RunAs: claudeUsers(rc), Turns: h.turns,
		PluginTools: h.plugins.Ports(), Grants: h.toolGrants,
		Audit: func(ctx context.Context, e store.AuditEvent) {
			if err := db.Audit(ctx, e); err != nil {
				h.log.Error("audit trail write failed", "kind", e.Kind, "error", err)
			}
		}, Results: db})
	h.attach = attach.New(attach.Options{Inner: h.agent, Fallback: attach.RunnerFallback(h.agent.Config), Audit: attach.StoreAudit(context.Background(), db, h.log),
		StateFile: filepath.Join(h.cfg.DataDir, attach.StateFileName), Grace: attach.DefaultGrace})
	gopts := gateway.Options{Ready: h.ready, Detach: func(k sessionkey.Key, m *message.Message) string {
		return h.attach.Detach(h.gw.Access().Policy(), k.String(), m)
	},
		Logger: h.log, Store: health.Recording(db, h.storeHealth), Agent: h.attach, ChatState: h.agent, Ports: h.plugins.Ports(), Observer: health.Observer{Metrics: h.metrics, Agent: h.agentHealth},
		Settings: set, MemoryFlush: settings.MemoryFlush(h.cfg.Agent.MemoryFlush), Version: h.opts.Version,
		Schedules: h.schedules, AgentTools: h.tools.Tools, ProcessTools: h.tools, ToolRun: h.tools.ToolRun,
		Revoker:       h.pairingAPI("").Revoker(),
		OwnerClaims:   ownerclaim.New(h.cfg.DataDir, nil),
		AgentEndSpool: filepath.Join(h.cfg.DataDir, "agent-end"),
	}
	if h.cluster != nil {
		cl, ok := db.(store.Cluster)
		if !ok {
			return fmt.Errorf("storage %s cannot be shared by several hosts", settings.StorageName(h.cfg))
		}
		h.cluster.Attach(cl)
		gopts.Ports = h.cluster.Ports(h.plugins.Ports())
		gopts.Placement = h.cluster.Placement()
	}
	h.gw = gateway.New(gopts)
	h.turns.gw = h.gw
	if h.cluster != nil {
		h.cluster.SetWork(h.gw)
	}
	return nil
}

// prepareWorkspaces makes the data and run directories and bootstraps
// each agent's new workspace.
func (h *Host) prepareWorkspaces() error {
	if err := prepareDirs(h.cfg); err != nil {
		return err
	}
	if err := checkDataDir(h.cfg); err != nil {
		return err
	}
	for _, a := range h.cfg.AllAgents() {
		// A new workspace gets MEMORY.md and HEARTBEAT.md (never over a
		// file, never into a workspace that holds anything).
		wrote, err := workspace.Bootstrap(a.Workspace)
		if err != nil {
			return fmt.Errorf("agent %q: workspace %s: %w", a.ID, a.Workspace, err)
		}
		if len(wrote) > 0 {
			h.log.Info("new workspace: wrote its bootstrap files", "agent", a.ID, "files", wrote)
		}
	}
	return nil
}

// startPlugins starts the plugin host with the configured instances
// (attached to processes started by hand in debug mode), on a cluster's
// gate when several hosts share the database.
func (h *Host) startPlugins(hold <-chan struct{}) error {
	// The plugins start first: their processes start, handshake and
	// connect (Telegram's first long poll) while the database opens and
	// the journal recovers; their messages wait for the pipeline (inbound).
	// An author debugging a plugin starts it by hand and names it here.
	reattach, err := pluginclient.ParseReattach(os.Getenv(pluginclient.EnvReattach))
	if err != nil {
		return err
	}
	for name := range reattach {
		h.log.Warn("plugin instance attaches to a process started by hand (debug mode) instead of launching its binary", "instance", name, "env", pluginclient.EnvReattach)
	}
	h.ready = make(chan struct{})
	popts := pluginhost.Options{Logger: h.log, LogLevel: h.cfg.LogLevel, Inbound: h.inbound, Invite: h.invite, OnReady: h.pluginReady, Reattach: reattach, Hold: hold}
	if h.cfg.Storage.Engine == config.EnginePostgres {
		// Several hosts may share the database: each channel instance
		// runs on the one holding its lease.
		h.cluster = cluster.New(cluster.Options{HostID: settings.HostID(h.cfg), TTL: h.cfg.Storage.LeaseTTL.Duration(),
			Logger: h.log, Admin: h.cfg.Admin.Listen, Version: h.opts.Version})
		popts.Gate = h.cluster.Gate()
	}
	h.plugins = pluginhost.New(popts)
	h.plugins.Apply(withRedaction(settings.Plugins(h.cfg), h.redact))
	return nil
}

// claudeUsers are the users the agents' claude runs as (run_as), each once.
func claudeUsers(rc runner.Config) []*runas.User {
	var out []*runas.User
	seen := map[uint32]bool{}
	for _, c := range append([]runner.Config{rc}, slices.Collect(maps.Values(rc.Agents))...) {
		if u := c.RunAs; u != nil && !seen[u.UID] {
			seen[u.UID] = true
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(x, y *runas.User) int { return cmp.Compare(x.UID, y.UID) })
	return out
}

// inbound hands the plugins' messages to the pipeline once the journal is
// recovered (the plugins start before the database is open). A message
// arriving is work: the process paces up (core/internal/procpace).
func (h *Host) inbound(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
	procpace.Busy()
	select {
	case <-h.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.gw.Inbound(ctx, instance, msgs)
}

// invite decides an invitation of the bot once the pipeline is up
// (gateway.Invite). When ctx ends first the answer cannot reach the plugin
// either (its call fails with ctx), so the batch fails and the invite is
// decided on the next start.
func (h *Host) invite(ctx context.Context, instance string, in channel.InboundMessage) (bool, string) {
	select {
	case <-h.ready:
	case <-ctx.Done():
		return false, "the host is stopping"
	}
	return h.gw.Access().Invite(ctx, instance, in)
}

func (h *Host) pluginReady(inst *pluginhost.Instance) {
	st := inst.Status()
	if h.cluster != nil && st.Description.Channel {
		h.cluster.Ready(st.Instance, st.Description)
	}
	if a := st.Attention; a != nil && a.Kind == status.Link && st.State == pluginhost.StateReady {
		h.announcePluginLink(st.Instance, a.Data)
	}
	// The menu once the pipeline is up (after the journal's recovery,
	// which a cluster host starts only once it holds its lease).
	select {
	case <-h.ready:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.gw.RefreshCommands(ctx)
	default:
		go func() {
			select {
			case <-h.ready:
			case <-time.After(2 * time.Minute):
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			h.gw.RefreshCommands(ctx)
		}()
	}
}

// agentTurns is the pipeline as the send_file and react tools see it: the
// gateway is made after the tool endpoint, and set here before either
// serves.
type agentTurns struct{ gw *gateway.Gateway }

func (f *agentTurns) ReactTo(tgt message.Target, emoji string) error {
	return f.gw.ReactTo(tgt, emoji)
}

func (f *agentTurns) AttachFile(tgt message.Target, path, caption string) (string, error) {
	return f.gw.AttachFile(tgt, path, caption)
}
