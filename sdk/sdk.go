package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/internal/wire"
	"github.com/clawhost/clawhost/sdk/memtrim"
	"github.com/clawhost/clawhost/sdk/nodump"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/tool"
)

// Plugin is what a plugin binary offers. Set at least one of Channel,
// Command, Hook, MessageReceived, MessageSending, AgentEnd and Tool; a binary
// may offer several.
type Plugin struct {
	// Name is the plugin's name, e.g. "telegram". Required.
	Name string
	// Version is the plugin's own version.
	Version string
	// Setup is what a person needs before they can fill in the config {}
	// block — how to create the bot or app on the platform, an app manifest
	// to paste — in a few plain-text lines; `clawhost init` shows it before
	// it asks for the block's settings. Empty: nothing to say.
	Setup string
	// Schema declares the attributes of the plugin's config {} block.
	Schema schema.Schema
	// Validate checks a decoded config {} block without applying it: no
	// network, no files written, no goroutines left behind. Return
	// schema.Diagnostics to point the user at attributes (by path: "token",
	// "guilds[1]"); any other error is reported for the block as a whole.
	// The host calls it from `clawhost validate`, before a start and on a
	// reload before anything is stopped, so a block the plugin rejects is
	// refused at its file:line:col while the running instance is kept. It
	// may be called any number of times, in a process that is never
	// configured. Nil: the block is checked only by Configure.
	//
	// Usually Configure calls the same checks; see the quick start.
	Validate func(ctx context.Context, cfg schema.Config) error
	// Configure receives the decoded config {} block, once per process,
	// before any other call. Return schema.Diagnostics to point the user at
	// attributes; any other error is reported for the block as a whole.
	// Nil means the plugin takes no configuration.
	Configure func(ctx context.Context, cfg schema.Config) error
	// Channel is the channel adapter, if the plugin offers one.
	Channel channel.Channel
	// Command handles commands, if the plugin offers them.
	Command command.Handler
	// Hook is a before_agent_start hook, if the plugin offers one.
	Hook hook.Hook
	// MessageReceived is a message_received hook, if the plugin offers
	// one: it sees each inbound message before the queue.
	MessageReceived hook.Received
	// MessageSending is a message_sending hook, if the plugin offers one:
	// it sees each agent reply before the outbox.
	MessageSending hook.Sending
	// AgentEnd is an agent_end hook, if the plugin offers one: it observes
	// each finished turn.
	AgentEnd hook.Ender
	// Tool offers the agent tools, if the plugin has any (sdk/tool).
	Tool tool.Provider
	// Retry is called when the operator asks the plugin to try again what
	// its last status.Attention named in Retry ("Show a new QR code"). It
	// must return quickly; report the outcome through the status.Reporter
	// from Configure. Nil: the plugin offers no retry.
	Retry func(ctx context.Context) error
	// Probe checks a decoded config {} block against the platform, live
	// (network allowed), bounded by ctx, without starting the channel:
	// credentials valid, who the bot is, what is missing and what to do.
	// Called by `clawhost doctor`, `clawhost init` and `clawhost validate
	// -probe` through the one launcher, in a process that is never
	// configured. cfg.DataDir is the instance's data directory, to read
	// only (a running instance may be using it; it may not exist yet).
	// A failed check is a probe.Check with probe.Fail, not an error; return
	// an error only when the probe cannot run at all (the block does not
	// decode). Nil: no live checks.
	Probe func(ctx context.Context, cfg schema.Config) (probe.Report, error)
}

// Environment variables the host sets for its plugins.
const (
	// EnvLogLevel is the log level the host wants (trace … error).
	EnvLogLevel = "CLAWHOST_LOG_LEVEL"
)

// EnvDebug, set by an author who starts a plugin binary by hand, runs it in
// debug mode: no handshake is expected; the plugin serves on a socket and
// prints (on stderr) the CLAWHOST_REATTACH value with which clawhost
// attaches to it instead of starting it, so that it can run under a
// debugger. "1" or "true" names the instance after the plugin (Plugin.Name);
// any other value is the instance name, the label of the plugin block.
const EnvDebug = "CLAWHOST_PLUGIN_DEBUG"

// hostDeathSignal is the parent-death signal the process started with,
// read on the main thread (see parentDeathSignal).
var hostDeathSignal = parentDeathSignal()

