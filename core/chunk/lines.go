package chunk

import "sort"

// Lines applies a channel's line limit (Discord shows at most 17 lines of
// a message before collapsing it) to chunks made by [Markdown] or
// [MarkdownWithMode] with the same limit: every chunk with more than
// maxLines lines is split into pieces of at most maxLines lines. A
// maxLines <= 0 means no line limit and returns chunks unchanged.
//
// Lines are counted as the text has them: the pieces between '\n'
// characters. A single long line is one line, however the platform wraps
// it; only the length limit splits it (the chunker already did).
//
// Cuts fall between lines and are fence aware, as the length chunker's:
//   - A piece that ends inside a fenced code block is closed with the
//     fence's close line and the next piece reopens it with the original
//     open line (info string included; the bare marker when the open line
//     is too long for limit). The close and reopen lines count against
//     maxLines.
//   - A cut never leaves a piece with an empty fence (only its open line)
//     or a next piece that would hold only the close line.
//   - The cut is the last line that fits, unless a paragraph break (a
//     blank line) or a fence boundary lies in the second half of the
//     piece: then the piece ends there, so paragraphs and code blocks stay
//     whole when they can.
//   - At a cut outside a fence, blank lines are dropped: a piece neither
//     ends nor starts with one. Inside a fence nothing is dropped.
//   - Balancing a fence takes three lines (reopen, content, close), so
//     with maxLines < 3 cuts inside a fence are plain cuts and such a piece
//     is not balanced; the line limit wins.
//
// No piece is longer than limit (UTF-16 code units; <= 0 means none) when
// its chunk was not: a piece replaces its chunk's own open and close lines
// with equal or shorter copies. Removing the added close and reopen lines
// and the dropped blank lines gives back the chunk.
func Lines(chunks []string, limit, maxLines int) []string {
	if maxLines <= 0 {
		return chunks
	}
	out := make([]string, 0, len(chunks))
	for _, c := range chunks {
		out = splitLines(encode(c), limit, maxLines, out, nil)
	}
	return out
}

// lineIndex holds the [start, end) of every line of a text; end excludes
// the '\n'.
type lineIndex struct{ starts, ends []int }

func indexLines(u units) lineIndex {
	var li lineIndex
	start := 0
	for i, c := range u {
		if c == '\n' {
			li.starts = append(li.starts, start)
			li.ends = append(li.ends, i)
			start = i + 1
		}
	}
	li.starts = append(li.starts, start)
	li.ends = append(li.ends, len(u))
	return li
}

// lineSplitter splits one chunk by lines.
type lineSplitter struct {
	u        units
	li       lineIndex
	spans    []fenceSpan
	limit    int
	maxLines int
}

// splitLines appends the pieces of chunk u to out. When record is not nil
// it is told how each piece was built (start and end are unit indices in
// u).
func splitLines(u units, limit, maxLines int, out []string, record func(piece)) []string {
	li := indexLines(u)
	n := len(li.starts)
	if n <= maxLines {
		if record != nil {
			record(piece{start: 0, end: len(u)})
		}
		return append(out, u.String())
	}
	s := &lineSplitter{u: u, li: li, spans: parseFences(u), limit: limit, maxLines: maxLines}
	var reopen *fenceSpan
	buf := make([]byte, 0, len(u))
	for i := 0; i < n; {
		budget := maxLines
		if reopen != nil {
			budget--
		}
		end, next, closeF := n, n, (*fenceSpan)(nil)
		if n-i > budget {
			end, closeF = s.cut(i, budget, reopen)
			next = end
			if closeF == nil {
				for end-1 > i && s.blank(end-1) && fenceAt(s.spans, li.starts[end-1]) == nil {
					end--
				}
				for next < n && s.blank(next) && fenceAt(s.spans, li.starts[next]) == nil {
					next++
				}
			}
		}
		buf = buf[:0]
		if reopen != nil {
			buf = append(appendUnits(buf, s.reopenLine(reopen)), '\n')
		}
		buf = appendUnits(buf, u[li.starts[i]:li.ends[end-1]])
		if closeF != nil {
			buf = appendUnits(append(buf, '\n'), closeF.closeLine())
		}
		out = append(out, string(buf))
		if record != nil {
			record(piece{start: li.starts[i], end: li.ends[end-1], reopened: reopen != nil, closed: closeF != nil})
		}
		reopen = closeF
		i = next
	}
	return out
}

// cut picks where the piece starting at line i ends (exclusive line index)
// when more than budget lines remain, and the fence to close there (nil
// for a plain cut).
func (s *lineSplitter) cut(i, budget int, reopen *fenceSpan) (int, *fenceSpan) {
	greedy, greedyF := -1, (*fenceSpan)(nil)
	for j := i + budget; j > i; j-- {
		f := fenceAt(s.spans, s.li.starts[j])
		if f == nil {
			if !s.fits(i, j, reopen, nil) {
				continue
			}
			if greedy < 0 {
				greedy = j
			}
			if 2*(j-i) >= budget && s.paragraphBreak(j) {
				return j, nil
			}
			continue
		}
		if greedy >= 0 || !s.canClose(i, j, budget, f) || !s.fits(i, j, reopen, f) {
			continue
		}
		greedy, greedyF = j, f
	}
	if greedy < 0 {
		// Only when maxLines < 3 or the chunk was not balanced to begin
		// with: a plain cut after budget lines.
		return i + max(1, budget), nil
	}
	return greedy, greedyF
}

// canClose reports whether a piece of lines [i, j) may end inside fence f
// (line j is inside it): budget (the lines left after any reopen line)
// has a line for the close, the piece shows some of the fence's content,
// and the next piece does too.
func (s *lineSplitter) canClose(i, j, budget int, f *fenceSpan) bool {
	if s.maxLines < 3 || j-i > budget-1 {
		return false
	}
	if f.start >= s.li.starts[i] && s.li.starts[j-1] <= f.start {
		return false // only the open line of f would be in this piece
	}
	return !(f.closed && s.li.ends[j] == f.end) // line j is f's close line
}

// fits reports whether the piece of lines [i, j), reopened and closed as
// asked, fits the length limit.
func (s *lineSplitter) fits(i, j int, reopen, closeF *fenceSpan) bool {
	if s.limit <= 0 {
		return true
	}
	n := s.li.ends[j-1] - s.li.starts[i]
	if reopen != nil {
		n += len(s.reopenLine(reopen)) + 1
	}
	if closeF != nil {
		n += 1 + len(closeF.indent) + len(closeF.marker)
	}
	return n <= s.limit
}

func (s *lineSplitter) reopenLine(f *fenceSpan) units {
	if s.limit <= 0 {
		return f.openLine
	}
	return f.reopenLine(s.limit)
}

// paragraphBreak reports whether a cut before line j (outside any fence)
// falls at a paragraph or code block boundary.
func (s *lineSplitter) paragraphBreak(j int) bool {
	if s.blank(j) || s.blank(j-1) {
		return true
	}
	start, prevEnd := s.li.starts[j], s.li.ends[j-1]
	k := sort.Search(len(s.spans), func(k int) bool { return s.spans[k].end >= prevEnd })
	if k < len(s.spans) && s.spans[k].closed && s.spans[k].end == prevEnd {
		return true // line j-1 closes a fence
	}
	k = sort.Search(len(s.spans), func(k int) bool { return s.spans[k].start >= start })
	return k < len(s.spans) && s.spans[k].start == start // line j opens one
}

// blank reports whether line k holds only whitespace.
func (s *lineSplitter) blank(k int) bool {
	for _, c := range s.u[s.li.starts[k]:s.li.ends[k]] {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
