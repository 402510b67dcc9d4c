package slack

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/clawhost/clawhost/sdk/schema"
)

// Defaults and limits of the config {} block.
const (
	// DefaultAPIEndpoint is Slack's Web API: methods under
	// <api_endpoint>/api/<method>.
	DefaultAPIEndpoint = "https://slack.com"
	// DefaultMaxDownloadBytes caps inbound file downloads: 50 MiB.
	DefaultMaxDownloadBytes = 50 << 20
	// DefaultSlashCommand is the slash command the app manifest declares.
	DefaultSlashCommand = "/claw"
	// DefaultListen is where the Events API mode listens.
	DefaultListen = "127.0.0.1:3000"
	// MaxTextLength is the chunk size of a message: Slack takes 40,000
	// characters in a message's text but truncates long ones in the
	// client and recommends at most 4,000 for readable messages. Counted
	// in UTF-16 units, the rendered mrkdwn as written (entities whole).
	MaxTextLength = 4000
	// MaxFileBytes is the largest file the plugin uploads: 1 GB is Slack's
	// limit, 100 MB a bound that keeps a turn's upload reasonable.
	MaxFileBytes = 100 << 20
)

// Connection modes.
const (
	// ModeSocket receives events over Socket Mode (an app-level xapp-
	// token; no public URL).
	ModeSocket = "socket"
	// ModeEvents receives events as HTTP requests from Slack (the Events
	// API; a public URL and the signing secret).
	ModeEvents = "events"
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{Name: "bot_token", Type: "string", Required: true, Sensitive: true,
		Description: `the bot token (xoxb-…) from the app's OAuth & Permissions page, typically env("SLACK_BOT_TOKEN"); never logged`},
	{Name: "app_token", Type: "string", Default: "", Sensitive: true,
		Description: `the app-level token (xapp-…, scope connections:write) from Basic Information → App-Level Tokens, typically env("SLACK_APP_TOKEN"); required in socket mode`},
	{Name: "mode", Type: "string", Default: ModeSocket,
		Description: `how events arrive: "socket" (Socket Mode, works behind NAT) or "events" (the Events API over HTTP at listen; needs signing_secret and a public URL)`},
	{Name: "signing_secret", Type: "string", Default: "", Sensitive: true,
		Description: `the app's signing secret (Basic Information → App Credentials), typically env("SLACK_SIGNING_SECRET"); required in events mode`},
	{Name: "listen", Type: "string", Default: DefaultListen,
		Description: "address the events mode's HTTP server listens on (put a TLS proxy in front); its paths are /slack/events, /slack/interactions and /slack/commands"},
	{Name: "api_endpoint", Type: "string", Default: DefaultAPIEndpoint,
		Description: "base URL of the Slack Web API, methods under <api_endpoint>/api/ (a test fake)"},
	{Name: "reply_in_thread", Type: "bool", Default: false,
		Description: "answer a mention at the top of a channel in a thread under it (the thread is then its own session); false answers in the channel"},
	{Name: "slash_command", Type: "string", Default: DefaultSlashCommand,
		Description: `the slash command the app declares ("/claw new" is /new); "" ignores slash commands`},
	{Name: "max_download_bytes", Type: "number", Default: DefaultMaxDownloadBytes,
		Description: "largest inbound file downloaded, in bytes"},
}

// Config is the decoded config {} block.
type Config struct {
	BotToken         string  `json:"bot_token"`
	AppToken         string  `json:"app_token"`
	Mode             string  `json:"mode"`
	SigningSecret    string  `json:"signing_secret"`
	Listen           string  `json:"listen"`
	APIEndpoint      string  `json:"api_endpoint"`
	ReplyInThread    bool    `json:"reply_in_thread"`
	SlashCommand     *string `json:"slash_command"`
	MaxDownloadBytes float64 `json:"max_download_bytes"`
}

// withDefaults fills unset fields; a host always sends defaults, tests and
// other hosts may not.
func (c Config) withDefaults() Config {
	if c.APIEndpoint == "" {
		c.APIEndpoint = DefaultAPIEndpoint
	}
	c.APIEndpoint = strings.TrimRight(c.APIEndpoint, "/")
	if c.Mode == "" {
		c.Mode = ModeSocket
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.SlashCommand == nil {
		s := DefaultSlashCommand
		c.SlashCommand = &s
	}
	if c.MaxDownloadBytes == 0 {
		c.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	c.BotToken = strings.TrimSpace(c.BotToken)
	c.AppToken = strings.TrimSpace(c.AppToken)
	c.SigningSecret = strings.TrimSpace(c.SigningSecret)
	return c
}

// decodeConfig decodes and checks a config {} block.
func decodeConfig(cfg schema.Config) (Config, error) {
	return schema.DecodeChecked(cfg, Config{}, Config.withDefaults, Config.validate)
}

// Validate is sdk.Plugin.Validate: it checks a block without touching the
// network.
func Validate(_ context.Context, cfg schema.Config) error {
	_, err := decodeConfig(cfg)
	return err
}

var slashName = regexp.MustCompile(`^/[a-z0-9_-]{1,31}$`)

// validate reports every problem of c at once, each at its attribute.
func (c Config) validate() schema.Diagnostics {
	var d schema.Diagnostics
	switch {
	case c.BotToken == "":
		d.Add("bot_token", "must not be empty", `set it to env("SLACK_BOT_TOKEN"); the bot token (xoxb-…) is on the app's OAuth & Permissions page after installing it to the workspace`)
	case !strings.HasPrefix(c.BotToken, "xoxb-"):
		d.Add("bot_token", "is not a bot token", "a bot token starts with xoxb- (an xapp- token goes in app_token, a user token xoxp- is not used)")
	}
	switch c.Mode {
	case ModeSocket:
		switch {
		case c.AppToken == "":
			d.Add("app_token", "is required in socket mode", `set it to env("SLACK_APP_TOKEN"): Basic Information → App-Level Tokens → Generate, with the scope connections:write; or set mode = "events"`)
		case !strings.HasPrefix(c.AppToken, "xapp-"):
			d.Add("app_token", "is not an app-level token", "an app-level token starts with xapp-")
		}
	case ModeEvents:
		if c.SigningSecret == "" {
			d.Add("signing_secret", "is required in events mode", `set it to env("SLACK_SIGNING_SECRET"): Basic Information → App Credentials → Signing Secret`)
		}
	default:
		d.Add("mode", `must be "socket" or "events"`, "")
	}
	if u, err := url.Parse(c.APIEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		d.Add("api_endpoint", "must be an http or https URL without a query", `e.g. "https://slack.com"`)
	}
	if s := *c.SlashCommand; s != "" && !slashName.MatchString(s) {
		d.Add("slash_command", "is not a slash command", `a slash command is / and up to 31 lower-case letters, digits, - or _, e.g. "/claw"`)
	}
	if c.MaxDownloadBytes < 1 || c.MaxDownloadBytes != float64(int64(c.MaxDownloadBytes)) {
		d.Add("max_download_bytes", "must be a positive whole number", "")
	}
	return d
}