// watchdogInterval is how often the plugin checks that its host is alive.
const watchdogInterval = 500 * time.Millisecond

// stopTimeout bounds the wait for the channel's Run to end at exit.
const stopTimeout = 2 * time.Second

// Serve runs the plugin until the host stops it and returns the process's
// exit code: 0 after a stop (the host asked, or the host is gone), 1 when
// the plugin is invalid, was started by hand without EnvDebug, or failed.
// It owns the plugin side of go-plugin's protocol (the handshake and the
// gRPC server; sdk/internal/wire/serve.go), the logger (hclog's JSON lines on
// stderr, which the host shows under the instance name), a parent-process
// watchdog (the plugin exits when the host is gone, even if the host was
// SIGKILLed), the host's authentication (every call must carry the secret
// the host made for this launch, every file a Send names the host's grant
// for that send; proto/PROTOCOL.md, "Authentication"), on Linux a process
// other processes of its user cannot read (sdk/nodump; not in debug mode),
// signal handling (SIGTERM stops gracefully) and, a few seconds after the
// start, a trim of the pages only the start needed (memtrim).
//
// With EnvDebug set it runs in debug mode instead (see the package
// documentation): the same plugin, started by hand, with readable log lines.
//
// Call it as the only statement of main, and exit with what it returns:
//
//	func main() { os.Exit(sdk.Serve(plugin)) }
//
// Do not write to stdout anywhere in a plugin: the handshake lives there.
func Serve(p Plugin) int {
	// Read once and removed: no child of the plugin inherits it.
	secret := os.Getenv(wire.EnvSecret)
	_ = os.Unsetenv(wire.EnvSecret)
	instance := debugInstance(p.Name, os.Getenv(EnvDebug))
	opts := &hclog.LoggerOptions{
		Name:       p.Name,
		Output:     os.Stderr,
		JSONFormat: instance == "",
		Level:      hclog.LevelFromString(os.Getenv(EnvLogLevel)),
	}
	if instance != "" {
		// Read by a person in debug mode: RFC 3339 as the host's lines.
		// The JSON lines keep hclog's format, the one go-plugin parses
		// (already RFC 3339).
		opts.TimeFormat = "2006-01-02T15:04:05.000Z07:00"
	}
	log := hclog.New(opts)
	if instance == "" {
		// Not in debug mode, where a debugger must attach: other
		// processes of the plugin's user cannot read its environment
		// or memory (its tokens).
		if err := nodump.Set(); err != nil {
			log.Warn("prctl(PR_SET_DUMPABLE, 0) failed", "error", err)
		}
	}
	if err := validate(p); err != nil {
		log.Error("invalid plugin", "error", err)
		fmt.Fprintf(os.Stderr, "clawhost plugin %s: %v\n", p.Name, err)
		return 1
	}
	if instance == "" && os.Getenv(wire.MagicCookieKey) != wire.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "This binary is a clawhost plugin (%s). It is started by clawhost; it is not meant to be run by hand.\n"+
			"To run it by hand (under a debugger), set %s=1 and start clawhost with the %s value it prints.\n", p.Name, EnvDebug, wire.EnvReattach)
		return 1
	}
	if instance != "" && secret == "" {
		// Started by hand: the secret is printed with the reattach line.
		secret = wire.NewSecret()
	}
	if secret == "" {
		log.Warn("the host gave no " + wire.EnvSecret + " (a host older than this plugin): serving every caller of the socket unauthenticated")
	}
	return run(p, log, instance, secret)
}

// debugInstance is the instance name debug mode announces for the value v
// of EnvDebug, or "" when debug mode is off.
func debugInstance(name, v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return ""
	case "1", "true", "yes", "on":
		return name
	}
	return strings.TrimSpace(v)
}

func validate(p Plugin) error {
	if p.Name == "" {
		return errors.New("plugin name is empty")
	}
	if p.Channel == nil && p.Command == nil && p.Hook == nil && p.MessageReceived == nil && p.MessageSending == nil && p.AgentEnd == nil && p.Tool == nil {
		return errors.New("plugin offers no kind: set Channel, Command, Hook, MessageReceived, MessageSending, AgentEnd or Tool")
	}
	return nil
}

