package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/sdk/schema"
)

// FuzzParse feeds arbitrary bytes through everything a configuration file
// reaches: parse, DecodePluginConfig, Fingerprint, SourceDiagnostic,
// ProbePlugins and FormatDiagnostics. None may panic or overflow the stack.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "diag", "*.hcl"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`plugin "a" { config { x = env("A", "b") } }`))
	f.Add([]byte("access { owners = [\"a:1\", 2] }\nplugin \"a\" { source = \"s\" }"))
	f.Add([]byte("a = " + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting)))
	f.Add([]byte("a = \"${" + strings.Repeat("!", MaxNesting) + "true}\""))
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
			_ = cfg.SourceDiagnostic(p, []string{"telegram"})
		}
		_ = cfg.ProbePlugins(diags)
		if err := FormatDiagnostics(discard{}, diags, cfg.Files()); err != nil {
			t.Fatal(err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// FuzzFormatMatchesHCL: FormatDiagnostics writes what hcl's own text writer
// writes (which scans the whole file for every diagnostic), for the
// diagnostics parse and DecodePluginConfig produce. Sources with a lone
// carriage return are left out: hcl counts it as a line break, the parser
// does not.
func FuzzFormatMatchesHCL(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "diag", "*.hcl"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if bytes.Contains(bytes.ReplaceAll(src, []byte("\r\n"), nil), []byte("\r")) {
			t.Skip("lone carriage return")
		}
		cfg, diags := parse(src, "fuzz.hcl", "/tmp", lookupTestEnv)
		for _, p := range cfg.Plugins {
			_, pd := DecodePluginConfig(p, telegramSchema)
			diags = append(diags, pd...)
		}
		var got strings.Builder
		if err := FormatDiagnostics(&got, diags, cfg.Files()); err != nil {
			t.Fatal(err)
		}
		if want := formatWithHCL(t, diags, cfg.Files()); got.String() != want {
			t.Errorf("FormatDiagnostics differs from hcl's writer:\n--- got\n%s\n--- hcl\n%s", got.String(), want)
		}
	})
}

// formatWithHCL is FormatDiagnostics as it was, each diagnostic written
// by hcl.NewDiagnosticTextWriter.
func formatWithHCL(t *testing.T, diags hcl.Diagnostics, files map[string]*hcl.File) string {
	t.Helper()
	if len(diags) == 0 {
		return ""
	}
	var b strings.Builder
	wr := hcl.NewDiagnosticTextWriter(&b, files, 0, false)
	if err := writeEach(&b, diags, wr.WriteDiagnostic); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
