// Command clawhost is the clawhost daemon: it loads config.hcl, starts and
// supervises the configured plugins, and connects their chats to the Claude
// Code CLI.
//
//	clawhost [-config FILE]            run (default ./config.hcl)
//	clawhost validate -config FILE     check the configuration, plugins included
//	clawhost pairing list|approve CODE [-config FILE]
//	                                   pending pairing codes; approve one
//	clawhost version                   print the version
//
// SIGINT and SIGTERM stop gracefully; SIGHUP reloads the configuration.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store/sqlite"
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

func newLogger(cfg *config.Config, w io.Writer) hclog.InterceptLogger {
	return hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:       "clawhost",
		Level:      hclog.LevelFromString(cfg.LogLevel),
		Output:     w,
		JSONFormat: cfg.LogFormat == "json",
	})
}

func serve(path string, stderr io.Writer) int {
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	ring := admin.NewErrorRing(admin.DefaultErrorRingSize)
	log := newLogger(cfg, stderr)
	log.RegisterSink(ring)
	start := time.Now()

	for _, dir := range []string{cfg.DataDir, cfg.Agent.Workspace} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			log.Error("cannot create directory", "dir", dir, "error", err)
			return 1
		}
	}
	octx, ocancel := context.WithTimeout(context.Background(), 30*time.Second)
	db, err := sqlite.Open(octx, cfg.DataDir, sqlite.Options{Logger: log.Named("store")})
	ocancel()
	if err != nil {
		log.Error("cannot open the database", "dir", cfg.DataDir, "error", err)
		return 1
	}
	defer db.Close()
	rc := agentConfig(cfg)
	if err := rc.Validate(); err != nil {
		log.Error("agent configuration", "error", err)
		return 1
	}
	agent, err := runner.New(rc, log.Named("runner"))
	if err != nil {
		log.Error("agent configuration", "error", err)
		return 1
	}
	m := metrics.New()
	gw := gateway.New(gateway.Options{Logger: log, Store: db, Agent: agent, Observer: m, Settings: settingsOf(cfg), Version: version})
	h := pluginhost.New(pluginhost.Options{
		Logger:   log,
		LogLevel: cfg.LogLevel,
		Inbound:  gw.Inbound,
		OnReady: func(inst *pluginhost.Instance) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			gw.RefreshCommands(ctx)
		},
	})
	gw.SetHost(h)
	h.Apply(specs(cfg))
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	err = gw.Start(rctx) // inbound messages wait for the recovery
	rcancel()
	if err != nil {
		log.Error("journal recovery failed", "error", err)
		h.Stop()
		return 1
	}
	m.WatchPlugins(func() []metrics.PluginStat { return pluginStats(h) })
	m.WatchWarm(func() int { return len(agent.Warm()) })

	var adm *admin.Server
	if cfg.Admin.Listen != "" {
		adm, err = admin.Start(admin.Options{
			Listen: cfg.Admin.Listen, Logger: log.Named("admin"), Metrics: m.Handler(),
			Source:  &statusSource{gw: gw, host: h, agent: agent, ring: ring, started: start},
			Pairing: pairingAPI{db},
		})
		if err != nil {
			log.Error("admin endpoint not started", "listen", cfg.Admin.Listen, "error", err)
		} else {
			log.Info("status page", "url", "http://"+adm.Addr()+"/")
		}
	}
	log.Info("clawhost started", "version", version, "config", cfg.Path(), "plugins", len(cfg.EnabledPlugins()), "startup", time.Since(start))

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	for sig := range sigs {
		if sig == syscall.SIGHUP {
			log.Info("SIGHUP: reloading configuration", "config", path)
			next, ok := load(path, stderr)
			if !ok {
				log.Error("configuration refused; keeping the running set", "config", path)
				continue
			}
			cfg = next
			gw.SetSettings(settingsOf(cfg))
			h.Apply(specs(cfg))
			rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
			gw.RefreshCommands(rctx) // drop commands of stopped plugins
			rcancel()
			log.Info("configuration reloaded", "plugins", len(cfg.EnabledPlugins()))
			continue
		}
		log.Info("stopping", "signal", sig.String())
		break
	}
	signal.Stop(sigs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if adm != nil {
		_ = adm.Close(ctx)
	}
	gw.Close(ctx)
	h.Stop()
	if err := agent.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("stopping claude processes", "error", err)
	}
	log.Info("stopped")
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
	for _, sp := range specs(cfg) {
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
