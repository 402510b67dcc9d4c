package markup

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var flavours = []Flavour{Plain, HTMLSubset, RichHTML, Lightweight, Mrkdwn, Markdown, HTML}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func readInput(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRenderGolden: headings, nested lists, tables, code fences with and
// without a language, links, bold/italic/strike, quotes, task lists and
// raw HTML in each flavour.
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	src := readInput(t, "blocks")
	for _, f := range flavours {
		golden(t, "blocks."+string(f)+".golden", Render(src, f)+"\n")
	}
	golden(t, "blocks.html-subset.visible.golden", Visible(src, HTMLSubset)+"\n")
	golden(t, "blocks.rich-html.visible.golden", Visible(src, RichHTML)+"\n")
}

// TestRenderVisible: RenderVisible's two results are Render's and
// Visible's, in every flavour.
func TestRenderVisible(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"blocks", "reply"} {
		src := readInput(t, name)
		for _, f := range flavours {
			out, vis := RenderVisible(src, f)
			if out != Render(src, f) || vis != Visible(src, f) {
				t.Errorf("%s in %s: RenderVisible differs from Render and Visible", name, f)
			}
		}
	}
}

// TestSplitRendered: a reply that fits comes with the rendering its
// measure made; pieces of a cut reply, and an unlimited split, without
// one; and RenderVisibleFrom takes the host's rendering only for its own
// flavour.
func TestSplitRendered(t *testing.T) {
	t.Parallel()
	src := readInput(t, "reply")
	for _, f := range flavours {
		whole := SplitRendered(src, f, 1<<20, channel.LengthUTF16)
		out, vis := RenderVisible(src, f)
		if len(whole) != 1 || !whole[0].Rendered || whole[0].Src != src || whole[0].Out != out || whole[0].Visible != vis {
			t.Errorf("%s: a reply that fits: %+v", f, whole)
		}
		cut := SplitRendered(src, f, 120, channel.LengthUTF16)
		if len(cut) < 2 {
			t.Fatalf("%s: the reply is not cut at 120", f)
		}
		for _, p := range cut {
			if p.Rendered {
				t.Errorf("%s: a piece of a cut reply carries a rendering", f)
			}
		}
		if p := SplitRendered(src, f, 0, channel.LengthUTF16); len(p) != 1 || p[0].Rendered {
			t.Errorf("%s: no limit: %+v", f, p)
		}
		pre := &channel.Rendered{Markup: channel.MarkupHTMLSubset, Text: "<b>pre</b>", Visible: "pre"}
		gotOut, gotVis := RenderVisibleFrom(pre, src, f)
		if f == HTMLSubset {
			if gotOut != pre.Text || gotVis != pre.Visible {
				t.Errorf("%s: the host's rendering is not taken", f)
			}
		} else if gotOut != out || gotVis != vis {
			t.Errorf("%s: a rendering for html-subset is taken", f)
		}
		if o, v := RenderVisibleFrom(nil, src, f); o != out || v != vis {
			t.Errorf("%s: no rendering given: %q", f, o)
		}
	}
}

// TestRenderFor: the rendering the host sends beside a markdown text is
// the flavour of the declared kind, and Of gives it back only for that
// kind; a channel that shows no markup gets none.
func TestRenderFor(t *testing.T) {
	t.Parallel()
	src := readInput(t, "reply")
	kinds := []channel.Markup{channel.MarkupHTMLSubset, channel.MarkupRichHTML, channel.MarkupMarkdown, channel.MarkupLightweight, channel.MarkupMrkdwn}
	for _, m := range kinds {
		r := RenderFor(src, m)
		out, vis := RenderVisible(src, For(m))
		if r == nil || r.Markup != m || r.Text != out || r.Visible != vis {
			t.Fatalf("%s: %+v", m, r)
		}
		for _, other := range kinds {
			gotOut, gotVis, ok := r.Of(other)
			if ok != (other == m) || (ok && (gotOut != out || gotVis != vis)) {
				t.Errorf("%s: Of(%s) = %v", m, other, ok)
			}
		}
	}
	for _, m := range []channel.Markup{channel.MarkupNone, "", "unknown"} {
		if r := RenderFor(src, m); r != nil {
			t.Errorf("%q: a rendering for a channel without markup: %+v", m, r)
		}
	}
	if _, _, ok := (*channel.Rendered)(nil).Of(channel.MarkupHTMLSubset); ok {
		t.Error("a nil rendering is taken")
	}
}

