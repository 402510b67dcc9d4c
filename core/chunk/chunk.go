// Package chunk splits outbound reply text into pieces that fit a chat
// platform's message size limit: a finished reply ([Markdown], [Lines]) and
// a reply while it streams ([Coalescer]).
//
// It reproduces the behaviour of OpenClaw's chunkMarkdownText,
// chunkMarkdownTextWithMode and chunkByParagraph (openclaw@2026.9.6), checked
// case by case against the vectors produced by running OpenClaw itself:
//
//   - Limits and lengths are UTF-16 code units (JavaScript String.length),
//     not bytes or runes. Use [Len] to measure.
//   - A cut never lands inside an extended grapheme cluster, except when a
//     single cluster is wider than the limit: then it is cut between code
//     points (never inside a surrogate pair).
//   - Text that already fits is returned unchanged, untrimmed.
//   - A limit <= 0 disables chunking: the text comes back as one chunk.
//     Limits are integers; callers holding a fractional configured value
//     floor it first (OpenClaw treats 3.7 as 3).
//
// # What is kept and what is dropped
//
// [Markdown] is fence aware. It never trims inside a chunk; at a cut outside
// a fenced code block it skips one whitespace grapheme and then any newlines;
// inside a fence nothing is skipped, so code indentation survives. When a cut
// must fall inside a fence, the chunk is closed with the fence's close line
// and the next chunk reopens it with the original open line (info string
// included), or with the bare marker when the open line is too long for the
// limit. Removing those synthetic close/reopen lines and the skipped
// separators gives back the input.
//
// # Deliberate differences from OpenClaw
//
//   - When a fence cannot be balanced (limit smaller than 2×close line + 3)
//     or cannot make progress inside the window, and the fence starts after
//     the chunk start, clawhost cuts just before the fence instead of
//     hard-splitting inside it, so fences stay balanced more often.
//   - When the only progress point inside a fence would leave no room for the
//     appended close line, clawhost hard-splits instead of emitting a chunk
//     one unit over the limit (an off-by-one in OpenClaw's budget).
//
// # Streamed text
//
// [Coalescer] cuts a turn's streamed text into chat-sized blocks as it
// arrives (the turn's "blocks" and "draft" streaming), with the same fence
// scanner as the chunkers: one CommonMark scanner (fence.go) over text held in
// the unit its caller measures in — UTF-16 code units for the chunkers,
// runes for the Coalescer.
//
// All functions are pure and safe for concurrent use. Each call encodes its
// input to UTF-16 once and works on indices, so chunking is linear in the
// input size.
package chunk

import "sort"

// DefaultLimit is the chunk limit used when nothing is configured (OpenClaw's
// DEFAULT_CHUNK_LIMIT).
const DefaultLimit = 4000

// Mode selects how [MarkdownWithMode] splits text.
type Mode string

const (
	// ModeLength splits only where the text exceeds the limit. It is the
	// default.
	ModeLength Mode = "length"
	// ModeNewline splits on paragraph boundaries (blank lines) and packs
	// paragraphs greedily up to the limit; an over-long paragraph falls back
	// to length splitting.
	ModeNewline Mode = "newline"
)

// scanBreaks returns the last newline and the last other whitespace in
// u[from:to] that sit outside parentheses, as absolute indices (-1 if none).
// '(' opens a level, ')' closes one only when a level is open. Positions
// strictly inside one of spans (sorted fence spans) are ignored entirely,
// parentheses included.
func scanBreaks(u units, from, to int, spans []fenceSpan) (lastNewline, lastSpace int) {
	lastNewline, lastSpace = -1, -1
	depth := 0
	k := 0
	if len(spans) > 0 {
		k = sort.Search(len(spans), func(k int) bool { return spans[k].end > from })
	}
	for i := from; i < to; {
		// Allowed run: up to and including the next span's start.
		runEnd := to
		if k < len(spans) && spans[k].start+1 < to {
			runEnd = max(i, spans[k].start+1)
		}
		for ; i < runEnd; i++ {
			switch c := u[i]; {
			case c == '(':
				depth++
			case c == ')' && depth > 0:
				depth--
			case depth != 0:
			case c == '\n':
				lastNewline = i
			case c == ' ':
				lastSpace = i
			case c > ' ' && c < 0x80:
			case isSpace(c):
				lastSpace = i
			}
		}
		if k < len(spans) && i < to {
			// Skip the span's interior; its end is allowed again.
			i = max(i, spans[k].end)
			k++
		}
	}
	return lastNewline, lastSpace
}

// Markdown splits markdown into chunks of at most limit UTF-16 code units
// (OpenClaw's chunkMarkdownText), keeping fenced code blocks valid: breaks
// inside fences are avoided, and when unavoidable the fence is closed at the
// end of the chunk and reopened at the start of the next. See the package
// documentation for the exact whitespace rules.
func Markdown(text string, limit int) []string {
	if text == "" {
		return []string{}
	}
	if limit <= 0 {
		return []string{text}
	}
	u := encode(text)
	if len(u) <= limit {
		return []string{text}
	}
	return chunkMarkdown(u, limit, nil, nil)
}

