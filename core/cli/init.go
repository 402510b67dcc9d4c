package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/termecho"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/setup"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

const initUsage = "usage: clawhost init [-non-interactive] [-telegram-token T] [-discord-token T] [-whatsapp [-whatsapp-link] [-whatsapp-personal]] [-webchat] [-anthropic-key K | -claude-token T] [-set source.attribute=value]... [-workspace DIR] [-config-dir DIR] [-data-dir DIR] [-force]"

// initFlags are init's flags once parsed.
type initFlags struct {
	p                           setup.Plan
	nonInteractive, force, link *bool
	linkTimeout                 *time.Duration
}

// initFlagSet is init's flag set: initCommand parses it, and help lists it
// (every flag, so none is left out of `clawhost init -h`).
func initFlagSet() (*flag.FlagSet, *initFlags) {
	fs := flag.NewFlagSet("clawhost init", flag.ContinueOnError)
	f := &initFlags{}
	p := &f.p
	f.nonInteractive = fs.Bool("non-interactive", false, "ask nothing: the flags and the environment say everything")
	f.force = fs.Bool("force", false, "replace an existing config.hcl and clawhost.env")
	fs.StringVar(&p.TelegramToken, "telegram-token", "", "Telegram bot token (or TELEGRAM_BOT_TOKEN)")
	fs.StringVar(&p.DiscordToken, "discord-token", "", "Discord bot token (or DISCORD_BOT_TOKEN)")
	fs.BoolVar(&p.WhatsApp, "whatsapp", false, "set up WhatsApp (linked with a QR code at the first run)")
	fs.BoolVar(&p.WebChat, "webchat", false, "set up the web chat")
	fs.StringVar(&p.Workspace, "workspace", "", "the agent's workspace (default ~/clawhost-workspace)")
	fs.StringVar(&p.ConfigDir, "config-dir", "", "where config.hcl and clawhost.env go (default $XDG_CONFIG_HOME/clawhost or ~/.config/clawhost)")
	fs.StringVar(&p.DataDir, "data-dir", "", "data_dir (default $XDG_STATE_HOME/clawhost or ~/.local/state/clawhost)")
	fs.StringVar(&p.PluginDir, "plugin-dir", "", "plugin_dir (default: the directory of this clawhost binary)")
	fs.StringVar(&p.Claude, "claude", "", "the claude CLI (default: found in PATH)")
	fs.StringVar(&p.AdminListen, "admin-listen", "", "the status page's address (default 127.0.0.1:8791)")
	fs.StringVar(&p.WebChatListen, "webchat-listen", "", "the web chat's address (default 127.0.0.1:8790)")
	fs.StringVar(&p.TelegramAPI, "telegram-api", os.Getenv("CLAWHOST_TELEGRAM_API"), "Telegram Bot API endpoint, a format with two %s (token, method); a test's fake (or CLAWHOST_TELEGRAM_API)")
	fs.StringVar(&p.DiscordAPI, "discord-api", os.Getenv("CLAWHOST_DISCORD_API"), "Discord API base URL; a test's fake (or CLAWHOST_DISCORD_API)")
	fs.StringVar(&p.WhatsAppServer, "whatsapp-server", os.Getenv("CLAWHOST_WHATSAPP_SERVER"), "host:port of a fake WhatsApp server on loopback (the plugin's server_address); a test's fake (or CLAWHOST_WHATSAPP_SERVER)")
	fs.StringVar(&p.WhatsAppRootKey, "whatsapp-root-key", os.Getenv("CLAWHOST_WHATSAPP_ROOT_KEY"), "the fake WhatsApp server's root key, hex (server_root_key; or CLAWHOST_WHATSAPP_ROOT_KEY)")
	fs.BoolVar(&p.WhatsAppPersonal, "whatsapp-personal", false, "with -whatsapp: the number is your own; the bot answers only in \"Message yourself\" (self_chat, only_self_chat)")
	fs.StringVar(&p.AnthropicKey, "anthropic-key", "", "the bot's Anthropic API key, checked with one request and written to clawhost.env")
	fs.StringVar(&p.ClaudeToken, "claude-token", "", "the bot's Claude subscription token (from claude setup-token), written to clawhost.env")
	p.Presets = map[string]map[string]string{}
	fs.Func("set", "source.attribute=value: a setting of a channel plugin init sets up from its schema (e.g. slack.reply_in_thread=true), written and not asked; repeatable", func(s string) error {
		return setup.ParsePreset(p.Presets, s)
	})
	f.link = fs.Bool("whatsapp-link", false, "with -non-interactive -whatsapp: link WhatsApp now, the QR code drawn in this terminal (an interactive init always does)")
	f.linkTimeout = fs.Duration("link-timeout", setup.DefaultLinkTimeout, "how long to wait for a phone to link WhatsApp")
	return fs, f
}

