package chunk

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

// feed adds s in deltas of n runes and returns the blocks, then those
// Finish adds.
func feed(c *Coalescer, s string, n int) (streamed, rest []string) {
	r := []rune(s)
	for i := 0; i < len(r); i += n {
		streamed = append(streamed, c.Add(string(r[i:min(i+n, len(r))]))...)
	}
	rest, _ = c.Finish(s)
	return streamed, rest
}

func codeLines(n int, width int) string {
	var b strings.Builder
	for i := range n {
		line := fmt.Sprintf("\tx%d := compute(%d)", i, i)
		b.WriteString(line + strings.Repeat(" ", max(0, width-len(line))) + "// ok\n")
	}
	return b.String()
}

func TestCoalescerKeepsACodeBlockWhole(t *testing.T) {
	t.Parallel()
	code := "```go\n" + codeLines(12, 20) + "```"
	in := strings.Repeat("a", 700) + "\n\n" + code + "\n\n" + strings.Repeat("b", 300)
	c := NewCoalescer(CoalesceConfig{}, tstimetest.NewFake(time.Time{}).Now)
	streamed, rest := feed(c, in, 37)
	all := append(streamed, rest...)
	var withCode []string
	for i, b := range all {
		if !balanced(b) {
			t.Errorf("block %d is not balanced: %q", i, b)
		}
		if strings.Contains(b, "```go") {
			withCode = append(withCode, b)
		}
	}
	if len(withCode) != 1 || !strings.Contains(withCode[0], code) {
		t.Fatalf("the code block (%d runes) fits one block and arrives whole: %q", utf8.RuneCountInString(code), all)
	}
}

func TestCoalescerSplitsALongCodeBlockAndReopensIt(t *testing.T) {
	t.Parallel()
	in := "Here:\n\n```py title=\"x\"\n" + codeLines(60, 30) + "```\n\nDone."
	for _, delta := range []int{1, 13, 500, 5000} {
		c := NewCoalescer(CoalesceConfig{}, tstimetest.NewFake(time.Time{}).Now)
		streamed, rest := feed(c, in, delta)
		all := append(streamed, rest...)
		if len(all) < 3 {
			t.Fatalf("delta %d: want the 2.5k-rune code block split: %q", delta, all)
		}
		var code []string
		for i, b := range all {
			if n := utf8.RuneCountInString(b); n > DefaultCoalesceMax || !balanced(b) {
				t.Fatalf("delta %d block %d (%d runes, balanced %v): %q", delta, i, n, balanced(b), b)
			}
			if i > 0 && strings.HasPrefix(b, "\tx") {
				t.Fatalf("delta %d block %d continues the code without reopening: %q", delta, i, b)
			}
			lines := strings.Split(b, "\n")
			if lines[0] == "```py title=\"x\"" && lines[len(lines)-1] == "```" {
				code = append(code, strings.Join(lines[1:len(lines)-1], "\n"))
			}
		}
		if got := strings.Join(code, "\n") + "\n"; got != codeLines(60, 30) {
			t.Fatalf("delta %d: the code lines, without the added fence lines, differ:\n%s", delta, got)
		}
	}
}

func TestCoalescerIdleFlushWaitsForAnOpenCodeBlock(t *testing.T) {
	t.Parallel()
	clk := tstimetest.NewFake(time.Unix(0, 0))
	c := NewCoalescer(CoalesceConfig{}, clk.Now)
	c.Add("Listing:\n\n```sh\nls -l\n")
	clk.Advance(time.Second)
	if out := c.Poll(); len(out) != 1 || out[0] != "Listing:" {
		t.Fatalf("idle flush %q: the text before the open code block only", out)
	}
	if _, ok := c.Deadline(); ok {
		t.Fatal("a deadline while waiting for the code block: the caller would poll in a loop")
	}
	c.Add("pwd\n```")
	clk.Advance(time.Second)
	if out := c.Poll(); len(out) != 1 || out[0] != "```sh\nls -l\npwd\n```" {
		t.Fatalf("idle flush %q", out)
	}
}

