package channel

import "unicode/utf8"

// TextLen is the length of s in unit, the way MaxTextLength is counted:
// LengthUTF16 (also for "" and an unknown unit) counts UTF-16 code units,
// as JavaScript's String.length, Telegram and Discord do; LengthRunes
// code points; LengthBytes UTF-8 bytes. Invalid UTF-8 bytes count as
// U+FFFD, as a range loop over s decodes them.
func TextLen(s string, unit LengthUnit) int {
	switch unit {
	case LengthBytes:
		return len(s)
	case LengthRunes:
		return utf8.RuneCountInString(s)
	}
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
