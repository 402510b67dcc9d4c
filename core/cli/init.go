package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/clawhost/clawhost/core/internal/termecho"
	"github.com/clawhost/clawhost/core/setup"
)

const initUsage = "usage: clawhost init [-non-interactive] [-telegram-token T] [-discord-token T] [-whatsapp] [-webchat] [-workspace DIR] [-config-dir DIR] [-data-dir DIR] [-force]"

// initCommand is `clawhost init`: setup.Run with the flags, on the
// process's terminal.
func initCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clawhost init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var p setup.Plan
	nonInteractive := fs.Bool("non-interactive", false, "ask nothing: the flags and the environment say everything")
	force := fs.Bool("force", false, "replace an existing config.hcl and clawhost.env")
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
	fs.StringVar(&p.TelegramAPI, "telegram-api", os.Getenv("CLAWHOST_TELEGRAM_API"), "Telegram Bot API endpoint, a format with two %s (token, method); a test's fake")
	fs.StringVar(&p.DiscordAPI, "discord-api", os.Getenv("CLAWHOST_DISCORD_API"), "Discord API base URL; a test's fake")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return help([]string{"init"}, stdout, stderr)
		}
		fmt.Fprintln(stderr, initUsage)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "clawhost init: unexpected argument %q\n%s\n", fs.Arg(0), initUsage)
		return 2
	}
	o := setup.Options{Plan: p, Interactive: !*nonInteractive, Force: *force, In: os.Stdin, Out: stdout}
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
