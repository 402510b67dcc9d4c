// Package plaintext renders the agent's markdown as readable plain text,
// for channels that show no markup (channel.MarkdownNone): a reply there
// must not be littered with asterisks, backticks and link syntax.
//
// The markdown is parsed as CommonMark with the GitHub tables and
// strikethrough extensions (goldmark), and written back as text:
//
//   - emphasis, strong and strikethrough: the markers go, the text stays;
//   - inline code: the backticks go, the code stays verbatim;
//   - fenced and indented code blocks: the code, verbatim, without the
//     fence lines (a chat without markup has no better way to show code);
//   - links: "text (url)"; just the url when the text is the url or
//     empty, and for autolinks; images: "alt (url)";
//   - headings: the heading text as a line of its own;
//   - lists: one item a line, keeping the author's bullet character
//     ("-", "*", "+") or number ("1.", "2)"); nested items and an item's
//     further lines are indented under the item's text;
//   - block quotes: every line prefixed with "> ";
//   - thematic breaks: "---";
//   - tables: aligned columns separated by " | ", the header underlined
//     with dashes ("---+---"); in a monospace font the columns line up,
//     in a proportional one the bars still separate them;
//   - raw HTML: kept as written (it is text to the reader);
//   - backslash escapes and character references are resolved ("\*" is
//     "*", "&amp;" is "&").
//
// Blocks are separated by one blank line; items of a tight list by a line
// break. Line breaks inside a paragraph are kept (chat text is written
// line by line). The result has no leading or trailing whitespace.
package plaintext

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/rivo/uniseg"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough))

// FromMarkdown renders markdown as plain text (see the package
// documentation for the rules). Safe for concurrent use.
func FromMarkdown(markdown string) string {
	if strings.TrimSpace(markdown) == "" {
		return ""
	}
	src := []byte(markdown)
	doc := md.Parser().Parse(text.NewReader(src))
	r := renderer{src: src}
	return strings.TrimSpace(r.children(doc, "\n\n"))
}

type renderer struct{ src []byte }

// children renders the blocks under n, joined by sep.
func (r *renderer) children(n ast.Node, sep string) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := r.block(c); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, sep)
}

func (r *renderer) block(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock, *ast.Heading:
		return strings.TrimSpace(r.inlines(n))
	case *ast.ThematicBreak:
		return "---"
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return strings.TrimRight(r.lines(n.Lines()), "\n")
	case *ast.HTMLBlock:
		s := r.lines(n.Lines())
		if n.HasClosure() {
			s += string(n.ClosureLine.Value(r.src))
		}
		return strings.TrimRight(s, "\n")
	case *ast.Blockquote:
		return prefixLines(r.children(n, "\n\n"), "> ", ">")
	case *ast.List:
		return r.list(n)
	case *east.Table:
		return r.table(n)
	}
	return r.children(n, "\n\n")
}

// lines is the raw text of a block's lines.
func (r *renderer) lines(ls *text.Segments) string {
	var b strings.Builder
	for i := range ls.Len() {
		s := ls.At(i)
		b.Write(s.Value(r.src))
	}
	return b.String()
}

func (r *renderer) list(l *ast.List) string {
	sep := "\n\n"
	if l.IsTight {
		sep = "\n"
	}
	var items []string
	num := l.Start
	for c := l.FirstChild(); c != nil; c = c.NextSibling() {
		marker := string(l.Marker) + " "
		if l.IsOrdered() {
			marker = fmt.Sprintf("%d%c ", num, l.Marker)
			num++
		}
		body := r.children(c, sep)
		indent := strings.Repeat(" ", len(marker))
		items = append(items, marker+strings.TrimPrefix(prefixLines(body, indent, ""), indent))
	}
	return strings.Join(items, sep)
}

func (r *renderer) table(t *east.Table) string {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			cells = append(cells, strings.TrimSpace(strings.ReplaceAll(r.inlines(cell), "\n", " ")))
		}
		rows = append(rows, cells)
	}
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], uniseg.StringWidth(c))
		}
	}
	var lines []string
	for k, row := range rows {
		cells := make([]string, len(widths))
		for i := range widths {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			pad := strings.Repeat(" ", widths[i]-uniseg.StringWidth(c))
			if i < len(t.Alignments) && t.Alignments[i] == east.AlignRight {
				cells[i] = pad + c
			} else {
				cells[i] = c + pad
			}
		}
		lines = append(lines, strings.TrimRight(strings.Join(cells, " | "), " "))
		if k == 0 {
			dashes := make([]string, len(widths))
			for i, w := range widths {
				dashes[i] = strings.Repeat("-", max(w, 1))
			}
			lines = append(lines, strings.Join(dashes, "-+-"))
		}
	}
	return strings.Join(lines, "\n")
}

// inlines renders the inline content of n.
func (r *renderer) inlines(n ast.Node) string {
	var b bytes.Buffer
	r.inline(&b, n)
	return b.String()
}

func (r *renderer) inline(b *bytes.Buffer, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Segment.Value(r.src)
			if !c.IsRaw() {
				v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
			}
			b.Write(v)
			if c.HardLineBreak() || c.SoftLineBreak() {
				b.WriteByte('\n')
			}
		case *ast.String:
			b.Write(c.Value)
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if t, ok := t.(*ast.Text); ok {
					b.Write(bytes.ReplaceAll(t.Segment.Value(r.src), []byte("\n"), []byte(" ")))
				}
			}
		case *ast.Link:
			b.WriteString(withURL(r.inlines(c), string(c.Destination)))
		case *ast.Image:
			b.WriteString(withURL(r.inlines(c), string(c.Destination)))
		case *ast.AutoLink:
			b.Write(c.URL(r.src))
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				s := c.Segments.At(i)
				b.Write(s.Value(r.src))
			}
		default:
			r.inline(b, c)
		}
	}
}

// withURL is "label (url)", or the url alone when the label adds nothing.
func withURL(label, url string) string {
	label = strings.TrimSpace(label)
	switch {
	case url == "":
		return label
	case label == "" || label == url || "mailto:"+label == url:
		return url
	}
	return label + " (" + url + ")"
}

// prefixLines puts prefix before every line of s (blankPrefix before
// empty lines).
func prefixLines(s, prefix, blankPrefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = blankPrefix
		} else {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