// TestSplitGolden: the pieces of a reply split at 120 UTF-16 units in
// each flavour, each rendered (emoji across a split, a fence closed and
// reopened, a table's header repeated).
func TestSplitGolden(t *testing.T) {
	t.Parallel()
	src := readInput(t, "split")
	for _, f := range []Flavour{Plain, HTMLSubset, RichHTML, Lightweight, Mrkdwn, Markdown} {
		var b strings.Builder
		limit := 120
		for i, p := range Split(src, f, limit, channel.LengthUTF16) {
			if n := Len(p, f, channel.LengthUTF16); n > limit {
				t.Errorf("%s: piece %d renders to %d units, over %d", f, i, n, limit)
			}
			b.WriteString("=== piece " + string(rune('1'+i)) + " (" + itoa(Len(p, f, channel.LengthUTF16)) + " units)\n")
			b.WriteString(Render(p, f) + "\n")
		}
		golden(t, "split."+string(f)+".golden", b.String())
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

// TestSplitKeepsWhatFits: a reply whose rendering fits is never split,
// even when its source is longer than the limit (Telegram's tags do not
// count), and one that does not fit is.
func TestSplitKeepsWhatFits(t *testing.T) {
	t.Parallel()
	src := "**" + strings.Repeat("a", 40) + "** [x](https://example.com)"
	if n := Len(src, HTMLSubset, channel.LengthUTF16); n != 42 {
		t.Fatalf("visible length %d, want 42", n)
	}
	if got := Split(src, HTMLSubset, 42, channel.LengthUTF16); len(got) != 1 || got[0] != src {
		t.Errorf("a reply of 42 visible units at limit 42 was split: %q", got)
	}
	// Plain shows the url: 40 + 1 + "x (https://example.com)" = 64.
	if got := Split(src, Plain, 42, channel.LengthUTF16); len(got) < 2 {
		t.Errorf("plain rendering of 64 units at limit 42 was not split: %q", got)
	}
	if got := Split("  \n", Plain, 10, channel.LengthUTF16); got != nil {
		t.Errorf("blank text split into %q", got)
	}
}

// TestSplitReopensFences: a code block cut in two is closed and reopened
// with its language.
func TestSplitReopensFences(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("```go\n")
	for range 20 {
		b.WriteString("x := 1 // a line of code\n")
	}
	b.WriteString("```\n")
	pieces := Split(b.String(), Markdown, 200, channel.LengthUTF16)
	if len(pieces) < 2 {
		t.Fatalf("not split: %q", pieces)
	}
	for i, p := range pieces {
		if !strings.HasPrefix(p, "```go\n") || !strings.HasSuffix(p, "\n```") {
			t.Errorf("piece %d is not a whole go block: %q", i, p)
		}
		if n := Len(p, Markdown, channel.LengthUTF16); n > 200 {
			t.Errorf("piece %d: %d units", i, n)
		}
	}
}

func TestFor(t *testing.T) {
	t.Parallel()
	for m, want := range map[channel.Markup]Flavour{
		channel.MarkupNone: Plain, "": Plain, channel.MarkupMarkdown: Markdown,
		channel.MarkupHTMLSubset: HTMLSubset, channel.MarkupRichHTML: RichHTML, channel.MarkupLightweight: Lightweight, channel.MarkupMrkdwn: Mrkdwn,
	} {
		if got := For(m); got != want {
			t.Errorf("For(%q) = %q, want %q", m, got, want)
		}
	}
}

// TestMrkdwn: Slack's control characters become entities, links become
// <url|label> (with | and > of a url escaped), marks are Slack's.
func TestMrkdwn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"**bold** *it* ~~gone~~ `x<y`", "*bold* _it_ ~gone~ `x&lt;y`"},
		{"[the docs](https://e.com/a?b=1&c=2)", "<https://e.com/a?b=1&amp;c=2|the docs>"},
		{"[a|b>c](https://e.com/x|y)", "<https://e.com/x%7Cy|a¦b&gt;c>"},
		{"<https://e.com>", "https://e.com"},
		{"[x](javascript:alert(1))", "x (javascript:alert(1))"},
		{"- one\n- two", "• one\n• two"},
		{"<@U123> <!channel>", "&lt;@U123&gt; &lt;!channel&gt;"},
	} {
		if got := Render(c.in, Mrkdwn); got != c.want {
			t.Errorf("Render(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
