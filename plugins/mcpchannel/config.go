package mcpchannel

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Defaults of the config {} block.
const (
	// DefaultTextLimit is the longest text one reply carries, in UTF-16
	// units: under Telegram's 4096, over Discord's 2000 (set text_limit =
	// 2000 there, or the server splits the text itself).
	DefaultTextLimit = 4000
	// DefaultStartTimeout bounds a server's start, in seconds: from the
	// process start to its tool list (a Bun server runs `bun install`
	// first).
	DefaultStartTimeout = 60
	// DefaultMaxDownloadBytes caps an attachment the host copies from a
	// path the server names: 50 MiB, the official servers' own limit.
	DefaultMaxDownloadBytes = 50 << 20
)

// Chat types of the chat_type attribute.
const (
	chatTypeAuto   = "auto"
	chatTypeDirect = "direct"
	chatTypeGroup  = "group"
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{Name: "command", Type: "list(string)",
		Description: `the channel server's command line, e.g. ["bun", "run", "--cwd", "/path/to/plugin", "start"]; or set plugin_path`},
	{Name: "plugin_path", Type: "string",
		Description: "directory of an installed Claude Code plugin: its .mcp.json names the server's command (${CLAUDE_PLUGIN_ROOT} is this directory)"},
	{Name: "server", Type: "string",
		Description: "with plugin_path: the name of the server in .mcp.json's mcpServers; default: its only one"},
	{Name: "env", Type: "map(string)", Sensitive: true,
		Description: `extra environment of the server (tokens, e.g. { TELEGRAM_BOT_TOKEN = env("TELEGRAM_BOT_TOKEN") }); never logged`},
	{Name: "dir", Type: "string",
		Description: "working directory of the server; default: plugin_path, else the instance's data directory"},
	{Name: "text_limit", Type: "number", Default: DefaultTextLimit,
		Description: "longest reply text in UTF-16 units (the host splits longer ones); the platform's limit, e.g. 2000 for Discord"},
	{Name: "markup", Type: "string", Default: string(channel.MarkupNone),
		Description: `what the server's chat shows: "none" (plain text, the default) or "markdown" (Discord)`},
	{Name: "chat_type", Type: "string", Default: chatTypeAuto,
		Description: `how chats are classified: "auto" (a chat whose id is its sender's id is direct, any other a group), "direct" or "group"`},
	{Name: "start_timeout", Type: "number", Default: DefaultStartTimeout,
		Description: "seconds a server may take from its start to its tool list"},
	{Name: "max_download_bytes", Type: "number", Default: DefaultMaxDownloadBytes,
		Description: "largest attachment the host copies from a path the server names, in bytes"},
	{Name: "permission_relay_from", Type: "string",
		Description: "the id of the one person the server trusts (its allowlist): approval questions also go through the server's permission relay, and its answers count as this person's; empty: off"},
}

// Config is the decoded config {} block.
type Config struct {
	Command          []string          `json:"command"`
	PluginPath       string            `json:"plugin_path"`
	Server           string            `json:"server"`
	Env              map[string]string `json:"env"`
	Dir              string            `json:"dir"`
	TextLimit        float64           `json:"text_limit"`
	Markup           string            `json:"markup"`
	ChatType         string            `json:"chat_type"`
	StartTimeout     float64           `json:"start_timeout"`
	MaxDownloadBytes float64           `json:"max_download_bytes"`
	// PermissionRelayFrom turns the permission relay on (relay.go).
	PermissionRelayFrom string `json:"permission_relay_from"`
}

