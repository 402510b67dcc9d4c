package markup

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Split cuts markdown src into pieces that each, rendered in f, measure at
// most limit in unit (Len): render then measure, so markup that renders
// shorter than it is written (Telegram's tags) costs nothing and markup
// that renders longer (a link's url, a table's padding) is counted.
//
//   - src whose rendering fits, and a limit <= 0, give src itself: a reply
//     that fits is never split; blank src gives none.
//   - Cuts prefer, within the second half of what fits, a blank line
//     between blocks, then the start of a block or list item, then any line
//     break; a line longer than the limit is cut at its last space that
//     fits, else between characters (never inside a character reference
//     or after a backslash).
//   - A piece that starts inside a fenced code block reopens it (its open
//     line, info string included; the bare marker when that line alone
//     does not fit) and one that ends inside closes it.
//   - Link reference definitions are repeated in every piece (they render
//     as nothing) for the flavours that resolve them.
//
// A piece is itself markdown, for Render. Only a limit smaller than one
// character's rendering makes a piece longer than limit.
func Split(src string, f Flavour, limit int, unit channel.LengthUnit) []string {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	if limit <= 0 || Len(src, f, unit) <= limit {
		return []string{src}
	}
	s := newSplitter(src, f, limit, unit)
	return s.run()
}

// Piece is one message of [SplitRendered]: its markdown and, when the
// split had it at hand, its rendering.
type Piece struct {
	// Src is the markdown of the piece, as Split gives it.
	Src string
	// Rendered says Out and Visible are set: Out is Render(Src, f) and
	// Visible is Visible(Src, f).
	Rendered     bool
	Out, Visible string
}

// SplitRendered is Split, with the rendering of a src that fits whole
// (the one the measure made, so it costs nothing more): a caller that
// sends what it measured need not parse it again. Pieces of a src that
// is cut, and a limit <= 0 (nothing measured), carry no rendering.
func SplitRendered(src string, f Flavour, limit int, unit channel.LengthUnit) []Piece {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	if limit <= 0 {
		return []Piece{{Src: src}}
	}
	out, vis := render(src, f)
	if channel.TextLen(vis, unit) <= limit {
		return []Piece{{Src: src, Rendered: true, Out: out, Visible: vis}}
	}
	pieces := Split(src, f, limit, unit) // measures src once more: a cut reply is measured piece by piece anyway
	ps := make([]Piece, len(pieces))
	for i, p := range pieces {
		ps[i] = Piece{Src: p}
	}
	return ps
}

type splitter struct {
	src     string
	f       Flavour
	limit   int
	unit    channel.LengthUnit
	starts  []int              // byte offset of each line's start, and len(src)
	reopen  []string           // per line: what a piece starting there begins with
	closeAt []string           // per line: what a piece ending there ends with
	prio    []int              // per line: how good a cut before it is
	refs    string             // link reference definitions, "" if none
	opens   map[int]fenceLines // fenced code blocks by their open line
	out     []string
}

func newSplitter(src string, f Flavour, limit int, unit channel.LengthUnit) *splitter {
	s := &splitter{src: src, f: f, limit: limit, unit: unit, starts: []int{0}, opens: map[int]fenceLines{}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' && i+1 < len(src) {
			s.starts = append(s.starts, i+1)
		}
	}
	n := len(s.starts)
	s.starts = append(s.starts, len(src))
	s.reopen, s.closeAt, s.prio = make([]string, n), make([]string, n), make([]int, n)
	b := []byte(src)
	pc := parser.NewContext()
	doc := md().Parser().Parse(text.NewReader(b), parser.WithContext(pc))
	if f != Markdown {
		var refs []string
		for _, r := range pc.References() {
			refs = append(refs, "["+string(r.Label())+"]: <"+string(r.Destination())+">")
		}
		s.refs = strings.Join(refs, "\n")
	}
	for i := 1; i < n; i++ {
		s.prio[i] = 1
		if s.blank(i - 1) {
			s.prio[i] = 3
		}
	}
	_ = ast.Walk(doc, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || node.Type() != ast.TypeBlock {
			return ast.WalkContinue, nil
		}
		if fc, ok := node.(*ast.FencedCodeBlock); ok {
			s.fence(fc)
		}
		if _, ok := node.(*ast.Document); !ok {
			if st, _, ok := nodeSpan(b, node); ok {
				if l := s.lineOf(st); l > 0 && s.prio[l] < 2 && s.reopen[l] == "" {
					s.prio[l] = 2
				}
			}
		}
		return ast.WalkContinue, nil
	})
	return s
}

