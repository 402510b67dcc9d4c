package webchat

import (
	"bytes"
	"html"
	"regexp"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	gmrenderer "github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"

	"github.com/clawhost/clawhost/sdk/channel"
)

// renderer turns message text into HTML that is safe to put into the page.
//
// Markdown is rendered by goldmark (CommonMark + GFM: tables, strikethrough,
// autolinks, task lists) without its unsafe option; raw HTML in the text is
// shown as literal, escaped text (rawHTMLAsText) rather than dropped, so
// "<img src=x onerror=...>" reads as written and creates no element. The
// result then goes through bluemonday's UGC policy, which
// removes scripts, event handlers, styles and javascript: URLs whatever the
// markdown produced. Plain text and user messages are escaped, never parsed.
// The page's Content-Security-Policy (no inline script, images only from the
// page's own origin) is a second wall behind this one.
type renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
}

func newRenderer() *renderer {
	p := bluemonday.UGCPolicy()
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w.+-]+$`)).OnElements("code")
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	return &renderer{
		md: goldmark.New(
			goldmark.WithExtensions(extension.GFM),
			// Chat text uses single newlines as line breaks.
			goldmark.WithRendererOptions(
				gmhtml.WithHardWraps(),
				gmrenderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100)),
			),
		),
		policy: p,
	}
}

// render returns the HTML of text in format (channel.FormatMarkdown or
// plain).
func (r *renderer) render(text, format string) string {
	if format != channel.FormatMarkdown {
		return plainHTML(text)
	}
	var buf bytes.Buffer
	if err := r.md.Convert([]byte(text), &buf); err != nil {
		return plainHTML(text)
	}
	return r.policy.Sanitize(buf.String())
}

// plainHTML is text escaped, in a block the page shows with its line breaks.
func plainHTML(text string) string {
	return `<div class="plain">` + html.EscapeString(text) + `</div>`
}

// rawHTMLAsText renders raw HTML (inline and blocks) as escaped text. It
// takes precedence over goldmark's HTML renderer (priority 100 < 1000),
// which would replace it with an invisible "raw HTML omitted" comment.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg gmrenderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTMLAsText)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlockAsText)
}

func renderRawHTMLAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlockAsText writes an HTML block as a paragraph of its lines.
func renderHTMLBlockAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var lines []string
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		lines = append(lines, string(bytes.TrimRight(line.Value(source), "\r\n")))
	}
	if n.HasClosure() {
		lines = append(lines, string(bytes.TrimRight(n.ClosureLine.Value(source), "\r\n")))
	}
	_, _ = w.WriteString("<p>")
	for i, l := range lines {
		if i > 0 {
			_, _ = w.WriteString("<br>\n")
		}
		_, _ = w.WriteString(html.EscapeString(l))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}
