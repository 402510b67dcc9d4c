package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/internal/wire"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Plugin is what a plugin binary offers. Set at least one of Channel,
// Command and Hook; a binary may offer several.
type Plugin struct {
	// Name is the plugin's name, e.g. "telegram". Required.
	Name string
	// Version is the plugin's own version.
	Version string
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
	// Retry is called when the operator asks the plugin to try again what
	// its last status.Attention named in Retry ("Show a new QR code"). It
	// must return quickly; report the outcome through the status.Reporter
	// from Configure. Nil: the plugin offers no retry.
	Retry func(ctx context.Context) error
}

// Environment variables the host sets for its plugins.
const (
	// EnvLogLevel is the log level the host wants (trace … error).
	EnvLogLevel = "CLAWHOST_LOG_LEVEL"
)

// watchdogInterval is how often the plugin checks that its host is alive.
const watchdogInterval = 500 * time.Millisecond

// Serve runs the plugin until the host stops it, then exits the process.
// It owns go-plugin, gRPC, the handshake, the hclog JSON logger on stderr,
// a parent-process watchdog (the plugin exits when the host is gone, even if
// the host was SIGKILLed) and signal handling (SIGTERM stops gracefully).
//
// Serve never returns. Call it as the only statement of main. Do not write to
// stdout anywhere in a plugin: the handshake lives there.
func Serve(p Plugin) {
	log := hclog.New(&hclog.LoggerOptions{
		Name:       p.Name,
		Output:     os.Stderr,
		JSONFormat: true,
		Level:      hclog.LevelFromString(os.Getenv(EnvLogLevel)),
	})
	if err := validate(p); err != nil {
		log.Error("invalid plugin", "error", err)
		fmt.Fprintf(os.Stderr, "clawhost plugin %s: %v\n", p.Name, err)
		os.Exit(1)
	}
	if os.Getenv(wire.Handshake.MagicCookieKey) != wire.Handshake.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "This binary is a clawhost plugin (%s). It is started by clawhost; it is not meant to be run by hand.\n", p.Name)
		os.Exit(1)
	}
	os.Exit(run(p, log))
}

func validate(p Plugin) error {
	if p.Name == "" {
		return errors.New("plugin name is empty")
	}
	if p.Channel == nil && p.Command == nil && p.Hook == nil {
		return errors.New("plugin offers no kind: set Channel, Command or Hook")
	}
	return nil
}

func run(p Plugin, log hclog.Logger) int {
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
		Impl:  &wire.Impl{Name: p.Name, Version: p.Version, Schema: p.Schema, Validate: p.Validate, Configure: p.Configure, Channel: p.Channel, Command: p.Command, Hook: p.Hook, Retry: p.Retry},
		Log:   log,
		Ctx:   ctx,
		Inbox: inbox,
		Fatal: func(err error) { stop(1) },
	}

	go watchParent(log, os.Getppid(), func() { stop(0) })
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		<-sigs
		log.Info("SIGTERM: stopping")
		stop(0)
	}()

	served := make(chan struct{})
	go func() {
		defer close(served)
		plugin.Serve(wire.ServeConfig(srv, log))
	}()

	code := 0
	select {
	case <-served: // the host asked for a graceful shutdown
	case code = <-exitCode:
	}
	cancel()
	inbox.Stop()
	if done := srv.RunDone(); done != nil {
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			log.Warn("channel did not stop within 2s")
		}
	}
	return code
}

// watchParent calls gone when the parent process changes (the host died and
// the plugin was re-parented).
func watchParent(log hclog.Logger, ppid int, gone func()) {
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
