package channel

import (
	"testing"
	"unicode/utf16"
)

func TestTextLen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s                  string
		utf16, runes, byts int
	}{
		{"", 0, 0, 0},
		{"hello", 5, 5, 5},
		{"héllo", 5, 5, 6},
		{"😀 ok", 5, 4, 7},
		{"\xff\xfe", 2, 2, 2}, // invalid bytes: U+FFFD each
		{"👩‍💻", 5, 3, 11},
	} {
		if got := TextLen(tc.s, LengthUTF16); got != tc.utf16 {
			t.Errorf("%q utf16 %d, want %d", tc.s, got, tc.utf16)
		}
		if got := TextLen(tc.s, ""); got != tc.utf16 {
			t.Errorf("%q default unit %d, want utf16's %d", tc.s, got, tc.utf16)
		}
		if got := TextLen(tc.s, LengthRunes); got != tc.runes {
			t.Errorf("%q runes %d, want %d", tc.s, got, tc.runes)
		}
		if got := TextLen(tc.s, LengthBytes); got != tc.byts {
			t.Errorf("%q bytes %d, want %d", tc.s, got, tc.byts)
		}
	}
}

func FuzzTextLen(f *testing.F) {
	f.Add("a😀é\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want := len(utf16.Encode([]rune(s)))
		if got := TextLen(s, LengthUTF16); got != want {
			t.Fatalf("%q: %d, want %d", s, got, want)
		}
	})
}
