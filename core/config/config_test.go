package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/sdk/schema"
)

func mustParse(t *testing.T, src string, env map[string]string) *Config {
	t.Helper()
	cfg, diags := parse([]byte(src), "/etc/clawhost/config.hcl", "/etc/clawhost", mapEnv(env))
	if diags.HasErrors() {
		t.Fatalf("parse: %s", diags.Error())
	}
	return cfg
}

func mapEnv(env map[string]string) lookupEnvFunc {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `plugin "tg" { source = "telegram" }`, nil)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"data_dir", cfg.DataDir, "/etc/clawhost/data"},
		{"plugin_dir", cfg.PluginDir, installpath.ExecutableDir()},
		{"log_level", cfg.LogLevel, "info"},
		{"log_format", cfg.LogFormat, "text"},
		{"agent.command", cfg.Agent.Command, "claude"},
		{"agent.workspace", cfg.Agent.Workspace, "/etc/clawhost/workspace"},
		{"agent.timeout", cfg.Agent.Timeout.Duration(), 10 * time.Minute},
		{"agent.idle_timeout", cfg.Agent.IdleTimeout.Duration(), 30 * time.Minute},
		{"agent.max_warm", cfg.Agent.MaxWarm, 0},
		{"agent.warm_memory", cfg.Agent.WarmMemory, Size("")},
		{"agent.max_concurrent", cfg.Agent.MaxConcurrent, 4},
		{"agent.max_turns", cfg.Agent.MaxTurns, 0},
		{"agent.one_shot", cfg.Agent.OneShot, false},
		{"agent.permission_mode", cfg.Agent.PermissionMode, ""},
		{"agent.approvals", cfg.Agent.Approvals, "off"},
		{"agent.approval_timeout", cfg.Agent.ApprovalTimeout.Duration(), 5 * time.Minute},
		{"agent.media_keep", cfg.Agent.MediaKeep.Duration(), 30 * 24 * time.Hour},
		{"agent.approvers", cfg.Agent.Approvers, "owners"},
		{"agent.inline_images", cfg.Agent.InlineImages, true},
		{"access.dm_policy", cfg.Access.DMPolicy, "pairing"},
		{"access.group_policy", cfg.Access.GroupPolicy, "allowlist"},
		{"access.require_mention", cfg.Access.RequireMention, true},
		{"admin.listen", cfg.Admin.Listen, "127.0.0.1:8791"},
		{"plugin.enabled", cfg.Plugins[0].Enabled, true},
		{"plugin.path", cfg.Plugins[0].Path, filepath.Join(installpath.ExecutableDir(), "clawhost-telegram")},
		{"plugin.start_timeout", cfg.Plugins[0].StartTimeout.Duration(), 10 * time.Second},
		{"plugin.config", cfg.Plugins[0].ConfigBlock == nil, true},
		{"plugin.debounce", cfg.Plugins[0].Debounce, Duration("")},
		{"plugin.text_limit", cfg.Plugins[0].TextLimit, 0},
		{"plugin.queue_mode", cfg.Plugins[0].QueueMode, ""},
		{"plugin.reset", cfg.Plugins[0].Reset == nil, true},
		{"session.dm_scope", cfg.Session.DMScope, "per-channel-peer"},
		{"session.reset_triggers", cfg.Session.ResetTriggers, []string{"/new", "/reset"}},
		{"session.reset", cfg.Session.Reset == nil, true},
		{"session.reset_by_type", len(cfg.Session.ResetByType), 0},
		{"queue.mode", cfg.Queue.Mode, "followup"},
		{"queue.cap", cfg.Queue.Cap, 20},
		{"queue.drop", cfg.Queue.Drop, "summarize"},
		{"queue.debounce", cfg.Queue.Debounce.Duration(), time.Duration(0)},
		{"messages.response_prefix", cfg.Messages.ResponsePrefix, ""},
		{"messages.text_limit", cfg.Messages.TextLimit, 4000},
		{"messages.chunk_mode", cfg.Messages.ChunkMode, "length"},
		{"messages.group_history_limit", cfg.Messages.GroupHistoryLimit, 50},
		{"messages.timezone", cfg.Messages.Timezone, "local"},
		{"messages.location", cfg.Messages.Location(), time.Local},
		{"messages.streaming", cfg.Messages.Streaming, "auto"},
		{"messages.verbose", cfg.Messages.Verbose, false},
		{"messages.hook_timeout", cfg.Messages.HookTimeout.Duration(), 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !reflect.DeepEqual(tt.got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.name, tt.got, tt.want)
			}
		})
	}
}

