package telegram

import (
	"github.com/clawhost/clawhost/sdk/channel"

	"net/url"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md parses the markdown claude writes: CommonMark plus GFM strikethrough.
// Tables are not enabled: their source (pipes and dashes) stays readable as
// text, which Telegram cannot render better anyway.
var md = goldmark.New(goldmark.WithExtensions(extension.Strikethrough))

// MarkdownToHTML converts markdown to the HTML subset Telegram's parse_mode
// "HTML" accepts, walking goldmark's AST:
//
//   - **bold** → <b>, *italic* → <i>, ~~strike~~ → <s>, `code` → <code>;
//   - fenced code → <pre><code class="language-go">…</code></pre> (<pre>
//     without a language);
//   - links → <a href="…"> for http, https, tg and mailto URLs, otherwise
//     "label (url)" as text; images → a link labelled with their alt text;
//   - headings → bold lines; lists → "• item" / "1. item" lines, nested
//     lists indented; blockquotes → <blockquote> (never nested, which
//     Telegram refuses); thematic breaks → "———";
//   - everything else, raw HTML included, is text with &, < and > escaped.
//
// Telegram forbids entities inside code and code inside links; such
// markup is emitted as plain text. The result always parses with
// telegramtest.ParseHTML (a fuzz test checks it).
//
// visible is the text the user will see (tags removed, entities decoded):
// Telegram's length limit applies to it, not to the HTML source.
func MarkdownToHTML(markdown string) (html, visible string) {
	src := []byte(markdown)
	doc := md.Parser().Parse(text.NewReader(src))
	r := &htmlRenderer{src: src}
	r.blocks(doc)
	return strings.TrimSpace(r.html.String()), strings.TrimSpace(r.vis.String())
}

type htmlRenderer struct {
	src        []byte
	html, vis  strings.Builder
	inLink     int
	inQuote    int
	listPrefix []string // indentation of enclosing list items
}

// raw writes markup that is not visible.
func (r *htmlRenderer) raw(s string) { r.html.WriteString(s) }

// text writes visible text, escaped.
func (r *htmlRenderer) text(s string) {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
	r.html.WriteString(escapeHTML(s))
	r.vis.WriteString(s)
}

// newline ends the current line and indents the next one inside lists.
func (r *htmlRenderer) newline() {
	r.text("\n")
	if len(r.listPrefix) > 0 {
		r.text(strings.Join(r.listPrefix, ""))
	}
}

func escapeHTML(s string) string {
	if !strings.ContainsAny(s, "&<>\"") {
		return s
	}
	var b strings.Builder
	for _, c := range []byte(s) {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// blocks renders the block children of n separated by blank lines.
func (r *htmlRenderer) blocks(n ast.Node) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			r.newline()
			if !isTightListChild(c) {
				r.newline()
			}
		}
		first = false
		r.block(c)
	}
}

func isTightListChild(n ast.Node) bool {
	p := n.Parent()
	if p == nil {
		return false
	}
	if l, ok := p.(*ast.List); ok {
		return l.IsTight
	}
	if li, ok := p.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	return false
}

func (r *htmlRenderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.inlines(n)
	case *ast.Heading:
		r.raw("<b>")
		r.inlines(n)
		r.raw("</b>")
	case *ast.ThematicBreak:
		r.text("———")
	case *ast.FencedCodeBlock:
		r.code(n, string(n.Language(r.src)))
	case *ast.CodeBlock:
		r.code(n, "")
	case *ast.Blockquote:
		if r.inQuote == 0 {
			r.raw("<blockquote>")
		}
		r.inQuote++
		r.blocks(n)
		r.inQuote--
		if r.inQuote == 0 {
			r.raw("</blockquote>")
		}
	case *ast.List:
		num := n.Start
		if num == 0 {
			num = 1
		}
		first := true
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			if !first {
				r.newline()
				if !n.IsTight {
					r.newline()
				}
			}
			first = false
			marker := "• "
			if n.IsOrdered() {
				marker = strconv.Itoa(num) + ". "
				num++
			}
			r.text(marker)
			r.listPrefix = append(r.listPrefix, strings.Repeat(" ", len([]rune(marker))))
			r.blocks(item)
			r.listPrefix = r.listPrefix[:len(r.listPrefix)-1]
		}
	case *ast.HTMLBlock:
		var b strings.Builder
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			b.Write(seg.Value(r.src))
		}
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(r.src))
		}
		r.lines(strings.TrimRight(b.String(), "\n"))
	default:
		switch {
		case n.Type() == ast.TypeInline:
			r.inline(n)
		case n.HasChildren() && n.FirstChild().Type() == ast.TypeInline:
			r.inlines(n)
		case n.HasChildren():
			r.blocks(n)
		default:
			var b strings.Builder
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(r.src))
			}
			r.lines(strings.TrimRight(b.String(), "\n"))
		}
	}
}

