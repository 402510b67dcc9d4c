package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
)

// Plan is what init writes: the answers, checked.
type Plan struct {
	// ConfigDir receives config.hcl and clawhost.env.
	ConfigDir string
	// DataDir, Workspace and PluginDir are absolute paths.
	DataDir, Workspace, PluginDir string
	// Claude is the claude CLI (a path, or "claude" to find it in PATH).
	Claude string
	// TelegramToken and DiscordToken enable those channels ("" off);
	// TelegramAPI and DiscordAPI are their endpoints when not the platforms'
	// own (a test's fake).
	TelegramToken, TelegramAPI string
	DiscordToken, DiscordAPI   string
	// WhatsApp and WebChat enable those channels; WebChatListen and
	// AdminListen are their addresses.
	WhatsApp, WebChat          bool
	WebChatListen, AdminListen string
	// WhatsAppServer and WhatsAppRootKey are the whatsapp plugin's
	// server_address and server_root_key: a test's fake WhatsApp ("": the
	// real one).
	WhatsAppServer, WhatsAppRootKey string
	// WhatsAppPersonal: the WhatsApp number is the operator's own, so the bot answers only
	// in "Message yourself" (the plugin's self_chat and only_self_chat) and never writes
	// to the contacts who write to that number.
	WhatsAppPersonal bool
	// ClaudeAuth is how the bot reaches Claude; AnthropicKey (ANTHROPIC_API_KEY) or
	// ClaudeToken (CLAUDE_CODE_OAUTH_TOKEN, from claude setup-token) is its credential,
	// written to clawhost.env only ("" none).
	ClaudeAuth                ClaudeAuth
	AnthropicKey, ClaudeToken string
	// WebChatToken is the web chat's access token init makes (clawhost.env's
	// WEBCHAT_ACCESS_TOKEN), so that it can print the page's link with it.
	WebChatToken string
	// Others are channels set up from their plugins' schemas
	// (OtherChannel), each written as plugin "<source>".
	Others []OtherChannel
	// Presets are settings of other channels given beforehand (init's
	// -set source.attribute=value), by source and attribute: init writes
	// them into the block and does not ask for them.
	Presets map[string]map[string]string
}

// EnvWebChatToken is the variable of the web chat's access token in clawhost.env.
const EnvWebChatToken = "WEBCHAT_ACCESS_TOKEN"

// Files are the paths init writes.
type Files struct {
	Config, Env string
}

// FilesOf are the files of a configuration directory.
func FilesOf(configDir string) Files {
	return Files{Config: filepath.Join(configDir, ConfigFile), Env: filepath.Join(configDir, EnvFile)}
}

