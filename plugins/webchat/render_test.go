package webchat

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/clawhost/clawhost/sdk/channel"
)

// unsafeMarkup parses body as the page would and returns what would run
// code or load content: a dangerous element, an event handler or style
// attribute, a URL attribute with a scheme other than http(s) or mailto.
// Empty means inert.
func unsafeMarkup(body string) string {
	nodes, err := html.ParseFragment(strings.NewReader(body), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return "unparseable: " + err.Error()
	}
	var bad string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if bad != "" {
			return
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "iframe", "object", "embed", "style", "form", "input", "svg", "math", "base", "meta", "link", "frame", "textarea", "button":
				bad = "element <" + n.Data + ">"
				return
			}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				switch {
				case strings.HasPrefix(k, "on"), k == "style", k == "srcdoc", k == "formaction":
					bad = "attribute " + k + " on <" + n.Data + ">"
				case k == "href" || k == "src" || k == "action" || k == "xlink:href":
					v := strings.ToLower(strings.TrimSpace(a.Val))
					if i := strings.IndexAny(v, ":/?#"); i >= 0 && v[i] == ':' {
						if scheme := v[:i]; scheme != "http" && scheme != "https" && scheme != "mailto" {
							bad = k + "=" + a.Val
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return bad
}

func TestRenderInjectionIsInert(t *testing.T) {
	t.Parallel()
	r := newRenderer()
	tests := []struct {
		name, md string
	}{
		{"script tag", "<script>alert(1)</script>"},
		{"img onerror", `<img src=x onerror="alert(1)">`},
		{"markdown image with handler", `![x](x" onerror="alert(1))`},
		{"javascript link", "[click](javascript:alert(1))"},
		{"javascript link entity", "[click](jav&#x61;script:alert(1))"},
		{"javascript autolink", "<javascript:alert(1)>"},
		{"raw html block", "<div onclick=\"alert(1)\">hi</div>\n\n<iframe src=\"https://evil.example\"></iframe>"},
		{"raw inline html", "hello <b onmouseover=alert(1)>bold</b> <svg onload=alert(1)>"},
		{"style injection", `<p style="background:url(javascript:alert(1))">x</p>`},
		{"data html link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"},
		{"html in code is text", "```html\n<script>alert(1)</script>\n```"},
		{"reference link", "[a][r]\n\n[r]: javascript:alert(1)"},
		{"form", "<form action=https://evil.example><input name=x></form>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.render(tt.md, channel.FormatMarkdown)
			if bad := unsafeMarkup(got); bad != "" {
				t.Errorf("render(%q) = %q has %s", tt.md, got, bad)
			}
		})
	}
}

func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	r := newRenderer()
	tests := []struct {
		name, text string
		format     channel.Format
		want       []string
	}{
		{"code block keeps language class", "```go\nfunc main() {}\n```", channel.FormatMarkdown, []string{`<pre><code class="language-go">func main() {}`}},
		{"html inside code is escaped", "```\n<b>x</b>\n```", channel.FormatMarkdown, []string{"&lt;b&gt;x&lt;/b&gt;"}},
		{"gfm table", "|a|b|\n|-|-|\n|1|2|", channel.FormatMarkdown, []string{"<table>", "<td>1</td>"}},
		{"external link is safe", "[x](https://example.com)", channel.FormatMarkdown, []string{`href="https://example.com"`, `rel="nofollow noreferrer noopener"`, `target="_blank"`}},
		{"hard line breaks", "one\ntwo", channel.FormatMarkdown, []string{"one<br>"}},
		{"strikethrough", "~~gone~~", channel.FormatMarkdown, []string{"<del>gone</del>"}},
		{"plain is escaped, not parsed", "**a** <b>", channel.FormatPlain, []string{`<div class="plain">**a** &lt;b&gt;</div>`}},
		{"empty format is plain", "<i>", "", []string{"&lt;i&gt;"}},
		{"inline raw html is shown as text", "a <img src=x onerror=alert(1)> b", channel.FormatMarkdown, []string{"a &lt;img src=x onerror=alert(1)&gt; b"}},
		{"html block is shown as text", "<script>\nalert(1)\n</script>\n\nafter", channel.FormatMarkdown, []string{"<p>&lt;script&gt;<br>\nalert(1)<br>\n&lt;/script&gt;</p>", "<p>after</p>"}},
		{"html comment is shown as text", "x <!-- hidden --> y", channel.FormatMarkdown, []string{"x &lt;!-- hidden --&gt; y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := r.render(tt.text, tt.format)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("render(%q) = %q, want it to contain %q", tt.text, got, w)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   Config
		attrs []string
	}{
		{"default", Config{}.withDefaults(), nil},
		{"localhost", Config{Listen: "localhost:8790"}.withDefaults(), nil},
		{"ipv6 loopback", Config{Listen: "[::1]:8790"}.withDefaults(), nil},
		{"lan with TLS", Config{Listen: "0.0.0.0:8790", TLSCert: "c.pem", TLSKey: "k.pem"}.withDefaults(), nil},
		{"lan with token, no TLS", Config{Listen: "0.0.0.0:8790", AccessToken: "0123456789abcdef"}.withDefaults(), []string{"listen"}},
		{"hostname without TLS", Config{Listen: "chat.example:8790"}.withDefaults(), []string{"listen"}},
		{"bad port", Config{Listen: "127.0.0.1:http"}.withDefaults(), []string{"listen"}},
		{"all problems at once", Config{Listen: ":1", AccessToken: "x", HistoryLimit: -1}, []string{"listen", "access_token", "history_limit"}},
		{"history too large", Config{HistoryLimit: maxHistoryLimit + 1}.withDefaults(), []string{"history_limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			diags := tt.cfg.validate()
			var got []string
			for _, d := range diags {
				got = append(got, d.Attribute)
			}
			if strings.Join(got, ",") != strings.Join(tt.attrs, ",") {
				t.Errorf("validate(%+v) = %v, want attributes %v", tt.cfg, diags, tt.attrs)
			}
		})
	}
}

func FuzzRenderMarkdown(f *testing.F) {
	for _, s := range []string{"<script>x</script>", "[a](javascript:x)", "```\n<b>\n```", "<img src=x onerror=y>", "*a* _b_ `c`"} {
		f.Add(s)
	}
	r := newRenderer()
	f.Fuzz(func(t *testing.T, md string) {
		got := r.render(md, channel.FormatMarkdown)
		if bad := unsafeMarkup(got); bad != "" {
			t.Errorf("render(%q) = %q has %s", md, got, bad)
		}
		if bad := unsafeMarkup(plainHTML(md)); bad != "" {
			t.Errorf("plainHTML(%q) has %s", md, bad)
		}
	})
}

// TestSanitize reads HTML that goldmark never writes, as an attacker who
// got past it would hand it: what stays must be inert, and what the page's
// messages need must stay.
func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"script element goes, its text stays text", `<script>alert(1)</script>`, `alert(1)`},
		{"handler attribute goes", `<p onclick="alert(1)">x</p>`, `<p>x</p>`},
		{"upper case", `<P ONCLICK="alert(1)">x</P>`, `<p>x</p>`},
		{"javascript link goes, its text stays", `<a href="javascript:alert(1)">x</a>`, `x`},
		{"javascript link written with references", `<a href="jav&#x61;script&colon;alert(1)">x</a>`, `x`},
		{"tab inside the scheme", "<a href=\"java\tscript:alert(1)\">x</a>", `x`},
		{"entity tab inside the scheme", `<a href="java&#9;script:alert(1)">x</a>`, `x`},
		{"leading space", `<a href=" javascript:alert(1)">x</a>`, `x`},
		{"data image", `<img src="data:image/svg+xml,<svg onload=alert(1)>">`, ``},
		{"vbscript", `<a href="VBScript:x">x</a>`, `x`},
		{"unquoted value is text", `<a href=javascript:alert(1)>x</a>`, `&lt;a href=javascript:alert(1)&gt;x`},
		{"single quotes are text", `<img src='x' onerror='alert(1)'>`, `&lt;img src='x' onerror='alert(1)'&gt;`},
		{"tag split by a tag", `<scr<b>ipt>alert(1)</script>`, `&lt;script&gt;alert(1)`},
		{"comment is text", `<!-- <script> -->`, `&lt;!--  --&gt;`},
		{"closing tags close only what it opened", `</p></div></body><p>x`, `<p>x</p>`},
		{"left open is closed", `<ul><li><em>x`, `<ul><li><em>x</em></li></ul>`},
		{"a close closes what it holds", `<blockquote><p><em>x</blockquote>y`, `<blockquote><p><em>x</em></p></blockquote>y`},
		{"style goes", `<td style="background:url(javascript:x)">1</td>`, `<td>1</td>`},
		{"link gets rel and target", `<a href="https://example.com/a?b=1&amp;c=2" title="t">x</a>`,
			`<a href="https://example.com/a?b=1&amp;c=2" title="t" rel="nofollow noreferrer noopener" target="_blank">x</a>`},
		{"relative link stays on the page", `<a href="/x">x</a>`, `<a href="/x" rel="nofollow noreferrer">x</a>`},
		{"mailto", `<a href="mailto:a@example.com">a</a>`, `<a href="mailto:a@example.com" rel="nofollow noreferrer">a</a>`},
		{"link without href goes, not its closing's neighbour", `<em><a>x</a>y</em>`, `<em>xy</em>`},
		{"image keeps src and alt", `<img src="/f/a.png" alt="a &quot;b&quot;" onerror="x">`, `<img src="/f/a.png" alt="a &#34;b&#34;">`},
		{"code class", `<pre><code class="language-go">x</code></pre><code class="x">y</code>`, `<pre><code class="language-go">x</code></pre><code>y</code>`},
		{"ol start", `<ol start="3"><li>x</li></ol><ol start="-1"></ol>`, `<ol start="3"><li>x</li></ol><ol></ol>`},
		{"task checkbox goes", `<li><input checked="" disabled="" type="checkbox"> done</li>`, `<li> done</li>`},
		{"references kept, bare ampersand escaped", `a &amp; b &copy; &#169; &#xA9; & c &;`, `a &amp; b &copy; &#169; &#xA9; &amp; c &amp;;`},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"lone angle brackets", `a < b > c`, `a &lt; b &gt; c`},
		{"nesting is bounded", strings.Repeat("<em>", maxOpen+2) + "x" + strings.Repeat("</p>", 3),
			strings.Repeat("<em>", maxOpen) + "x" + strings.Repeat("</em>", maxOpen)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := sanitize(tt.in)
			if got != tt.want {
				t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if bad := unsafeMarkup(got); bad != "" {
				t.Errorf("sanitize(%q) = %q has %s", tt.in, got, bad)
			}
		})
	}
}

// FuzzSanitize: whatever sanitize reads, what it writes is inert, and it
// is its own fixed point (what it keeps, it keeps again).
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{`<a href="javascript:x">x</a>`, `<img src="x" onerror="y">`, `<p>x</p></div>`,
		`<a href="java&#9;script:x">`, `<svg><script>x</script></svg>`, `<a href="https://e.example">x</a>`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := sanitize(in)
		if bad := unsafeMarkup(got); bad != "" {
			t.Errorf("sanitize(%q) = %q has %s", in, got, bad)
		}
		if again := sanitize(got); again != got {
			t.Errorf("sanitize(%q) = %q, but sanitize of that = %q", in, got, again)
		}
	})
}
