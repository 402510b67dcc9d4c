package markup

import (
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
)

// markdown is src for a channel that renders markdown: as written, but
// each table of the document's top level is its aligned text in a code
// block (the table policy; chat clients show a table's pipes raw).
func markdown(src string) string {
	if strings.TrimSpace(src) == "" {
		return ""
	}
	b := []byte(src)
	doc := parse(b)
	w := &walker{src: b, st: styles[Plain]}
	var out strings.Builder
	at := 0
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		t, ok := n.(*east.Table)
		if !ok {
			continue
		}
		start, end, ok := nodeSpan(b, t)
		if !ok || start < at {
			continue
		}
		out.WriteString(src[at:start])
		out.WriteString("```\n" + tableText(w, t) + "\n```")
		at = end
	}
	out.WriteString(src[at:])
	return strings.TrimSpace(out.String())
}

// nodeSpan is the source of a block node's lines: from the start of the
// line its first text is on to the end of the line its last text is on
// (without the line break).
func nodeSpan(src []byte, n ast.Node) (start, end int, ok bool) {
	start, end = len(src), -1
	var visit func(ast.Node)
	visit = func(n ast.Node) {
		if n.Type() == ast.TypeBlock {
			if ls := n.Lines(); ls != nil && ls.Len() > 0 {
				start = min(start, ls.At(0).Start)
				end = max(end, ls.At(ls.Len()-1).Stop)
			}
		}
		if t, ok := n.(*ast.Text); ok {
			start = min(start, t.Segment.Start)
			end = max(end, t.Segment.Stop)
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			visit(c)
		}
	}
	visit(n)
	if end < 0 {
		return 0, 0, false
	}
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	for end < len(src) && src[end] != '\n' {
		end++
	}
	return start, end, true
}
