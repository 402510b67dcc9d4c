package markup

import (
	"strconv"

	"github.com/yuin/goldmark/ast"
)

// element writes the blocks that are elements of their own in a flavour
// with elems (RichHTML): a paragraph among others as <p>, a heading as
// <h1>–<h6>, a thematic break as <hr>, a list as <ul>/<ol> (its items
// <li>, see list), a quote as <blockquote>, nested as written. The
// visible text has what Plain shows of them. false for the blocks
// written as in every HTML flavour (code blocks, tables, a lone
// paragraph).
func (w *walker) element(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.Paragraph:
		if n.Parent() != nil && n.Parent().Kind() == ast.KindDocument && n.PreviousSibling() == nil && n.NextSibling() == nil {
			return false // a message of one paragraph needs none
		}
		w.mark("<p>")
		w.inlines(n)
		w.mark("</p>")
	case *ast.Heading:
		tag := "h" + strconv.Itoa(min(max(n.Level, 1), 6))
		w.mark("<" + tag + ">")
		w.inlines(n)
		w.mark("</" + tag + ">")
	case *ast.ThematicBreak:
		w.mark("<hr>")
		w.vis.WriteString(w.st.rule)
	case *ast.Blockquote:
		w.mark("<blockquote>")
		w.seen("> ")
		w.prefix = append(w.prefix, "> ")
		w.blocks(n)
		w.prefix = w.prefix[:len(w.prefix)-1]
		w.mark("</blockquote>")
	case *ast.List:
		switch {
		case !n.IsOrdered():
			w.mark("<ul>")
		case n.Start > 1 || n.Start == 0:
			w.mark(`<ol start="` + strconv.Itoa(n.Start) + `">`)
		default:
			w.mark("<ol>")
		}
		w.list(n)
		if n.IsOrdered() {
			w.mark("</ol>")
		} else {
			w.mark("</ul>")
		}
	default:
		return false
	}
	return true
}