// TestBlocksKeepDefaults checks that a block setting one attribute keeps the
// defaults of the others.
func TestBlocksKeepDefaults(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
agent  { model = "sonnet" }
access { owners = [] }
admin  { }
plugin "a" {
  source = "x"
  path   = "/opt/a"
}
plugin "b" {
  source  = "y"
  enabled = false
}
`, nil)
	if cfg.Agent.Model != "sonnet" || cfg.Agent.Command != "claude" || cfg.Agent.MaxWarm != 0 || cfg.Agent.Timeout != "10m" || cfg.Agent.Approvals != "off" {
		t.Errorf("agent = %+v", cfg.Agent)
	}
	if !cfg.Access.RequireMention || cfg.Access.DMPolicy != "pairing" {
		t.Errorf("access = %+v", cfg.Access)
	}
	if cfg.Admin.Listen != DefaultAdminListen {
		t.Errorf("admin.listen = %q", cfg.Admin.Listen)
	}
	if a := cfg.Plugin("a"); !a.Enabled || a.StartTimeout != DefaultStartTimeout || a.Path != "/opt/a" {
		t.Errorf("plugin a = %+v", a)
	}
	if b := cfg.Plugin("b"); b.Enabled || b.StartTimeout != DefaultStartTimeout {
		t.Errorf("plugin b = %+v", b)
	}
	if got := cfg.EnabledPlugins(); len(got) != 1 || got[0].Name != "a" {
		t.Errorf("EnabledPlugins = %v", got)
	}
	if cfg.Plugin("c") != nil {
		t.Error("Plugin(c) != nil")
	}
}

// TestSessionQueueMessages decodes a file that sets every attribute of the
// session, queue and messages blocks and the host settings of a plugin.
func TestSessionQueueMessages(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
session {
  dm_scope       = "main"
  reset_triggers = ["/fresh"]
  reset {
    mode         = "daily"
    idle_minutes = 90
    at_hour      = 0
  }
  reset_by_type "direct" {
    mode         = "idle"
    idle_minutes = 120
  }
  reset_by_type "group" {
    at_hour = 23
  }
  reset_by_type "thread" {
    mode = "none"
  }
}
queue {
  mode     = "interrupt"
  cap      = 1
  drop     = "old"
  debounce = "1500ms"
}
messages {
  response_prefix     = "[{model}]"
  text_limit          = 1
  chunk_mode          = "newline"
  group_history_limit = 0
  timezone            = "utc"
  streaming           = "blocks"
  verbose             = true
  hook_timeout        = "250ms"
  turn_card           = "off"
  ping_after          = "0s"
  seen_reaction       = ""
  queued_notice       = true
}
plugin "tg" {
  source     = "telegram"
  debounce   = "0s"
  text_limit = 2000
  queue_mode = "steer"
  reset {
    mode    = "daily"
    at_hour = 5
  }
}
plugin "web" {
  source   = "webchat"
  debounce = "2s"
}
`, nil)
	ptr := func(v int) *int { return &v }
	wantSession := &Session{
		DMScope:       "main",
		ResetTriggers: []string{"/fresh"},
		Reset:         &ResetRule{Mode: "daily", IdleMinutes: ptr(90), AtHour: ptr(0)},
		ResetByType: []*TypeReset{
			{Type: "direct", Mode: "idle", IdleMinutes: ptr(120)},
			{Type: "group", AtHour: ptr(23)},
			{Type: "thread", Mode: "none"},
		},
	}
	if !reflect.DeepEqual(cfg.Session, wantSession) {
		t.Errorf("session = %s\nwant %s", jsonString(cfg.Session), jsonString(wantSession))
	}
	wantQueue := &Queue{Mode: "interrupt", Cap: 1, Drop: "old", Debounce: "1500ms"}
	if !reflect.DeepEqual(cfg.Queue, wantQueue) {
		t.Errorf("queue = %+v, want %+v", cfg.Queue, wantQueue)
	}
	wantMessages := &Messages{
		ResponsePrefix:    "[{model}]",
		TextLimit:         1,
		ChunkMode:         "newline",
		GroupHistoryLimit: 0,
		Timezone:          "utc",
		Streaming:         "blocks",
		Verbose:           true,
		HookTimeout:       "250ms",
		PromptSection:     true,
		TurnCard:          "off",
		PingAfter:         "0s",
		QueuedNotice:      true,
	}
	if !reflect.DeepEqual(cfg.Messages, wantMessages) {
		t.Errorf("messages = %+v, want %+v", cfg.Messages, wantMessages)
	}
	if cfg.Messages.Location() != time.UTC {
		t.Errorf("Location = %v, want UTC", cfg.Messages.Location())
	}
	if got := cfg.Session.ResetByType[0].Rule(); !reflect.DeepEqual(got, &ResetRule{Mode: "idle", IdleMinutes: ptr(120)}) {
		t.Errorf("Rule = %+v", got)
	}

	tg := cfg.Plugin("tg")
	if tg.Debounce != "0s" || tg.Debounce.Duration() != 0 || tg.TextLimit != 2000 || tg.QueueMode != "steer" ||
		!reflect.DeepEqual(tg.Reset, &ResetRule{Mode: "daily", AtHour: ptr(5)}) {
		t.Errorf("plugin tg = %+v, reset %+v", tg, tg.Reset)
	}
	if web := cfg.Plugin("web"); web.Debounce.Duration() != 2*time.Second || web.TextLimit != 0 || web.QueueMode != "" || web.Reset != nil {
		t.Errorf("plugin web = %+v", web)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDefaultResetTriggersNotShared checks that a Config's reset_triggers
// can be changed without changing the defaults.
func TestDefaultResetTriggersNotShared(t *testing.T) {
	t.Parallel()
	cfg := Default()
	cfg.Session.ResetTriggers[0] = "/changed"
	if DefaultResetTriggers[0] != "/new" || Default().Session.ResetTriggers[0] != "/new" {
		t.Errorf("defaults changed: %v", DefaultResetTriggers)
	}
}

// TestZeroDurations checks which durations may be "0s" or empty: the two
// debounce settings may, the others may not.
func TestZeroDurations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src string
		ok  bool
	}{
		{`queue { debounce = "0s" }`, true},
		{`queue { debounce = "0" }`, true},
		{`queue { debounce = "" }`, true},
		{`queue { debounce = "-1ms" }`, false},
		{`queue { debounce = "1" }`, false},
		{`plugin "p" {
  source   = "p"
  debounce = "0s"
}`, true},
		{`plugin "p" {
  source   = "p"
  debounce = "-2s"
}`, false},
		{`messages { hook_timeout = "0s" }`, false},
		{`agent { timeout = "0s" }`, false},
		{`agent { media_keep = "0s" }`, true},
		{`agent { media_keep = "30d" }`, true},
		{`agent { media_keep = "12h" }`, true},
		{`agent { media_keep = "" }`, false},
		{`agent { media_keep = "-1d" }`, false},
		{`agent { media_keep = "30 days" }`, false},
		{`plugin "p" {
  source        = "p"
  start_timeout = "0s"
}`, false},
	}
	for _, tt := range tests {
		_, diags := parse([]byte(tt.src), "c.hcl", ".", mapEnv(nil))
		if diags.HasErrors() == tt.ok {
			t.Errorf("%s: diags %v, want ok=%v", tt.src, diags, tt.ok)
		}
	}
}

