package chunk

import (
	"github.com/clawhost/clawhost/sdk/channel"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// units is text held as UTF-16 code units, the unit every chunk limit is
// measured in. The input string is encoded once per call; every index in this
// package is a code-unit index into that slice.
type units []uint16

// encode converts s to UTF-16 in one pass with one allocation. Invalid UTF-8
// bytes become U+FFFD, exactly as a range loop over s would decode them.
func encode(s string) units {
	// A UTF-16 form never has more code units than the UTF-8 form has bytes.
	u := make(units, len(s))
	k := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			u[k] = uint16(c)
			k++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r < 0x10000 {
			u[k] = uint16(r)
			k++
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		u[k], u[k+1] = uint16(hi), uint16(lo)
		k += 2
	}
	return u[:k:k]
}

// Len reports the length of s in UTF-16 code units, the unit JavaScript's
// String.length uses and therefore the unit every limit in this package is
// expressed in (the sdk's one counter, channel.TextLen).
func Len(s string) int { return channel.TextLen(s, channel.LengthUTF16) }

// appendUnits appends the UTF-8 form of u to dst. A lone surrogate (which the
// chunker never produces from valid input) becomes U+FFFD.
func appendUnits(dst []byte, u units) []byte {
	dst = slices.Grow(dst, len(u))
	for i := 0; i < len(u); i++ {
		c := u[i]
		if c < 0x80 {
			dst = append(dst, byte(c))
			continue
		}
		if isHighSurrogate(c) && i+1 < len(u) && isLowSurrogate(u[i+1]) {
			dst = utf8.AppendRune(dst, utf16.DecodeRune(rune(c), rune(u[i+1])))
			i++
			continue
		}
		dst = utf8.AppendRune(dst, rune(c))
	}
	return dst
}

func (u units) String() string { return string(appendUnits(make([]byte, 0, len(u)), u)) }

func isHighSurrogate(c uint16) bool { return c >= 0xD800 && c <= 0xDBFF }
func isLowSurrogate(c uint16) bool  { return c >= 0xDC00 && c <= 0xDFFF }

// isSpace reports whether the code unit matches JavaScript's /\s/ (which is
// also the set String.prototype.trim removes). Every member is in the BMP.
func isSpace(c uint16) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return c >= 0x2000 && c <= 0x200A
}

// asciiBoundary reports whether a grapheme boundary certainly lies before
// index i: both neighbours are ASCII and they are not CR LF. ASCII characters
// are never Extend, ZWJ, SpacingMark, Prepend or Regional_Indicator, so no
// Unicode segmentation rule can join them.
func (u units) asciiBoundary(i int) bool {
	a, b := u[i-1], u[i]
	return a < 0x80 && b < 0x80 && (a != '\r' || b != '\n')
}

// clusterStart returns the start of the extended grapheme cluster containing
// index p, segmenting from lo, which must itself be a cluster boundary.
// Positions at or beyond the end of u are returned unchanged.
func (u units) clusterStart(lo, p int) int {
	if p <= lo || p >= len(u) {
		return p
	}
	if u.asciiBoundary(p) {
		return p
	}
	// Boundaries depend only on text before the position, so segmenting a
	// window that starts at a known boundary and ends just after the code
	// point at p is exact.
	q := p - 1
	for q > lo && !u.asciiBoundary(q) {
		q--
	}
	end := p + 1
	if isHighSurrogate(u[p]) && end < len(u) && isLowSurrogate(u[end]) {
		end++
	}
	s := u[q:end].String()
	state := -1
	pos := q
	for len(s) > 0 {
		var cluster string
		cluster, s, _, state = uniseg.FirstGraphemeClusterInString(s, state)
		w := Len(cluster)
		if pos+w > p {
			return pos
		}
		pos += w
	}
	return p
}

// isBoundary reports whether index i is a grapheme cluster boundary when
// segmenting from lo.
func (u units) isBoundary(lo, i int) bool { return u.clusterStart(lo, i) == i }

// graphemeEnd mirrors OpenClaw's findGraphemeChunkEnd with preferredEnd equal
// to maxEnd: the largest whole-cluster cut at or before maxEnd, or, when not
// even one cluster fits, a code-point-safe partial cut so progress is made.
func (u units) graphemeEnd(start, maxEnd int) int {
	hardEnd := min(maxEnd, len(u))
	if hardEnd <= start {
		return start
	}
	if hardEnd == len(u) {
		return hardEnd
	}
	if end := u.clusterStart(start, hardEnd); end > start {
		return end
	}
	// avoidTrailingHighSurrogateBreak
	if isHighSurrogate(u[hardEnd-1]) && isLowSurrogate(u[hardEnd]) {
		if hardEnd-1 > start {
			return hardEnd - 1
		}
		return hardEnd + 1
	}
	return hardEnd
}

// skipSpaceClusters returns the index after up to maxClusters whole whitespace-only
// grapheme clusters starting at i (maxClusters < 0 means no bound). A space that a
// combining mark attaches to is not skipped.
func (u units) skipSpaceClusters(lo, i, maxClusters int) int {
	for count := 0; (maxClusters < 0 || count < maxClusters) && i < len(u) && isSpace(u[i]); count++ {
		j := i + 1
		for j < len(u) && !u.isBoundary(lo, j) {
			j++
		}
		for k := i; k < j; k++ {
			if !isSpace(u[k]) {
				return i
			}
		}
		i = j
	}
	return i
}

// trimSpaceEnd is String.prototype.trimEnd on code units.
func (u units) trimSpaceEnd(lo, end int) int {
	for end > lo && isSpace(u[end-1]) {
		end--
	}
	return end
}

// trimSpaceStart is String.prototype.trimStart on code units.
func (u units) trimSpaceStart(start, hi int) int {
	for start < hi && isSpace(u[start]) {
		start++
	}
	return start
}
