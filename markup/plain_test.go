package markup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPlain: the Plain flavour, construct by construct.
func TestPlain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain text unchanged", "just words, nothing else", "just words, nothing else"},
		{"emphasis markers removed", "a *b* __c__ ~~d~~ ***e***", "a b c d e"},
		{"intraword underscores stay", "snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"},
		{"inline code verbatim", "run `make *check*` now", "run make *check* now"},
		{"link", "see [the docs](https://example.com/a_b)", "see the docs (https://example.com/a_b)"},
		{"link text is the url", "[https://x.io](https://x.io)", "https://x.io"},
		{"autolink", "<https://x.io/p?q=1> and <ann@example.com>", "https://x.io/p?q=1 and ann@example.com"},
		{"image", "![a cat](cat.png)", "a cat (cat.png)"},
		{"heading", "# Title\nbody", "Title\n\nbody"},
		{"escapes and entities", `\*not emphasis\* &amp; &#65; &copy;`, "*not emphasis* & A ©"},
		{"line breaks kept", "one\ntwo  \nthree", "one\ntwo\nthree"},
		{"bullets kept", "- a\n- b\n\n* c", "- a\n- b\n\n* c"},
		{"ordered list numbers", "3. x\n4. y", "3. x\n4. y"},
		{"nested list indented", "- a\n  - b\n    continued\n- c", "- a\n  - b\n    continued\n- c"},
		{"code block verbatim", "```go\nfunc *x() {}\n\n\t`y`\n```", "func *x() {}\n\n\t`y`"},
		{"quote", "> quoted *text*\n>\n> more", "> quoted text\n>\n> more"},
		{"thematic break", "a\n\n***\n\nb", "a\n\n---\n\nb"},
		{"raw html kept", "a <b>bold</b> c", "a <b>bold</b> c"},
		{"table aligned", "| Name | Qty |\n|---|--:|\n| Ann | 3 |\n| Bob **B** | 12 |", "Name  | Qty\n------+----\nAnn   |   3\nBob B |  12"},
		{"empty", " \n\t", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Render(tc.in, Plain); got != tc.want {
				t.Errorf("Render(%q, Plain)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestPlainGolden renders a typical agent reply; testdata/reply.plain.golden
// is the reviewed output (go test -update rewrites it).
func TestPlainGolden(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile(filepath.Join("testdata", "reply.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := Render(string(in), Plain) + "\n"
	path := filepath.Join("testdata", "reply.plain.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n%s", path, got)
	}
}

// FuzzPlain: rendering never panics, returns valid UTF-8 without
// surrounding whitespace, and keeps every letter and digit of plain
// prose (text without markdown punctuation comes back unchanged but for
// whitespace at line ends).
func FuzzPlain(f *testing.F) {
	for _, s := range []string{"a *b* [c](d)", "- x\n  - y", "| a | b |\n|---|---|\n| 1 | 2 |", "```\ncode\n```", "hello world\nsecond line"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Render(s, Plain)
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if got != strings.TrimSpace(got) {
			t.Fatalf("surrounding whitespace: %q", got)
		}
		if strings.ContainsAny(s, "*_`[]()<>!#&\\|~-+=.:;0123456789\r\t") || !utf8.ValidString(s) {
			return
		}
		var lines []string
		for l := range strings.SplitSeq(s, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		if want := strings.Join(lines, "\n"); strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(want), " ") {
			t.Fatalf("prose changed: %q -> %q", s, got)
		}
	})
}