func TestTimezone(t *testing.T) {
	t.Parallel()
	type test struct {
		tz      string
		ok      bool
		suggest string
	}
	tests := []test{
		{"local", true, ""},
		{"utc", true, ""},
		{"UTC", true, ""},
		{"Etc/UTC", true, ""},
		{"Utc", false, `Did you mean "utc"?`},
		{"Local ", false, `Did you mean "local"?`},
		{"", false, ""},
		{"../../etc/passwd", false, ""},
		{"Mars/Olympus_Mons", false, ""},
	}
	// Suggesting zone names needs the system's time zone database.
	if _, err := time.LoadLocation("Europe/Berlin"); err == nil && len(zoneNames()) > 0 {
		tests = append(tests,
			test{"Europe/Berlin", true, ""},
			test{"europe/berlin", false, `Did you mean "Europe/Berlin"?`},
			test{"Europe/Berln", false, `Did you mean "Europe/Berlin"?`},
		)
	}
	for _, tt := range tests {
		cfg, diags := parse([]byte(`messages { timezone = "`+tt.tz+`" }`), "c.hcl", ".", mapEnv(nil))
		if diags.HasErrors() == tt.ok {
			t.Errorf("%q: diags %v, want ok=%v", tt.tz, diags, tt.ok)
			continue
		}
		if tt.ok {
			if loc := cfg.Messages.Location(); loc == nil {
				t.Errorf("%q: nil location", tt.tz)
			}
			continue
		}
		if tt.suggest != "" && !strings.Contains(diags[0].Detail, tt.suggest) {
			t.Errorf("%q: detail %q lacks %q", tt.tz, diags[0].Detail, tt.suggest)
		}
		if tt.suggest == "" && strings.Contains(diags[0].Detail, "Did you mean") {
			t.Errorf("%q: unexpected suggestion in %q", tt.tz, diags[0].Detail)
		}
	}
}

