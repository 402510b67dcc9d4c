package conformance

import (
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk/channel"
)

// TestAtLimit: the multi-byte texts of the text_limit check have exactly n
// units in their unit and another count in the other units, so a channel
// counting in the wrong unit fails the check.
func TestAtLimit(t *testing.T) {
	t.Parallel()
	units := map[channel.LengthUnit]func(string) int{
		channel.LengthUTF16: func(s string) int { return len(utf16.Encode([]rune(s))) },
		channel.LengthRunes: utf8.RuneCountInString,
		channel.LengthBytes: func(s string) int { return len(s) },
	}
	for unit, count := range units {
		for _, n := range []int{1, 2, 7, 4096} {
			s := atLimit(unit, n)
			if got := count(s); got != n {
				t.Errorf("atLimit(%s, %d) has %d %s", unit, n, got, unit)
			}
			for other, oc := range units {
				if other != unit && n > 1 && oc(s) == n {
					t.Errorf("atLimit(%s, %d) also has %d %s: the check cannot tell the units apart", unit, n, n, other)
				}
			}
		}
	}
}
