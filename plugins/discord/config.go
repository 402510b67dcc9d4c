package discord

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/clawhost/clawhost/sdk/schema"
)

// Defaults and limits of the config {} block.
const (
	// DefaultAPIEndpoint is Discord: REST under <api_endpoint>/api/v9, the
	// gateway URL discovered from <api_endpoint>/api/v9/gateway/bot.
	DefaultAPIEndpoint = "https://discord.com"
	// DefaultMaxDownloadBytes caps inbound attachment downloads: 25 MiB,
	// Discord's upload limit without boosts.
	DefaultMaxDownloadBytes = 25 << 20
	// DefaultThreadArchive is the auto-archive time of threads the plugin
	// opens, in minutes (one day).
	DefaultThreadArchive = 1440
	// MaxTextLength is Discord's limit of a message's content: 2000
	// characters. Declared in UTF-16 units, which never undercount (see
	// Capabilities).
	MaxTextLength = 2000
	// MaxLines is the soft line limit per message: longer messages are
	// collapsed behind "read more" by Discord clients.
	MaxLines = 17
	// MaxFileBytes is the largest file a bot may upload to a server
	// without boosts: 10 MiB (declared in Capabilities; the host refuses
	// bigger files before sending).
	MaxFileBytes = 10 << 20
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{Name: "token", Type: "string", Required: true, Sensitive: true,
		Description: `bot token from the Developer Portal (Bot → Reset Token), typically env("DISCORD_BOT_TOKEN"); never logged`},
	{Name: "api_endpoint", Type: "string", Default: DefaultAPIEndpoint,
		Description: "base URL of the Discord API: REST under <api_endpoint>/api/v9, the gateway discovered from /api/v9/gateway/bot (a test fake)"},
	{Name: "message_content", Type: "bool", Default: true,
		Description: "request the privileged Message Content intent (enable it in the Developer Portal, Bot → Privileged Gateway Intents); false = mention-only mode: in servers the bot reads only messages that mention or reply to it, DMs always"},
	{Name: "guilds", Type: "list(string)", Default: []string{},
		Description: "server (guild) ids to register the slash commands in (instant); empty: register them globally (may take up to an hour to appear)"},
	{Name: "slash_commands", Type: "bool", Default: true,
		Description: "register the host's commands (/new, /status, …) as slash commands"},
	{Name: "thread_per_conversation", Type: "bool", Default: false,
		Description: "a mention in a server channel opens a thread and the conversation continues there, one session per thread"},
	{Name: "thread_auto_archive", Type: "number", Default: DefaultThreadArchive,
		Description: "minutes of inactivity after which threads the bot opens are archived: 60, 1440, 4320 or 10080"},
	{Name: "max_download_bytes", Type: "number", Default: DefaultMaxDownloadBytes,
		Description: "largest inbound attachment downloaded, in bytes"},
}

// Config is the decoded config {} block.
type Config struct {
	Token                 string   `json:"token"`
	APIEndpoint           string   `json:"api_endpoint"`
	MessageContent        *bool    `json:"message_content"`
	Guilds                []string `json:"guilds"`
	SlashCommands         *bool    `json:"slash_commands"`
	ThreadPerConversation bool     `json:"thread_per_conversation"`
	ThreadAutoArchive     float64  `json:"thread_auto_archive"`
	MaxDownloadBytes      float64  `json:"max_download_bytes"`
}

// withDefaults fills unset fields; a host always sends defaults, tests and
// other hosts may not.
func (c Config) withDefaults() Config {
	t := true
	if c.APIEndpoint == "" {
		c.APIEndpoint = DefaultAPIEndpoint
	}
	c.APIEndpoint = strings.TrimRight(c.APIEndpoint, "/")
	if c.MessageContent == nil {
		c.MessageContent = &t
	}
	if c.SlashCommands == nil {
		c.SlashCommands = &t
	}
	if c.ThreadAutoArchive == 0 {
		c.ThreadAutoArchive = DefaultThreadArchive
	}
	if c.MaxDownloadBytes == 0 {
		c.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	// A token pasted with its "Bot " prefix works as well.
	c.Token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(c.Token), "Bot "))
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

// validate reports every problem of c at once, each at its attribute.
func (c Config) validate() schema.Diagnostics {
	var d schema.Diagnostics
	switch {
	case c.Token == "":
		d.Add("token", "must not be empty", `set it to env("DISCORD_BOT_TOKEN"); the token is in the Developer Portal under Bot → Reset Token`)
	case strings.ContainsAny(c.Token, " \t\n/"):
		d.Add("token", "is not a bot token", "a bot token is three dot-separated parts of letters, digits, - and _")
	}
	if u, err := url.Parse(c.APIEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		d.Add("api_endpoint", "must be an http or https URL without a query", `e.g. "https://discord.com"`)
	}
	for i, g := range c.Guilds {
		if !isSnowflake(g) {
			d.Add(fmt.Sprintf("guilds[%d]", i), "is not a server id", "a server id is a number of 17 to 20 digits (Developer Mode on, right-click the server → Copy Server ID)")
		}
	}
	switch c.ThreadAutoArchive {
	case 60, 1440, 4320, 10080:
	default:
		d.Add("thread_auto_archive", "must be 60, 1440, 4320 or 10080 minutes", "")
	}
	if c.MaxDownloadBytes < 1 || c.MaxDownloadBytes != float64(int64(c.MaxDownloadBytes)) {
		d.Add("max_download_bytes", "must be a positive whole number", "")
	}
	return d
}

// isSnowflake reports whether s looks like a Discord id.
func isSnowflake(s string) bool {
	if len(s) < 15 || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
