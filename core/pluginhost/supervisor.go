// Package pluginhost discovers, launches, verifies, supervises, restarts and
// stops clawhost plugins.
//
// Each configured instance (plugin "<name>" { ... }) runs as its own process,
// even when two instances share a binary. An instance moves through the
// states starting → ready, and to degraded when its process exits or fails
// to start; a degraded instance is restarted with capped exponential backoff
// (first restart within 100 ms, doubling up to 30 s, reset once the instance
// stayed ready for StablePeriod). A running plugin also reports its own
// state (sdk/status): needs_attention when a person must act (a rejected
// token, a QR code to scan; see Instance.Retry) and degraded when what it
// depends on fails; neither is restarted (attention.go). Stop ends every plugin: SIGTERM to its
// process group first, SIGKILL after DefaultStopGrace (see
// procRunner.terminate). Plugins also die with the host when it is
// SIGKILLed: they are started with Pdeathsig, and the sdk's watchdog exits
// when the parent process is gone.
//
// A plugin does not inherit the host's environment: it gets PATH, HOME,
// TMPDIR, USER, LOGNAME, LANG, LC_* and TZ, GOMAXPROCS=1 (pluginDefaults),
// the variables its plugin block names (Spec.Env) and the host's own (the
// go-plugin handshake, sdk.EnvLogLevel); see pluginEnv. A plugin whose
// block sets untrusted_input (Spec.Untrusted) runs inside bubblewrap, with
// its data dir as HOME and /tmp as TMPDIR (untrusted.go).
//
// Inbound messages of channel plugins are handed to the Inbound function;
// they are acked to the plugin only after it returned nil (the message is
// durably stored), so a message survives the death of either process. When
// it fails (the store is locked or full) the batch is nacked and the plugin
// sends it again after a delay that grows while the store keeps failing
// (first 250 ms, doubling up to 10 s, reset by the next stored batch); see
// pump.
package pluginhost

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/pluginstderr"
	"github.com/clawhost/clawhost/core/internal/tstime"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// Spec is what to run for one plugin instance.
type Spec struct {
	// Instance is the instance name (the plugin block's label).
	Instance string
	// Source is the plugin name; informational once Path is resolved.
	Source string
	// Path is the plugin binary.
	Path string
	// SHA256 is the expected hex checksum of Path; empty skips the check.
	SHA256 string
	// StartTimeout bounds the handshake; zero means 10 s.
	StartTimeout time.Duration
	// Env is extra environment for the plugin process ("NAME=value"): the
	// plugin block's env attribute. It is added to the few host variables a
	// plugin inherits (see pluginEnv) and may override them, but not the
	// handshake's. The values may be secrets: never log them.
	Env []string
	// DataDir is the instance's private directory (created 0700).
	DataDir string
	// RunAs, when set, is the user (a name or uid) the plugin process runs
	// as (plugin run_as; the host runs as root), looked up at each start:
	// DataDir is made that user's, HOME, USER and LOGNAME are its, and its
	// socket directory is its group's.
	RunAs string
	// Untrusted runs the plugin inside bubblewrap, granted only the system's
	// files, its binary, DataDir and ReadOnly (untrusted_input; see
	// untrusted.go). A host that cannot run bubblewrap does not start it
	// (StateNoSandbox).
	Untrusted bool
	// ReadOnly are directories an untrusted plugin reads besides the
	// system's: the agents' media directories, where the attachments a hook
	// is handed are. Each is made (0700) when missing, before the plugin
	// starts. Ignored unless Untrusted.
	ReadOnly []string
	// Fingerprint changes whenever anything about the instance changes;
	// Apply restarts an instance whose fingerprint changed.
	Fingerprint string
	// Decode decodes the instance's config block against the schema the
	// plugin declared, returning the JSON for Configure.
	Decode func(schema.Schema) ([]byte, error)
	// Explain formats the diagnostics the plugin's own checks returned
	// (Validate, Configure) for the operator, at the file:line:col of the
	// values they name; s is the schema the plugin declared. Nil: plain
	// text.
	Explain func(s schema.Schema, diags schema.Diagnostics) string
}

// InboundFunc stores inbound messages of a channel instance durably. It
// returns nil only when all of msgs are stored; then they are acked. An
// error nacks them all: the plugin sends them again later, so a retry may
// carry messages the failed call did store (the store dedupes them).
type InboundFunc func(ctx context.Context, instance string, msgs []channel.InboundMessage) error

