package chunk

// Mode selects how [TextWithMode] and [MarkdownWithMode] split text.
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

// TextWithMode dispatches to [ByParagraph] (splitting long paragraphs) for
// [ModeNewline] and to [Text] otherwise (OpenClaw's chunkTextWithMode).
func TextWithMode(text string, limit int, mode Mode) []string {
	if mode == ModeNewline {
		return ByParagraph(text, limit, true)
	}
	return Text(text, limit)
}

// MarkdownWithMode is the markdown-aware variant of [TextWithMode]
// (OpenClaw's chunkMarkdownTextWithMode). In [ModeNewline] paragraphs are
// packed without splitting long ones; any packed chunk still over the limit
// is cut after closing fences and each piece is chunked with [Markdown].
func MarkdownWithMode(text string, limit int, mode Mode) []string {
	if mode != ModeNewline {
		return Markdown(text, limit)
	}
	out := []string{}
	for _, para := range ByParagraph(text, limit, false) {
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