// lines writes multi-line text keeping list indentation.
func (r *htmlRenderer) lines(s string) {
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			r.newline()
		}
		r.text(line)
	}
}

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

func (r *htmlRenderer) code(n ast.Node, lang string) {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(r.src))
	}
	body := strings.TrimRight(b.String(), "\n")
	if body == "" {
		body = " "
	}
	if validLanguage(lang) {
		r.raw(`<pre><code class="language-` + escapeHTML(lang) + `">`)
		r.lines(body)
		r.raw("</code></pre>")
		return
	}
	r.raw("<pre>")
	r.lines(body)
	r.raw("</pre>")
}

func (r *htmlRenderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *htmlRenderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(r.src)
		if n.IsRaw() {
			r.text(string(v))
		} else {
			r.text(unescapeMarkdown(v))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.newline()
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			r.text(string(n.Value))
		} else {
			r.text(unescapeMarkdown(n.Value))
		}
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				v := t.Segment.Value(r.src)
				b.WriteString(strings.TrimSuffix(string(v), "\n"))
				if strings.HasSuffix(string(v), "\n") {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(t.Value)
			}
		}
		code := b.String()
		if code == "" || r.inLink > 0 {
			r.text(code) // Telegram: no code inside links
			return
		}
		r.raw("<code>")
		r.text(code)
		r.raw("</code>")
	case *ast.Emphasis:
		tag := "i"
		if n.Level >= 2 {
			tag = "b"
		}
		r.wrap(tag, n)
	case *east.Strikethrough:
		r.wrap("s", n)
	case *ast.Link:
		r.link(string(n.Destination), n, "")
	case *ast.Image:
		r.link(string(n.Destination), n, "image")
	case *ast.AutoLink:
		r.text(string(n.Label(r.src)))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			r.text(string(seg.Value(r.src)))
		}
	default:
		r.inlines(n)
	}
}

// wrap renders n's children inside <tag>, dropping the tag when n is empty
// (Telegram refuses empty entities in some versions; nothing is lost).
func (r *htmlRenderer) wrap(tag string, n ast.Node) {
	before := r.vis.Len()
	mark := r.html.Len()
	r.raw("<" + tag + ">")
	r.inlines(n)
	if r.vis.Len() == before {
		s := r.html.String()[:mark]
		r.html.Reset()
		r.html.WriteString(s)
		return
	}
	r.raw("</" + tag + ">")
}

func (r *htmlRenderer) link(dest string, n ast.Node, fallbackLabel string) {
	if r.inLink > 0 || !linkAllowed(dest) {
		r.inlines(n)
		if dest != "" && r.inLink == 0 {
			r.text(" (" + dest + ")")
		}
		return
	}
	before := r.vis.Len()
	r.raw(`<a href="` + escapeHTML(dest) + `">`)
	r.inLink++
	r.inlines(n)
	r.inLink--
	if r.vis.Len() == before {
		label := fallbackLabel
		if label == "" {
			label = dest
		}
		r.text(label)
	}
	r.raw("</a>")
}

func linkAllowed(dest string) bool {
	u, err := url.Parse(dest)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "tg", "mailto":
		return true
	}
	return false
}

// unescapeMarkdown resolves backslash escapes and entity references the way
// a CommonMark renderer does for text.
func unescapeMarkdown(v []byte) string {
	return string(util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(v))))
}

// utf16Len is the length of s in UTF-16 code units (channel.TextLen).
func utf16Len(s string) int { return channel.TextLen(s, channel.LengthUTF16) }