// lineOf is the line holding byte off (the last line for off at the end).
func (s *splitter) lineOf(off int) int {
	n := len(s.starts) - 1
	return min(sort.Search(n, func(i int) bool { return s.starts[i+1] > off }), n-1)
}

// line is line i without its line break.
func (s *splitter) line(i int) string {
	return strings.TrimSuffix(s.src[s.starts[i]:s.starts[i+1]], "\n")
}

func (s *splitter) blank(i int) bool { return strings.TrimSpace(s.line(i)) == "" }

// fence records how a piece reopens and closes the fenced code block n
// when it cuts inside it. Cuts inside code are plain line cuts.
func (s *splitter) fence(n *ast.FencedCodeBlock) {
	ls := n.Lines()
	if ls.Len() == 0 {
		return
	}
	first, last := s.lineOf(ls.At(0).Start), s.lineOf(ls.At(ls.Len()-1).Start)
	open := first - 1
	if open < 0 {
		return
	}
	prefix, marker := fenceParts(s.line(open))
	if marker == "" {
		return
	}
	reopen := prefix + strings.TrimLeft(s.line(open)[len(prefix):], " ")
	closeLine := prefix + marker
	s.opens[open] = fenceLines{first: first, last: last, bare: closeLine}
	for i := first; i <= last; i++ {
		s.reopen[i] = reopen
		s.closeAt[i] = closeLine
		s.prio[i] = 1
	}
	s.prio[first] = 0 // a piece of an open line alone shows an empty block
	s.closeAt[open] = closeLine
}

// fenceParts splits a fence's open line into what comes before the fence
// marker (list markers become spaces, quote marks stay) and the marker.
func fenceParts(line string) (prefix, marker string) {
	i := strings.IndexAny(line, "`~")
	if i < 0 {
		return "", ""
	}
	c := line[i]
	j := i
	for j < len(line) && line[j] == c {
		j++
	}
	p := []byte(line[:i])
	for k, ch := range p {
		if ch != '>' && ch != ' ' && ch != '\t' {
			p[k] = ' '
		}
	}
	return string(p), line[i:j]
}

// piece is lines [a, b) as a piece of their own.
func (s *splitter) piece(a, b int) string {
	body := s.src[s.starts[a]:s.starts[b]]
	var out strings.Builder
	if s.reopen[a] != "" {
		out.WriteString(s.reopen[a] + "\n")
	}
	if c := s.closeAt[b-1]; c != "" && (b >= len(s.closeAt) || s.closeAt[b] != "" && s.reopen[b] != "") {
		out.WriteString(strings.TrimRight(body, "\r\n") + "\n" + c)
	} else {
		out.WriteString(strings.TrimRight(body, " \t\r\n"))
	}
	return s.withRefs(out.String())
}

func (s *splitter) withRefs(p string) string {
	if s.refs == "" {
		return p
	}
	return p + "\n\n" + s.refs
}

func (s *splitter) fits(p string) bool { return Len(p, s.f, s.unit) <= s.limit }

func (s *splitter) run() []string {
	n := len(s.starts) - 1
	for a := 0; a < n; {
		if s.reopen[a] == "" && s.closeAt[a] == "" && s.blank(a) {
			a++
			continue
		}
		if !s.fits(s.piece(a, a+1)) {
			if fl, ok := s.opens[a]; ok {
				// An open line too long for any piece: its code is
				// reopened with the bare marker (no info string).
				for i := fl.first; i <= fl.last; i++ {
					s.reopen[i] = fl.bare
				}
				a++
				continue
			}
			s.splitLine(a)
			a++
			continue
		}
		b := s.longest(a)
		if b < n {
			best := b
			for c := b - 1; c > a+(b-a)/2; c-- {
				if s.prio[c] > s.prio[best] {
					best = c
				}
			}
			b = best
		}
		s.emit(s.piece(a, b))
		a = b
	}
	return s.out
}