// run serves p until the host stops it and returns the exit code. With
// debugAs set it serves without a handshake on stdout and announces the reattach config for the instance debugAs.
// Every call must carry secret (wire.EnvSecret); empty: none needs to.
func run(p Plugin, log hclog.Logger, debugAs, secret string) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	exitCode := make(chan int, 1)
	stop := func(code int) {
		select {
		case exitCode <- code:
		default:
		}
	}
	inbox := wire.NewInbox()
	srv := &wire.Server{
		Impl: &wire.Impl{Name: p.Name, Version: p.Version, Setup: p.Setup, Schema: p.Schema, Validate: p.Validate, Configure: p.Configure, Channel: p.Channel, Command: p.Command, Hook: p.Hook,
			MessageReceived: p.MessageReceived, MessageSending: p.MessageSending, AgentEnd: p.AgentEnd, Tool: p.Tool, Retry: p.Retry, Probe: p.Probe},
		Log:    log,
		Ctx:    ctx,
		Inbox:  inbox,
		Fatal:  func(err error) { stop(1) },
		Secret: secret,
	}

	go watchParent(log, os.Getppid(), func() { stop(0) })
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if debugAs != "" {
		signal.Notify(sigs, os.Interrupt) // Ctrl-C in the author's terminal
	}
	go func() {
		name := "SIGTERM"
		if <-sigs == os.Interrupt {
			name = "SIGINT"
		}
		log.Info(name + ": stopping")
		stop(0)
	}()

	serving, err := wire.Serve(srv, log)
	if err != nil {
		log.Error("plugin init error", "error", err)
		return 1
	}
	defer serving.Stop() // removes the socket file
	if debugAs != "" {
		go announce(p.Name, debugAs, wire.ReattachTo(serving.Addr(), os.Getpid(), secret), func() { stop(1) })
	} else {
		// The handshake: go-plugin's client reads this one line.
		if _, err := fmt.Fprintln(os.Stdout, serving.HandshakeLine()); err != nil {
			log.Error("write the handshake to stdout", "error", err)
			return 1
		}
		_ = os.Stdout.Sync()
		// Anything printed later goes to the host's log, not into the
		// handshake pipe.
		os.Stdout = os.Stderr
		// Ctrl-C in the terminal clawhost runs in reaches every process of
		// the group; the host decides when its plugins stop. A channel
		// nobody reads takes SIGINT (delivery never blocks; extra ones are
		// dropped); signal.Ignore would be inherited by the plugin's
		// children.
		signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	}
	// What the start touched (init, the handshake, the host's first calls)
	// leaves the resident set once the plugin is up.
	memtrim.After(memtrim.StartDelay)

	code := 0
	select {
	case <-serving.Done(): // the host asked for a graceful shutdown
	case code = <-exitCode:
	}
	cancel()
	inbox.Stop()
	if done := srv.RunDone(); done != nil {
		select {
		case <-done:
		case <-time.After(stopTimeout):
			log.Warn("channel did not stop within " + stopTimeout.String())
		}
	}
	return code
}

// announce prints, on stderr, how to attach clawhost to this plugin in
// debug mode. Stdout is not used even here: nothing reads it, but a plugin
// never writes there.
func announce(name, instance string, rc wire.Reattach, fail func()) {
	line, err := wire.ReattachLine(instance, rc)
	if err != nil {
		fmt.Fprintf(os.Stderr, "clawhost plugin %s: %v\n", name, err)
		fail()
		return
	}
	fmt.Fprintf(os.Stderr, "clawhost plugin %s is running in debug mode (pid %d) as instance %q.\n"+
		"Start clawhost with this in its environment; it attaches to this process instead of starting the plugin:\n\n"+
		"%s='%s'\n\n"+
		"The process exits when clawhost stops the instance. Set %s=<instance> to name another plugin block.\n",
		name, rc.Pid, instance, wire.EnvReattach, line, EnvDebug)
}

// watchParent calls gone when the parent process changes (the host died and
// the plugin was re-parented). When the kernel signals the plugin at its
// parent's death (the host's Pdeathsig on Linux: SIGKILL), there is nothing
// to watch: a ticker would wake an idle plugin twice a second for a death
// the kernel reports anyway.
func watchParent(log hclog.Logger, ppid int, gone func()) {
	if hostDeathSignal != 0 {
		return
	}
	t := time.NewTicker(watchdogInterval)
	defer t.Stop()
	for range t.C {
		if os.Getppid() != ppid {
			log.Warn("host process is gone; exiting", "host_pid", ppid)
			gone()
			return
		}
	}
}