// initCommand is `clawhost init`: setup.Run with the flags, on the
// process's terminal.
func initCommand(args []string, stdout, stderr io.Writer) int {
	fs, f := initFlagSet()
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	p, nonInteractive, force, link, linkTimeout := &f.p, f.nonInteractive, f.force, f.link, f.linkTimeout
	if code, ok := parseFlags(fs, args, initUsage, stdout, stderr, "init"); !ok {
		return code
	}
	if extraArg(fs, initUsage, stderr) {
		return 2
	}
	o := setup.Options{Plan: *p, Interactive: !*nonInteractive, Force: *force, In: os.Stdin, Out: stdout,
		LinkWhatsApp: !*nonInteractive || *link, RunPlugin: runPluginAlone(stderr), Linked: whatsAppLinked(stderr), Probe: probeBlock, Catalog: channelCatalog, LinkTimeout: *linkTimeout,
		CheckClaude: checkClaude, RunClaude: runClaudeInTerminal}
	if *nonInteractive && *link && (!p.WhatsApp || !termecho.IsTerminal(int(os.Stdout.Fd()))) {
		fmt.Fprintln(stderr, "clawhost init: -whatsapp-link draws a QR code to scan with the phone: it needs -whatsapp and a terminal on stdout (leave it out to link at the first clawhost run)")
		return 2
	}
	if fd := int(os.Stdin.Fd()); o.Interactive && termecho.IsTerminal(fd) {
		o.HideInput = func() (func(), error) { return termecho.Off(fd) }
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if _, err := setup.Run(ctx, o); err != nil {
		fmt.Fprintf(stderr, "clawhost %v\n", err)
		return 1
	}
	return 0
}

// runPluginAlone is init's setup.PluginRunner: it loads the configuration
// init wrote (with its clawhost.env) and runs the instance as clawhost run
// would (pluginprobe.RunAlone). Only the plugins' errors reach stderr: their
// other lines (a QR code as text among them) would bury the drawing.
func runPluginAlone(stderr io.Writer) setup.PluginRunner {
	return func(ctx context.Context, configFile, instance string, watch func(pluginhost.Status, func(context.Context) error) (bool, error)) error {
		cfg, ok := load(configFile, stderr)
		if !ok {
			return fmt.Errorf("load %s: it has errors (above)", configFile)
		}
		log := hclog.New(&hclog.LoggerOptions{Name: "clawhost", Output: stderr, Level: hclog.Error, TimeFormat: core.LogTimeFormat})
		return pluginprobe.RunAlone(ctx, cfg, instance, log, watch)
	}
}

// whatsAppLinked is init's setup.LinkedCheck: the instance's plugin, asked
// through its probe (pluginprobe.Check), found its device linked. Only the
// plugin reads its data directory.
func whatsAppLinked(stderr io.Writer) setup.LinkedCheck {
	return func(ctx context.Context, configFile, instance string) bool {
		cfg, ok := load(configFile, stderr)
		if !ok || cfg.Plugin(instance) == nil {
			return false
		}
		h := pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
		defer h.Stop()
		diags, res, err := pluginprobe.Check(ctx, h, cfg, cfg.Plugin(instance), true)
		rep := res.Report
		return err == nil && !diags.HasErrors() && rep != nil && len(rep.Checks) > 0 && rep.Worst() == probe.OK
	}
}

// checkClaude is init's setup.ClaudeCheck: one minimal real request through the claude
// CLI, as doctor makes it (runner.Config.Ask), with the bot's config directory.
func checkClaude(ctx context.Context, claude, configDir string, env map[string]string) (setup.ClaudeAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		return setup.ClaudeAnswer{}, err
	}
	a, err := runner.Config{Command: claude, ConfigDir: configDir, Env: env}.Ask(ctx)
	return setup.ClaudeAnswer{OK: a.OK, Refused: a.Refused(), Message: a.Message}, err
}

