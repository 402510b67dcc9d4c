package chunk

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }

// balanced reports whether every fenced code block of s is closed.
func balanced(s string) bool {
	for _, f := range parseFences(encode(s)) {
		if !f.closed {
			return false
		}
	}
	return true
}

func TestLines(t *testing.T) {
	t.Parallel()
	num := func(from, to int) string {
		var b []string
		for i := from; i <= to; i++ {
			b = append(b, fmt.Sprintf("l%d", i))
		}
		return strings.Join(b, "\n")
	}
	for _, tc := range []struct {
		name     string
		in       string
		maxLines int
		want     []string
	}{
		{"fits", num(1, 3), 3, []string{num(1, 3)}},
		{"no limit", num(1, 30), 0, []string{num(1, 30)}},
		{"plain greedy", num(1, 7), 3, []string{num(1, 3), num(4, 6), "l7"}},
		{"paragraph break preferred", "a1\na2\n\nb1\nb2\nb3", 4, []string{"a1\na2", "b1\nb2\nb3"}},
		{"blank lines dropped at cuts", "a\nb\nc\n\n\n\nd\ne", 3, []string{"a\nb\nc", "d\ne"}},
		{"fence closed and reopened", "```go\nx1\nx2\nx3\nx4\nx5\n```", 4,
			[]string{"```go\nx1\nx2\n```", "```go\nx3\nx4\n```", "```go\nx5\n```"}},
		{"cut before a fence rather than an empty one", "p1\np2\np3\n```\nc1\nc2\n```", 4,
			[]string{"p1\np2\np3", "```\nc1\nc2\n```"}},
		{"no piece of only the close line", "```\nc1\nc2\nc3\n```\nafter", 5,
			[]string{"```\nc1\nc2\nc3\n```", "after"}},
		{"blank lines inside a fence kept", "```\nc1\n\n\nc2\n```", 4, []string{"```\nc1\n\n```", "```\n\nc2\n```"}},
		{"tilde fence with info", "~~~~ py\nc1\nc2\nc3\n~~~~", 4, []string{"~~~~ py\nc1\nc2\n~~~~", "~~~~ py\nc3\n~~~~"}},
		{"two lines cannot balance", "```\nc1\nc2\n```", 2, []string{"```\nc1", "c2\n```"}},
		{"long line is one line", strings.Repeat("w", 500) + "\nx", 1, []string{strings.Repeat("w", 500), "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Lines([]string{tc.in}, 0, tc.maxLines)
			if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
				t.Fatalf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestLinesLengthLimit(t *testing.T) {
	t.Parallel()
	// Pieces never outgrow their chunk: at 43 units the chunk fits and its
	// pieces reopen with the full open line; at 20 the chunker reopens with
	// the bare marker and the line split keeps it.
	in := "```a-very-long-info-string\nc1\nc2\nc3\nc4\n```"
	for _, limit := range []int{43, 20} {
		got := Lines(Markdown(in, limit), limit, 4)
		for _, c := range got {
			if Len(c) > limit || lineCount(c) > 4 {
				t.Fatalf("limit %d: piece %q: %d units, %d lines", limit, c, Len(c), lineCount(c))
			}
		}
		if limit == 43 && (len(got) != 2 || got[1] != "```a-very-long-info-string\nc3\nc4\n```") {
			t.Fatalf("limit 43: %q", got)
		}
	}
}

// FuzzLines checks the line splitter over the length chunker's output:
//   - no piece has more than maxLines lines, and none is longer than limit
//     (with the chunker's own exemption);
//   - each piece is reopen-line? + a source range of its chunk +
//     (newline + close line)?, in order, the gaps blank: nothing is lost,
//     duplicated or reordered;
//   - with maxLines >= 3, every piece of a chunk whose fences are balanced
//     has balanced fences.
func FuzzLines(f *testing.F) {
	for _, s := range fuzzSeeds {
		for _, l := range []int{8, 40, 0} {
			f.Add(s, l, 3)
			f.Add(s, l, 1)
		}
	}
	f.Add("```go\na\nb\n\nc\n```\nx\n\n\ny\n~~~\nq\n~~~", 30, 4)
	f.Fuzz(func(t *testing.T, text string, limit, maxLines int) {
		if !utf8.ValidString(text) || limit < 0 || limit > 200 || maxLines < 1 || maxLines > 30 {
			t.Skip()
		}
		for ci, c := range Markdown(text, limit) {
			u := encode(c)
			var pieces []piece
			got := splitLines(u, limit, maxLines, nil, func(p piece) { pieces = append(pieces, p) })
			if strings.Join(got, "\x00") != strings.Join(Lines([]string{c}, limit, maxLines), "\x00") || len(pieces) != len(got) {
				t.Fatalf("recorded run differs")
			}
			if limit > 0 && Len(c) <= limit {
				checkLimit(t, got, limit)
			}
			prev := 0
			for i, p := range pieces {
				g := got[i]
				if n := lineCount(g); n > maxLines {
					t.Fatalf("chunk %d piece %d has %d lines, max %d: %q", ci, i, n, maxLines, g)
				}
				if p.start < prev || p.end < p.start {
					t.Fatalf("piece %d out of order: %+v after %d", i, p, prev)
				}
				if gap := u[prev:p.start]; !isAllSpace(gap) {
					t.Fatalf("piece %d skipped non-space %q", i, gap.String())
				}
				src := u[p.start:p.end].String()
				k := 0
				if p.reopened {
					k = strings.IndexByte(g, '\n') + 1
				}
				if !strings.HasPrefix(g[k:], src) {
					t.Fatalf("piece %q does not carry source %q", g, src)
				}
				if rest := g[k+len(src):]; (rest != "") != p.closed {
					t.Fatalf("piece %q suffix %q inconsistent with %+v", g, rest, p)
				}
				if maxLines >= 3 && balanced(c) && !balanced(g) {
					t.Fatalf("piece %q of balanced chunk %q is not balanced", g, c)
				}
				prev = p.end
			}
			if !isAllSpace(u[prev:]) {
				t.Fatalf("tail lost: %q", u[prev:].String())
			}
		}
	})
}
