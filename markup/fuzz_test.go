package markup

import (
	"strings"
	"testing"
	"unicode"

	"github.com/clawhost/clawhost/sdk/channel"
)

// FuzzSplit: for every flavour and unit, no piece renders longer than the
// limit, a reply whose rendering fits is returned whole, and no text is
// lost: the letters and digits of the whole's plain rendering appear, in
// order, in the pieces' plain renderings. (Not "equal": a link cut in two
// shows its url, which the whole link whose label is its url does not.)
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"hello **world**", "# h\n\n- a\n  - b\n\n```go\nx\n```", "| a | b |\n|---|---|\n| 1 | 2 |",
		"😀😀😀 [x](https://e.com) ~~s~~ `c`", "> q\n> > r", "a &amp; b \\* c", "[r]\n\n[r]: /u",
		"x < y && z > 0 [a|b](https://e.com/?q=1&r=2) <https://e.com>",
	} {
		f.Add(s, uint8(20))
	}
	units := []channel.LengthUnit{channel.LengthUTF16, channel.LengthRunes, channel.LengthBytes}
	f.Fuzz(func(t *testing.T, src string, lim uint8) {
		limit := 24 + int(lim)
		want := alnum(Render(src, Plain))
		for _, fl := range []Flavour{Plain, HTMLSubset, RichHTML, Lightweight, Mrkdwn, Markdown} {
			for _, unit := range units {
				pieces := Split(src, fl, limit, unit)
				checkSplitRendered(t, src, fl, limit, unit, pieces)
				if Len(src, fl, unit) <= limit && strings.TrimSpace(src) != "" {
					if len(pieces) != 1 || pieces[0] != src {
						t.Fatalf("%s/%s: fitting text split: %q", fl, unit, pieces)
					}
				}
				var got strings.Builder
				for _, p := range pieces {
					if n := Len(p, fl, unit); n > limit {
						t.Fatalf("%s/%s: piece %q renders to %d > %d", fl, unit, p, n, limit)
					}
					got.WriteString(alnum(Render(p, Plain)))
				}
				if !subsequence(want, got.String()) {
					t.Fatalf("%s/%s: text lost:\n got %q\nwant %q\npieces %q", fl, unit, got.String(), want, pieces)
				}
			}
		}
	})
}

// checkSplitRendered: SplitRendered's pieces are Split's, and a piece it
// gives with its rendering is rendered as Render and Visible render it.
func checkSplitRendered(t *testing.T, src string, fl Flavour, limit int, unit channel.LengthUnit, pieces []string) {
	t.Helper()
	got := SplitRendered(src, fl, limit, unit)
	if len(got) != len(pieces) {
		t.Fatalf("%s/%s: SplitRendered gives %d pieces, Split %d", fl, unit, len(got), len(pieces))
	}
	for i, p := range got {
		if p.Src != pieces[i] {
			t.Fatalf("%s/%s: piece %d: SplitRendered %q, Split %q", fl, unit, i, p.Src, pieces[i])
		}
		if p.Rendered && (p.Out != Render(p.Src, fl) || p.Visible != Visible(p.Src, fl)) {
			t.Fatalf("%s/%s: piece %q rendered as %q / %q", fl, unit, p.Src, p.Out, p.Visible)
		}
	}
}

// alnum keeps the letters and digits of s.
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return -1
	}, s)
}

// subsequence reports whether the runes of a appear in b in order.
func subsequence(a, b string) bool {
	rb := []rune(b)
	j := 0
	for _, r := range a {
		for j < len(rb) && rb[j] != r {
			j++
		}
		if j == len(rb) {
			return false
		}
		j++
	}
	return true
}
