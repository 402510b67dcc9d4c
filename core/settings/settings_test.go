package settings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/chatprompt"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

// loadConfig writes the configuration src at path and loads it, failing
// the test on an error.
func loadConfig(t testing.TB, path, src string) *config.Config {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	return cfg
}

// TestQueueEnumsMatch: every drop policy the configuration accepts is one
// the queue knows. (The queue modes are one list, core/internal/queuemode's,
// that both the configuration and the queue read.)
func TestQueueEnumsMatch(t *testing.T) {
	t.Parallel()
	for _, d := range config.QueueDrops {
		if _, err := queue.ParseDrop(d); err != nil {
			t.Errorf("config accepts drop policy %q: %v", d, err)
		}
	}
}

// TestSpecsCarryPluginEnv: a plugin block's env reaches the plugin host as
// sorted NAME=value pairs, and a change of it changes the fingerprint.
func TestSpecsCarryPluginEnv(t *testing.T) {
	t.Parallel()
	load := func(env string) pluginhost.Spec {
		t.Helper()
		path := filepath.Join(t.TempDir(), "config.hcl")
		src := "plugin \"x\" {\n  source = \"x\"\n  env = " + env + "\n}\n"
		cfg := loadConfig(t, path, src)
		specs := Plugins(cfg)
		if len(specs) != 1 {
			t.Fatalf("specs: %+v", specs)
		}
		return specs[0]
	}
	a := load(`{ B = "2", A = "1" }`)
	if got := strings.Join(a.Env, " "); got != "A=1 B=2" {
		t.Errorf("Spec.Env = %q, want \"A=1 B=2\"", got)
	}
	if b := load(`{ B = "2", A = "changed" }`); b.Fingerprint == a.Fingerprint {
		t.Error("a changed env value kept the fingerprint: the plugin would not restart")
	}
}

// TestSpecsCarryUntrustedInput: untrusted_input reaches the plugin host
// with the agents' media directories (each workspace's once) for the
// plugin to read; a plugin without it is granted none.
func TestSpecsCarryUntrustedInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := `agent { workspace = "./ws" }
agent "b" { workspace = "./wsb" }
agent "c" { workspace = "./ws" }
plugin "hook" {
  source          = "x"
  untrusted_input = true
}
plugin "plain" { source = "y" }
`
	cfg := loadConfig(t, path, src)
	specs := map[string]pluginhost.Spec{}
	for _, s := range Plugins(cfg) {
		specs[s.Instance] = s
	}
	hook, plain := specs["hook"], specs["plain"]
	want := []string{filepath.Join(dir, "ws", "media"), filepath.Join(dir, "wsb", "media")}
	if !hook.Untrusted || !slices.Equal(hook.ReadOnly, want) {
		t.Errorf("untrusted plugin: Untrusted %v, ReadOnly %q, want true and %q", hook.Untrusted, hook.ReadOnly, want)
	}
	if plain.Untrusted || plain.ReadOnly != nil {
		t.Errorf("plain plugin: Untrusted %v, ReadOnly %q, want false and none", plain.Untrusted, plain.ReadOnly)
	}
}

func TestMemoryFlushSettings(t *testing.T) {
	t.Parallel()
	off := false
	if m := MemoryFlush(nil); m.Disabled || m.ReserveTokens != 0 {
		t.Errorf("absent block: %+v", m)
	}
	m := MemoryFlush(&config.MemoryFlush{Enabled: &off, ContextWindow: 500_000, ReserveTokens: 30_000, SoftThresholdTokens: 20_000, Prompt: "p"})
	if !m.Disabled || m.ContextWindow != 500_000 || m.ReserveTokens != 30_000 || m.SoftThresholdTokens != 20_000 || m.Prompt != "p" {
		t.Errorf("block: %+v", m)
	}
	if th := m.Threshold(0); th != 450_000 {
		t.Errorf("threshold %d", th)
	}
}