func TestCoalescerClosesACodeBlockTheReplyLeavesOpen(t *testing.T) {
	t.Parallel()
	c := NewCoalescer(CoalesceConfig{}, tstimetest.NewFake(time.Time{}).Now)
	c.Add("~~~~ text\nunfinished")
	if out, _ := c.Finish(""); len(out) != 1 || out[0] != "~~~~ text\nunfinished\n~~~~" {
		t.Fatalf("finish %q", out)
	}
}

// FuzzCoalescerFences checks, for text streamed in parts with idle flushes
// in between: no block over MaxChars; every block has balanced fences
// (when the fence lines are short enough to repeat); and the blocks
// without the added close and reopen lines give back the input, modulo
// whitespace.
func FuzzCoalescerFences(f *testing.F) {
	f.Add("intro\n```go\nfunc x() {}\n```\noutro", 3, uint8(10), uint64(0))
	f.Add("```\n"+strings.Repeat("line of code\n", 40)+"```\n\nafter", 9, uint8(30), uint64(0b1010))
	f.Add("a\n~~~ py\nq\n```\nstill\n~~~\n\n```js\nopen", 5, uint8(2), uint64(1))
	f.Fuzz(func(t *testing.T, s string, parts int, minc uint8, polls uint64) {
		if !utf8.ValidString(s) || parts <= 0 || parts > 50 {
			return
		}
		maxc := int(minc) + 40
		clk := tstimetest.NewFake(time.Unix(0, 0))
		c := NewCoalescer(CoalesceConfig{MinChars: int(minc) + 1, MaxChars: maxc}, clk.Now)
		var stripped, recorded []string
		c.record = func(b string, reopened, closed bool) {
			if strings.TrimSpace(b) != "" {
				recorded = append(recorded, b)
			}
			lines := strings.Split(b, "\n")
			if reopened {
				lines = lines[1:]
			}
			if closed {
				lines = lines[:len(lines)-1]
			}
			stripped = append(stripped, strings.Join(lines, "\n"))
		}
		var out []string
		r := []rune(s)
		step := len(r)/parts + 1
		for i, p := 0, 0; i < len(r); i, p = i+step, p+1 {
			out = append(out, c.Add(string(r[i:min(i+step, len(r))]))...)
			if polls&(1<<(p%64)) != 0 {
				clk.Advance(time.Second)
				out = append(out, c.Poll()...)
			}
		}
		rest, _ := c.Finish(s)
		out = append(out, rest...)
		if strings.Join(out, "\x00") != strings.Join(recorded, "\x00") {
			t.Fatalf("recorded blocks differ from the delivered ones")
		}
		short := true
		for l := range strings.SplitSeq(s, "\n") {
			lr := []rune(l)
			if _, ok := fenceLine(lr, 0, len(lr)); ok && 3*utf8.RuneCountInString(l)+8 > maxc {
				short = false
			}
		}
		for _, b := range out {
			if utf8.RuneCountInString(b) > maxc {
				t.Fatalf("block of %d runes, max %d: %q", utf8.RuneCountInString(b), maxc, b)
			}
			if short && !balanced(b) {
				t.Fatalf("block not balanced: %q\ninput %q\nblocks %q", b, s, out)
			}
		}
		got := strings.Join(strings.Fields(strings.Join(stripped, " ")), "")
		if want := strings.Join(strings.Fields(s), ""); got != want {
			t.Fatalf("text changed:\n in %q\nout %q", s, out)
		}
	})
}

func TestCoalescerJoinedLeavesFencesAlone(t *testing.T) {
	t.Parallel()
	in := "```\n" + codeLines(60, 30) + "```"
	c := NewCoalescer(CoalesceConfig{Joined: true}, tstimetest.NewFake(time.Time{}).Now)
	streamed, rest := feed(c, in, 100)
	all := append(streamed, rest...)
	if len(all) < 2 || strings.Count(strings.Join(all, "\n"), "```") != 2 {
		t.Fatalf("a draft's blocks are cut as before, with no fence lines added: %q", all)
	}
}