// longest is the largest b such that lines [a, b) fit as a piece, given
// that [a, a+1) does: galloping from a+1 (each render at most twice the
// piece's final size, not half the rest of the reply), then a binary
// search.
func (s *splitter) longest(a int) int {
	n := len(s.starts) - 1
	lo, step := a+1, 1
	for lo+step <= n && s.fits(s.piece(a, lo+step)) {
		lo += step
		step *= 2
	}
	hi := min(lo+step-1, n)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s.fits(s.piece(a, mid)) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func (s *splitter) emit(p string) {
	if strings.TrimSpace(p) != "" {
		s.out = append(s.out, p)
	}
}

// splitLine cuts line a, too long for a piece of its own, at spaces (else
// between characters), each part reopened and closed as the line is.
func (s *splitter) splitLine(a int) {
	line := strings.TrimRight(s.line(a), "\r")
	code := s.closeAt[a] != ""
	wrap := func(x string) string {
		p := x
		if s.reopen[a] != "" {
			p = s.reopen[a] + "\n" + p
		}
		if code {
			p += "\n" + s.closeAt[a]
		}
		return s.withRefs(p)
	}
	for st := 0; st < len(line); {
		if !code {
			for st < len(line) && line[st] == ' ' {
				st++
			}
			if st == len(line) {
				break
			}
		}
		cuts := cutPoints(line, st)
		fits := func(i int) bool { return s.fits(wrap(line[st:cuts[i]])) }
		// Galloping, then a binary search, as in longest.
		lo, step := -1, 1
		for lo+step < len(cuts) && fits(lo+step) {
			lo += step
			step *= 2
		}
		hi := min(lo+step-1, len(cuts)-1)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if fits(mid) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo < 0 { // not one character fits: it goes alone
			e := st + max(utf8RuneLen(line[st:]), 1)
			s.emit(line[st:e])
			st = e
			continue
		}
		e := cuts[lo]
		if e < len(line) {
			if sp := lastSpaceCut(line[st:e], line[e:]); sp > (e-st)/2 {
				e = st + sp
			}
		}
		s.emit(wrap(line[st:e]))
		st = e
	}
}

// cutPoints are the byte offsets after st where line may be cut: rune
// boundaries, but not right after a backslash, inside what may be a
// character reference ("&amp;"), nor where the text left would open a
// block (opensBlock).
func cutPoints(line string, st int) []int {
	var out []int
	amp := -1
	for i, r := range line[st:] {
		i += st
		if i > st && line[i-1] != '\\' && amp < 0 && !opensBlock(line[i:]) {
			out = append(out, i)
		}
		switch {
		case r == '&':
			amp = i
		case r == ';' || !(r == '#' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			amp = -1
		}
	}
	return append(out, len(line))
}

func utf8RuneLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return n
}

// lastSpaceCut is the last space in piece after which the text left
// (piece's rest and then rest) opens no block (opensBlock); -1 if none.
func lastSpaceCut(piece, rest string) int {
	for sp := strings.LastIndexByte(piece, ' '); sp >= 0; sp = strings.LastIndexByte(piece[:sp], ' ') {
		if !opensBlock(piece[sp:min(len(piece), sp+maxLabel+2)] + rest[:min(len(rest), maxLabel+2)]) {
			return sp
		}
	}
	return -1
}

// maxLabel is the longest link label CommonMark allows.
const maxLabel = 999

// opensBlock: text left after a cut, its spaces skipped, starts with ` or
// ~ (a fence), "[label]:" (a link reference definition, which shows
// nothing), or digits and . or ) (an ordered list, which renders its
// number without leading zeros).
func opensBlock(rest string) bool {
	rest = strings.TrimLeft(rest, " ")
	if rest == "" {
		return false
	}
	switch rest[0] {
	case '`', '~':
		return true
	case '[':
		// "[label]:" would define a link reference.
		i := strings.IndexByte(rest[:min(len(rest), maxLabel+2)], ']')
		return i > 0 && i+1 < len(rest) && rest[i+1] == ':'
	}
	d := strings.TrimLeft(rest, "0123456789")
	return len(d) < len(rest) && d != "" && (d[0] == '.' || d[0] == ')')
}

// fenceLines are a fenced code block's content lines and its bare marker
// line (the open line without info string, which is also the close line).
type fenceLines struct {
	first, last int
	bare        string
}
