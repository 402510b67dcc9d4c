package sessionkey

import (
	"strings"
	"testing"
)

func TestDir(t *testing.T) {
	t.Parallel()
	long := "tg:group:" + strings.Repeat("x", 300)
	tests := []struct {
		key, want string
	}{
		{"tg:direct:42", "tg_direct_42"},
		{"tg:group:-1001234:thread:7", "tg_group_-1001234_thread_7"},
		{"direct:alice", "direct_alice"},
		{"main", "main"},
		{"tg_direct_42", "tg%5Fdirect%5F42"},
		{"wa:direct:15550001@s.whatsapp.net", "wa_direct_15550001%40s.whatsapp.net"},
		{"web:direct:a/b", "web_direct_a%2Fb"},
		{"x:direct:../../etc", "x_direct_..%2F..%2Fetc"},
		{"..", "%2E."},
		{".", "%2E"},
		{".hidden", "%2Ehidden"},
		{"100%", "100%25"},
		{"dc:direct:héllo", "dc_direct_h%C3%A9llo"},
		{"a b\x00c\n", "a%20b%00c%0A"},
		{"", "%"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			got := Dir(tc.key)
			if got != tc.want {
				t.Errorf("Dir(%q) = %q, want %q", tc.key, got, tc.want)
			}
			if tc.key != "" {
				if back, ok := undir(got); !ok || back != tc.key {
					t.Errorf("undir(%q) = %q, %v; want %q", got, back, ok, tc.key)
				}
			}
		})
	}
	t.Run("long", func(t *testing.T) {
		t.Parallel()
		a, b := Dir(long), Dir(long+"y")
		if len(a) > maxDirLen || len(b) > maxDirLen || a == b {
			t.Errorf("long keys: %q (%d), %q (%d)", a, len(a), b, len(b))
		}
		if !strings.HasPrefix(a, "tg_group_xxx") || !strings.Contains(a, "~") {
			t.Errorf("long key: %q", a)
		}
		// An escape is never cut in two.
		esc := Dir(strings.Repeat("x", 158) + strings.Repeat("/", 100))
		if i := strings.IndexByte(esc, '~'); i < 0 || strings.Contains(esc[i-2:i], "%") {
			t.Errorf("cut escape: %q", esc)
		}
	})
}

// undir decodes a short Dir name; the tests use it to show Dir loses
// nothing.
func undir(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '_':
			b.WriteByte(':')
		case '~':
			return "", false
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			var v byte
			for _, h := range []byte(s[i+1 : i+3]) {
				v <<= 4
				switch {
				case '0' <= h && h <= '9':
					v |= h - '0'
				case 'A' <= h && h <= 'F':
					v |= h - 'A' + 10
				default:
					return "", false
				}
			}
			b.WriteByte(v)
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func FuzzDir(f *testing.F) {
	for _, s := range []string{"tg:direct:42", "..", "a_b", "a:b", "%41", "", strings.Repeat("é", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		d := Dir(key)
		if d == "" || d == "." || d == ".." || len(d) > maxDirLen {
			t.Fatalf("Dir(%q) = %q", key, d)
		}
		for i := 0; i < len(d); i++ {
			c := d[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._-%~", c) >= 0) {
				t.Fatalf("Dir(%q) = %q: byte %q", key, d, c)
			}
		}
		if key == "" || strings.Contains(d, "~") {
			return
		}
		if back, ok := undir(d); !ok || back != key {
			t.Fatalf("Dir(%q) = %q decodes to %q", key, d, back)
		}
	})
}
