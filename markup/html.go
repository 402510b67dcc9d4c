package markup

import (
	"bytes"
	"html"
	"sync"

	"github.com/clawhost/clawhost/markup/internal/gfm"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	gmrenderer "github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// page renders the HTML flavour: goldmark's HTML renderer without its
// unsafe option, single newlines as line breaks (chat text is written line
// by line), and raw HTML shown as the text it is (rawHTMLAsText) instead
// of dropped, so "<img onerror=...>" reads as written and is no element.
// The page still sanitises the result with its own policy. Built on first
// use, as md is.
var page = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(gfm.GFM),
		goldmark.WithRendererOptions(
			gmhtml.WithHardWraps(),
			gmrenderer.WithNodeRenderers(util.Prioritized(rawHTMLAsText{}, 100)),
		),
	)
})

func renderHTML(src string) string {
	var buf bytes.Buffer
	if err := page().Convert([]byte(src), &buf); err != nil {
		return "<p>" + html.EscapeString(src) + "</p>"
	}
	return buf.String()
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
	var lines [][]byte
	for i := range n.Lines().Len() {
		line := n.Lines().At(i)
		lines = append(lines, bytes.TrimRight(line.Value(source), "\r\n"))
	}
	if n.HasClosure() {
		lines = append(lines, bytes.TrimRight(n.ClosureLine.Value(source), "\r\n"))
	}
	_, _ = w.WriteString("<p>")
	for i, l := range lines {
		if i > 0 {
			_, _ = w.WriteString("<br>\n")
		}
		_, _ = w.WriteString(html.EscapeString(string(l)))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}
