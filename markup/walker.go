package markup

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// walker renders goldmark's AST in one style. out is the rendering, vis
// the text a reader sees of it (the same but for html).
type walker struct {
	src      []byte
	st       style
	out, vis *strings.Builder
	prefix   []string // indentation and "> " of enclosing lists and quotes
	inLink   int      // inside a link label: no nested links or code marks
	quote    int      // blockquote depth (html: one element, never nested)
	marks    string   // the marks open around the current text
	pre      bool     // inside a code block (elems: line breaks are "\n")
}

func (w *walker) init() {
	if w.out == nil {
		w.out, w.vis = &strings.Builder{}, &strings.Builder{}
	}
}

// mark writes markup: invisible in html, seen otherwise.
func (w *walker) mark(s string) {
	w.init()
	w.out.WriteString(s)
	if !w.st.html {
		w.vis.WriteString(s)
	}
}

// text writes visible text (escaped in html).
func (w *walker) text(s string) {
	w.init()
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
	switch {
	case w.st.html:
		w.out.WriteString(escapeHTML(s))
		w.vis.WriteString(s)
	case w.st.angle:
		// Slack counts the message as written, entities and all.
		s = escapeAngle(s)
		w.out.WriteString(s)
		w.vis.WriteString(s)
	default:
		w.out.WriteString(s)
		w.vis.WriteString(s)
	}
}

// structure writes line structure (line breaks, indentation, quote
// marks): seen, never escaped.
func (w *walker) structure(s string) {
	w.init()
	w.out.WriteString(s)
	w.vis.WriteString(s)
}

// newline ends the line and starts the next inside the enclosing lists
// and quotes. With elements it is <br> in the rendering ("\n" in a code
// block), and the visible text's line break.
func (w *walker) newline() {
	if w.st.elems {
		w.init()
		if w.pre {
			w.out.WriteString("\n")
		} else {
			w.out.WriteString("<br>")
		}
		w.vis.WriteString("\n" + strings.Join(w.prefix, ""))
		return
	}
	w.structure("\n")
	if len(w.prefix) > 0 {
		w.structure(strings.Join(w.prefix, ""))
	}
}

// gap separates two blocks (or list items): a line break, and a blank
// line unless tight. With elements the elements separate them: the
// rendering gets nothing, the visible text its lines.
func (w *walker) gap(tight bool) {
	if w.st.elems {
		w.init()
		if !tight {
			w.vis.WriteString("\n" + strings.TrimRight(strings.Join(w.prefix, ""), " "))
		}
		w.vis.WriteString("\n" + strings.Join(w.prefix, ""))
		return
	}
	if !tight {
		w.blankLine()
	}
	w.newline()
}

// seen writes what the reader sees of structure (a list's marker, a
// quote's "> "): text without elements, the visible text's alone with.
func (w *walker) seen(s string) {
	if w.st.elems {
		w.init()
		w.vis.WriteString(s)
		return
	}
	w.text(s)
}

// blankLine ends the line and writes an empty one: only the enclosing
// quotes' marks, without trailing spaces.
func (w *walker) blankLine() {
	w.structure("\n" + strings.TrimRight(strings.Join(w.prefix, ""), " "))
}

// blocks renders the block children of n: a blank line between them, a
// line break in a tight list.
func (w *walker) blocks(n ast.Node) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			w.gap(tight(c))
		}
		first = false
		w.block(c)
	}
}

func tight(n ast.Node) bool {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if l, ok := p.(*ast.List); ok {
			return l.IsTight
		}
		if _, ok := p.(*ast.ListItem); !ok {
			return false
		}
	}
	return false
}

func (w *walker) block(n ast.Node) {
	if w.st.elems && w.element(n) {
		return
	}
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		w.inlines(n)
	case *ast.Heading:
		w.wrap(w.st.bold, n)
	case *ast.ThematicBreak:
		w.text(w.st.rule)
	case *ast.FencedCodeBlock:
		w.codeBlock(w.rawLines(n), string(n.Language(w.src)))
	case *ast.CodeBlock:
		w.codeBlock(w.rawLines(n), "")
	case *ast.Blockquote:
		w.blockquote(n)
	case *ast.List:
		w.list(n)
	case *east.Table:
		w.codeBlockOr(tableText(w, n))
	case *ast.HTMLBlock:
		s := w.rawLines(n)
		if n.HasClosure() {
			s += string(n.ClosureLine.Value(w.src))
		}
		w.lines(strings.TrimRight(s, "\n"))
	default:
		switch {
		case n.Type() == ast.TypeInline:
			w.inline(n)
		case n.HasChildren() && n.FirstChild().Type() == ast.TypeInline:
			w.inlines(n)
		case n.HasChildren():
			w.blocks(n)
		default:
			w.lines(strings.TrimRight(w.rawLines(n), "\n"))
		}
	}
}

func (w *walker) blockquote(n *ast.Blockquote) {
	if w.st.html {
		if w.quote == 0 {
			w.mark("<blockquote>")
		}
		w.quote++
		w.blocks(n)
		w.quote--
		if w.quote == 0 {
			w.mark("</blockquote>")
		}
		return
	}
	w.structure("> ")
	w.prefix = append(w.prefix, "> ")
	w.blocks(n)
	w.prefix = w.prefix[:len(w.prefix)-1]
}

