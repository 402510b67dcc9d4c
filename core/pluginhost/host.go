// Package pluginhost discovers, launches, verifies, supervises, restarts and
// stops clawhost plugins.
//
// Each configured instance (plugin "<name>" { ... }) runs as its own process,
// even when two instances share a binary. An instance moves through the
// states starting → ready, and to degraded when its process exits or fails
// to start; a degraded instance is restarted with capped exponential backoff
// (first restart within 100 ms, doubling up to 30 s, reset once the instance
// stayed ready for StablePeriod). Stop ends every plugin: SIGTERM to its
// process group first, SIGKILL after DefaultStopGrace (see
// procRunner.terminate). Plugins also die with the host when it is
// SIGKILLed: they are started with Pdeathsig, and the sdk's watchdog exits
// when the parent process is gone.
//
// A plugin does not inherit the host's environment: it gets PATH, HOME,
// TMPDIR, USER, LOGNAME, LANG, LC_* and TZ, the variables its plugin block
// names (Spec.Env) and the host's own (the go-plugin handshake,
// sdk.EnvLogLevel); see pluginEnv.
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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
	"github.com/clawhost/clawhost/sdk/schema"
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
	// Fingerprint changes whenever anything about the instance changes;
	// Apply restarts an instance whose fingerprint changed.
	Fingerprint string
	// Decode decodes the instance's config block against the schema the
	// plugin declared, returning the JSON for Configure.
	Decode func(schema.Schema) ([]byte, error)
}

// State is the lifecycle state of an instance.
type State string

// States. Every failure is a state the operator sees (status page,
// /status.json, /metrics, `clawhost status`), with what to do in
// [Status.Action].
const (
	// StateStarting: the process is being launched, handshaked, configured.
	StateStarting State = "starting"
	// StateReady: serving.
	StateReady State = "ready"
	// StateDegraded: it crashed or failed to start; it is restarted with
	// backoff.
	StateDegraded State = "degraded"
	// StateMisconfigured: the plugin rejected its configuration (or the
	// configured sha256 does not match). It is not restarted in a loop; a
	// reload with a fixed block starts it again.
	StateMisconfigured State = "misconfigured"
	// StateMissing: the binary does not exist. One error names the path;
	// a reload (after building or installing it) tries again.
	StateMissing State = "missing"
	// StateUnresponsive: the liveness probe got no answer; the process is
	// killed and restarted (then degraded, starting, ready).
	StateUnresponsive State = "unresponsive"
	// StateStopped: stopped by the host.
	StateStopped State = "stopped"
)

// settled reports whether a state waits for a reload instead of a restart.
func (s State) settled() bool { return s == StateMisconfigured || s == StateMissing }

// runError is why a run ended in a settled state.
type runError struct {
	state State
	err   error
}

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// InboundFunc stores inbound messages of a channel instance durably. It
// returns nil only when all of msgs are stored; then they are acked. An
// error nacks them all: the plugin sends them again later, so a retry may
// carry messages the failed call did store (the store dedupes them).
type InboundFunc func(ctx context.Context, instance string, msgs []channel.InboundMessage) error

// Options configure a Host.
type Options struct {
	Logger hclog.Logger
	// Inbound receives channel messages; nil drops them (and never acks).
	Inbound InboundFunc
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
}

// DefaultStopGrace is how long a stopped plugin (Stop, a reload that
// disables or changes it) may take to exit after SIGTERM before its process
// group gets SIGKILL. Long enough for a channel to finish a send in flight
// and close its platform connection; short enough that a reload or a
// shutdown does not hang on a plugin that ignores the signal.
const DefaultStopGrace = 5 * time.Second

// Host supervises a set of plugin instances.
type Host struct {
	opts Options
	log  hclog.Logger
	sp   *spawner

	mu        sync.Mutex
	instances map[string]*Instance
	stopped   bool
}

// New returns a Host with no instances.
func New(opts Options) *Host {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
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
	return &Host{opts: opts, log: opts.Logger.Named("pluginhost"), sp: newSpawner(), instances: map[string]*Instance{}}
}

