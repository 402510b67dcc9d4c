package telegram

import (
	"strings"
	"testing"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// toHTML is what Send makes of markdown: the HTML and its visible text.
func toHTML(md string) (html, visible string) {
	return markup.Render(md, markup.HTMLSubset), markup.Visible(md, markup.HTMLSubset)
}

// TestHTMLSubset: markup's HTML subset is what Telegram's parse_mode HTML
// accepts (telegramtest.ParseHTML, Telegram's rules), and the visible text
// it reports is what Telegram shows and counts.
func TestHTMLSubset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello world", "hello world"},
		{"escape", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"bold italic", "**bold** and *it* and __b2__ _i2_", "<b>bold</b> and <i>it</i> and <b>b2</b> <i>i2</i>"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"inline code escapes", "use `a<b>&c`", "use <code>a&lt;b&gt;&amp;c</code>"},
		{"fence with language", "```go\nfunc main() {}\nif a < b {}\n```", "<pre><code class=\"language-go\">func main() {}\nif a &lt; b {}</code></pre>"},
		{"fence without language", "```\nraw <x>\n```", "<pre>raw &lt;x&gt;</pre>"},
		{"fence with odd language", "```\"><script>\nx\n```", "<pre>x</pre>"},
		{"indented code", "    code here", "<pre>code here</pre>"},
		{"link", "[docs](https://example.com/a?b=1&c=\"2\")", "<a href=\"https://example.com/a?b=1&amp;c=&quot;2&quot;\">docs</a>"},
		{"link with bold label", "[**big**](https://x.io)", "<a href=\"https://x.io\"><b>big</b></a>"},
		{"code in link is text", "[`x`](https://x.io)", "<a href=\"https://x.io\">x</a>"},
		{"unsafe link scheme", "[click](javascript:alert(1))", "click (javascript:alert(1))"},
		{"relative link", "[file](./a.txt)", "file (./a.txt)"},
		{"autolink", "<https://example.com>", "https://example.com"},
		{"image", "![a cat](https://x.io/cat.png)", "<a href=\"https://x.io/cat.png\">a cat</a>"},
		{"heading", "# Title\n\ntext", "<b>Title</b>\n\ntext"},
		{"bullets", "- one\n- two\n  - nested", "• one\n• two\n  • nested"},
		{"numbers", "3. three\n4. four", "3. three\n4. four"},
		{"loose list", "- a\n\n- b", "• a\n\n• b"},
		{"blockquote", "> quoted *text*", "<blockquote>quoted <i>text</i></blockquote>"},
		{"nested blockquote flattened", "> a\n>> b", "<blockquote>a\n\nb</blockquote>"},
		{"raw html escaped", "<b>not bold</b> <br>", "&lt;b&gt;not bold&lt;/b&gt; &lt;br&gt;"},
		{"html block escaped", "<div>\nx\n</div>", "&lt;div&gt;\nx\n&lt;/div&gt;"},
		{"backslash escapes", `\*not italic\* 1\. x`, "*not italic* 1. x"},
		{"entities in markdown", "&copy; &amp; &lt;", "© &amp; &lt;"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n———\n\nb"},
		{"soft break kept", "line one\nline two", "line one\nline two"},
		{"table as monospace", "| a | b |\n|---|---|\n| 1 | 2 |", "<pre>a | b\n--+--\n1 | 2</pre>"},
		{"thematic break of stars", "** **", "———"},
		{"underscores in words", "snake_case_name and 2*3*4", "snake_case_name and 2<i>3</i>4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			html, vis := toHTML(tt.in)
			if html != tt.want {
				t.Fatalf("toHTML(%q)\n got %q\nwant %q", tt.in, html, tt.want)
			}
			parsed, err := telegramtest.ParseHTML(html)
			if err != nil {
				t.Fatalf("Telegram would refuse %q: %v", html, err)
			}
			if strings.TrimSpace(parsed) != vis {
				t.Fatalf("visible text %q, Telegram would show %q", vis, parsed)
			}
		})
	}
}

// FuzzHTMLSubset: whatever claude writes, the HTML is accepted by
// Telegram's parser (as the fake implements it) and the visible text
// markup reports is what Telegram will count.
func FuzzHTMLSubset(f *testing.F) {
	for _, s := range []string{
		"**a** *b* `c` ~~d~~", "```go\nx<y\n```", "[l](https://x.io) <b>", "> q\n>> qq\n- a\n  1. b",
		"&amp; &#0; &#x110000; \x00", "[`a`](http://a) ![i](x)", "***bold italic***", "<a href='x'>",
		"# h\n---\n|t|", "\\<\\>\\&", "*a **b** c*", "[a](<https://x.io/a b>)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		html, vis := toHTML(md)
		parsed, err := telegramtest.ParseHTML(html)
		if err != nil {
			t.Fatalf("toHTML(%q) = %q, refused: %v", md, html, err)
		}
		if strings.TrimSpace(parsed) != vis {
			t.Fatalf("toHTML(%q): visible %q, parsed %q", md, vis, parsed)
		}
	})
}
