package whatsapp

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestMarkdownGolden converts testdata/markdown/*.md and compares with the
// .txt beside each (go test -update rewrites them).
func TestMarkdownGolden(t *testing.T) {
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
			got := MarkdownToWhatsApp(string(in)) + "\n"
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
			if utf16Len(got) > utf16Len(string(in))+1 {
				t.Errorf("the conversion grew the text from %d to %d units", utf16Len(string(in)), utf16Len(got))
			}
		})
	}
}

func TestMarkdownInline(t *testing.T) {
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
		if got := MarkdownToWhatsApp(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestSplitText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in    string
		limit int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"", 10, []string{""}},
		{"line one\nline two\nline three", 18, []string{"line one\nline two", "line three"}},
		{"word word word", 9, []string{"word word", "word"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"😀😀😀", 4, []string{"😀😀", "😀"}}, // 2 UTF-16 units each, never halved
		{"😀", 1, []string{"😀"}},         // below one rune: progress anyway
	}
	for _, c := range cases {
		got := splitText(c.in, c.limit)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("splitText(%q, %d) = %q, want %q", c.in, c.limit, got, c.want)
		}
	}
}

func FuzzSplitText(f *testing.F) {
	f.Add("hello world\nsecond line", 7)
	f.Add("😀a😀 b", 3)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 2 || limit > 100 || !utf8.ValidString(s) {
			return
		}
		for _, p := range splitText(s, limit) {
			if utf16Len(p) > limit {
				t.Fatalf("piece %q has %d units, limit %d", p, utf16Len(p), limit)
			}
			if !utf8.ValidString(p) {
				t.Fatalf("piece %q is not valid UTF-8", p)
			}
		}
	})
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"**a** *b* ~~c~~", "# h\n\n- a\n  - b\n\n> q", "```\nx\n```", "[a](b) ![c](d) <e>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := MarkdownToWhatsApp(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
	})
}
