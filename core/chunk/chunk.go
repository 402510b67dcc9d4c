// Package chunk splits outbound reply text into pieces that fit a chat
// platform's message size limit.
//
// It reproduces the behaviour of OpenClaw's chunkText, chunkMarkdownText,
// chunkByParagraph and chunkByNewline (openclaw@2026.9.6), checked case by
// case against the vectors produced by running OpenClaw itself:
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
// [Text] (plain) trims trailing whitespace from each emitted chunk and skips
// all whitespace at the start of the next one, so for plain chunking the
// concatenation of the chunks equals the input with whitespace runs at the
// cut points removed; no non-whitespace character is ever lost, duplicated or
// reordered. Whitespace-only input longer than the limit yields no chunks.
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
//   - [ByNewline] cuts over-long lines on grapheme boundaries; OpenClaw
//     slices raw code units there.
//
// All functions are pure and safe for concurrent use. Each call encodes its
// input to UTF-16 once and works on indices, so chunking is linear in the
// input size.
package chunk

import (
	"sort"
)

// DefaultLimit is the chunk limit used when nothing is configured (OpenClaw's
// DEFAULT_CHUNK_LIMIT).
const DefaultLimit = 4000

// Text splits plain text into chunks of at most limit UTF-16 code units
// (OpenClaw's chunkText). Inside each window it prefers the last newline,
// then the last whitespace, counting only positions outside parentheses, and
// otherwise hard-breaks at the limit. Emitted chunks have trailing whitespace
// trimmed; leading whitespace of the remainder is skipped.
func Text(text string, limit int) []string {
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
	return chunkPlain(u, limit, nil)
}

// chunkPlain is chunkTextByBreakResolver with the paren-aware resolver. It
// appends to out and returns it.
func chunkPlain(u units, limit int, out []string) []string {
	if out == nil {
		out = []string{}
	}
	if len(u) == 0 {
		return out
	}
	if limit <= 0 || len(u) <= limit {
		return append(out, u.String())
	}
	buf := make([]byte, 0, 4*limit)
	pos := 0
	for len(u)-pos > limit {
		windowEnd := pos + limit
		nl, ws := scanBreaks(u, pos, windowEnd, nil)
		cand := ws
		if nl > pos {
			cand = nl
		}
		breakIdx := windowEnd
		if rel := cand - pos; cand >= 0 && rel > 0 && (rel == limit || rel >= u.firstClusterLen(pos)) {
			breakIdx = cand
		}
		safe := u.graphemeEnd(pos, breakIdx)
		if end := u.trimSpaceClustersEnd(pos, safe); end > pos {
			buf = appendUnits(buf[:0], u[pos:end])
			out = append(out, string(buf))
		}
		pos = u.skipSpaceClusters(pos, safe, -1)
	}
	if end := u.trimSpaceClustersEnd(pos, len(u)); end > pos {
		out = append(out, u[pos:end].String())
	}
	return out
}

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
