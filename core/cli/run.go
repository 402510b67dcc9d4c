package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/clawhost/clawhost/core/cluster"

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/core/internal/gcpace"
	"github.com/clawhost/clawhost/core/internal/procpace"
	"github.com/clawhost/clawhost/core/setup"
	"github.com/clawhost/clawhost/sdk/memtrim"
)

// serve runs clawhost until SIGINT or SIGTERM; SIGHUP reloads the
// configuration (an invalid file is refused and the running set kept).
func serve(path string, stderr io.Writer) int {
	// Signals are caught before anything starts: the plugin processes
	// start inside core.New, and a SIGHUP (a reload) or SIGTERM sent as
	// soon as they show up must not kill the host with the default action.
	// They wait in the channel until the loop below reads them.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	// The env file first, remembered: a reload reads it again.
	env, err := setup.NewEnvSource(path, os.LookupEnv, os.Setenv, os.Unsetenv)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost: %v\n", err)
		return 1
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	gcpace.Start()
	opts := core.Options{Version: thisBuild().version, LogOutput: stderr, ReloadEnv: env.Reload}
	if isTerminal(stderr) {
		opts.Terminal = stderr
	}
	h, err := core.New(cfg, opts)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost: %v\n", err)
		return 1
	}
	log := h.Logger()
	// After core.New: the store sized its readers by every processor.
	// A burst's garbage goes back to the kernel once the host is light
	// again, not at the next idle collection minutes later.
	procpace.Start(memtrim.Settle)
	// The plugins are starting; once the host is up, what only its start
	// touched (configuration, migrations, launching plugins) leaves the
	// resident set.
	memtrim.After(memtrim.StartDelay)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for sig := range sigs {
			if sig != syscall.SIGHUP {
				log.Info("stopping", "signal", sig.String())
				cancel()
				return
			}
			log.Info("SIGHUP: reloading configuration", "config", path)
			if _, warnings := h.ReloadFrom(path); warnings != "" {
				io.WriteString(stderr, warnings)
			}
		}
	}()
	if err := h.Run(ctx); err != nil {
		log.Error("clawhost stopped", "error", err)
		return exitCode(err)
	}
	return 0
}

// exitCode is the exit status of a host whose Run failed with err: 75
// (EX_TEMPFAIL: restart me) when its cluster lease was lost, else 1.
func exitCode(err error) int {
	if errors.Is(err, cluster.ErrLeaseLost) {
		return 75
	}
	return 1
}

// isTerminal reports whether w is a terminal (a character device): the
// links holding a token are printed on it, never into a file or a pipe.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
