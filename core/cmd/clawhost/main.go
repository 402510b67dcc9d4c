// Command clawhost is the clawhost daemon: it loads config.hcl, starts and
// supervises the configured plugins, and connects their chats to the Claude
// Code CLI.
//
//	clawhost [-config FILE]            run (default ./config.hcl)
//	clawhost validate -config FILE     check the configuration, plugins included
//	clawhost pairing list|approve CODE [-config FILE]
//	                                   pending pairing codes; approve one
//	clawhost status [-config FILE]     the running host's plugins: state, error, what to do
//	clawhost version                   print the version
//
// SIGINT and SIGTERM stop gracefully; SIGHUP reloads the configuration.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("clawhost "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "config.hcl", "configuration file")
	var positional []string
	for len(args) > 0 && !isFlag(args[0]) {
		positional, args = append(positional, args[0]), args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	positional = append(positional, fs.Args()...)
	switch cmd {
	case "version":
		fmt.Fprintf(stdout, "clawhost %s\n", version)
		return 0
	case "validate":
		return validate(*cfgPath, stdout, stderr)
	case "pairing":
		return pairing(*cfgPath, positional, stdout, stderr)
	case "status":
		return status(*cfgPath, stdout, stderr)
	case "run":
		return serve(*cfgPath, stderr)
	default:
		fmt.Fprintf(stderr, "clawhost: unknown command %q (run, validate, pairing, version)\n", cmd)
		return 2
	}
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

// load reads the configuration, printing diagnostics; ok is false on errors.
func load(path string, w io.Writer) (*config.Config, bool) {
	cfg, diags := config.Load(path)
	if len(diags) > 0 {
		var files map[string]*hcl.File
		if cfg != nil {
			files = cfg.Files()
		}
		config.FormatDiagnostics(w, diags, files)
	}
	return cfg, cfg != nil && !diags.HasErrors()
}

// serve runs clawhost until SIGINT or SIGTERM; SIGHUP reloads the
// configuration (an invalid file is refused and the running set kept).
func serve(path string, stderr io.Writer) int {
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	h, err := core.New(cfg, core.Options{Version: version, LogOutput: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "clawhost: %v\n", err)
		return 1
	}
	log := h.Logger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			if sig != syscall.SIGHUP {
				log.Info("stopping", "signal", sig.String())
				cancel()
				return
			}
			log.Info("SIGHUP: reloading configuration", "config", path)
			next, ok := load(path, stderr)
			if !ok {
				log.Error("configuration refused; keeping the running set", "config", path)
				continue
			}
			if err := h.Reload(next); err != nil {
				log.Error("configuration refused; keeping the running set", "config", path, "error", err)
			}
		}
	}()
	if err := h.Run(ctx); err != nil {
		log.Error("clawhost stopped", "error", err)
		return 1
	}
	return 0
}

func validate(path string, stdout, stderr io.Writer) int {
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	h := pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
	defer h.Stop()
	failed := false
	avail, _ := config.AvailableSources(cfg.PluginDir)
	for _, sp := range core.Specs(cfg) {
		if _, err := os.Stat(sp.Path); err != nil {
			if d := cfg.SourceDiagnostic(sp.Instance, avail); d != nil {
				config.FormatDiagnostics(stderr, hcl.Diagnostics{d}, cfg.Files())
				failed = true
				continue
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, sch, err := h.Probe(ctx, sp)
		cancel()
		if err != nil {
			fmt.Fprintf(stderr, "Error: plugin %q: %v\n", sp.Instance, err)
			failed = true
			continue
		}
		if _, err := sp.Decode(sch); err != nil {
			fmt.Fprintln(stderr, err)
			failed = true
		}
	}
	if failed {
		return 1
	}
	fmt.Fprintf(stdout, "%s: valid (%d plugins enabled)\n", path, len(cfg.EnabledPlugins()))
	return 0
}
