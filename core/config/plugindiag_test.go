package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/golden"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/sdk/schema"
)

// objectsSchema is a plugin schema with nested values, for path lookups.
var objectsSchema = schema.Schema{
	{Name: "token", Sensitive: true},
	{Name: "guilds", Type: "list(string)"},
	{Name: "pacing", Type: "object({min = number, max = number})"},
	{Name: "labels", Type: "map(string)"},
	{Name: "rooms", Type: "list(object({name = string, id = number}))"},
}

const objectsHCL = `plugin "dc" {
  source = "discord"
  config {
    token  = env("TG_TOKEN")
    guilds = ["a", "b",
      "c"]
    pacing = { min = 1, "max" = 2 }
    labels = {
      "a.b" = "x"
      plain = "y"
    }
    rooms = [{ name = "r", id = 7 }]
  }
}
`

// TestPluginDiagnosticPositions: each attribute path lands on its value, or
// on the closest enclosing one (exact false), or on the config header.
func TestPluginDiagnosticPositions(t *testing.T) {
	t.Parallel()
	cfg, diags := parse([]byte(objectsHCL), "dc.hcl", "/etc/clawhost", lookupTestEnv)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := cfg.Plugin("dc")
	for _, tc := range []struct {
		path      string
		line, col int
		warning   bool
		located   bool // the detail does not need to name the path
		sensitive bool
	}{
		{path: "", line: 3, col: 3, located: true},
		{path: "token", line: 4, col: 14, located: true, sensitive: true},
		{path: "guilds", line: 5, col: 14, located: true},
		{path: "guilds[1]", line: 5, col: 20, located: true},
		{path: "guilds[2]", line: 6, col: 7, located: true},
		{path: "guilds[9]", line: 5, col: 14},
		{path: "pacing.min", line: 7, col: 22, located: true},
		{path: "pacing.max", line: 7, col: 33, located: true},
		{path: "pacing.mid", line: 7, col: 14},
		{path: `labels["a.b"]`, line: 9, col: 15, located: true},
		{path: "labels.plain", line: 10, col: 15, located: true},
		{path: "rooms[0].id", line: 12, col: 33, located: true},
		{path: "rooms[0].name", line: 12, col: 23, located: true, warning: true},
		{path: "rooms.id", line: 12, col: 13},
		{path: "token.x", line: 4, col: 14, sensitive: true},
		{path: "absent", line: 3, col: 3},
		{path: "guilds[", line: 3, col: 3},
		{path: "[0]", line: 3, col: 3},
		{path: "guilds..x", line: 3, col: 3},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			in := schema.Diagnostic{Attribute: tc.path, Summary: "Bad value", Detail: "the plugin says no", Warning: tc.warning}
			out := PluginDiagnostics(p, objectsSchema, schema.Diagnostics{in})
			if len(out) != 1 {
				t.Fatalf("got %d diagnostics", len(out))
			}
			d := out[0]
			if d.Subject == nil || d.Subject.Start.Line != tc.line || d.Subject.Start.Column != tc.col {
				t.Errorf("at %v, want %d:%d", d.Subject, tc.line, tc.col)
			}
			if wantSev := map[bool]hcl.DiagnosticSeverity{false: hcl.DiagError, true: hcl.DiagWarning}[tc.warning]; d.Severity != wantSev {
				t.Errorf("severity %v, want %v", d.Severity, wantSev)
			}
			if named := strings.Contains(d.Detail, "reports this about "+tc.path); named == tc.located && tc.path != "" {
				t.Errorf("detail %q: naming the path is %v, want %v", d.Detail, named, !tc.located)
			}
			if _, hidden := d.Extra.(sensitiveDiag); hidden != tc.sensitive {
				t.Errorf("hidden = %v, want %v", hidden, tc.sensitive)
			}
			if !strings.Contains(d.Summary, `in plugin "dc"`) {
				t.Errorf("summary %q does not name the instance", d.Summary)
			}
		})
	}
}

// telegramChecks are what a telegram plugin's Validate could return for
// testdata/plugindiag/telegram.hcl.
var telegramChecks = map[string]schema.Diagnostics{
	"tg": {
		{Attribute: "allowed_chats[1]", Summary: "Invalid chat id", Detail: `"not-a-chat" is not a Telegram chat id`},
		{Attribute: "token", Summary: "Malformed bot token", Detail: "a bot token looks like 123456:ABC-DEF…; get one from @BotFather"},
		{Attribute: "api_endpoint", Summary: "Invalid API endpoint", Detail: "the scheme must be http or https"},
		{Attribute: "poll_timeout", Summary: "Short poll timeout", Detail: "under 10 s polls often", Warning: true},
		{Attribute: "debug", Summary: "Debug is off"},
		{Summary: "Webhook and polling both configured"},
	},
	"one": {
		{Summary: "Whole block rejected", Detail: "the one-line block shows its token on the header line"},
	},
}

// TestPluginDiagnosticsGolden formats the plugin diagnostics of every
// testdata/plugindiag/*.hcl file and compares them with the .golden file.
// No sensitive value may appear.
func TestPluginDiagnosticsGolden(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob(filepath.Join("testdata", "plugindiag", "*.hcl"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			cfg, diags := parse(src, filepath.Base(in), "/etc/clawhost", lookupTestEnv)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			for _, p := range cfg.Plugins {
				if _, pd := DecodePluginConfig(p, telegramSchema); pd.HasErrors() {
					t.Fatalf("schema: %v", pd)
				}
				diags = append(diags, PluginDiagnostics(p, telegramSchema, telegramChecks[p.Name])...)
			}
			var out bytes.Buffer
			if err := FormatDiagnostics(&out, diags, cfg.Files()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), secret) {
				t.Errorf("diagnostics show a sensitive value:\n%s", out.String())
			}
			golden.Check(t, strings.TrimSuffix(in, ".hcl")+".golden", out.Bytes())
		})
	}
}
