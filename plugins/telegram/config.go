package telegram

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/clawhost/clawhost/sdk/schema"
)

// Defaults of the config {} block.
const (
	// DefaultAPIEndpoint is Telegram's cloud Bot API (token, method).
	DefaultAPIEndpoint = "https://api.telegram.org/bot%s/%s"
	// DefaultPollTimeout is the long-poll timeout of getUpdates, seconds.
	DefaultPollTimeout = 30
	// DefaultMaxDownloadBytes caps media downloads: 20 MiB, the cloud Bot
	// API's getFile limit.
	DefaultMaxDownloadBytes = 20 << 20
	// MaxTextLength is Telegram's limit of one message's visible text, in
	// UTF-16 code units.
	MaxTextLength = 4096
	// maxCaptionLength is Telegram's limit of a media caption.
	maxCaptionLength = 1024
	// MinWebhookSecret is the shortest webhook_secret accepted: 16
	// characters of the 64 allowed are 96 bits, beyond guessing even
	// without the limit on failed attempts.
	MinWebhookSecret = 16
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{Name: "token", Type: "string", Required: true, Sensitive: true,
		Description: `bot token from @BotFather, typically env("TELEGRAM_BOT_TOKEN"); never logged`},
	{Name: "api_endpoint", Type: "string", Default: DefaultAPIEndpoint,
		Description: `Bot API URL format with two %s (token, method): a self-hosted Bot API server or a test fake`},
	{Name: "file_endpoint", Type: "string",
		Description: `file download URL format with two %s (token, file_path); default: api_endpoint with "/bot%s/%s" replaced by "/file/bot%s/%s"`},
	{Name: "poll_timeout", Type: "number", Default: DefaultPollTimeout,
		Description: "getUpdates long-poll timeout in seconds (0..50; 0 polls every second)"},
	{Name: "webhook_listen", Type: "string",
		Description: `address to receive updates by webhook instead of long polling, e.g. "127.0.0.1:8443" (behind a TLS reverse proxy)`},
	{Name: "webhook_url", Type: "string",
		Description: "public https URL Telegram posts updates to; when set the plugin calls setWebhook with it (webhook mode only)"},
	{Name: "webhook_secret", Type: "string", Sensitive: true,
		Description: "secret Telegram sends in X-Telegram-Bot-Api-Secret-Token (16-256 of A-Z a-z 0-9 _ -); required in webhook mode"},
	{Name: "text_limit", Type: "number", Default: MaxTextLength,
		Description: "longest message text in UTF-16 units (1..4096)"},
	{Name: "disable_web_page_preview", Type: "bool", Default: false,
		Description: "never show link previews"},
	{Name: "max_download_bytes", Type: "number", Default: DefaultMaxDownloadBytes,
		Description: "largest inbound media file downloaded, in bytes"},
}

// Config is the decoded config {} block.
type Config struct {
	Token                 string  `json:"token"`
	APIEndpoint           string  `json:"api_endpoint"`
	FileEndpoint          string  `json:"file_endpoint"`
	PollTimeout           float64 `json:"poll_timeout"`
	WebhookListen         string  `json:"webhook_listen"`
	WebhookURL            string  `json:"webhook_url"`
	WebhookSecret         string  `json:"webhook_secret"`
	TextLimit             float64 `json:"text_limit"`
	DisableWebPagePreview bool    `json:"disable_web_page_preview"`
	MaxDownloadBytes      float64 `json:"max_download_bytes"`
}

