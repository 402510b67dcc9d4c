package runner

// fence is one fenced code block in a Coalescer's buffer, found with
// CommonMark's rules as core/chunk applies them: a fence line has at most
// three spaces of indent and a run of at least three backticks or tildes
// (a backtick opener carries no backtick in its info string); the closer
// uses the same character, is at least as long and carries only spaces or
// tabs after the run.
type fence struct {
	// start is the index of the open line; -1 when the fence was opened in
	// an earlier block (it is carried). end is the index just after the
	// close line, or -1 while the fence is not closed.
	start, end int
	// open is the open line (indent, marker and info string).
	open []rune
	// indent and marker are the lengths of the indent and of the run.
	indent, marker int
}

// closeLine is the line that closes f: its indent and marker.
func (f *fence) closeLine() []rune {
	return f.open[:f.indent+f.marker]
}

// reopenLine is the line that reopens f at the start of the next block:
// the open line, or the bare marker when the open line leaves too little
// room in a block of max runes.
func (f *fence) reopenLine(max int) []rune {
	if len(f.open)+f.indent+f.marker+3 <= max {
		return f.open
	}
	return f.closeLine()
}

// canBalance reports whether f can be closed and reopened within blocks of
// max runes: reopen line, one rune of content and close line, each on its
// own line.
func (f *fence) canBalance(max int) bool {
	return 2*(f.indent+f.marker)+3 <= max
}

// scanFences finds the fences of buf; carried (may be nil) is a fence
// opened before buf, so buf starts inside it.
func scanFences(buf []rune, carried *fence) []fence {
	var out []fence
	var cur *fence
	if carried != nil {
		out = append(out, fence{start: -1, end: -1, open: carried.open, indent: carried.indent, marker: carried.marker})
		cur = &out[0]
	}
	for start := 0; start < len(buf); {
		end := start
		for end < len(buf) && buf[end] != '\n' {
			end++
		}
		line := buf[start:end]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if indent, marker, ok := fenceLine(line); ok {
			ch, info := line[indent], line[indent+marker:]
			switch {
			case cur == nil:
				if ch == '`' && containsRune(info, '`') {
					break
				}
				out = append(out, fence{start: start, end: -1, open: line, indent: indent, marker: marker})
				cur = &out[len(out)-1]
			case ch == cur.open[cur.indent] && marker >= cur.marker && onlySpaceTab(info):
				cur.end = end
				cur = nil
			}
		}
		start = end + 1
	}
	return out
}

// fenceLine parses line as a fence line: indent length, marker length.
func fenceLine(line []rune) (indent, marker int, ok bool) {
	for indent < len(line) && indent < 4 && line[indent] == ' ' {
		indent++
	}
	if indent > 3 || indent >= len(line) || (line[indent] != '`' && line[indent] != '~') {
		return 0, 0, false
	}
	ch := line[indent]
	for indent+marker < len(line) && line[indent+marker] == ch {
		marker++
	}
	return indent, marker, marker >= 3
}

// fenceAt returns the fence strictly containing the cut at i (after its
// open line starts, before its close line ends), or nil.
func fenceAt(fences []fence, i int) *fence {
	for k := range fences {
		f := &fences[k]
		if f.start < i && (f.end < 0 || i < f.end) {
			return f
		}
	}
	return nil
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func onlySpaceTab(rs []rune) bool {
	for _, x := range rs {
		if x != ' ' && x != '\t' {
			return false
		}
	}
	return true
}
