package markup

import (
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

// TestRichHTML: each construct in RichHTML (Matrix's formatted_body) and
// its visible text (the plain body sent beside it).
func TestRichHTML(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, out, vis string }{
		{"one paragraph needs no <p>", "hello", "hello", "hello"},
		{"paragraphs", "one\n\ntwo", "<p>one</p><p>two</p>", "one\n\ntwo"},
		{"line breaks", "one\ntwo", "one<br>two", "one\ntwo"},
		{"marks", "**b** *i* ~~s~~ `c<d`", "<strong>b</strong> <em>i</em> <del>s</del> <code>c&lt;d</code>", "b i s c<d"},
		{"escaped text", `a < b && "c" > d`, "a &lt; b &amp;&amp; &quot;c&quot; &gt; d", `a < b && "c" > d`},
		{"raw html is text", "<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;", "<img src=x onerror=alert(1)>"},
		{"link", "[docs](https://e.com/?a=1&b=2)", `<a href="https://e.com/?a=1&amp;b=2">docs</a>`, "docs (https://e.com/?a=1&b=2)"},
		{"link whose label is its url", "[https://e.com](https://e.com)", `<a href="https://e.com">https://e.com</a>`, "https://e.com"},
		{"a javascript: url is no link", "[x](javascript:alert(1))", "x (javascript:alert(1))", "x (javascript:alert(1))"},
		{"headings", "# one\n\n###### six", "<h1>one</h1><h6>six</h6>", "one\n\nsix"},
		{"bullets", "- a\n- b", "<ul><li>a</li><li>b</li></ul>", "• a\n• b"},
		{"numbers from 3", "3. a\n4. b", `<ol start="3"><li>a</li><li>b</li></ol>`, "3. a\n4. b"},
		{"nested list", "- a\n  - b", "<ul><li>a<ul><li>b</li></ul></li></ul>", "• a\n  • b"},
		{"loose list", "- a\n\n- b", "<ul><li><p>a</p></li><li><p>b</p></li></ul>", "• a\n\n• b"},
		{"nested quotes", "> a\n>\n> > b", "<blockquote><p>a</p><blockquote><p>b</p></blockquote></blockquote>", "> a\n>\n> > b"},
		{"code block with its language", "```go\nx := \"<\"\n\ny\n```", "<pre><code class=\"language-go\">x := &quot;&lt;&quot;\n\ny</code></pre>", "x := \"<\"\n\ny"},
		{"code block without", "```\nplain\n```", "<pre><code>plain</code></pre>", "plain"},
		{"an odd language is left out", "```\"><x\ncode\n```", "<pre><code>code</code></pre>", "code"},
		{"rule", "a\n\n---\n\nb", "<p>a</p><hr><p>b</p>", "a\n\n———\n\nb"},
		{"table as a code block", "| a | b |\n|---|--:|\n| 1 | 22 |", "<pre><code>a |  b\n--+---\n1 | 22</code></pre>", "a |  b\n--+---\n1 | 22"},
	} {
		out, vis := RenderVisible(c.in, RichHTML)
		if out != c.out || vis != c.vis {
			t.Errorf("%s: %q\n got %q / %q\nwant %q / %q", c.name, c.in, out, vis, c.out, c.vis)
		}
	}
}

// TestRichHTMLSplit: RichHTML counts its visible text, not its tags; a
// long code block is cut into pieces each a whole <pre><code
// class="language-go"> element within the limit.
func TestRichHTMLSplit(t *testing.T) {
	t.Parallel()
	src := "**hi**"
	if n := Len(src, RichHTML, channel.LengthBytes); n != len("hi") {
		t.Errorf("Len = %d, want the visible text's", n)
	}
	var b strings.Builder
	b.WriteString("Here:\n\n```go\n")
	for range 40 {
		b.WriteString("if a < b { return \"x\" } // a line of code\n")
	}
	b.WriteString("```\n\nDone.")
	pieces := Split(b.String(), RichHTML, 700, channel.LengthBytes)
	if len(pieces) < 3 {
		t.Fatalf("%d pieces", len(pieces))
	}
	for i, p := range pieces {
		if n := Len(p, RichHTML, channel.LengthBytes); n > 700 {
			t.Errorf("piece %d: %d bytes", i, n)
		}
		out := Render(p, RichHTML)
		if strings.Count(out, "<pre>") != strings.Count(out, "</pre>") {
			t.Errorf("piece %d: an open code block: %q", i, out)
		}
		if i > 0 && i < len(pieces)-1 && !strings.HasPrefix(out, `<pre><code class="language-go">`) {
			t.Errorf("piece %d does not reopen the go block: %.60q", i, out)
		}
	}
}

// TestRichHTMLKind: the kind a plugin declares on the wire is read back,
// and the host renders it with RichHTML.
func TestRichHTMLKind(t *testing.T) {
	t.Parallel()
	m := channel.ParseMarkup(string(channel.MarkupRichHTML))
	if m != channel.MarkupRichHTML || For(m) != RichHTML {
		t.Fatalf("rich-html reads as %q, renders as %q", m, For(m))
	}
	r := RenderFor("**hi**\n\n- a", m)
	if r == nil || r.Text != "<p><strong>hi</strong></p><ul><li>a</li></ul>" || r.Visible != "hi\n\n• a" {
		t.Errorf("RenderFor: %+v", r)
	}
}