// Options configure a Supervisor.
type Options struct {
	Logger hclog.Logger
	// Clock times restarts (backoff, stable period), the liveness probe,
	// the retry of inbound messages the store refused and the states'
	// times; nil: the real one. Waits on a plugin process (its handshake,
	// its kill grace) are real time.
	Clock tstime.Clock
	// Inbound receives channel messages; nil drops them (and never acks).
	Inbound InboundFunc
	// Invite decides the bot's invitations (capability invites), which
	// the pump answers before the ack and never hands to Inbound.
	Invite InviteFunc
	// OnReady is called each time an instance becomes ready (after a start
	// or restart), e.g. to publish the command menu. May be nil.
	OnReady func(inst *Instance)
	// FirstBackoff, MaxBackoff and StablePeriod tune restarts; zero values
	// mean 50 ms, 30 s and 60 s.
	FirstBackoff, MaxBackoff, StablePeriod time.Duration
	// InboundRetryFirst and InboundRetryMax bound how long a plugin waits
	// before it sends again after Inbound failed: the first failure waits
	// InboundRetryFirst, each further one twice as long up to
	// InboundRetryMax, and a stored batch resets it. Zero values mean
	// 250 ms and 10 s.
	InboundRetryFirst, InboundRetryMax time.Duration
	// LogLevel is passed to plugins.
	LogLevel string
	// ProbeInterval is how often a ready plugin is probed for liveness,
	// ProbeTimeout how long it has to answer; zero values mean 15 s and
	// 5 s. A plugin that does not answer is killed and restarted.
	ProbeInterval, ProbeTimeout time.Duration
	// StopGrace is how long a plugin may take to exit after SIGTERM before
	// its process group is killed; zero means DefaultStopGrace.
	StopGrace time.Duration
	// Reattach maps instance names to plugins an author started by hand in
	// debug mode (pluginclient.ParseReattach of CLAWHOST_REATTACH): those
	// instances attach to the running process instead of launching their
	// binary. `clawhost validate`'s Probe always launches.
	Reattach map[string]*pluginclient.Reattach
	// Gate, when set, decides where channel instances run: a channel
	// instance is configured (and so starts polling its platform) only
	// while it holds the gate, and waits in StateStandby before. Nil:
	// every instance runs.
	Gate Gate
	// Hold, when set, keeps every instance from being configured until it
	// is closed: its process starts, hands shake and declares (Declared)
	// meanwhile. The host's start holds its plugins while it learns whether
	// claude can be sandboxed here, which decides whether it may start at
	// all; it never closes Hold when it refuses. Nil: no hold.
	Hold <-chan struct{}

	// afterVerify, when set (tests), runs between a binary's checksum and
	// its exec.
	afterVerify func(path string)
	// bubblewrap, when set (tests), is looked up instead of bwrap for
	// untrusted plugins.
	bubblewrap string
}

// DefaultStopGrace is how long a stopped plugin (Stop, a reload that
// disables or changes it) may take to exit after SIGTERM before its process
// group gets SIGKILL. Long enough for a channel to finish a send in flight
// and close its platform connection; short enough that a reload or a
// shutdown does not hang on a plugin that ignores the signal.
const DefaultStopGrace = 5 * time.Second

// Supervisor supervises a set of plugin instances.
type Supervisor struct {
	opts Options
	log  hclog.Logger

	mu        sync.Mutex
	instances map[string]*Instance
	stopped   bool

	sockOnce sync.Once
	sockDir  string // see socketDir
}

// New returns a Supervisor with no instances.
func New(opts Options) *Supervisor {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	opts.Clock = tstime.Or(opts.Clock)
	if opts.FirstBackoff <= 0 {
		opts.FirstBackoff = 50 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.StablePeriod <= 0 {
		opts.StablePeriod = 60 * time.Second
	}
	if opts.ProbeInterval <= 0 {
		opts.ProbeInterval = 15 * time.Second
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 5 * time.Second
	}
	if opts.InboundRetryFirst <= 0 {
		opts.InboundRetryFirst = 250 * time.Millisecond
	}
	if opts.InboundRetryMax <= 0 {
		opts.InboundRetryMax = 10 * time.Second
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = DefaultStopGrace
	}
	return &Supervisor{opts: opts, log: opts.Logger.Named("pluginhost"), instances: map[string]*Instance{}}
}

// Apply reconciles the running set with specs: new instances start, missing
// ones stop, instances whose Fingerprint changed restart, the others are
// untouched.
func (h *Supervisor) Apply(specs []Spec) {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	want := map[string]Spec{}
	for _, s := range specs {
		want[s.Instance] = s
	}
	var stop []*Instance
	for name, inst := range h.instances {
		s, ok := want[name]
		// A missing or misconfigured instance is tried again on every
		// reload: the binary may be built now, the plugin's own checks
		// may pass.
		if !ok || s.Fingerprint != inst.spec.Fingerprint || inst.Status().State.settled() {
			stop = append(stop, inst)
			delete(h.instances, name)
		}
	}
	var start []*Instance
	for name, s := range want {
		if _, ok := h.instances[name]; ok {
			continue
		}
		inst := newInstance(h, s)
		inst.reattach = h.opts.Reattach[name]
		h.instances[name] = inst
		start = append(start, inst)
	}
	h.mu.Unlock()

	var wg sync.WaitGroup
	for _, inst := range stop {
		wg.Add(1)
		go func() { defer wg.Done(); inst.stop() }()
	}
	wg.Wait()
	for _, inst := range start {
		go inst.supervise()
	}
}

// Stop stops every instance and waits for their processes to end.
func (h *Supervisor) Stop() {
	h.mu.Lock()
	h.stopped = true
	all := make([]*Instance, 0, len(h.instances))
	for _, inst := range h.instances {
		all = append(all, inst)
	}
	h.instances = map[string]*Instance{}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, inst := range all {
		wg.Add(1)
		go func() { defer wg.Done(); inst.stop() }()
	}
	wg.Wait()
	h.sockOnce.Do(func() {}) // none made from now on; and sockDir is read after it was set
	if h.sockDir != "" {
		os.RemoveAll(h.sockDir)
	}
}

// Instance returns the named instance, or nil.
func (h *Supervisor) Instance(name string) *Instance {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.instances[name]
}

// Instances returns all instances sorted by name.
func (h *Supervisor) Instances() []*Instance {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Instance, 0, len(h.instances))
	for _, inst := range h.instances {
		out = append(out, inst)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].spec.Instance < out[j].spec.Instance })
	return out
}