func (w *walker) list(n *ast.List) {
	num := n.Start
	first := true
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		if !first {
			w.gap(n.IsTight)
		}
		first = false
		marker := w.st.bullet
		switch {
		case n.IsOrdered():
			delim := "."
			if !w.st.html && !w.st.fence {
				delim = string(n.Marker)
			}
			marker = strconv.Itoa(num) + delim + " "
			num++
		case marker == "":
			marker = string(n.Marker) + " "
		}
		w.seen(marker)
		w.prefix = append(w.prefix, strings.Repeat(" ", len([]rune(marker))))
		w.mark(w.st.item[0])
		w.blocks(item)
		w.mark(w.st.item[1])
		w.prefix = w.prefix[:len(w.prefix)-1]
	}
}

func (w *walker) rawLines(n ast.Node) string {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(w.src))
	}
	return b.String()
}

// lines writes multi-line text inside the enclosing prefixes.
func (w *walker) lines(s string) {
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			w.newline()
		}
		w.text(line)
	}
}

// codeBlock writes a code block: <pre> in html (with the language when
// it is a plain name), ``` lines around it with fence, else the code.
func (w *walker) codeBlock(body, lang string) {
	body = strings.TrimRight(body, "\n")
	switch {
	case w.st.html:
		if body == "" {
			body = " "
		}
		w.pre = true
		defer func() { w.pre = false }()
		if validLanguage(lang) {
			w.mark(`<pre><code class="language-` + escapeHTML(lang) + `">`)
			w.lines(body)
			w.mark("</code></pre>")
			return
		}
		w.mark(w.st.pre[0])
		w.lines(body)
		w.mark(w.st.pre[1])
	case w.st.fence:
		w.mark("```")
		w.newline()
		w.lines(strings.ReplaceAll(body, "```", "``\u200b`"))
		w.newline()
		w.mark("```")
	default:
		w.lines(body)
	}
}

// codeBlockOr writes s as a code block where the flavour has one, else as
// lines.
func (w *walker) codeBlockOr(s string) { w.codeBlock(s, "") }

func validLanguage(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("+#-_.", c)) {
			return false
		}
	}
	return true
}

func (w *walker) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inline(c)
	}
}

func (w *walker) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(w.src)
		if n.IsRaw() {
			w.text(string(v))
		} else {
			w.text(unescape(v))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			w.newline()
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			w.text(string(n.Value))
		} else {
			w.text(unescape(n.Value))
		}
	case *ast.CodeSpan:
		w.codeSpan(n)
	case *ast.Emphasis:
		if n.Level >= 2 {
			w.wrap(w.st.bold, n)
		} else {
			w.wrap(w.st.italic, n)
		}
	case *east.Strikethrough:
		w.wrap(w.st.strike, n)
	case *east.TaskCheckBox:
		if n.IsChecked {
			w.text("[x] ")
		} else {
			w.text("[ ] ")
		}
	case *ast.Link:
		w.link(string(n.Destination), n, "")
	case *ast.Image:
		w.link(string(n.Destination), n, "image")
	case *ast.AutoLink:
		w.text(string(n.URL(w.src)))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			w.text(string(seg.Value(w.src)))
		}
	default:
		w.inlines(n)
	}
}

func (w *walker) codeSpan(n *ast.CodeSpan) {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			v := string(t.Segment.Value(w.src))
			b.WriteString(strings.TrimSuffix(v, "\n"))
			if strings.HasSuffix(v, "\n") {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
	}
	code := b.String()
	if code == "" || w.inLink > 0 || w.st.code[0] == "" || (!w.st.html && strings.Contains(code, w.st.code[0])) {
		w.text(code)
		return
	}
	w.mark(w.st.code[0])
	w.text(code)
	w.mark(w.st.code[1])
}

// wrap renders n's children between marks. Empty or all-space content
// gets no marks; outside html, surrounding spaces stay outside the marks
// (WhatsApp formats only a mark next to a non-space), a mark already
// open is not opened again, and content over several lines is not marked.
func (w *walker) wrap(m [2]string, n ast.Node) {
	if m[0] == "" || w.inLink > 0 && !w.st.html || strings.Contains(w.marks, m[0]) {
		w.inlines(n)
		return
	}
	w.init()
	outer, outerVis := w.out, w.vis
	w.out, w.vis = &strings.Builder{}, &strings.Builder{}
	w.marks += m[0]
	w.inlines(n)
	w.marks = w.marks[:len(w.marks)-len(m[0])]
	inner, innerVis := w.out.String(), w.vis.String()
	w.out, w.vis = outer, outerVis
	trimmed := strings.TrimSpace(innerVis)
	if trimmed == "" || !w.st.html && strings.Contains(trimmed, "\n") {
		w.out.WriteString(inner)
		w.vis.WriteString(innerVis)
		return
	}
	if w.st.html {
		w.mark(m[0])
		w.out.WriteString(inner)
		w.vis.WriteString(innerVis)
		w.mark(m[1])
		return
	}
	lead := inner[:len(inner)-len(strings.TrimLeft(inner, " \t"))]
	trail := inner[len(strings.TrimRight(inner, " \t")):]
	w.text(lead)
	w.mark(m[0])
	w.text(strings.TrimSpace(inner))
	w.mark(m[1])
	w.text(trail)
}

// unescape resolves backslash escapes and character references the way a
// CommonMark renderer does for text.
func unescape(v []byte) string {
	return string(util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(v))))
}