// Apply reconciles the running set with specs: new instances start, missing
// ones stop, instances whose Fingerprint changed restart, the others are
// untouched.
func (h *Host) Apply(specs []Spec) {
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
func (h *Host) Stop() {
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
}

// Instance returns the named instance, or nil.
func (h *Host) Instance(name string) *Instance {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.instances[name]
}

// Instances returns all instances sorted by name.
func (h *Host) Instances() []*Instance {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Instance, 0, len(h.instances))
	for _, inst := range h.instances {
		out = append(out, inst)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].spec.Instance < out[j].spec.Instance })
	return out
}

// Status is a snapshot of an instance.
type Status struct {
	Instance, Source string
	State            State
	Restarts         int
	LastError        string
	Since            time.Time
	PID              int
	Description      host.Description
	// Action tells the operator what to do about State; empty when
	// nothing is needed.
	Action string
}

// actions are what the operator does about each state.
var actions = map[State]string{
	StateDegraded:      "it restarts by itself with backoff; if it keeps failing, read last_error and the plugin's log lines",
	StateMisconfigured: "fix the instance's plugin block (see last_error), then reload: send SIGHUP to clawhost or restart it",
	StateMissing:       "build or install the binary (make build), or set path in the plugin block, then reload (SIGHUP)",
	StateUnresponsive:  "it was killed and restarts by itself; if it repeats, read the plugin's log lines",
}

// Instance is one supervised plugin instance.
type Instance struct {
	h    *Host
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
	plug     *host.Plugin
	desc     host.Description
	readyCh  chan struct{} // closed when ready; replaced on restart
	probeErr error         // set when the liveness probe killed the run
}

func newInstance(h *Host, s Spec) *Instance {
	ctx, cancel := context.WithCancel(context.Background())
	return &Instance{h: h, spec: s, log: h.opts.Logger.Named(s.Instance), ctx: ctx, cancel: cancel, done: make(chan struct{}), state: StateStarting, since: time.Now(), readyCh: make(chan struct{})}
}

// Name returns the instance name.
func (i *Instance) Name() string { return i.spec.Instance }

// Status returns a snapshot.
func (i *Instance) Status() Status {
	i.mu.Lock()
	defer i.mu.Unlock()
	st := Status{Instance: i.spec.Instance, Source: i.spec.Source, State: i.state, Restarts: i.restarts, Since: i.since, PID: i.pid, Description: i.desc, Action: actions[i.state]}
	if i.lastErr != nil {
		st.LastError = i.lastErr.Error()
	}
	return st
}

// Client returns the plugin client and description if the instance is ready.
func (i *Instance) Client() (*host.Plugin, host.Description, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.state != StateReady {
		return nil, host.Description{}, false
	}
	return i.plug, i.desc, true
}

// WaitReady blocks until the instance is ready or ctx ends; it fails at
// once for a stopped, missing or misconfigured instance.
func (i *Instance) WaitReady(ctx context.Context) (*host.Plugin, host.Description, error) {
	for {
		i.mu.Lock()
		ch, st := i.readyCh, i.state
		plug, desc := i.plug, i.desc
		i.mu.Unlock()
		if st == StateReady {
			return plug, desc, nil
		}
		if st == StateStopped || st.settled() {
			// A settled instance waits for a reload, not for time.
			return nil, host.Description{}, fmt.Errorf("plugin %s is %s", i.spec.Instance, st)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, host.Description{}, fmt.Errorf("plugin %s not ready: %w", i.spec.Instance, ctx.Err())
		}
	}
}

func (i *Instance) setState(s State, err error) {
	i.mu.Lock()
	prev := i.state
	i.state, i.since = s, time.Now()
	if err != nil {
		i.lastErr = err
	}
	if s == StateReady {
		close(i.readyCh)
	} else if prev == StateReady {
		i.readyCh = make(chan struct{})
	}
	if s == StateStopped {
		select {
		case <-i.readyCh:
		default:
			close(i.readyCh)
		}
	}
	i.mu.Unlock()
	switch {
	case s == StateDegraded || s.settled() || s == StateUnresponsive:
		i.log.Error("plugin "+string(s), "state", s, "error", err)
	case prev != s:
		i.log.Info("plugin state", "state", s)
	}
}

func (i *Instance) stop() {
	i.cancel()
	<-i.done
}