// TestSandboxEnumsMatch: the settings and sandbox values the configuration
// accepts are the runner's.
func TestSandboxEnumsMatch(t *testing.T) {
	t.Parallel()
	if !slices.Equal(config.SettingsModes, runner.SettingsModes) || !slices.Equal(config.SandboxModes, runner.SandboxModes) {
		t.Errorf("config %v %v, runner %v %v", config.SettingsModes, config.SandboxModes, runner.SettingsModes, runner.SandboxModes)
	}
}

// TestAgentConfigLeastPrivilege: claude gets the bot's own config directory
// under data_dir unless agent.env names one or settings = "user"; the
// sandbox hides data_dir and the config file; run_as is looked up.
func TestAgentConfigLeastPrivilege(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, agent string
		configDir   bool
		runAs       uint32
	}{
		{"default", ``, true, 0},
		{"settings user", `settings = "user"`, false, 0},
		{"env names one", `env = { CLAUDE_CONFIG_DIR = "/srv/claude" }`, false, 0},
		{"run_as", `run_as = "nobody"`, true, 65534},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "config.hcl")
			if err := os.WriteFile(path, []byte("agent {\n  "+tc.agent+"\n}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, diags := config.Load(path)
			if diags.HasErrors() {
				if tc.runAs != 0 && os.Geteuid() != 0 {
					t.Skip("run_as needs root")
				}
				t.Fatal(diags.Error())
			}
			rc, err := Runner(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := rc.ConfigDir != ""; got != tc.configDir || (got && rc.ConfigDir != filepath.Join(dir, "data", "claude")) {
				t.Errorf("ConfigDir %q, want set: %v", rc.ConfigDir, tc.configDir)
			}
			if !slices.Contains(rc.Hide, filepath.Join(dir, "data")) || !slices.Contains(rc.Hide, path) {
				t.Errorf("Hide %q lacks data_dir or the config file", rc.Hide)
			}
			if (rc.RunAs == nil) != (tc.runAs == 0) || (rc.RunAs != nil && rc.RunAs.UID != tc.runAs) {
				t.Errorf("RunAs %+v, want uid %d", rc.RunAs, tc.runAs)
			}
		})
	}
}

// TestApprovalSettingsOf: approvers default to the owners; the instances
// whose direct chat ids are sender ids are the ones an owner is asked in;
// "ask" in permission_modes is offered by /mode but never passed to
// claude as a mode.
func TestApprovalSettingsOf(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.hcl")
	src := `agent {
  approvals        = "chat"
  permission_modes = ["plan", "ask"]
}
access {
  owners = ["tg:1"]
}
plugin "tg" {
  source = "telegram"
}
plugin "dc" {
  source = "discord"
}
plugin "web" {
  source = "webchat"
}
`
	cfg := loadConfig(t, path, src)
	// As the plugins declare it (the host asks them).
	cfg.NormalizeIDs(map[string]channel.Capabilities{"tg": {DirectToSender: true}, "dc": {}, "web": {DirectToSender: true}})
	set, err := Pipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a := set.Approval; !a.OwnersOnly || !a.DirectChats["tg"] || a.DirectChats["dc"] || !a.DirectChats["web"] {
		t.Errorf("approval settings %+v", a)
	}
	if got := set.Turn.PermissionModes; strings.Join(got, " ") != "plan ask" {
		t.Errorf("offered modes %q", got)
	}
	rc, err := Runner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rc.PermissionModes; strings.Join(got, " ") != "plan" {
		t.Errorf("claude's modes %q", got)
	}
	if err := rc.Validate(); err != nil {
		t.Errorf("runner config: %v", err)
	}
}

