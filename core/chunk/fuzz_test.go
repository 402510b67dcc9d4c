package chunk

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"",
	"hello world",
	"Supercalifragilisticexpialidocious",
	"Heads up now (Though now I'm curious)ok",
	"line one\r\nline two\r\nline three",
	"aaaa😀bbbb cccc",
	"ab👨‍👩‍👧‍👦cd",
	"abc🇺🇸def e\u0301\u0301\u0301 x",
	"intro\n```py\nprint(1)\nprint(2)\n```\noutro (a b) c",
	"  ```js\n  zzzzzzzz zz\n\n  ```\n~~~\n~~~~\n",
	"```\nqqqqqqqqqqqqqqqqqqqq\n```",
	"   \n\n   \t\u00a0\u3000 x",
	"A\n  \t\nB\u2028C\u2029D\rE",
}

// checkLimit: no chunk is longer than limit, except a single code point that
// is itself wider than the limit (a surrogate pair with limit 1).
func checkLimit(t *testing.T, chunks []string, limit int) {
	t.Helper()
	for i, c := range chunks {
		if n := Len(c); n > limit && !(utf8.RuneCountInString(c) == 1 && n == 2) {
			t.Fatalf("chunk %d has %d units, limit %d: %q", i, n, limit, c)
		}
	}
}

// FuzzMarkdown checks the markdown chunker's invariants:
//   - every chunk fits the limit;
//   - each chunk is reopen-line? + a source range + (newline? + close line)?,
//     the source ranges are in order, and the gaps between them are
//     whitespace only, so no text is lost, duplicated or reordered;
//   - when every fence line is short relative to the limit, a chunk that
//     starts inside a fence reopens it and a chunk that ends inside a fence
//     closes it, so each chunk's fences are balanced.
func FuzzMarkdown(f *testing.F) {
	for _, s := range fuzzSeeds {
		for _, l := range []int{1, 2, 5, 8, 13, 25, 40} {
			f.Add(s, l)
		}
	}
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if !utf8.ValidString(text) || limit < 1 || limit > 200 {
			t.Skip()
		}
		got := Markdown(text, limit)
		checkLimit(t, got, limit)
		u := encode(text)
		if len(u) <= limit {
			return
		}
		var pieces []piece
		again := chunkMarkdown(u, limit, nil, func(p piece) { pieces = append(pieces, p) })
		if strings.Join(again, "\x00") != strings.Join(got, "\x00") || len(pieces) != len(got) {
			t.Fatalf("recorded run differs")
		}
		spans := parseFences(u)
		longest := 0
		for _, s := range spans {
			longest = max(longest, len(s.openLine))
		}
		prev := 0
		for i, p := range pieces {
			if p.start < prev || p.end <= p.start {
				t.Fatalf("piece %d out of order: %+v after %d", i, p, prev)
			}
			if gap := u[prev:p.start]; !isAllSpace(gap) {
				t.Fatalf("piece %d skipped non-space %q", i, gap.String())
			}
			src := u[p.start:p.end].String()
			c := got[i]
			k := 0
			if p.reopened {
				k = strings.IndexByte(c, '\n') + 1
			}
			if !strings.HasPrefix(c[k:], src) {
				t.Fatalf("chunk %d %q does not carry source %q after prefix %q", i, c, src, c[:k])
			}
			if rest := c[k+len(src):]; (rest != "") != p.closed {
				t.Fatalf("chunk %d suffix %q inconsistent with %+v", i, rest, p)
			}
			if limit >= 3*longest+8 {
				if fenceAt(spans, p.start) != nil && !p.reopened {
					t.Fatalf("chunk %d starts inside a fence without reopening: %q", i, c)
				}
				if fenceAt(spans, p.end) != nil && !p.closed {
					t.Fatalf("chunk %d ends inside a fence without closing: %q", i, c)
				}
			}
			prev = p.end
		}
		if !isAllSpace(u[prev:]) {
			t.Fatalf("tail lost: %q", u[prev:].String())
		}
	})
}

// isAllSpace reports whether every code unit of u is whitespace.
func isAllSpace(u units) bool {
	for _, c := range u {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
