package chunk

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
			reopen = reopenLine(split, limit)
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

// canBalance reports whether a fence can be closed and reopened within limit:
// a chunk must hold the reopen line, at least one unit of content and the
// close line, each on its own line.
func canBalance(f *fenceSpan, limit int) bool {
	return 2*(len(f.indent)+len(f.marker))+3 <= limit
}

// reopenLine is the line that reopens f in the next chunk: the original open
// line when it fits comfortably, otherwise the bare indent+marker.
func reopenLine(f *fenceSpan, limit int) units {
	closeLen := len(f.indent) + len(f.marker)
	if len(f.openLine)+closeLen+3 <= limit {
		return f.openLine
	}
	return f.closeLine()
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
	if !canBalance(f, limit) {
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
