package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/sdk/schema"
)

// FuzzParse feeds arbitrary bytes through everything a configuration file
// reaches: Parse, DecodePluginConfig, Fingerprint, SourceDiagnostic and
// FormatDiagnostics. None may panic.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "diag", "*.hcl"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`plugin "a" { config { x = env("A", "b") } }`))
	f.Add([]byte("access { owners = [\"a:1\", 2] }\nplugin \"a\" { source = \"s\" }"))
	s := schema.Schema{
		{Name: "token", Required: true, Sensitive: true},
		{Name: "n", Type: "number", Default: 3},
		{Name: "l", Type: "list(string)"},
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, diags := parse(src, "fuzz.hcl", "/tmp", lookupTestEnv)
		if cfg == nil {
			t.Fatal("nil config")
		}
		for _, p := range cfg.Plugins {
			_, pd := DecodePluginConfig(p, s)
			diags = append(diags, pd...)
			_ = p.Fingerprint()
			_ = cfg.SourceDiagnostic(p.Name, []string{"telegram"})
		}
		if err := FormatDiagnostics(discard{}, diags, cfg.Files()); err != nil {
			t.Fatal(err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
