package webchat

import (
	"context"
	"fmt"
	"math"
	"net"
	"strconv"

	"github.com/clawhost/clawhost/sdk/schema"
)

// Defaults of the config {} block.
const (
	// DefaultListen is where the page is served when listen is not set.
	DefaultListen = "127.0.0.1:8790"
	// DefaultHistoryLimit is how many messages a conversation keeps.
	DefaultHistoryLimit = 200
	// DefaultTitle is the page's title.
	DefaultTitle = "clawhost"
	// maxHistoryLimit bounds history_limit: the whole history of a chat is
	// sent to the page on every (re)connect.
	maxHistoryLimit = 5000
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{
		Name:        "listen",
		Type:        "string",
		Default:     DefaultListen,
		Description: "host:port the chat page is served on. Anything but a loopback address (127.0.0.1, ::1, localhost) requires tls_cert and tls_key.",
		// People open the page here, and it asks them for the access token:
		// the host audits the address and counts the chat local on loopback.
		Listen:      true,
		ListenToken: true,
	},
	{
		Name:      "access_token",
		Type:      "string",
		Sensitive: true,
		Description: "Token the page always requires: open it once with ?token=<token>, a cookie keeps it. When not set, one is made at the first start and kept in " +
			TokenFile + " in the plugin's data directory (0600); clawhost prints the link with it at start and `clawhost status` shows it.",
	},
	{
		Name:        "tls_cert",
		Type:        "string",
		Description: "PEM certificate file: with tls_key, the page is served over HTTPS (required beyond loopback). A relative path is relative to the plugin's data directory.",
	},
	{
		Name:        "tls_key",
		Type:        "string",
		Description: "PEM key file of tls_cert.",
	},
	{
		Name:        "history_limit",
		Type:        "number",
		Default:     DefaultHistoryLimit,
		Description: "Messages kept per conversation, in memory and in <data_dir>/history.json, and shown again after a reload.",
	},
	{
		Name:        "title",
		Type:        "string",
		Default:     DefaultTitle,
		Description: "Title shown by the page.",
	},
}

// Config is the decoded config {} block; see Schema for the meaning of
// each field.
type Config struct {
	// Listen is the host:port to serve on.
	Listen string `json:"listen"`
	// AccessToken is required by the page and the WebSocket; when empty,
	// Configure uses the one kept in TokenFile (made at the first start).
	AccessToken string `json:"access_token"`
	// TLSCert and TLSKey, when set, serve the page over HTTPS.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
	// HistoryLimit is the number of messages kept per conversation.
	HistoryLimit float64 `json:"history_limit"`
	// Title is the page title.
	Title string `json:"title"`
}

// withDefaults fills absent (null) attributes; the host normally did so
// already from the schema defaults.
func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.HistoryLimit == 0 {
		c.HistoryLimit = DefaultHistoryLimit
	}
	if c.Title == "" {
		c.Title = DefaultTitle
	}
	return c
}

// Validate checks a config {} block without applying it: nothing is bound,
// read or written. The host calls it from `clawhost validate`, before a
// start and on a reload, so a block the web chat would refuse is reported
// at its file:line:col before a working chat is stopped. Configure runs
// the same checks, and also finds an address already in use, which only
// binding it can tell. The access token never appears in a diagnostic.
func Validate(_ context.Context, cfg schema.Config) error {
	_, err := decodeConfig(cfg)
	return err
}

// decodeConfig decodes a config block, fills defaults and checks it.
func decodeConfig(cfg schema.Config) (Config, error) {
	return schema.DecodeChecked(cfg, Config{}, Config.withDefaults, Config.validate)
}

// validate checks c and returns every problem at once.
func (c Config) validate() schema.Diagnostics {
	var diags schema.Diagnostics
	loopback, err := isLoopbackListen(c.Listen)
	tls := c.TLSCert != "" && c.TLSKey != ""
	if err != nil {
		diags = append(diags, schema.Diagnostic{Attribute: "listen", Summary: "invalid listen address " + strconv.Quote(c.Listen), Detail: err.Error() + `; use host:port, e.g. "127.0.0.1:8790"`})
	} else if !loopback && !tls {
		diags = append(diags, schema.Diagnostic{
			Attribute: "listen",
			Summary:   fmt.Sprintf("listen address %q is not loopback and no TLS certificate is set", c.Listen),
			Detail:    "the access token and the conversation would cross the network in clear; set tls_cert and tls_key, or listen on 127.0.0.1",
		})
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		set, missing := "tls_cert", "tls_key"
		if c.TLSCert == "" {
			set, missing = missing, set
		}
		diags = append(diags, schema.Diagnostic{Attribute: set, Summary: set + " is set but " + missing + " is not", Detail: "set both PEM files, or neither"})
	}
	if c.AccessToken != "" && len(c.AccessToken) < 16 {
		diags = append(diags, schema.Diagnostic{Attribute: "access_token", Summary: "access_token is too short", Detail: "use at least 16 characters, e.g. the output of `openssl rand -hex 16`"})
	}
	if c.HistoryLimit != math.Trunc(c.HistoryLimit) || c.HistoryLimit < 1 || c.HistoryLimit > maxHistoryLimit {
		diags = append(diags, schema.Diagnostic{Attribute: "history_limit", Summary: fmt.Sprintf("history_limit must be a whole number from 1 to %d", maxHistoryLimit)})
	}
	return diags
}

// isLoopbackListen reports whether the host part of a listen address is a
// loopback address. An empty host (":8790") means every interface: not
// loopback. Host names other than "localhost" count as not loopback, since
// what they resolve to may change.
func isLoopbackListen(listen string) (bool, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return false, err
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return false, fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return isLoopbackHost(host), nil
}

// isLoopbackHost reports whether host (no port) names the loopback interface.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
