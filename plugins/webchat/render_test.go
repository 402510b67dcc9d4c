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
