package chunk

// ByParagraph splits text on blank lines (a newline, optional spaces or tabs,
// then one or more newlines) that are not inside fenced code, packing whole
// paragraphs greedily up to limit and keeping the original separator between
// packed paragraphs (OpenClaw's chunkByParagraph). CRLF and lone CR become
// LF first; U+2029 becomes a blank line and U+2028 a newline. A paragraph
// longer than limit is split with [Text] when splitLong is true and kept
// whole otherwise. Text with no blank line is returned whole if it fits.
func ByParagraph(text string, limit int, splitLong bool) []string {
	if text == "" {
		return []string{}
	}
	if limit <= 0 {
		return []string{text}
	}
	u := normalizeNewlines(encode(text))
	seps := paragraphSeparators(u)
	if len(seps) == 0 {
		if len(u) <= limit || !splitLong {
			return []string{u.String()}
		}
		return chunkPlain(u, limit, nil)
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
			if splitLong {
				out = chunkPlain(u[pStart:pEnd], limit, out)
			} else {
				out = append(out, u[pStart:pEnd].String())
			}
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
