package config

import (
	"slices"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

// An agent "<id>" block inherits every attribute it does not set from the
// default agent block, as the file set it (relative paths resolved after),
// but not chats, switchable or worktrees.
func TestAgentsInherit(t *testing.T) {
	cfg := mustParse(t, `
agent {
  model         = "sonnet"
  models        = ["sonnet", "opus"]
  system_prompt = "be brief"
  env           = { A = "1" }
  timeout       = "5m"
  max_warm      = 2
  allowed_tools = ["Read"]
  memory_flush {
    reserve_tokens = 1000
  }
  chats      = ["tg:*"]
  switchable = true
}

agent "ops" {
  workspace = "./ops"
  model     = "opus"
  env       = { B = "2" }
  chats     = ["tg:-1001"]
}

agent "docs" {
  system_prompt_file = "docs.md"
}

plugin "tg" {
  source = "telegram"
  config {
    token = "x"
  }
}
`, nil)
	if len(cfg.Agents) != 2 || cfg.Agent.ID != "main" || cfg.Agents[0].ID != "ops" || cfg.Agents[1].ID != "docs" {
		t.Fatalf("agents: main %q, %d named", cfg.Agent.ID, len(cfg.Agents))
	}
	main, ops, docs := cfg.Agent, cfg.AgentByID("ops"), cfg.AgentByID("docs")
	if ops.Model != "opus" || docs.Model != "sonnet" || main.Model != "sonnet" {
		t.Errorf("model: main %q ops %q docs %q", main.Model, ops.Model, docs.Model)
	}
	if ops.Workspace != "/etc/clawhost/ops" || docs.Workspace != "/etc/clawhost/workspace" || main.Workspace != "/etc/clawhost/workspace" {
		t.Errorf("workspace: main %q ops %q docs %q", main.Workspace, ops.Workspace, docs.Workspace)
	}
	if docs.SystemPromptFile != "/etc/clawhost/docs.md" || docs.SystemPrompt != "be brief" || main.SystemPromptFile != "" {
		t.Errorf("system prompt: docs %q %q, main file %q", docs.SystemPromptFile, docs.SystemPrompt, main.SystemPromptFile)
	}
	// A map set in the agent replaces the default's whole, as every
	// attribute does; one not set is a copy, not the same map.
	if len(ops.Env) != 1 || ops.Env["B"] != "2" || docs.Env["A"] != "1" {
		t.Errorf("env: ops %v docs %v", ops.Env, docs.Env)
	}
	docs.Env["A"] = "changed"
	docs.Models[0] = "changed"
	docs.MemoryFlush.ReserveTokens = 1
	if main.Env["A"] != "1" || main.Models[0] != "sonnet" || main.MemoryFlush.ReserveTokens != 1000 {
		t.Error("an inherited map, list or block is shared with the default agent")
	}
	if docs.Timeout != "5m" || docs.MaxWarm != 2 || !slices.Equal(docs.AllowedTools, []string{"Read"}) {
		t.Errorf("docs: timeout %q max_warm %d allowed %v", docs.Timeout, docs.MaxWarm, docs.AllowedTools)
	}
	if docs.Chats != nil || docs.Switchable || ops.Switchable || !main.Switchable || len(ops.Chats) != 1 {
		t.Errorf("own attributes inherited: docs %v %v, ops %v %v", docs.Chats, docs.Switchable, ops.Chats, ops.Switchable)
	}
	if cfg.AgentByID("nope") != nil || len(cfg.AllAgents()) != 3 {
		t.Error("AgentByID or AllAgents")
	}
}

func TestParseBinding(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Binding
		bad  bool
	}{
		{in: "tg:123", want: Binding{Instance: "tg", Chat: "123"}},
		{in: "tg:-1001:7", want: Binding{Instance: "tg", Chat: "-1001", Thread: "7"}},
		{in: "dc:*", want: Binding{Instance: "dc", Chat: "*"}},
		{in: "wa:1203@g.us", want: Binding{Instance: "wa", Chat: "1203@g.us"}},
		{in: "tg", bad: true},
		{in: "tg:", bad: true},
		{in: ":1", bad: true},
		{in: "tg:*:3", bad: true},
		{in: "tg:1:*", bad: true},
		{in: "tg:1:2:3", bad: true},
		{in: "tg: 1", bad: true},
	} {
		got, err := ParseBinding(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseBinding(%q) = %+v, %v", c.in, got, err)
		}
		if err == nil && got.String() != c.in {
			t.Errorf("%q round trips as %q", c.in, got.String())
		}
	}
}

// The most specific binding wins: topic > chat > instance > the default
// agent.
func TestBindingsResolve(t *testing.T) {
	cfg := &Config{Agent: &Agent{ID: "main", Chats: []string{"tg:42"}}, Agents: []*Agent{
		{ID: "all", Chats: []string{"tg:*"}},
		{ID: "group", Chats: []string{"tg:-1001", "dc:9"}},
		{ID: "topic", Chats: []string{"tg:-1001:7", "dc:9:99"}},
		{ID: "unbound"},
	}}
	b := cfg.Bindings()
	for _, c := range []struct {
		instance, chat, thread string
		want                   string
		bound                  bool
	}{
		{"tg", "-1001", "7", "topic", true},
		{"tg", "-1001", "8", "group", true},
		{"tg", "-1001", "", "group", true},
		{"tg", "-1002", "7", "all", true},
		{"tg", "5", "", "all", true},
		{"tg", "42", "", "main", true},
		{"tg", "42", "1", "main", true},
		{"dc", "9", "99", "topic", true},
		{"dc", "9", "", "group", true},
		{"dc", "10", "99", "main", false},
		{"wa", "+1555", "", "main", false},
		{"dc", "99", "9", "main", false},
	} {
		got, bound := b.Resolve(c.instance, c.chat, c.thread)
		if got != c.want || bound != c.bound {
			t.Errorf("Resolve(%s, %s, %s) = %s, %v; want %s, %v", c.instance, c.chat, c.thread, got, bound, c.want, c.bound)
		}
	}
}

