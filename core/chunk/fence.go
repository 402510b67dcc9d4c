package chunk

import "sort"

// fenceSpan is one fenced code block: [start, end) in code units, where start
// is the first column of the opening line (its indent) and end is the end of
// the closing line (before its newline), or the end of the text when the fence
// is never closed.
type fenceSpan struct {
	start, end int
	openLine   units // indent + marker + info string, without any CR
	marker     units // the run of ``` or ~~~ characters
	indent     units // 0-3 spaces
	// closed: the fence has a closing line (end is that line's end);
	// otherwise it runs to the end of the text.
	closed bool
}

// closeLine is the line that closes the fence: indent + marker.
func (f *fenceSpan) closeLine() units {
	out := make(units, 0, len(f.indent)+len(f.marker))
	return append(append(out, f.indent...), f.marker...)
}

// parseFences finds fenced code blocks the way OpenClaw's scanFenceSpans
// does: a fence line has at most three spaces of indent and a run of at least
// three backticks or tildes; a backtick opener may not carry a backtick in its
// info string; a closer uses the same character, is at least as long, and
// carries only spaces or tabs after the marker. Lines end at LF; a CR before
// the LF belongs to the line but not to the open line text. A line containing
// U+2028 or U+2029 after the marker is never a fence line.
func parseFences(u units) []fenceSpan {
	var spans []fenceSpan
	var open fenceSpan
	var isOpen bool
	var openChar uint16
	var openLen int
	for lineStart := 0; lineStart <= len(u); {
		lineEnd := lineStart
		for lineEnd < len(u) && u[lineEnd] != '\n' {
			lineEnd++
		}
		if c := firstNonSpace(u, lineStart, lineEnd); c != '`' && c != '~' {
			// Cheap rejection: most lines cannot be fence lines.
		} else if f, ok := fenceLine(u, lineStart, lineEnd); ok {
			char, n := f.marker[0], len(f.marker)
			switch {
			case !isOpen:
				if char == '`' && containsUnit(f.openLine[len(f.indent)+n:], '`') {
					break
				}
				f.start = lineStart
				open, isOpen, openChar, openLen = f, true, char, n
			case char == openChar && n >= openLen && onlySpaceTab(f.openLine[len(f.indent)+n:]):
				open.end, open.closed = lineEnd, true
				spans = append(spans, open)
				isOpen = false
			}
		}
		if lineEnd >= len(u) {
			break
		}
		lineStart = lineEnd + 1
	}
	if isOpen {
		open.end = len(u)
		spans = append(spans, open)
	}
	return spans
}

// fenceLine parses u[start:end] as a candidate fence line.
func fenceLine(u units, start, end int) (fenceSpan, bool) {
	i := start
	for i < end && i-start < 4 && u[i] == ' ' {
		i++
	}
	if i-start > 3 || i >= end || (u[i] != '`' && u[i] != '~') {
		return fenceSpan{}, false
	}
	indentEnd := i
	c := u[i]
	for i < end && u[i] == c {
		i++
	}
	if i-indentEnd < 3 {
		return fenceSpan{}, false
	}
	markerEnd := i
	textEnd := end
	if textEnd > markerEnd && u[textEnd-1] == '\r' {
		textEnd--
	}
	for k := markerEnd; k < textEnd; k++ {
		switch u[k] {
		case '\r', 0x2028, 0x2029:
			return fenceSpan{}, false
		}
	}
	return fenceSpan{
		openLine: u[start:textEnd],
		marker:   u[indentEnd:markerEnd],
		indent:   u[start:indentEnd],
	}, true
}

func containsUnit(u units, c uint16) bool {
	for _, x := range u {
		if x == c {
			return true
		}
	}
	return false
}

func onlySpaceTab(u units) bool {
	for _, x := range u {
		if x != ' ' && x != '\t' {
			return false
		}
	}
	return true
}

// fenceAt returns the span strictly containing index i (start < i < end), or
// nil. A break exactly at a fence's start or end is outside it.
func fenceAt(spans []fenceSpan, i int) *fenceSpan {
	k := sort.Search(len(spans), func(k int) bool { return spans[k].end > i })
	if k < len(spans) && spans[k].start < i {
		return &spans[k]
	}
	return nil
}

// firstNonSpace returns the first unit of u[start:end] after at most three
// spaces, or 0.
func firstNonSpace(u units, start, end int) uint16 {
	for i := start; i < end && i-start <= 3; i++ {
		if u[i] != ' ' {
			return u[i]
		}
	}
	return 0
}