// Render returns the configuration file and the env file of p. The tokens
// go to the env file only; the configuration names them with env().
func Render(p Plan, now time.Time) (config, env []byte) {
	q := strconv.Quote
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by clawhost init on %s. Every setting, annotated: config.hcl in the\n", now.Format("2006-01-02"))
	b.WriteString("# clawhost sources; tokens are in clawhost.env beside this file (read at start).\n\n")
	fmt.Fprintf(&b, "data_dir   = %s  # database, plugin state, owners.json\n", q(p.DataDir))
	fmt.Fprintf(&b, "plugin_dir = %s\n\n", q(p.PluginDir))
	fmt.Fprintf(&b, "agent {\n  command   = %s\n  workspace = %s\n}\n\n", q(p.Claude), q(p.Workspace))
	b.WriteString("access {\n  dm_policy = \"pairing\"  # strangers get a code an owner approves\n")
	b.WriteString("  owners    = []         # and the senders of \"/owner CODE\" (data_dir/owners.json)\n")
	if p.WebChat {
		b.WriteString("  allow_from = [\"web:*\"] # the web chat listens on loopback only\n")
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(&b, "admin {\n  listen = %s  # status page: clawhost status\n}\n", q(p.AdminListen))
	var e strings.Builder
	e.WriteString("# Secrets of clawhost (KEY=VALUE), read at start when not already in the environment.\n")
	if p.WebChat {
		fmt.Fprintf(&b, "\nplugin \"web\" {\n  source = \"webchat\"\n  config {\n    listen = %s\n", q(p.WebChatListen))
		if p.WebChatToken != "" {
			fmt.Fprintf(&b, "    access_token = env(%s)  # the link: http://%s/?token=<it>\n", q(EnvWebChatToken), p.WebChatListen)
			fmt.Fprintf(&e, "%s=%s\n", EnvWebChatToken, q(p.WebChatToken))
		}
		b.WriteString("  }\n}\n")
	}
	if p.TelegramToken != "" {
		b.WriteString("\nplugin \"tg\" {\n  source = \"telegram\"\n  config {\n    token = env(\"TELEGRAM_BOT_TOKEN\")\n")
		if p.TelegramAPI != "" && p.TelegramAPI != TelegramAPI {
			fmt.Fprintf(&b, "    api_endpoint = %s\n", q(p.TelegramAPI))
		}
		b.WriteString("  }\n}\n")
		fmt.Fprintf(&e, "TELEGRAM_BOT_TOKEN=%s\n", q(p.TelegramToken))
	}
	if p.DiscordToken != "" {
		b.WriteString("\nplugin \"dc\" {\n  source = \"discord\"\n  config {\n    token = env(\"DISCORD_BOT_TOKEN\")\n")
		if p.DiscordAPI != "" && p.DiscordAPI != DiscordAPI {
			fmt.Fprintf(&b, "    api_endpoint = %s\n", q(p.DiscordAPI))
		}
		b.WriteString("  }\n}\n")
		fmt.Fprintf(&e, "DISCORD_BOT_TOKEN=%s\n", q(p.DiscordToken))
	}
	if p.WhatsApp {
		b.WriteString("\n# Linked by clawhost init, or at the first clawhost run: it shows a QR code to\n")
		b.WriteString("# scan with WhatsApp (Settings → Linked devices) in its log, clawhost status and\n")
		b.WriteString("# the status page. The linked device is kept in data_dir/plugins/wa.\n")
		b.WriteString("plugin \"wa\" {\n  source = \"whatsapp\"\n")
		if p.WhatsAppServer != "" || p.WhatsAppPersonal {
			b.WriteString("  config {\n")
			if p.WhatsAppServer != "" {
				fmt.Fprintf(&b, "    server_address  = %s\n    server_root_key = %s\n", q(p.WhatsAppServer), q(p.WhatsAppRootKey))
			}
			if p.WhatsAppPersonal {
				b.WriteString("    # Your own number: the agent answers only in \"Message yourself\"; the people\n")
				b.WriteString("    # who write to you never meet it (no pairing code, no answer).\n")
				b.WriteString("    self_chat      = true\n    only_self_chat = true\n")
			}
			b.WriteString("  }\n")
		}
		b.WriteString("}\n")
	}
	if p.AnthropicKey != "" {
		fmt.Fprintf(&e, "%s=%s\n", EnvAPIKey, q(p.AnthropicKey))
	}
	if p.ClaudeToken != "" {
		fmt.Fprintf(&e, "%s=%s\n", EnvOAuthToken, q(p.ClaudeToken))
	}
	renderOthers(&b, &e, p.Others)
	return []byte(b.String()), []byte(e.String())
}

// ErrExists is returned by Write for a file that exists and was not to be
// overwritten.
var ErrExists = errors.New("exists")

// Write writes p's files (0600; the directories 0700), the data directory
// and the workspace. A file that exists is replaced only when overwrite
// says so for its path (nil: never); otherwise nothing is written and the
// error wraps ErrExists.
func Write(p Plan, now time.Time, overwrite func(path string) bool) (Files, error) {
	f := FilesOf(p.ConfigDir)
	for _, path := range []string{f.Config, f.Env} {
		if _, err := os.Stat(path); err == nil {
			if overwrite == nil || !overwrite(path) {
				return f, fmt.Errorf("write %s: %w (run with -force to replace it)", path, ErrExists)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return f, fmt.Errorf("write %s: %w", path, err)
		}
	}
	for _, d := range []string{p.ConfigDir, p.DataDir, p.Workspace} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return f, fmt.Errorf("create %s: %w", d, err)
		}
	}
	cfg, env := Render(p, now)
	// The env file first: a config without its tokens would not start.
	if err := atomicfile.Write(f.Env, env); err != nil {
		return f, fmt.Errorf("write %s: %w", f.Env, err)
	}
	if err := atomicfile.Write(f.Config, cfg); err != nil {
		return f, fmt.Errorf("write %s: %w", f.Config, err)
	}
	return f, nil
}