// Instance is one supervised plugin instance.
type Instance struct {
	h    *Supervisor
	spec Spec
	log  hclog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	state    State
	restarts int
	lastErr  error
	since    time.Time
	pid      int
	plug     *pluginclient.Plugin
	desc     pluginclient.Description
	readyCh  chan struct{} // closed while callable (state.go); replaced when it stops being
	// sendFailed: a send to the instance, degraded with its process up,
	// failed (callable); reset by the next change of state.
	sendFailed bool
	probeErr   error             // set when the liveness probe killed the run
	holdLost   bool              // the run ended because its gate hold was lost
	standby    string            // why a channel waits in standby
	tail       *pluginstderr.Log // the current process's last stderr lines
	// reattach, when set, is the debug-mode process to attach to instead
	// of launching the binary (Options.Reattach).
	reattach *pluginclient.Reattach

	// What the plugin reports about itself (attention.go): rmu orders the
	// reports with the start and end of runs; gen numbers runs, so a late
	// report of an ended run is dropped; up is set while the current run
	// serves; report is its latest report.
	rmu    sync.Mutex
	gen    int
	up     bool
	report status.Status

	// decl is its first declaration (declared.go), on mu.
	decl declaration
}

func newInstance(h *Supervisor, s Spec) *Instance {
	ctx, cancel := context.WithCancel(context.Background())
	return &Instance{h: h, spec: s, log: h.opts.Logger.Named(s.Instance), ctx: ctx, cancel: cancel, done: make(chan struct{}), state: StateStarting, since: h.opts.Clock.Now(), readyCh: make(chan struct{}),
		decl: declaration{done: make(chan struct{})}}
}

// Name returns the instance name.
func (i *Instance) Name() string { return i.spec.Instance }

// Client returns the plugin client and description if the instance takes
// calls now: ready, or degraded with its process up (callable).
func (i *Instance) Client() (*pluginclient.Plugin, pluginclient.Description, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.callable() {
		return nil, pluginclient.Description{}, false
	}
	return i.plug, i.desc, true
}

// WaitReady blocks until the instance is ready (or callable: degraded with
// its process up) or ctx ends; it fails at
// once for a stopped, missing or misconfigured instance, and for one that
// needs attention (with a non-retryable *channel.Error naming what the
// plugin asked for, so delivery gives up instead of retrying).
func (i *Instance) WaitReady(ctx context.Context) (*pluginclient.Plugin, pluginclient.Description, error) {
	for {
		i.mu.Lock()
		ch, st, ok := i.readyCh, i.state, i.callable()
		plug, desc := i.plug, i.desc
		i.mu.Unlock()
		if ok {
			return plug, desc, nil
		}
		if st == StateStopped || st.settled() {
			// A settled instance waits for a reload, not for time.
			return nil, pluginclient.Description{}, fmt.Errorf("plugin %s is %s", i.spec.Instance, st)
		}
		if st == StateNeedsAttention {
			// It waits for a person, who may take days: fail now.
			return nil, pluginclient.Description{}, i.attentionError()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, pluginclient.Description{}, fmt.Errorf("plugin %s not ready: %w", i.spec.Instance, ctx.Err())
		}
	}
}

func (i *Instance) stop() {
	i.cancel()
	<-i.done
}
