package whatsapp

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/markup"
)

// toWhatsApp is what Send makes of markdown.
func toWhatsApp(md string) string { return markup.Render(md, markup.Lightweight) }

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestLightweightGolden renders testdata/markdown/*.md as WhatsApp shows
// it (markup.Lightweight) and compares with the .txt beside each (go test
// -update rewrites them).
func TestLightweightGolden(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/markdown/*.md")
	if len(files) == 0 {
		t.Fatal("no golden inputs")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".md")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := toWhatsApp(string(in)) + "\n"
			golden := strings.TrimSuffix(f, ".md") + ".txt"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\n--- got\n%s--- want\n%s", name, got, want)
			}
		})
	}
}

func TestLightweightInline(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"**a**":               "*a*",
		"*a*":                 "_a_",
		"~~a~~":               "~a~",
		"`x`":                 "`x`",
		"**a *b* c**":         "*a _b_ c*",
		"[x](http://e.com)":   "x (http://e.com)",
		"plain":               "plain",
		"":                    "",
		"- a\n- b":            "- a\n- b",
		"```\n*x*\n```":       "```\n*x*\n```",
		"**[l](http://e.c)**": "*l (http://e.c)*",
	} {
		if got := toWhatsApp(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