// supervise runs the instance until stopped, restarting it with backoff.
// A run that ends missing or misconfigured is not restarted: the instance
// stays in that state until a reload replaces it.
func (i *Instance) supervise() {
	defer close(i.done)
	backoff := i.h.opts.FirstBackoff
	for {
		started := time.Now()
		err := i.runOnce()
		i.mu.Lock()
		if i.probeErr != nil {
			err, i.probeErr = i.probeErr, nil
		}
		i.mu.Unlock()
		if i.ctx.Err() != nil {
			i.setState(StateStopped, nil)
			return
		}
		var settled *runError
		if errors.As(err, &settled) {
			i.setState(settled.state, err)
			<-i.ctx.Done()
			i.setState(StateStopped, nil)
			return
		}
		if time.Since(started) >= i.h.opts.StablePeriod {
			backoff = i.h.opts.FirstBackoff
		}
		i.mu.Lock()
		i.restarts++
		i.mu.Unlock()
		i.setState(StateDegraded, err)
		i.log.Info("restarting plugin", "in", backoff.String())
		select {
		case <-time.After(backoff):
		case <-i.ctx.Done():
			i.setState(StateStopped, nil)
			return
		}
		backoff = min(backoff*2, i.h.opts.MaxBackoff)
		i.setState(StateStarting, nil)
	}
}

// runOnce starts the plugin and serves it until its process ends or the
// instance is stopped. It returns why the run ended.
func (i *Instance) runOnce() error {
	client, proc, plug, err := i.launch()
	if err != nil {
		return err
	}
	defer i.h.shutdown(client, proc)

	ctx, cancel := context.WithCancel(i.ctx)
	defer cancel()
	sch, err := plug.ConfigSchema(ctx)
	if err != nil {
		return fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}
	var cfgJSON []byte
	if i.spec.Decode != nil {
		if cfgJSON, err = i.spec.Decode(sch); err != nil {
			return &runError{StateMisconfigured, fmt.Errorf("configure plugin %s: %w", i.spec.Instance, err)}
		}
	}
	if i.spec.DataDir != "" {
		if err := os.MkdirAll(i.spec.DataDir, 0o700); err != nil {
			return fmt.Errorf("configure plugin %s: data dir: %w", i.spec.Instance, err)
		}
	}
	diags, err := plug.Configure(ctx, schema.Config{Instance: i.spec.Instance, JSON: cfgJSON, DataDir: i.spec.DataDir})
	if err != nil {
		return fmt.Errorf("configure plugin %s: %w", i.spec.Instance, err)
	}
	if len(diags) > 0 {
		return &runError{StateMisconfigured, fmt.Errorf("configure plugin %s: the plugin rejected its config block: %w", i.spec.Instance, diags)}
	}
	// Described after Configure: capabilities may depend on the
	// configuration (a text_limit override).
	desc, err := plug.Describe(ctx)
	if err != nil {
		return fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}

	var stream *host.Stream
	var endStream context.CancelFunc
	if desc.Channel {
		if stream, endStream, err = openStream(ctx, plug); err != nil {
			return fmt.Errorf("plugin %s: %w", i.spec.Instance, err)
		}
	}
	i.mu.Lock()
	i.plug, i.desc = plug, desc
	i.mu.Unlock()
	i.setState(StateReady, nil)
	if f := i.h.opts.OnReady; f != nil {
		go f(i)
	}

	go i.probe(ctx, plug)
	exited := make(chan struct{})
	go func() {
		for !client.Exited() {
			select {
			case <-ctx.Done():
				close(exited)
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		close(exited)
	}()
	if stream != nil {
		return i.pump(ctx, plug, stream, endStream)
	}
	<-exited
	if i.ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("plugin %s exited", i.spec.Instance)
}

// shutdown stops a launched plugin: procRunner.terminate (SIGTERM, SIGKILL
// after the grace period), then client.Kill, which only closes the
// connection to a process that is gone.
func (h *Host) shutdown(client *plugin.Client, proc *procRunner) {
	proc.terminate(h.opts.StopGrace)
	client.Kill()
}

// verifyChecksum compares the SHA-256 of the file at path with want (hex).
func verifyChecksum(path, want string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("checksum of %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return fmt.Errorf("checksum of %s is %s, the configured sha256 is %s", path, got, want)
	}
	return nil
}

// launch execs and handshakes the plugin.
func (i *Instance) launch() (*plugin.Client, *procRunner, *host.Plugin, error) {
	path := i.spec.Path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, &runError{StateMissing, fmt.Errorf("start plugin %s: binary %s not found: build it (make build) or set path in its plugin block, then reload", i.spec.Instance, path)}
	} else if err != nil {
		return nil, nil, nil, fmt.Errorf("start plugin %s: binary %s: %w", i.spec.Instance, path, err)
	}
	if i.spec.SHA256 != "" {
		if err := verifyChecksum(path, i.spec.SHA256); err != nil {
			return nil, nil, nil, &runError{StateMisconfigured, fmt.Errorf("start plugin %s: refused: %w", i.spec.Instance, err)}
		}
	}
	timeout := i.startTimeout()
	dir := i.spec.DataDir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, nil, fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
		}
	}
	var proc *procRunner
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  host.Handshake,
		Plugins:          host.PluginSet(),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		Logger:           i.log,
		GRPCDialOptions:  host.DialOptions(),
		// Not the host's environment: pluginEnv decides what a plugin sees.
		SkipHostEnv: true,
		// go-plugin hands us a template cmd carrying only its handshake
		// environment (SkipHostEnv); we exec the real one through the
		// spawner so Pdeathsig holds.
		RunnerFunc: func(l hclog.Logger, tmpl *exec.Cmd, _ string) (runner.Runner, error) {
			cmd := exec.Command(path)
			own := append(slices.Clone(tmpl.Env), sdk.EnvLogLevel+"="+i.h.opts.LogLevel)
			cmd.Env = pluginEnv(os.Environ(), i.spec.Env, own)
			cmd.Dir = dir
			r, err := newProcRunner(l, i.h.sp, cmd, func(pid int) {
				i.mu.Lock()
				i.pid = pid
				i.mu.Unlock()
			})
			proc = r
			return r, err
		},
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, nil, nil, fmt.Errorf("start plugin %s (%s): %w", i.spec.Instance, path, err)
	}
	raw, err := rpc.Dispense(host.PluginName)
	if err != nil {
		i.h.shutdown(client, proc)
		return nil, nil, nil, fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}
	conn, ok := raw.(*grpc.ClientConn)
	if !ok {
		i.h.shutdown(client, proc)
		return nil, nil, nil, fmt.Errorf("start plugin %s: unexpected client type %T", i.spec.Instance, raw)
	}
	return client, proc, host.Wrap(conn), nil
}