// withDefaults fills unset fields; a host always sends defaults, tests may
// not.
func (c Config) withDefaults() Config {
	if c.TextLimit == 0 {
		c.TextLimit = DefaultTextLimit
	}
	if c.Markup == "" {
		c.Markup = string(channel.MarkupNone)
	}
	if c.ChatType == "" {
		c.ChatType = chatTypeAuto
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.MaxDownloadBytes == 0 {
		c.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	return c
}

// Validate checks a config {} block without applying it: it reads
// plugin_path's .mcp.json but starts nothing.
func Validate(_ context.Context, cfg schema.Config) error {
	_, _, err := decodeConfig(cfg)
	return err
}

// decodeConfig decodes a config block, fills defaults, checks it and
// resolves the server's command line.
func decodeConfig(cfg schema.Config) (Config, launch, error) {
	var c Config
	if err := cfg.Decode(&c); err != nil {
		return c, launch{}, err
	}
	c = c.withDefaults()
	var d schema.Diagnostics
	var l launch
	switch {
	case len(c.Command) > 0 && c.PluginPath != "":
		d.Add("plugin_path", "Both command and plugin_path set", "set one: the server's command line, or the plugin directory whose .mcp.json names it")
	case len(c.Command) > 0:
		if strings.TrimSpace(c.Command[0]) == "" {
			d.Add("command[0]", "Empty program", "the first element is the program to run")
		}
		l = launch{argv: c.Command, dir: c.Dir}
		if c.Server != "" {
			d.Add("server", "server without plugin_path", "server names an entry of plugin_path's .mcp.json")
		}
	case c.PluginPath != "":
		var err error
		if l, err = readMCPJSON(c.PluginPath, c.Server); err != nil {
			d.Add("plugin_path", "Unusable plugin_path", err.Error())
		}
		if c.Dir != "" {
			l.dir = c.Dir
		}
	default:
		d.Add("command", "No channel server", `set command (e.g. ["bun", "run", "--cwd", "/path/to/plugin", "start"]) or plugin_path`)
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			d.Add("env", "Invalid environment variable name", fmt.Sprintf("%q", k))
		}
	}
	if c.TextLimit < 1 || c.TextLimit != float64(int(c.TextLimit)) {
		d.Add("text_limit", "Invalid text_limit", "it must be a whole number of at least 1")
	}
	switch channel.Markup(c.Markup) {
	case channel.MarkupNone, channel.MarkupMarkdown:
	default:
		d.Add("markup", "Invalid markup", `it must be "none" or "markdown"`)
	}
	switch c.ChatType {
	case chatTypeAuto, chatTypeDirect, chatTypeGroup:
	default:
		d.Add("chat_type", "Invalid chat_type", `it must be "auto", "direct" or "group"`)
	}
	if c.StartTimeout <= 0 {
		d.Add("start_timeout", "Invalid start_timeout", "it must be positive")
	}
	if c.MaxDownloadBytes < 1 {
		d.Add("max_download_bytes", "Invalid max_download_bytes", "it must be positive")
	}
	if len(d) > 0 {
		return c, l, d
	}
	env := map[string]string{}
	maps.Copy(env, l.env)
	maps.Copy(env, c.Env)
	l.env = env
	return c, l, nil
}

// launch is how a server is started: its argv, working directory ("" the
// caller's default) and extra environment.
type launch struct {
	argv []string
	dir  string
	env  map[string]string
}

// mcpJSON is a Claude Code plugin's .mcp.json.
type mcpJSON struct {
	MCPServers map[string]struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	} `json:"mcpServers"`
}

// pluginRootVar is what Claude Code replaces with the plugin's directory
// in .mcp.json.
const pluginRootVar = "${CLAUDE_PLUGIN_ROOT}"

// readMCPJSON reads the server named name (the only one when "") from the
// .mcp.json of the Claude Code plugin in dir.
func readMCPJSON(dir, name string) (launch, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return launch{}, err
	}
	b, err := os.ReadFile(filepath.Join(abs, ".mcp.json"))
	if err != nil {
		return launch{}, fmt.Errorf("read the plugin's .mcp.json: %w", err)
	}
	var m mcpJSON
	if err := json.Unmarshal(b, &m); err != nil {
		return launch{}, fmt.Errorf("decode %s: %w", filepath.Join(abs, ".mcp.json"), err)
	}
	names := make([]string, 0, len(m.MCPServers))
	for n := range m.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	if name == "" {
		if len(names) != 1 {
			return launch{}, fmt.Errorf(".mcp.json has %d servers (%s): set server to one of them", len(names), strings.Join(names, ", "))
		}
		name = names[0]
	}
	s, ok := m.MCPServers[name]
	if !ok {
		return launch{}, fmt.Errorf(".mcp.json has no server %q (it has %s)", name, strings.Join(names, ", "))
	}
	if s.Command == "" {
		return launch{}, fmt.Errorf(".mcp.json's server %q has no command", name)
	}
	expand := func(v string) string { return strings.ReplaceAll(v, pluginRootVar, abs) }
	argv := []string{expand(s.Command)}
	for _, a := range s.Args {
		argv = append(argv, expand(a))
	}
	env := map[string]string{"CLAUDE_PLUGIN_ROOT": abs}
	for k, v := range s.Env {
		env[k] = expand(v)
	}
	return launch{argv: argv, dir: abs, env: env}, nil
}
