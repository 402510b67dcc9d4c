package chunk

import "sort"

// unit is what a fence scanner's text is held as: UTF-16 code units (the
// chunkers, whose limits are JavaScript lengths) or runes (the Coalescer,
// whose limits count characters). Indices are in that unit.
type unit interface{ ~uint16 | ~int32 }

// fence is one fenced code block of a text held as units E: [start, end),
// where start is the first column of the opening line (its indent) and end is
// the end of the closing line (before its newline), or the end of the text
// when the fence is never closed.
type fence[E unit] struct {
	start, end int
	openLine   []E // indent + marker + info string, without any CR
	marker     []E // the run of ``` or ~~~ characters
	indent     []E // 0-3 spaces
	// closed: the fence has a closing line (end is that line's end);
	// otherwise it runs to the end of the text.
	closed bool
}

// fenceSpan is a fence of the UTF-16 chunkers.
type fenceSpan = fence[uint16]

// closeLine is the line that closes the fence: indent + marker.
func (f *fence[E]) closeLine() []E {
	n := len(f.indent) + len(f.marker)
	return f.openLine[:n:n]
}

// canBalance reports whether a fence can be closed and reopened within limit:
// a chunk must hold the reopen line, at least one unit of content and the
// close line, each on its own line.
func (f *fence[E]) canBalance(limit int) bool {
	return 2*(len(f.indent)+len(f.marker))+3 <= limit
}

// reopenLine is the line that reopens f in the next chunk: the original open
// line when it fits comfortably, otherwise the bare indent+marker.
func (f *fence[E]) reopenLine(limit int) []E {
	closeLen := len(f.indent) + len(f.marker)
	if len(f.openLine)+closeLen+3 <= limit {
		return f.openLine
	}
	return f.closeLine()
}

// parseFences finds the fenced code blocks of u (see scanFences).
func parseFences[E unit](u []E) []fence[E] { return scanFences(u, nil) }

// scanFences finds fenced code blocks the way OpenClaw's scanFenceSpans
// does: a fence line has at most three spaces of indent and a run of at least
// three backticks or tildes; a backtick opener may not carry a backtick in its
// info string; a closer uses the same character, is at least as long, and
// carries only spaces or tabs after the marker. Lines end at LF; a CR before
// the LF belongs to the line but not to the open line text. A line containing
// U+2028 or U+2029 after the marker is never a fence line.
//
// carried (nil if none) is a fence opened before u, so u starts inside it:
// the first span is that fence with start -1.
func scanFences[E unit](u []E, carried *fence[E]) []fence[E] {
	var spans []fence[E]
	var open fence[E]
	isOpen := carried != nil
	if isOpen {
		open = fence[E]{start: -1, openLine: carried.openLine, marker: carried.marker, indent: carried.indent}
	}
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
				open, isOpen = f, true
			case char == open.marker[0] && n >= len(open.marker) && onlySpaceTab(f.openLine[len(f.indent)+n:]):
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
func fenceLine[E unit](u []E, start, end int) (fence[E], bool) {
	i := start
	for i < end && i-start < 4 && u[i] == ' ' {
		i++
	}
	if i-start > 3 || i >= end || (u[i] != '`' && u[i] != '~') {
		return fence[E]{}, false
	}
	indentEnd := i
	c := u[i]
	for i < end && u[i] == c {
		i++
	}
	if i-indentEnd < 3 {
		return fence[E]{}, false
	}
	markerEnd := i
	textEnd := end
	if textEnd > markerEnd && u[textEnd-1] == '\r' {
		textEnd--
	}
	for k := markerEnd; k < textEnd; k++ {
		switch u[k] {
		case '\r', 0x2028, 0x2029:
			return fence[E]{}, false
		}
	}
	return fence[E]{
		openLine: u[start:textEnd],
		marker:   u[indentEnd:markerEnd],
		indent:   u[start:indentEnd],
	}, true
}

func containsUnit[E unit](u []E, c E) bool {
	for _, x := range u {
		if x == c {
			return true
		}
	}
	return false
}

func onlySpaceTab[E unit](u []E) bool {
	for _, x := range u {
		if x != ' ' && x != '\t' {
			return false
		}
	}
	return true
}

// fenceAt returns the span strictly containing index i (start < i < end), or
// nil. A break exactly at a fence's start or end is outside it.
func fenceAt[E unit](spans []fence[E], i int) *fence[E] {
	k := sort.Search(len(spans), func(k int) bool { return spans[k].end > i })
	if k < len(spans) && spans[k].start < i {
		return &spans[k]
	}
	return nil
}

// firstNonSpace returns the first unit of u[start:end] after at most three
// spaces, or 0.
func firstNonSpace[E unit](u []E, start, end int) E {
	for i := start; i < end && i-start <= 3; i++ {
		if u[i] != ' ' {
			return u[i]
		}
	}
	return 0
}