// The composer maps every agent block onto the runner, the turn stage,
// delivery and the bindings: each agent its own workspace, prompt, modes
// and memory flush; each sandbox hides the others' workspaces.
func TestAgentsComposed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := `
agent {
  model = "sonnet"
  permission_modes = ["plan", "ask"]
  switchable = true
}
agent "ops" {
  workspace     = "./ops"
  system_prompt = "ops"
  permission_modes = ["acceptEdits"]
  chats         = ["tg:-100"]
  memory_flush {
    reserve_tokens = 1234
  }
}
plugin "tg" {
  source = "telegram"
  config {
    token = "x"
  }
}
`
	cfg := loadConfig(t, path, src)
	rc, err := Runner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ops, ws := rc.Agents["ops"], filepath.Join(dir, "workspace")
	if rc.Name != "main" || len(rc.Agents) != 1 || ops.Workspace != filepath.Join(dir, "ops") || ops.SystemPrompt != "ops" || ops.Model != "sonnet" {
		t.Fatalf("runner: %q, ops %+v", rc.Name, ops)
	}
	if !slices.Equal(ops.PermissionModes, []string{"acceptEdits"}) || !slices.Equal(rc.PermissionModes, []string{"plan"}) {
		t.Errorf("claude's modes: main %v, ops %v", rc.PermissionModes, ops.PermissionModes)
	}
	if !slices.Contains(rc.Hide, ops.Workspace) || !slices.Contains(ops.Hide, ws) || slices.Contains(ops.Hide, ops.Workspace) || !slices.Contains(ops.Hide, filepath.Join(dir, "data")) {
		t.Errorf("hidden: main %v, ops %v", rc.Hide, ops.Hide)
	}
	set, err := Pipeline(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ta := set.Turn.Agents["ops"]
	if ta.Workspace != ops.Workspace || ta.MemoryFlush.ReserveTokens != 1234 || !slices.Equal(ta.PermissionModes, []string{"acceptEdits"}) || set.Turn.Workspace != ws {
		t.Errorf("turn: %+v", ta)
	}
	if set.Delivery.AgentWorkspaces["ops"] != ops.Workspace || !slices.Equal(set.Switchable, []string{"main"}) {
		t.Errorf("delivery %v, switchable %v", set.Delivery.AgentWorkspaces, set.Switchable)
	}
	if a, bound := set.Agents.Resolve("tg", "-100", ""); a != "ops" || !bound {
		t.Errorf("bindings: %s %v", a, bound)
	}
}

// TestPromptSectionSettings: messages { prompt_section = false } leaves
// the messaging section out of the turns' settings, prompt_template puts
// the operator's template in place of the built-in one, and a template
// that does not parse is an error naming the setting.
func TestPromptSectionSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "section.tmpl")
	if err := os.WriteFile(tmpl, []byte("You answer on {{.Channel}}."), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.tmpl")
	if err := os.WriteFile(broken, []byte("{{if}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func(messages string) (string, bool, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "config.hcl")
		set, err := Pipeline(loadConfig(t, path, "messages {\n"+messages+"\n}\n"))
		if err != nil || set.Turn.PromptSection == nil {
			return "", false, err
		}
		text, err := set.Turn.PromptSection.Render(chatprompt.Chat{Channel: "Telegram", Date: time.Now(), Zone: "UTC"})
		return text, true, err
	}
	if text, on, err := load(""); err != nil || !on || !strings.HasPrefix(text, "## Messaging\n") {
		t.Errorf("the default: %v %v %q", on, err, text)
	}
	if _, on, err := load("prompt_section = false"); err != nil || on {
		t.Errorf("prompt_section = false: section %v, %v", on, err)
	}
	if text, on, err := load(`prompt_template = "` + tmpl + `"`); err != nil || !on || text != "You answer on Telegram." {
		t.Errorf("prompt_template: %v %v %q", on, err, text)
	}
	if _, _, err := load(`prompt_template = "` + broken + `"`); err == nil || !strings.Contains(err.Error(), "messages.prompt_template") {
		t.Errorf("a broken template: %v", err)
	}
}
