package whatsapp

import (
	"github.com/clawhost/clawhost/sdk/channel"

	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md parses the markdown claude writes: CommonMark plus GFM strikethrough.
// Tables are not enabled: their source stays readable as text, which
// WhatsApp cannot render better.
var md = goldmark.New(goldmark.WithExtensions(extension.Strikethrough))

// MarkdownToWhatsApp converts markdown to WhatsApp's formatting, walking
// goldmark's AST:
//
//   - **bold** → *bold*, *italic* → _italic_, ~~strike~~ → ~strike~,
//     `code` → `code` (WhatsApp's inline code);
//   - code blocks → ``` on lines of their own around the code (monospace);
//   - headings → bold lines; lists → "- item" / "1. item" lines (WhatsApp
//     renders both), nested lists indented; blockquotes → "> " lines;
//     thematic breaks → "———";
//   - links → "label (url)", or the url alone when it is the label;
//     images → "alt (url)";
//   - raw HTML and everything else stays text.
//
// WhatsApp has no escape character: a literal * or _ in the text may
// format what follows it, as in any WhatsApp message. The result is never
// longer than the markdown in UTF-16 units but for "label (url)" links
// whose label is shorter than 1 unit, so the host's split at the declared
// limit holds; Send splits again if it does not.
func MarkdownToWhatsApp(markdown string) string {
	src := []byte(markdown)
	doc := md.Parser().Parse(text.NewReader(src))
	r := &waRenderer{src: src, out: &strings.Builder{}}
	r.blocks(doc)
	return strings.TrimSpace(r.out.String())
}

type waRenderer struct {
	src    []byte
	out    *strings.Builder
	prefix []string // indentation and "> " of enclosing blocks
	inCode int      // inside inline code or a link label: no markers
	marks  string   // the marks open around the current text
}

func (r *waRenderer) write(s string) {
	r.out.WriteString(strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD"))
}

// newline ends the line and starts the next one inside the enclosing
// lists and quotes.
func (r *waRenderer) newline() {
	r.out.WriteString("\n")
	r.out.WriteString(strings.Join(r.prefix, ""))
}

// blocks renders the block children of n, separated by a blank line (one
// line break inside tight lists).
func (r *waRenderer) blocks(n ast.Node) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			r.newline()
			if !tight(c) {
				r.newline()
			}
		}
		first = false
		r.block(c)
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

func (r *waRenderer) block(n ast.Node) {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		r.inlines(n)
	case *ast.Heading:
		r.wrap("*", n)
	case *ast.ThematicBreak:
		r.write("———")
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		r.codeBlock(n)
	case *ast.Blockquote:
		r.write("> ")
		r.prefix = append(r.prefix, "> ")
		r.blocks(n)
		r.prefix = r.prefix[:len(r.prefix)-1]
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
			marker := "- "
			if n.IsOrdered() {
				marker = strconv.Itoa(num) + ". "
				num++
			}
			r.write(marker)
			r.prefix = append(r.prefix, strings.Repeat(" ", len(marker)))
			r.blocks(item)
			r.prefix = r.prefix[:len(r.prefix)-1]
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
			r.lines(strings.TrimRight(r.rawLines(n), "\n"))
		}
	}
}

func (r *waRenderer) rawLines(n ast.Node) string {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		b.Write(seg.Value(r.src))
	}
	return b.String()
}

// lines writes multi-line text inside the enclosing prefixes.
func (r *waRenderer) lines(s string) {
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			r.newline()
		}
		r.write(line)
	}
}

// codeBlock writes ``` on a line, the code, ``` on a line: WhatsApp's
// monospace block. The language tag is dropped (WhatsApp would show it).
func (r *waRenderer) codeBlock(n ast.Node) {
	body := strings.TrimRight(r.rawLines(n), "\n")
	r.write("```")
	r.newline()
	r.lines(strings.ReplaceAll(body, "```", "``\u200b`"))
	r.newline()
	r.write("```")
}

func (r *waRenderer) inlines(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(c)
	}
}

