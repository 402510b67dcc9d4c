package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/golden"

	"github.com/clawhost/clawhost/sdk/schema"
)

// secret is the value of every sensitive setting in testdata: it must never
// appear in diagnostics.
const secret = "hunter2"

// testEnv is the environment the golden files are evaluated in.
var testEnv = map[string]string{
	"TG_TOKEN":      secret + "-from-env",
	"TG2_TOKEN":     secret + "-second",
	"EMPTY":         "",
	"CLAWHOST_HOME": "/srv/clawhost",
}

func lookupTestEnv(name string) (string, bool) {
	v, ok := testEnv[name]
	return v, ok
}

// telegramSchema is what a telegram-like plugin declares; the golden harness
// decodes every enabled plugin with source "telegram" against it.
var telegramSchema = schema.Schema{
	{Name: "token", Type: "string", Required: true, Sensitive: true, Description: "Bot API token."},
	{Name: "api_endpoint", Type: "string", Default: json.RawMessage(`"https://api.telegram.org/bot%s/%s"`)},
	{Name: "poll_timeout", Type: "number", Default: json.RawMessage(`30`)},
	{Name: "allowed_chats", Type: "list(string)"},
	{Name: "debug", Type: "bool", Default: false},
	{Name: "webhook_secret", Type: "string", Sensitive: true},
}

// generated are golden inputs too large to keep in testdata: name to source.
// Their .golden files are in testdata/diag like the others.
var generated = map[string]func() []byte{
	// A valid file that a comment makes one byte longer than MaxFileSize:
	// refused at the byte past the limit, with no snippet.
	"too_large": func() []byte {
		src := []byte("plugin \"tg\" {\n  source = \"telegram\"\n  config { token = \"" + secret + "\" }\n}\n")
		line := "# " + strings.Repeat("padding ", 8) + "\n"
		for len(src) <= MaxFileSize {
			src = append(src, line...)
		}
		return src[:MaxFileSize+1]
	},
}

// TestGolden loads every testdata/diag/*.hcl file (and every generated
// input), decodes the config of its
// telegram plugins, and compares the formatted diagnostics (and decoded
// plugin JSON) with the .golden file next to it.
func TestGolden(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob(filepath.Join("testdata", "diag", "*.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs")
	}
	for name := range generated {
		inputs = append(inputs, filepath.Join("testdata", "diag", name+".hcl"))
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".hcl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(in)
			if gen := generated[name]; gen != nil {
				src, err = gen(), nil
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, diags := parse(src, filepath.Base(in), "/etc/clawhost", lookupTestEnv)
			diags = append(diags, cfg.NormalizeIDs(testIDForms(cfg))...)
			var decoded bytes.Buffer
			for _, p := range cfg.Plugins {
				if !p.Enabled || p.Source != "telegram" {
					continue
				}
				js, pdiags := DecodePluginConfig(p, telegramSchema)
				diags = append(diags, pdiags...)
				if js != nil {
					fmt.Fprintf(&decoded, "plugin %q config: %s\n", p.Name, js)
				}
			}
			var out bytes.Buffer
			if err := FormatDiagnostics(&out, diags, cfg.Files()); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(out.String(), secret) {
				t.Errorf("diagnostics show a sensitive value:\n%s", out.String())
			}
			out.Write(decoded.Bytes())
			if out.Len() == 0 {
				out.WriteString("(no diagnostics)\n")
			}

			golden.Check(t, strings.TrimSuffix(in, ".hcl")+".golden", out.Bytes())
		})
	}
}