// defaultStartTimeout bounds a plugin's handshake when its spec sets none.
const defaultStartTimeout = 10 * time.Second

// startTimeout bounds the instance's handshake and the wait for it to be
// ready.
func (i *Instance) startTimeout() time.Duration {
	if i.spec.StartTimeout > 0 {
		return i.spec.StartTimeout
	}
	return defaultStartTimeout
}

// probe checks that a ready plugin answers (Describe) every ProbeInterval.
// One that does not answer within ProbeTimeout — hung, SIGSTOPped,
// deadlocked — is marked unresponsive and killed; the supervisor restarts
// it. Until it is ready again, calls that need it wait or fail at once
// instead of blocking on the dead one.
func (i *Instance) probe(ctx context.Context, plug *host.Plugin) {
	t := time.NewTicker(i.h.opts.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, i.h.opts.ProbeTimeout)
		_, err := plug.Describe(pctx)
		cancel()
		if err == nil || ctx.Err() != nil {
			continue
		}
		perr := fmt.Errorf("plugin %s did not answer the liveness probe within %s: killed, it restarts", i.spec.Instance, i.h.opts.ProbeTimeout)
		i.mu.Lock()
		i.probeErr = perr // why the run ends, for the degraded state
		i.mu.Unlock()
		i.setState(StateUnresponsive, perr)
		// SIGKILL to its process group (Setpgid, spawn.go), not
		// client.Kill: a stopped process never answers the graceful
		// shutdown that Kill tries first.
		i.mu.Lock()
		pid := i.pid
		i.mu.Unlock()
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		return
	}
}