// idForms are forms as the bundled plugins declare them
// (channel.Capabilities.IDForms; the plugins' own tests check theirs), by
// source: the config tests normalise as the host does with what the
// plugins describe.
var idForms = map[string][]channel.IDForm{
	"whatsapp": {
		{Pattern: `\+?([0-9]{5,20})(?:@s\.whatsapp\.net)?`, Canonical: "+$1", Hint: "a WhatsApp person is a phone number with its country code (+15551234567)"},
		{Pattern: `[0-9]+(?:-[0-9]+)?@(?:lid|g\.us)`, Hint: "a group is its JID (…@g.us)"},
	},
	"telegram": {{Pattern: `-?[0-9]+`, Hint: "Telegram ids are numbers (a group's is negative), never @usernames: /whoami tells a sender their id"}},
	"discord": {
		{Pattern: `<(?:@!?|#)([0-9]+)>`, Canonical: "$1", Hint: "a mention such as <@123>"},
		{Pattern: `[0-9]+`, Hint: "Discord ids are numbers (snowflakes): turn on Developer Mode and use Copy ID, or /whoami"},
	},
}

// testIDForms are the id forms of cfg's plugins by instance (idForms), as
// their capabilities.
func testIDForms(cfg *Config) map[string]channel.Capabilities {
	out := map[string]channel.Capabilities{}
	for _, p := range cfg.Plugins {
		out[p.Name] = channel.Capabilities{IDForms: idForms[p.Source]}
	}
	return out
}

// The id forms people write for one WhatsApp person (and a Discord
// mention) are one entry; ids no message can carry are reported.
func TestCanonicalID(t *testing.T) {
	for _, c := range []struct {
		source, in, want string
		matches          bool
	}{
		{"whatsapp", "15551234567", "+15551234567", true},
		{"whatsapp", "+15551234567", "+15551234567", true},
		{"whatsapp", "15551234567@s.whatsapp.net", "+15551234567", true},
		{"whatsapp", "+15551234567@s.whatsapp.net", "+15551234567", true},
		{"whatsapp", "123456789012345@lid", "123456789012345@lid", true},
		{"whatsapp", "120363000000000000@g.us", "120363000000000000@g.us", true},
		{"whatsapp", "bob", "bob", false},
		{"whatsapp", "*", "*", true},
		{"telegram", "1001", "1001", true},
		{"telegram", "-1001234", "-1001234", true},
		{"telegram", "@alice", "@alice", false},
		{"discord", "<@123>", "123", true},
		{"discord", "<@!123>", "123", true},
		{"discord", "<#456>", "456", true},
		{"discord", "456", "456", true},
		{"discord", "-100", "-100", false},
		{"webchat", "anything goes", "anything goes", true},
	} {
		got, matches := CanonicalID(idForms[c.source], c.in)
		if got != c.want || matches != c.matches {
			t.Errorf("CanonicalID(%s, %q) = %q, %v; want %q, %v", c.source, c.in, got, matches, c.want, c.matches)
		}
		again, _ := CanonicalID(idForms[c.source], got)
		if again != got {
			t.Errorf("CanonicalID(%s, %q) = %q, not canonical: %q the second time", c.source, c.in, got, again)
		}
	}
	if got, ok := CanonicalID([]channel.IDForm{{Pattern: `(`}, {Pattern: `x`}}, "x"); got != "x" || !ok {
		t.Errorf("a form that does not compile is skipped: %q %v", got, ok)
	}
}

// NormalizeIDs rewrites every list of senders and chats to the id form
// the plugin declares, so an owner written as a WhatsApp JID matches the
// sender the plugin reports ("+<number>"); Load alone keeps them as
// written.
func TestEntriesCanonical(t *testing.T) {
	cfg := mustParse(t, `
access {
  owners     = ["wa:15551234567@s.whatsapp.net", "dc:<@77>"]
  allow_from = ["wa:15551230000"]
  members    = ["wa:+15551239999"]
}
agent "w" {
  workspace = "./w"
  chats     = ["wa:15551234567"]
}
schedule "s" {
  cron   = "0 9 * * *"
  chat   = "wa:15551234567@s.whatsapp.net"
  prompt = "p"
  agent  = "w"
}
plugin "wa" {
  source = "whatsapp"
}
plugin "dc" {
  source = "discord"
  config {
    token = "x"
  }
}
`, nil)
	if !slices.Equal(cfg.Access.Owners, []string{"wa:15551234567@s.whatsapp.net", "dc:<@77>"}) {
		t.Errorf("Load rewrote ids without the plugins' forms: %v", cfg.Access.Owners)
	}
	if diags := cfg.NormalizeIDs(testIDForms(cfg)); len(diags) > 0 {
		t.Fatal(diags)
	}
	if !slices.Equal(cfg.Access.Owners, []string{"wa:+15551234567", "dc:77"}) || cfg.Access.AllowFrom[0] != "wa:+15551230000" || cfg.Access.Members[0] != "wa:+15551239999" {
		t.Errorf("access: %v %v %v", cfg.Access.Owners, cfg.Access.AllowFrom, cfg.Access.Members)
	}
	if cfg.Schedules[0].Chat != "wa:+15551234567" || cfg.Schedules[0].Agent != "w" {
		t.Errorf("schedule: %+v", cfg.Schedules[0])
	}
	if a, _ := cfg.Bindings().Resolve("wa", "+15551234567", ""); a != "w" {
		t.Errorf("the chat written as a number resolves to %q", a)
	}
}