// runClaudeInTerminal is init's setup.ClaudeCommand: claude with the terminal's input
// and errors, its output copied to out and returned, CLAUDE_CONFIG_DIR the bot's.
func runClaudeInTerminal(ctx context.Context, claude, configDir string, out io.Writer, args ...string) (string, error) {
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		return "", err
	}
	path, err := exec.LookPath(claude)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+configDir)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	cmd.Stdout = io.MultiWriter(os.Stdout, &buf)
	err = cmd.Run()
	return buf.String(), err
}

// channelCatalog is init's setup.Catalog: each clawhost-<source> of
// pluginDir, started through the one launcher (Supervisor.Check: nothing
// configured, no network) for its description, setup text and config
// schema; the channel plugins among them.
func channelCatalog(ctx context.Context, pluginDir string) (map[string]setup.CatalogEntry, error) {
	entries, err := os.ReadDir(pluginDir)
	if err != nil {
		return nil, err
	}
	h := pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
	defer h.Stop()
	out := map[string]setup.CatalogEntry{}
	for _, e := range entries {
		src, ok := strings.CutPrefix(e.Name(), config.BinaryPrefix)
		info, ierr := e.Info()
		if !ok || src == "" || strings.Contains(src, ".") || ierr != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		res, err := h.Check(cctx, pluginhost.Spec{Instance: src, Source: src, Path: filepath.Join(pluginDir, e.Name())},
			func(schema.Schema) []byte { return nil })
		cancel()
		if err == nil && res.Description.Channel {
			out[src] = setup.CatalogEntry{Schema: res.Schema, Setup: res.Description.Setup}
		}
	}
	return out, nil
}

// probeBlock is init's setup.Prober: the plugin clawhost-<source> of
// pluginDir, started through the one launcher (pluginhost.Supervisor.Probe)
// on block, the attributes it leaves out at the schema's defaults. A block
// the plugin's own checks reject has a bad token (init's blocks hold
// little else).
func probeBlock(ctx context.Context, pluginDir, source string, block map[string]any) (probe.Report, error) {
	h := pluginhost.New(pluginhost.Options{Logger: hclog.NewNullLogger()})
	defer h.Stop()
	spec := pluginhost.Spec{Instance: source, Source: source, Path: filepath.Join(pluginDir, config.BinaryPrefix+source)}
	var encodeErr error
	res, err := h.Probe(ctx, spec, func(s schema.Schema) []byte {
		full := map[string]any{}
		for _, a := range s {
			full[a.Name] = a.Default
		}
		for k, v := range block {
			full[k] = v
		}
		js, err := json.Marshal(full)
		encodeErr = err
		return js
	})
	switch {
	case err != nil:
		return probe.Report{}, err
	case encodeErr != nil:
		return probe.Report{}, encodeErr
	case slices.ContainsFunc(res.Verdict, func(d schema.Diagnostic) bool { return !d.Warning }):
		return probe.Report{}, fmt.Errorf("%w: %v", setup.ErrBadToken, res.Verdict)
	case res.Report == nil:
		return probe.Report{}, nil
	}
	return *res.Report, nil
}
