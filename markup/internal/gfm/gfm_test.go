package gfm

import (
	"bytes"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// TestSameAsGoldmarks renders markdown that uses every part of GFM with
// this copy and with goldmark's extension package, and wants the same HTML.
func TestSameAsGoldmarks(t *testing.T) {
	t.Parallel()
	ours := goldmark.New(goldmark.WithExtensions(GFM))
	theirs := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, src := range []string{
		"see https://example.com/a_(b)?x=1. and www.example.org, ftp://files.example.net/x;",
		"(http://example.com/path) *https://x.io/p* ~https://y.io~ and https://z.io/q&amp; https://z.io/r&x;",
		"mail ann@example.com, bob.smith@mail.example.org. or not@this and x-@y.z_ and _c@d.ef_",
		"@handle and foo@bar.baz- and a@b.c. end",
		"| a | b | c |\n|:--|:-:|--:|\n| 1 | **2** | `3\\|4` |\n| only |\n",
		"| x |\n| - |\n| y | z |\n\nno | table\n---\n",
		"~~gone~~ ~kept~ ~~~fence?~~~ a~~b~~c",
		"- [ ] todo\n- [x] done\n- [X] also\n  - [ ] nested\n- not [ ] a task\n",
		"plain text with no extensions at all",
	} {
		var a, b bytes.Buffer
		if err := ours.Convert([]byte(src), &a); err != nil {
			t.Fatal(err)
		}
		if err := theirs.Convert([]byte(src), &b); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("%q:\nours   %q\ngoldmark %q", src, a.String(), b.String())
		}
	}
}