// piece describes how one markdown chunk was built, for tests: the source
// range it carries and whether a fence was reopened before it or closed
// after it.
type piece struct {
	start, end       int
	reopened, closed bool
}

// chunkMarkdown appends the markdown chunks of u to out. When record is not
// nil it is told how each chunk was built.
func chunkMarkdown(u units, limit int, out []string, record func(piece)) []string {
	if out == nil {
		out = []string{}
	}
	if len(u) == 0 {
		return out
	}
	if limit <= 0 || len(u) <= limit {
		return append(out, u.String())
	}
	spans := parseFences(u)
	n := len(u)
	var reopen units // reopen line of the fence the previous chunk closed
	buf := make([]byte, 0, 4*limit)
	pos := 0
	for pos < n {
		prefixLen := 0
		if reopen != nil {
			prefixLen = len(reopen) + 1
		}
		contentLimit := max(1, limit-prefixLen)
		if n-pos <= contentLimit {
			buf = appendReopen(buf[:0], reopen)
			buf = appendUnits(buf, u[pos:])
			out = append(out, string(buf))
			if record != nil {
				record(piece{start: pos, end: n, reopened: reopen != nil})
			}
			break
		}
		windowEnd := pos + contentLimit
		nl, ws := scanBreaks(u, pos, windowEnd, spans)
		breakIdx := windowEnd
		if nl > pos {
			breakIdx = nl
		} else if ws > pos {
			breakIdx = ws
		}

		var split *fenceSpan
		if initial := fenceAt(spans, breakIdx); initial != nil {
			breakIdx, split = fenceBreak(u, spans, initial, pos, contentLimit, limit)
		}
		if aligned := u.graphemeEnd(pos, breakIdx); aligned != breakIdx {
			breakIdx = aligned
			if split != nil && fenceAt(spans, breakIdx) != split {
				split = nil
			}
		}
		if breakIdx <= pos {
			break // unreachable: graphemeEnd always makes progress
		}

		buf = appendReopen(buf[:0], reopen)
		buf = appendUnits(buf, u[pos:breakIdx])
		next := breakIdx
		if split != nil {
			if buf[len(buf)-1] != '\n' {
				buf = append(buf, '\n')
			}
			buf = appendUnits(buf, split.closeLine())
			reopen = split.reopenLine(limit)
		} else {
			reopen = nil
			if fenceAt(spans, breakIdx) == nil {
				next = u.skipSpaceClusters(pos, next, 1)
				for next < n && u[next] == '\n' {
					next++
				}
			}
		}
		out = append(out, string(buf))
		if record != nil {
			record(piece{start: pos, end: breakIdx, reopened: prefixLen > 0, closed: split != nil})
		}
		pos = next
	}
	return out
}

func appendReopen(dst []byte, reopen units) []byte {
	if reopen == nil {
		return dst
	}
	return append(appendUnits(dst, reopen), '\n')
}

// fenceBreak picks the cut when the preferred break lands inside fence f. It
// returns the break index and the fence to close there (nil for a plain cut).
func fenceBreak(u units, spans []fenceSpan, f *fenceSpan, pos, contentLimit, limit int) (int, *fenceSpan) {
	windowEnd := pos + contentLimit
	// cutBefore is clawhost's fallback: cut before the fence when it starts
	// after pos, otherwise hard-split.
	cutBefore := func() (int, *fenceSpan) {
		if f.start > pos {
			return f.start, nil
		}
		return windowEnd, nil
	}
	if !f.canBalance(limit) {
		return cutBefore()
	}
	closeLen := len(f.indent) + len(f.marker)
	maxIdxIfNeedNewline := pos + contentLimit - (closeLen + 1)
	if maxIdxIfNeedNewline <= pos {
		return cutBefore()
	}
	minProgress := min(len(u), max(pos+1, f.start+len(f.openLine)+2))
	maxIdxIfAlreadyNewline := pos + contentLimit - closeLen

	breakIdx := -1
	for ln := lastIndexNewline(u, max(pos, maxIdxIfAlreadyNewline-1)); ln >= pos; ln = lastIndexNewline(u, ln-1) {
		cand := ln + 1
		if cand < minProgress {
			break
		}
		if fenceAt(spans, cand) == f {
			breakIdx = cand
			break
		}
	}
	if breakIdx < 0 {
		switch {
		case minProgress > maxIdxIfAlreadyNewline:
			return cutBefore()
		case minProgress > maxIdxIfNeedNewline && u[minProgress-1] != '\n':
			// The close line would need a newline there is no room for.
			return cutBefore()
		}
		breakIdx = max(minProgress, maxIdxIfNeedNewline)
	}
	if fenceAt(spans, breakIdx) != f {
		return breakIdx, nil
	}
	return breakIdx, f
}