// withDefaults fills unset fields; a host always sends defaults, tests and
// other hosts may not.
func (c Config) withDefaults() Config {
	if c.APIEndpoint == "" {
		c.APIEndpoint = DefaultAPIEndpoint
	}
	if c.FileEndpoint == "" {
		c.FileEndpoint = deriveFileEndpoint(c.APIEndpoint)
	}
	if c.TextLimit == 0 {
		c.TextLimit = MaxTextLength
	}
	if c.MaxDownloadBytes == 0 {
		c.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	return c
}

// deriveFileEndpoint turns ".../bot%s/%s" into ".../file/bot%s/%s", the
// layout of api.telegram.org and of telegram-bot-api servers.
func deriveFileEndpoint(api string) string {
	if i := strings.LastIndex(api, "/bot%s/%s"); i >= 0 {
		return api[:i] + "/file/bot%s/%s" + api[i+len("/bot%s/%s"):]
	}
	return ""
}

// Validate checks a config {} block without applying it: no network, no
// files, nothing kept. The host calls it from `clawhost validate`, before a
// start and on a reload, so a block Telegram would refuse is reported at
// its file:line:col before a working bot is stopped. Configure runs the
// same checks. The token's value never appears in a diagnostic.
func Validate(_ context.Context, cfg schema.Config) error {
	_, err := decodeConfig(cfg)
	return err
}

// decodeConfig decodes a config block, fills defaults and checks it.
func decodeConfig(cfg schema.Config) (Config, error) {
	// Absent (or null) attributes keep their defaults.
	return schema.DecodeChecked(cfg, Config{PollTimeout: DefaultPollTimeout}, Config.withDefaults, Config.validate)
}

// validate reports every problem of c at once. Summaries read on their
// own (the host prints `<summary> in plugin "tg"` above the value).
func (c Config) validate() schema.Diagnostics {
	var d schema.Diagnostics
	if strings.TrimSpace(c.Token) == "" {
		d.Add("token", "Empty bot token", `set it to env("TELEGRAM_BOT_TOKEN") with the token @BotFather gave you`)
	} else if !tokenShape(c.Token) {
		d.Add("token", "Malformed bot token", "a bot token is the bot's numeric id, a colon and a secret of letters, digits, _ and - (123456789:AAH…), as @BotFather gives it; this value does not have that shape")
	}
	checkFormat := func(attr, v string) {
		if strings.Count(v, "%s") != 2 || strings.Count(v, "%") != 2 {
			d.Add(attr, "Invalid "+attr, "it must contain exactly two %s: the token, then the method or file path")
			return
		}
		u, err := url.Parse(strings.ReplaceAll(v, "%s", "x"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.Add(attr, "Invalid "+attr, "it must be an http or https URL")
		}
	}
	checkFormat("api_endpoint", c.APIEndpoint)
	if c.FileEndpoint == "" {
		d.Add("file_endpoint", "Missing file_endpoint", `it cannot be derived from api_endpoint (no "/bot%s/%s" in it); set it, e.g. "https://host/file/bot%s/%s"`)
	} else {
		checkFormat("file_endpoint", c.FileEndpoint)
	}
	if c.PollTimeout < 0 || c.PollTimeout > 50 {
		d.Add("poll_timeout", "Invalid poll_timeout", "it must be between 0 and 50 seconds")
	}
	if c.TextLimit < 1 || c.TextLimit > MaxTextLength || c.TextLimit != float64(int(c.TextLimit)) {
		d.Add("text_limit", "Invalid text_limit", fmt.Sprintf("it must be a whole number between 1 and %d", MaxTextLength))
	}
	if c.MaxDownloadBytes < 1 {
		d.Add("max_download_bytes", "Invalid max_download_bytes", "it must be positive")
	}
	if c.WebhookListen != "" {
		if _, _, err := net.SplitHostPort(c.WebhookListen); err != nil {
			d.Add("webhook_listen", "Invalid webhook_listen", "it must be host:port: "+err.Error())
		}
		switch {
		case !validSecret(c.WebhookSecret):
			d.Add("webhook_secret", "Missing or invalid webhook_secret", fmt.Sprintf("webhook mode needs a secret of %d-256 characters of A-Z a-z 0-9 _ -", MinWebhookSecret))
		case len(c.WebhookSecret) < MinWebhookSecret:
			d.Add("webhook_secret", "webhook_secret too short", fmt.Sprintf("it has %d characters; use at least %d (e.g. the output of `openssl rand -hex 16`), or anyone who finds webhook_url can guess it", len(c.WebhookSecret), MinWebhookSecret))
		}
		if c.WebhookURL != "" {
			if u, err := url.Parse(c.WebhookURL); err != nil || u.Scheme != "https" || u.Host == "" {
				d.Add("webhook_url", "Invalid webhook_url", "Telegram posts updates only to an https URL")
			}
		}
	} else if c.WebhookURL != "" || c.WebhookSecret != "" {
		d.Add("webhook_listen", "Missing webhook_listen", "webhook_url and webhook_secret need webhook_listen, the address the plugin receives updates on")
	}
	return d
}

// tokenShape reports whether s looks like a bot token: the bot's numeric
// id, ":", and a secret of A-Z a-z 0-9 _ -. Whether Telegram accepts it is
// known only when the plugin runs (getMe).
func tokenShape(s string) bool {
	id, secret, ok := strings.Cut(s, ":")
	if !ok || id == "" || secret == "" {
		return false
	}
	for _, r := range id {
		if r < '0' || r > '9' {
			return false
		}
	}
	return validSecret(secret)
}

func validSecret(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
