package chunk

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

func lens(blocks []string) []int {
	var out []int
	for _, b := range blocks {
		out = append(out, utf8.RuneCountInString(b))
	}
	return out
}

func TestCoalescerCuts(t *testing.T) {
	t.Parallel()
	para := func(n int, ch string) string { return strings.Repeat(ch, n) }
	for _, tc := range []struct {
		name  string
		in    []string
		want  []int // block lengths from Add calls only
		final string
		rest  []int // from Finish
	}{
		{"short stays buffered", []string{"hello"}, nil, "", []int{5}},
		{"paragraph break after min", []string{para(850, "a") + "\n\n" + para(100, "b")}, []int{850}, "", []int{100}},
		{"paragraph break before min ignored", []string{para(500, "a") + "\n\n" + para(400, "b")}, nil, "", []int{902}},
		{"over max hard cut", []string{para(2500, "x")}, []int{1200, 1200}, "", []int{100}},
		{"over max newline", []string{para(1000, "a") + "\n" + para(300, "b")}, []int{1000}, "", []int{300}},
		{"over max sentence", []string{para(900, "a") + ". " + para(400, "b")}, []int{901}, "", []int{400}},
		{"over max space", []string{para(900, "a") + " " + para(400, "b")}, []int{900}, "", []int{400}},
		{"deltas accumulate", []string{para(400, "a"), para(400, "a"), "\n\n", para(10, "b")}, []int{800}, "", []int{10}},
		{"multibyte counts runes", []string{para(1300, "é")}, []int{1200}, "", []int{100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := tstimetest.NewFake(time.Unix(0, 0))
			c := NewCoalescer(CoalesceConfig{}, clk.Now)
			var got []string
			for _, s := range tc.in {
				got = append(got, c.Add(s)...)
			}
			if g := lens(got); !slices.Equal(g, tc.want) {
				t.Fatalf("blocks %v, want %v", g, tc.want)
			}
			rest, diverged := c.Finish(tc.final)
			if g := lens(rest); !slices.Equal(g, tc.rest) || diverged {
				t.Fatalf("finish %v (diverged %v), want %v", g, diverged, tc.rest)
			}
		})
	}
}

func TestCoalescerIdle(t *testing.T) {
	t.Parallel()
	clk := tstimetest.NewFake(time.Unix(0, 0))
	c := NewCoalescer(CoalesceConfig{}, clk.Now)
	if out := c.Add("first bit"); out != nil {
		t.Fatal(out)
	}
	at, ok := c.Deadline()
	if !ok || !at.Equal(clk.Now().Add(time.Second)) {
		t.Fatalf("deadline %v %v", at, ok)
	}
	clk.Advance(999 * time.Millisecond)
	if out := c.Poll(); out != nil {
		t.Fatalf("flushed early: %q", out)
	}
	clk.Advance(time.Millisecond)
	if out := c.Poll(); len(out) != 1 || out[0] != "first bit" {
		t.Fatalf("idle flush %q", out)
	}
	if _, ok := c.Deadline(); ok {
		t.Fatal("deadline with empty buffer")
	}
	// Nothing twice: the final result equal to the stream adds nothing.
	if out, diverged := c.Finish("first bit"); len(out) != 0 || diverged {
		t.Fatalf("finish repeated text: %q", out)
	}
}

func TestCoalescerReconcile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		blocks   []string
		final    string
		want     string
		diverged bool
	}{
		{"equal", []string{"hello world"}, "hello world", "hello world", false},
		{"last block of several", []string{"Let me check.", "Done: 42"}, "Done: 42", "Let me check.\n\nDone: 42", false},
		{"final longer", []string{"hello"}, "hello world", "hello world", false},
		{"empty final", []string{"partial"}, "", "partial", false},
		{"diverged", []string{"abc"}, "xyz", "abc|xyz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := tstimetest.NewFake(time.Unix(0, 0))
			c := NewCoalescer(CoalesceConfig{}, clk.Now)
			var out []string
			for _, b := range tc.blocks {
				out = append(out, c.Add(b)...)
				c.EndBlock()
			}
			rest, diverged := c.Finish(tc.final)
			out = append(out, rest...)
			if got := strings.Join(out, "|"); got != tc.want || diverged != tc.diverged {
				t.Fatalf("got %q (diverged %v), want %q (%v)", got, diverged, tc.want, tc.diverged)
			}
		})
	}
}

func TestCoalescerDeltasThenBlock(t *testing.T) {
	t.Parallel()
	c := NewCoalescer(CoalesceConfig{}, tstimetest.NewFake(time.Time{}).Now)
	out := append(c.Delta("a"), c.Delta("b")...)
	out = append(out, c.Block("ab")...) // the complete block repeats the deltas
	c.EndBlock()
	rest, diverged := c.Finish("ab")
	out = append(out, rest...)
	if strings.Join(out, "|") != "ab" || diverged {
		t.Fatalf("got %q (diverged %v)", out, diverged)
	}
}

func TestCoalescerBlocksWithoutDeltas(t *testing.T) {
	t.Parallel()
	c := NewCoalescer(CoalesceConfig{}, tstimetest.NewFake(time.Time{}).Now)
	out := append(c.Block("Let me check."), c.Block("Done.")...)
	rest, _ := c.Finish("Done.")
	out = append(out, rest...)
	if strings.Join(out, "|") != "Let me check.\n\nDone." {
		t.Fatalf("got %q", out)
	}
}

// FuzzCoalescer checks the invariants: no block over MaxChars, the delivered text equals
// the input modulo whitespace, and nothing is lost or repeated.
func FuzzCoalescer(f *testing.F) {
	f.Add("hello\n\nworld", 3, uint8(10))
	f.Add(strings.Repeat("word ", 500), 7, uint8(200))
	f.Fuzz(func(t *testing.T, s string, parts int, minc uint8) {
		if !utf8.ValidString(s) || parts <= 0 || parts > 50 {
			return
		}
		c := NewCoalescer(CoalesceConfig{MinChars: int(minc) + 1, MaxChars: int(minc) + 40}, tstimetest.NewFake(time.Time{}).Now)
		var out []string
		r := []rune(s)
		step := len(r)/parts + 1
		for i := 0; i < len(r); i += step {
			out = append(out, c.Add(string(r[i:min(i+step, len(r))]))...)
		}
		rest, _ := c.Finish(s)
		out = append(out, rest...)
		for _, b := range out {
			if utf8.RuneCountInString(b) > int(minc)+40 {
				t.Fatalf("block of %d runes", utf8.RuneCountInString(b))
			}
		}
		if strings.Join(strings.Fields(strings.Join(out, " ")), "") != strings.Join(strings.Fields(s), "") {
			t.Fatalf("text changed: %q -> %q", s, out)
		}
	})
}