// lastIndexNewline is String.prototype.lastIndexOf("\n", from).
func lastIndexNewline(u units, from int) int {
	if from >= len(u) {
		from = len(u) - 1
	}
	for i := from; i >= 0; i-- {
		if u[i] == '\n' {
			return i
		}
	}
	return -1
}

// MarkdownWithMode splits markdown with [Markdown] in [ModeLength]
// (OpenClaw's chunkMarkdownTextWithMode). In [ModeNewline] paragraphs are
// packed without splitting long ones; any packed chunk still over the limit
// is cut after closing fences and each piece is chunked with [Markdown].
func MarkdownWithMode(text string, limit int, mode Mode) []string {
	if mode != ModeNewline {
		return Markdown(text, limit)
	}
	out := []string{}
	for _, para := range ByParagraph(text, limit) {
		u := encode(para)
		if limit <= 0 || len(u) <= limit {
			out = append(out, para)
			continue
		}
		for _, p := range splitAfterFences(u) {
			out = chunkMarkdown(p, limit, out, nil)
		}
	}
	return out
}

// splitAfterFences cuts u after every closing fence line that is followed by
// a newline; the newline stays with the following piece's separator and is
// dropped.
func splitAfterFences(u units) []units {
	spans := parseFences(u)
	var pieces []units
	start := 0
	for _, s := range spans {
		if s.end < len(u) && u[s.end] == '\n' && s.end > start {
			pieces = append(pieces, u[start:s.end])
			start = s.end + 1
			for start < len(u) && u[start] == '\n' {
				start++
			}
		}
	}
	if start < len(u) {
		pieces = append(pieces, u[start:])
	}
	return pieces
}

// ByParagraph splits text on blank lines (a newline, optional spaces or tabs,
// then one or more newlines) that are not inside fenced code, packing whole
// paragraphs greedily up to limit and keeping the original separator between
// packed paragraphs (OpenClaw's chunkByParagraph). CRLF and lone CR become
// LF first; U+2029 becomes a blank line and U+2028 a newline. A paragraph
// longer than limit is kept whole, as is text with no blank line.
func ByParagraph(text string, limit int) []string {
	if text == "" {
		return []string{}
	}
	if limit <= 0 {
		return []string{text}
	}
	u := normalizeNewlines(encode(text))
	seps := paragraphSeparators(u)
	if len(seps) == 0 {
		return []string{u.String()}
	}
	out := []string{}
	packStart, packEnd := -1, -1
	flush := func() {
		if packStart >= 0 {
			out = append(out, u[packStart:packEnd].String())
			packStart, packEnd = -1, -1
		}
	}
	prev := 0
	for i := 0; i <= len(seps); i++ {
		end, next := len(u), len(u)
		if i < len(seps) {
			end, next = seps[i][0], seps[i][1]
		}
		pStart, pEnd := prev, u.trimSpaceEnd(prev, end)
		prev = next
		if pStart >= pEnd || u.trimSpaceStart(pStart, pEnd) == pEnd {
			continue
		}
		if pEnd-pStart > limit {
			flush()
			out = append(out, u[pStart:pEnd].String())
			continue
		}
		if packStart >= 0 && pEnd-packStart <= limit {
			packEnd = pEnd
			continue
		}
		flush()
		packStart, packEnd = pStart, pEnd
	}
	flush()
	return out
}

// normalizeNewlines maps CRLF and lone CR to LF, U+2029 to a blank line and
// U+2028 to LF.
func normalizeNewlines(u units) units {
	clean := true
	for _, c := range u {
		if c == '\r' || c == 0x2028 || c == 0x2029 {
			clean = false
			break
		}
	}
	if clean {
		return u
	}
	out := make(units, 0, len(u)+8)
	for i := 0; i < len(u); i++ {
		switch c := u[i]; c {
		case '\r':
			out = append(out, '\n')
			if i+1 < len(u) && u[i+1] == '\n' {
				i++
			}
		case 0x2028:
			out = append(out, '\n')
		case 0x2029:
			out = append(out, '\n', '\n')
		default:
			out = append(out, c)
		}
	}
	return out
}

// paragraphSeparators returns [start, end) of every match of /\n[\t ]*\n+/
// that does not start inside a fenced code block.
func paragraphSeparators(u units) [][2]int {
	var seps [][2]int
	var spans []fenceSpan
	parsed := false
	for i := 0; i < len(u); i++ {
		if u[i] != '\n' {
			continue
		}
		j := i + 1
		for j < len(u) && (u[j] == ' ' || u[j] == '\t') {
			j++
		}
		if j >= len(u) || u[j] != '\n' {
			continue
		}
		for j < len(u) && u[j] == '\n' {
			j++
		}
		if !parsed {
			spans, parsed = parseFences(u), true
		}
		if fenceAt(spans, i) != nil {
			// JavaScript's matchAll resumes after the rejected match.
			i = j - 1
			continue
		}
		seps = append(seps, [2]int{i, j})
		i = j - 1
	}
	return seps
}