func (r *waRenderer) inline(n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(r.src)
		if n.IsRaw() {
			r.write(string(v))
		} else {
			r.write(unescapeMarkdown(v))
		}
		if n.SoftLineBreak() || n.HardLineBreak() {
			r.newline()
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			r.write(string(n.Value))
		} else {
			r.write(unescapeMarkdown(n.Value))
		}
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				v := string(t.Segment.Value(r.src))
				b.WriteString(strings.TrimSuffix(v, "\n"))
				if strings.HasSuffix(v, "\n") {
					b.WriteByte(' ')
				}
			case *ast.String:
				b.Write(t.Value)
			}
		}
		code := b.String()
		if code == "" || r.inCode > 0 || strings.Contains(code, "`") {
			r.write(code)
			return
		}
		r.write("`" + code + "`")
	case *ast.Emphasis:
		if n.Level >= 2 {
			r.wrap("*", n)
		} else {
			r.wrap("_", n)
		}
	case *east.Strikethrough:
		r.wrap("~", n)
	case *ast.Link:
		r.link(string(n.Destination), n)
	case *ast.Image:
		r.link(string(n.Destination), n)
	case *ast.AutoLink:
		r.write(string(n.URL(r.src)))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			r.write(string(seg.Value(r.src)))
		}
	default:
		r.inlines(n)
	}
}

// wrap renders n's children between two marks. WhatsApp formats only a
// mark next to a non-space, so surrounding spaces stay outside; an empty
// or all-space content gets no marks, and nothing is marked inside code or
// a link label.
func (r *waRenderer) wrap(mark string, n ast.Node) {
	if r.inCode > 0 || strings.Contains(r.marks, mark) {
		r.inlines(n) // a bold inside a bold heading: one pair of marks
		return
	}
	outer := r.out
	r.out = &strings.Builder{}
	r.marks += mark
	r.inlines(n)
	r.marks = r.marks[:len(r.marks)-len(mark)]
	inner := r.out.String()
	r.out = outer
	trimmed := strings.TrimSpace(inner)
	if trimmed == "" || strings.Contains(trimmed, "\n") {
		r.out.WriteString(inner)
		return
	}
	lead := inner[:len(inner)-len(strings.TrimLeft(inner, " \t"))]
	trail := inner[len(strings.TrimRight(inner, " \t")):]
	r.out.WriteString(lead + mark + trimmed + mark + trail)
}

// link writes "label (url)", or the url alone when the label is the url or
// empty.
func (r *waRenderer) link(dest string, n ast.Node) {
	outer := r.out
	r.out = &strings.Builder{}
	r.inCode++
	r.inlines(n)
	r.inCode--
	label := r.out.String()
	r.out = outer
	switch {
	case dest == "" || label == dest || strings.TrimPrefix(dest, "mailto:") == label:
		if label == "" {
			label = dest
		}
		r.write(label)
	case label == "":
		r.write(dest)
	default:
		r.write(label + " (" + dest + ")")
	}
}

// unescapeMarkdown resolves backslash escapes and entity references the way
// a CommonMark renderer does for text.
func unescapeMarkdown(v []byte) string {
	return string(util.ResolveNumericReferences(util.ResolveEntityNames(util.UnescapePunctuations(v))))
}

// utf16Len is the length of s in UTF-16 code units, the unit of
// MaxTextLength (channel.TextLen).
func utf16Len(s string) int { return channel.TextLen(s, channel.LengthUTF16) }

// splitText cuts s into pieces of at most limit UTF-16 units: at the last
// line break that fits, else the last space, else between two runes. A
// piece never ends inside a surrogate pair.
func splitText(s string, limit int) []string {
	var out []string
	for utf16Len(s) > limit {
		cut, units := 0, 0
		lastNL, lastSP := -1, -1
		for i, r := range s {
			u := utf16.RuneLen(r)
			if units+u > limit {
				break
			}
			units += u
			cut = i + utf8.RuneLen(r)
			switch r {
			case '\n':
				lastNL = i
			case ' ':
				lastSP = i
			}
		}
		switch rest := s[cut:]; {
		case strings.HasPrefix(rest, "\n"), strings.HasPrefix(rest, " "):
			// the piece ends at a break already
		case lastNL > 0:
			cut = lastNL
		case lastSP > 0:
			cut = lastSP
		}
		if cut == 0 { // a limit below one rune: never loop forever
			_, size := utf8.DecodeRuneInString(s)
			cut = size
		}
		out = append(out, strings.TrimRight(s[:cut], " \n"))
		s = strings.TrimLeft(s[cut:], " \n")
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}
