package chunk

import "strings"

// NewlineOptions tunes [ByNewline]. The zero value is OpenClaw's default.
type NewlineOptions struct {
	// KeepLongLines keeps a line longer than the limit whole instead of
	// splitting it (OpenClaw's splitLongLines: false).
	KeepLongLines bool
	// KeepLineWhitespace keeps each line's leading and trailing whitespace
	// (OpenClaw's trimLines: false). Blank-line detection still trims.
	KeepLineWhitespace bool
}

// ByNewline emits one chunk per non-blank line (OpenClaw's chunkByNewline).
// Lines are trimmed unless opts.KeepLineWhitespace; blank lines are folded
// into the next line as leading "\n"s (at most limit-1 of them), and blank
// lines at the very end are appended to the last chunk. A line longer than
// limit is cut at limit and the rest chunked with [Text].
func ByNewline(text string, limit int, opts NewlineOptions) []string {
	if text == "" {
		return []string{}
	}
	if limit <= 0 {
		if strings.TrimSpace(text) == "" || isAllSpace(encode(text)) {
			return []string{}
		}
		return []string{text}
	}
	u := encode(text)
	out := []string{}
	pendingBlank := 0
	for lineStart := 0; lineStart <= len(u); {
		lineEnd := lineStart
		for lineEnd < len(u) && u[lineEnd] != '\n' {
			lineEnd++
		}
		ts := u.trimSpaceStart(lineStart, lineEnd)
		te := u.trimSpaceEnd(ts, lineEnd)
		if ts == te {
			pendingBlank++
		} else {
			blank := 0
			if pendingBlank > 0 {
				blank = min(pendingBlank, max(0, limit-1))
			}
			pendingBlank = 0
			line := u[ts:te]
			if opts.KeepLineWhitespace {
				line = u[lineStart:lineEnd]
			}
			prefix := strings.Repeat("\n", blank)
			if opts.KeepLongLines || len(line)+blank <= limit {
				out = append(out, prefix+line.String())
			} else {
				firstLimit := max(1, limit-blank)
				cut := line.graphemeEnd(0, firstLimit)
				out = append(out, prefix+line[:cut].String())
				if cut < len(line) {
					out = chunkPlainAny(line[cut:], limit, out)
				}
			}
		}
		if lineEnd >= len(u) {
			break
		}
		lineStart = lineEnd + 1
	}
	if pendingBlank > 0 && len(out) > 0 {
		out[len(out)-1] += strings.Repeat("\n", pendingBlank)
	}
	return out
}

// chunkPlainAny is chunkText applied to an already encoded remainder: it
// returns the text whole when it fits.
func chunkPlainAny(u units, limit int, out []string) []string {
	if len(u) <= limit {
		return append(out, u.String())
	}
	return chunkPlain(u, limit, out)
}

func isAllSpace(u units) bool {
	for _, c := range u {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