func TestPathResolution(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		filename string
		dir      string
		src      string
		get      func(*Config) string
		want     string
	}{
		{"relative data_dir", "/srv/c/config.hcl", "/srv/c", `data_dir = "state"`, func(c *Config) string { return c.DataDir }, "/srv/c/state"},
		{"dot-dot data_dir", "/srv/c/config.hcl", "/srv/c", `data_dir = "../state"`, func(c *Config) string { return c.DataDir }, "/srv/state"},
		{"absolute data_dir", "/srv/c/config.hcl", "/srv/c", `data_dir = "/var/lib/x"`, func(c *Config) string { return c.DataDir }, "/var/lib/x"},
		{"relative file name", "conf/config.hcl", "conf", `data_dir = "./data"`, func(c *Config) string { return c.DataDir }, "conf/data"},
		{"plugin default path", "/srv/c/config.hcl", "/srv/c", `plugin_dir = "plugins"
plugin "tg" { source = "telegram" }`, func(c *Config) string { return c.Plugins[0].Path }, "/srv/c/plugins/clawhost-telegram"},
		{"plugin absolute plugin_dir", "/srv/c/config.hcl", "/srv/c", `plugin_dir = "/usr/lib/clawhost"
plugin "tg" { source = "telegram" }`, func(c *Config) string { return c.Plugins[0].Path }, "/usr/lib/clawhost/clawhost-telegram"},
		{"plugin relative path", "/srv/c/config.hcl", "/srv/c", `plugin "tg" {
  source = "telegram"
  path   = "build/tg"
}`, func(c *Config) string { return c.Plugins[0].Path }, "/srv/c/build/tg"},
		{"workspace", "/srv/c/config.hcl", "/srv/c", `agent { workspace = "ws" }`, func(c *Config) string { return c.Agent.Workspace }, "/srv/c/ws"},
		{"system_prompt_file", "/srv/c/config.hcl", "/srv/c", `agent { system_prompt_file = "prompt.md" }`, func(c *Config) string { return c.Agent.SystemPromptFile }, "/srv/c/prompt.md"},
		{"add_dirs", "/srv/c/config.hcl", "/srv/c", `agent { add_dirs = ["docs", "/abs"] }`, func(c *Config) string { return strings.Join(c.Agent.AddDirs, ",") }, "/srv/c/docs,/abs"},
		{"command in PATH", "/srv/c/config.hcl", "/srv/c", `agent { command = "claude" }`, func(c *Config) string { return c.Agent.Command }, "claude"},
		{"command relative path", "/srv/c/config.hcl", "/srv/c", `agent { command = "./node_modules/.bin/claude" }`, func(c *Config) string { return c.Agent.Command }, "/srv/c/node_modules/.bin/claude"},
		{"mcp_config as written", "/srv/c/config.hcl", "/srv/c", `agent { mcp_config = ["mcp.json"] }`, func(c *Config) string { return c.Agent.MCPConfig[0] }, "mcp.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := parse([]byte(tt.src), tt.filename, tt.dir, mapEnv(nil))
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if got := tt.get(cfg); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(path, []byte(`data_dir = "d"`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if cfg.DataDir != filepath.Join(dir, "d") || cfg.Path() != path || cfg.Dir() != dir {
		t.Errorf("DataDir %q Path %q Dir %q", cfg.DataDir, cfg.Path(), cfg.Dir())
	}
	if cfg.Files()[path] == nil {
		t.Errorf("Files lacks %s", path)
	}

	cfg, diags = Load(filepath.Join(dir, "missing.hcl"))
	if cfg != nil || !diags.HasErrors() || !strings.Contains(diags.Error(), "missing.hcl") {
		t.Errorf("Load(missing) = %v, %v", cfg, diags)
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN": "abc", "EMPTY": ""}
	tests := []struct {
		name    string
		expr    string
		want    string
		wantErr string
	}{
		{"set", `env("TOKEN")`, "abc", ""},
		{"set with default", `env("TOKEN", "d")`, "abc", ""},
		{"unset with default", `env("NOPE", "d")`, "d", ""},
		{"empty is set", `env("EMPTY", "d")`, "", ""},
		{"unset", `env("NOPE")`, "", `environment variable "NOPE" is not set`},
		{"empty name", `env("")`, "", "must not be empty"},
		{"too many", `env("A", "b", "c")`, "", "at most one default"},
		{"conditional", `env("TOKEN", "") != "" ? "on" : "off"`, "on", ""},
		{"conditional unset", `env("NOPE", "") != "" ? "on" : "off"`, "off", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := parse([]byte("agent {\n model = "+tt.expr+"\n}\n"), "c.hcl", ".", mapEnv(env))
			if tt.wantErr != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tt.wantErr) {
					t.Fatalf("diags = %v, want %q", diags, tt.wantErr)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if cfg.Agent.Model != tt.want {
				t.Errorf("model = %q, want %q", cfg.Agent.Model, tt.want)
			}
		})
	}
}

func TestEnabledFromEnv(t *testing.T) {
	t.Parallel()
	src := `
plugin "tg" {
  source  = "telegram"
  enabled = env("TELEGRAM_BOT_TOKEN", "") != ""
  config {
    token = env("TELEGRAM_BOT_TOKEN")
  }
}`
	if cfg := mustParse(t, src, nil); cfg.Plugins[0].Enabled {
		t.Error("enabled without TELEGRAM_BOT_TOKEN")
	}
	if cfg := mustParse(t, src, map[string]string{"TELEGRAM_BOT_TOKEN": ""}); cfg.Plugins[0].Enabled {
		t.Error("enabled with empty TELEGRAM_BOT_TOKEN")
	}
	cfg := mustParse(t, src, map[string]string{"TELEGRAM_BOT_TOKEN": "123:abc"})
	if !cfg.Plugins[0].Enabled {
		t.Fatal("disabled with TELEGRAM_BOT_TOKEN set")
	}
	js, diags := DecodePluginConfig(cfg.Plugins[0], schema.Schema{{Name: "token", Required: true, Sensitive: true}})
	if diags.HasErrors() || string(js) != `{"token":"123:abc"}` {
		t.Errorf("DecodePluginConfig = %s, %v", js, diags)
	}
}

func TestDecodePluginConfigTypes(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
plugin "p" {
  source = "p"
  config {
    s    = 12
    n    = "42"
    l    = ["a", 1]
    m    = { a = 1 }
    o    = { host = "h", port = "80" }
    anyv = [1, "x"]
  }
}`, nil)
	s := schema.Schema{
		{Name: "s"},
		{Name: "n", Type: "number"},
		{Name: "l", Type: "list(string)"},
		{Name: "m", Type: "map(number)"},
		{Name: "o", Type: "object({host = string, port = number})"},
		{Name: "anyv", Type: "any"},
		{Name: "b", Type: "bool", Default: json.RawMessage(`true`)},
		{Name: "ls", Type: "list(number)", Default: []int{1, 2}},
		{Name: "dyn", Type: "any", Default: map[string]any{"k": "v"}},
		{Name: "nul", Type: "string"},
	}
	js, diags := DecodePluginConfig(cfg.Plugins[0], s)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	want := `{"anyv":[1,"x"],"b":true,"dyn":{"k":"v"},"l":["a","1"],"ls":[1,2],"m":{"a":1},"n":42,"nul":null,"o":{"host":"h","port":80},"s":"12"}`
	var got, exp any
	_ = json.Unmarshal(js, &got)
	_ = json.Unmarshal([]byte(want), &exp)
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("got  %s\nwant %s", js, want)
	}
}

func TestDecodePluginConfigBadSchema(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `plugin "p" { source = "p" }`, nil)
	_, diags := DecodePluginConfig(cfg.Plugins[0], schema.Schema{
		{Name: "a", Type: "lits(string)"},
		{Name: "b", Type: "number", Default: json.RawMessage(`"x"`)},
	})
	if len(diags) != 2 {
		t.Fatalf("want 2 diagnostics, got %v", diags)
	}
	for _, d := range diags {
		if d.Summary != "Invalid plugin schema" || !strings.Contains(d.Detail, `Plugin "p"`) || d.Subject == nil {
			t.Errorf("diagnostic %+v", d)
		}
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	base := `
plugin "tg" {
  source = "telegram"
  config {
    token = env("TOKEN")
    chats = [1, 2]
  }
}
plugin "other" { source = "x" }
`
	fp := func(src string, env map[string]string) string {
		t.Helper()
		return mustParse(t, src, env).Plugin("tg").Fingerprint()
	}
	env := map[string]string{"TOKEN": "a"}
	ref := fp(base, env)
	if len(ref) != 64 {
		t.Fatalf("fingerprint %q", ref)
	}
	same := []struct{ name, src string }{
		{"identical", base},
		{"reformatted and commented", strings.ReplaceAll(base, "chats = [1, 2]", "# the chats\n    chats = [\n      1,\n      2,\n    ]")},
		{"other instance changed", strings.Replace(base, `source = "x"`, `source = "y"`, 1)},
		{"attribute order", strings.Replace(strings.Replace(base, "    token = env(\"TOKEN\")\n", "", 1), "chats = [1, 2]", "chats = [1, 2]\n    token = env(\"TOKEN\")", 1)},
	}
	for _, tt := range same {
		if got := fp(tt.src, env); got != ref {
			t.Errorf("%s: fingerprint changed", tt.name)
		}
	}
	changed := []struct {
		name string
		src  string
		env  map[string]string
	}{
		{"env value", base, map[string]string{"TOKEN": "b"}},
		{"config value", strings.Replace(base, "[1, 2]", "[1, 3]", 1), env},
		{"source", strings.Replace(base, `"telegram"`, `"telegram2"`, 1), env},
		{"path", strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  path = \"/x\"", 1), env},
		{"sha256", strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  sha256 = \""+strings.Repeat("a", 64)+"\"", 1), env},
		{"enabled", strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  enabled = false", 1), env},
		{"start_timeout", strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  start_timeout = \"20s\"", 1), env},
		{"env added", strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  env = { HTTPS_PROXY = \"http://p:3128\" }", 1), env},
		{"untrusted_input", strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  untrusted_input = true", 1), env},
	}
	for _, tt := range changed {
		if got := fp(tt.src, tt.env); got == ref {
			t.Errorf("%s: fingerprint unchanged", tt.name)
		}
	}
	// The host-side settings of the block do not restart the plugin.
	hostSide := []struct{ name, attrs string }{
		{"debounce", `debounce = "2s"`},
		{"debounce off", `debounce = "0s"`},
		{"text_limit", `text_limit = 1000`},
		{"queue_mode", `queue_mode = "collect"`},
		{"reset", "reset {\n    mode         = \"idle\"\n    idle_minutes = 30\n  }"},
		{"all", "debounce = \"1s\"\n  text_limit = 10\n  queue_mode = \"steer\"\n  reset {\n    mode = \"none\"\n  }"},
	}
	for _, tt := range hostSide {
		src := strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  "+tt.attrs, 1)
		cfg := mustParse(t, src, env)
		p := cfg.Plugin("tg")
		if p.Debounce == "" && p.TextLimit == 0 && p.QueueMode == "" && p.Reset == nil {
			t.Fatalf("%s: host setting not decoded", tt.name)
		}
		if got := p.Fingerprint(); got != ref {
			t.Errorf("%s: fingerprint changed", tt.name)
		}
	}
	// Nor do the top-level session, queue and messages blocks.
	if got := fp("queue { mode = \"collect\" }\nmessages { text_limit = 100 }\nsession { dm_scope = \"main\" }\n"+base, env); got != ref {
		t.Error("top-level host settings changed the fingerprint")
	}

	// An unset variable is not an error for the fingerprint, and differs.
	if got := fp(base, nil); got == ref || got == "" {
		t.Errorf("unset env: fingerprint %q", got)
	}
	// Equal durations written differently are the same start_timeout.
	a := fp(strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  start_timeout = \"60s\"", 1), env)
	b := fp(strings.Replace(base, `source = "telegram"`, "source = \"telegram\"\n  start_timeout = \"1m\"", 1), env)
	if a != b {
		t.Error("60s and 1m fingerprint differently")
	}
}

// TestPluginEnvAttribute: a plugin block's env decodes with env() calls, is
// handed out sorted, and a change of a value — also one read from the
// environment — changes the fingerprint.
func TestPluginEnvAttribute(t *testing.T) {
	t.Parallel()
	src := `
plugin "tg" {
  source = "telegram"
  env = {
    PROXY_TOKEN = env("PROXY_TOKEN")
    HTTPS_PROXY = "http://proxy:3128"
  }
}`
	cfg := mustParse(t, src, map[string]string{"PROXY_TOKEN": "a"})
	p := cfg.Plugin("tg")
	if got := strings.Join(EnvSlice(p.Env), " "); got != "HTTPS_PROXY=http://proxy:3128 PROXY_TOKEN=a" {
		t.Errorf("EnvSlice = %q", got)
	}
	if other := mustParse(t, src, map[string]string{"PROXY_TOKEN": "b"}).Plugin("tg"); other.Fingerprint() == p.Fingerprint() {
		t.Error("a changed env value read from the environment kept the fingerprint")
	}
	if none := mustParse(t, `plugin "tg" { source = "telegram" }`, nil).Plugin("tg"); none.Env != nil || len(EnvSlice(none.Env)) != 0 {
		t.Errorf("no env attribute: %v", none.Env)
	}
}

func TestSourceDiagnostic(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `
plugin "tg" { source = "telgram" }
plugin "own" {
  source = "mine"
  path   = "/opt/mine"
}
`, nil)
	d := cfg.SourceDiagnostic(cfg.Plugin("tg"), []string{"clawhost-telegram", "discord", "clawhost-telegram"})
	if d == nil || d.Severity != hcl.DiagError {
		t.Fatalf("diagnostic %v", d)
	}
	for _, want := range []string{`Did you mean "telegram"?`, "discord, telegram.", filepath.Join(installpath.ExecutableDir(), "clawhost-telgram")} {
		if !strings.Contains(d.Detail, want) {
			t.Errorf("detail %q lacks %q", d.Detail, want)
		}
	}
	if d.Subject == nil || d.Subject.Start.Line != 2 || d.Subject.Start.Column != 24 {
		t.Errorf("subject %v, want line 2 col 24", d.Subject)
	}
	if d := cfg.SourceDiagnostic(cfg.Plugin("tg"), nil); !strings.Contains(d.Detail, "no clawhost-* binaries") {
		t.Errorf("detail %q", d.Detail)
	}
	if d := cfg.SourceDiagnostic(cfg.Plugin("own"), nil); !strings.Contains(d.Detail, "/opt/mine") || d.Subject.Start.Line != 5 {
		t.Errorf("path diagnostic %v", d)
	}
	if cfg.SourceDiagnostic(nil, nil) != nil {
		t.Error("diagnostic for no plugin")
	}
}

func TestAvailableSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"clawhost-telegram": 0o755,
		"clawhost-discord":  0o700,
		"clawhost-notexec":  0o644,
		"other":             0o755,
		"clawhost-":         0o755,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "clawhost-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := AvailableSources(dir)
	if err != nil || strings.Join(got, ",") != "discord,telegram" {
		t.Errorf("AvailableSources = %v, %v", got, err)
	}
	if got, err := AvailableSources(filepath.Join(dir, "missing")); err != nil || got != nil {
		t.Errorf("missing dir: %v, %v", got, err)
	}
}

func TestFormatDiagnosticsReadsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.hcl")
	if err := os.WriteFile(path, []byte("log_level = \"loud\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, diags := Load(path)
	var b strings.Builder
	if err := FormatDiagnostics(&b, diags, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`1: log_level = "loud"`, path + ":1:13", "1 error"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := FormatDiagnostics(&b, nil, nil); err != nil || b.Len() != 0 {
		t.Errorf("no diagnostics wrote %q", b.String())
	}
}

// TestApprovalSettings: agent.approvals, approvers and approval_timeout are
// checked; approvals with one_shot is refused (nothing could answer).
func TestApprovalSettings(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, `agent {
  approvals        = "chat"
  approvers        = "owners"
  approval_timeout = "90s"
}`, nil)
	if a := cfg.Agent; a.Approvals != "chat" || a.Approvers != "owners" || a.ApprovalTimeout.Duration() != 90*time.Second {
		t.Errorf("agent = %+v", a)
	}
	for src, want := range map[string]string{
		`agent { approvals = "yes" }`:                                           `"yes" is not one of "off" or "chat"`,
		`agent { approvers = "everyone" }`:                                      `"everyone" is not one of "owners" or "sender"`,
		`agent { approval_timeout = "soon" }`:                                   `"soon" is not a duration`,
		"agent {\n approvals = \"chat\"\n one_shot = true\n}":                   "nothing could answer its questions",
		"agent {\n permission_modes = [\"plan\", \"ask\"]\n one_shot = true\n}": "nothing could answer the questions /mode ask turns on",
		`agent { permission_mode = "ask" }`:                                     `"ask" is not one of`,
	} {
		_, diags := parse([]byte(src), "c.hcl", "/etc/clawhost", mapEnv(nil))
		found := false
		for _, d := range diags {
			found = found || d.Severity == hcl.DiagError && strings.Contains(d.Detail, want)
		}
		if !found {
			t.Errorf("%s: %v, want an error with %q", src, diags, want)
		}
	}
}

// TestApproverWarnings: validate warns, at the attribute, when approvers =
// "sender" lets a group member approve their own tool use, and when
// approvals are asked with approvers = "owners" but no owner to ask; "ask"
// in permission_modes counts as approvals asked, and is accepted there.
func TestApproverWarnings(t *testing.T) {
	t.Parallel()
	const plugin = "plugin \"tg\" {\n  source = \"telegram\"\n}\n"
	tests := []struct {
		name, src string
		// want are "line:col summary" of the warnings, in order.
		want []string
	}{
		{"sender with groups", "agent {\n  approvals = \"chat\"\n  approvers = \"sender\"\n}\naccess {\n  owners = [\"tg:1\"]\n  groups = [\"tg:-100\"]\n}\n" + plugin,
			[]string{"3:15 Group members approve their own tool use"}},
		{"sender with a group block", "agent {\n  permission_modes = [\"ask\"]\n  approvers = \"sender\"\n}\naccess {\n  owners = [\"tg:1\"]\n  group \"tg:-100\" {\n  }\n}\n" + plugin,
			[]string{"3:15 Group members approve their own tool use"}},
		{"sender with open groups", "agent {\n  approvals = \"chat\"\n  approvers = \"sender\"\n}\naccess {\n  owners = [\"tg:1\"]\n  group_policy = \"open\"\n}\n" + plugin,
			[]string{"3:15 Group members approve their own tool use"}},
		{"sender in direct chats only", "agent {\n  approvals = \"chat\"\n  approvers = \"sender\"\n}\n" + plugin, nil},
		{"sender with groups, approvals off", "agent {\n  approvers = \"sender\"\n}\naccess {\n  owners = [\"tg:1\"]\n  groups = [\"tg:-100\"]\n}\n" + plugin, nil},
		{"owners without owners", "agent {\n  approvals = \"chat\"\n}\n" + plugin, []string{"2:15 No approver"}},
		{"ask without owners", "agent {\n  permission_modes = [\"plan\", \"ask\"]\n}\n" + plugin, []string{"2:31 No approver"}},
		{"owners with owners", "agent {\n  approvals = \"chat\"\n}\naccess {\n  owners = [\"tg:1\"]\n  groups = [\"tg:-100\"]\n}\n" + plugin, nil},
		{"approvals off without owners", "agent {\n  permission_modes = [\"plan\"]\n}\n" + plugin, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := parse([]byte(tt.src), "c.hcl", "/etc/clawhost", mapEnv(nil))
			if diags.HasErrors() {
				t.Fatalf("errors: %v", diags)
			}
			var got []string
			for _, d := range diags {
				if d.Severity == hcl.DiagWarning {
					got = append(got, fmt.Sprintf("%d:%d %s", d.Subject.Start.Line, d.Subject.Start.Column, d.Summary))
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("warnings %q, want %q", got, tt.want)
			}
			if tt.name == "ask without owners" && !slices.Contains(cfg.Agent.PermissionModes, ModeAsk) {
				t.Errorf("permission_modes %q", cfg.Agent.PermissionModes)
			}
		})
	}
}

func TestStorage(t *testing.T) {
	t.Parallel()
	if s := mustParse(t, ``, nil).Storage; s.Engine != EngineSQLite || s.URL != "" {
		t.Errorf("default storage = %+v", s)
	}
	const url = "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=verify-full"
	cfg := mustParse(t, `storage {
  engine = "postgres"
  url    = env("CLAWHOST_DATABASE_URL")
}`, map[string]string{"CLAWHOST_DATABASE_URL": url})
	if s := cfg.Storage; s.Engine != EnginePostgres || s.URL != url {
		t.Errorf("storage = %+v", s)
	}
	for src, want := range map[string]string{
		`storage { engine = "mysql" }`:                  `"mysql" is not one of "sqlite" or "postgres"`,
		`storage { engine = "postgres" }`:               `needs the server's connection string`,
		`storage { url = "postgres://u:hunter2@h/db" }`: `takes no url`,
	} {
		_, diags := parse([]byte(src), "c.hcl", "/etc/clawhost", mapEnv(nil))
		if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", src, diags, want)
		}
		if strings.Contains(diags.Error(), "hunter2") {
			t.Errorf("%s: the diagnostics show the password: %v", src, diags)
		}
	}
}

func TestDurationDays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Duration
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"0d", 0, true},
		{"90s", 90 * time.Second, true},
		{"0s", 0, true},
		{"d", 0, false},
		{"-1d", 0, false},
		{"1d-2h", 0, false},
		{"1dx", 0, false},
		{"99999999999d", 0, false},
		{"1.5d", 0, false},
	}
	for _, tc := range tests {
		got, err := tc.in.parse()
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parse(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestLeastPrivilegeSettings: agent.settings, agent.sandbox and run_as
// (agent and plugin) default, accept and refuse what they should, at their
// line; settings = "user" warns.
func TestLeastPrivilegeSettings(t *testing.T) {
	root := geteuid
	t.Cleanup(func() { geteuid = root })
	geteuid = func() int { return 0 }
	if a := mustParse(t, ``, nil).Agent; a.Settings != "project" || a.Sandbox != "auto" || a.RunAs != "" {
		t.Errorf("defaults: settings %q sandbox %q run_as %q", a.Settings, a.Sandbox, a.RunAs)
	}
	cfg := mustParse(t, "agent {\n  sandbox = \"off\"\n  run_as = \"nobody\"\n}\nplugin \"tg\" {\n  source = \"telegram\"\n  run_as = \"65534\"\n}", nil)
	if cfg.Agent.Sandbox != "off" || cfg.Agent.RunAs != "nobody" || cfg.Plugin("tg").RunAs != "65534" {
		t.Errorf("agent %+v plugin %+v", cfg.Agent, cfg.Plugin("tg"))
	}
	if cfg.Plugin("tg").Fingerprint() == mustParse(t, `plugin "tg" { source = "telegram" }`, nil).Plugin("tg").Fingerprint() {
		t.Error("run_as is not part of the plugin's fingerprint")
	}
	for _, tc := range []struct {
		src, want string
		line      int
		warning   bool
	}{
		{"agent {\n  settings = \"users\"\n}", `"users" is not one of "project" or "user". Did you mean "user"?`, 2, false},
		{"agent {\n  sandbox = \"bwrap\"\n}", `"bwrap" is not one of "auto" or "off"`, 2, false},
		{"agent {\n  run_as = \"no-such-user-here\"\n}", `There is no user "no-such-user-here"`, 2, false},
		{"plugin \"tg\" {\n  source = \"telegram\"\n  run_as = \"no-such-user-here\"\n}", `There is no user "no-such-user-here"`, 3, false},
		{"agent {\n  settings = \"user\"\n}", "govern the turns of everyone", 2, true},
	} {
		_, diags := parse([]byte(tc.src), "c.hcl", "/etc/clawhost", mapEnv(nil))
		if len(diags) != 1 || diags.HasErrors() == tc.warning || !strings.Contains(diags[0].Detail, tc.want) || diags[0].Subject.Start.Line != tc.line {
			t.Errorf("%s:\n%v\nwant one diagnostic at line %d with %q (warning %v)", tc.src, diags, tc.line, tc.want, tc.warning)
		}
	}
	geteuid = func() int { return 1000 }
	_, diags := parse([]byte("agent {\n  run_as = \"nobody\"\n}"), "c.hcl", "/etc/clawhost", mapEnv(nil))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "needs clawhost to run as root") {
		t.Errorf("run_as when not root: %v", diags)
	}
}

// TestLoadMissingPointsToInit: a missing file's error says how to make one.
func TestLoadMissingPointsToInit(t *testing.T) {
	t.Parallel()
	_, diags := Load(filepath.Join(t.TempDir(), "config.hcl"))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "clawhost init") {
		t.Errorf("diagnostics %v, want a pointer to clawhost init", diags)
	}
}
