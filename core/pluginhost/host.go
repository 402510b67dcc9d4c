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
// durably stored), so a message survives the death of either process.
package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
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

// States.
const (
	StateStarting State = "starting"
	StateReady    State = "ready"
	StateDegraded State = "degraded"
	StateStopped  State = "stopped"
)

// InboundFunc stores inbound messages of a channel instance durably. It
// returns nil only when all of msgs are stored; then they are acked.
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
	// LogLevel is passed to plugins.
	LogLevel string
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
		if !ok || s.Fingerprint != inst.spec.Fingerprint {
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
	st := Status{Instance: i.spec.Instance, Source: i.spec.Source, State: i.state, Restarts: i.restarts, Since: i.since, PID: i.pid, Description: i.desc}
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

// WaitReady blocks until the instance is ready or ctx ends.
func (i *Instance) WaitReady(ctx context.Context) (*host.Plugin, host.Description, error) {
	for {
		i.mu.Lock()
		ch, st := i.readyCh, i.state
		plug, desc := i.plug, i.desc
		i.mu.Unlock()
		if st == StateReady {
			return plug, desc, nil
		}
		if st == StateStopped {
			return nil, host.Description{}, fmt.Errorf("plugin %s is stopped", i.spec.Instance)
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
	case s == StateDegraded:
		i.log.Error("plugin degraded", "state", s, "error", err)
	case prev != s:
		i.log.Info("plugin state", "state", s)
	}
}

func (i *Instance) stop() {
	i.cancel()
	<-i.done
}

// supervise runs the instance until stopped, restarting it with backoff.
func (i *Instance) supervise() {
	defer close(i.done)
	backoff := i.h.opts.FirstBackoff
	for {
		started := time.Now()
		err := i.runOnce()
		if i.ctx.Err() != nil {
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
		i.log.Info("restarting plugin", "in", backoff)
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
			return fmt.Errorf("configure plugin %s: %w", i.spec.Instance, err)
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
		return fmt.Errorf("configure plugin %s: %w", i.spec.Instance, diags)
	}
	// Described after Configure: capabilities may depend on the
	// configuration (a text_limit override).
	desc, err := plug.Describe(ctx)
	if err != nil {
		return fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}

	var stream *host.Stream
	if desc.Channel {
		if stream, err = plug.Receive(ctx, 1024); err != nil {
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
		return i.pump(ctx, plug, stream)
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
	if _, err := os.Stat(path); err != nil {
		return nil, nil, nil, fmt.Errorf("start plugin %s: binary %s: %w", i.spec.Instance, path, err)
	}
	if i.spec.SHA256 != "" {
		if err := verifyChecksum(path, i.spec.SHA256); err != nil {
			return nil, nil, nil, fmt.Errorf("start plugin %s: refused: %w", i.spec.Instance, err)
		}
	}
	timeout := i.spec.StartTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
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
