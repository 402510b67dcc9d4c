package voice

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSpeakable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"plain", "Hello there.", 0, "Hello there."},
		{"markdown marks", "# Title\n**bold** and _it_ and `ls -l`\n- one\n2. two\n> quoted", 0, "Title\nbold and it and ls -l\none\ntwo\nquoted"},
		{"code block said once", "Run this:\n```go\nfmt.Println(1)\n```\nThen that.", 0, "Run this:\n" + codeSpoken + "\nThen that."},
		{"code only", "```\nrm -rf /tmp/x\n```", 0, ""},
		{"links and urls", "See [the docs](https://x.y/z) or https://a.b/c?d=e.", 0, "See the docs or (a link)"},
		{"media lines", "Here it is.\nMEDIA:/ws/media/a.png", 0, "Here it is."},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |", 0, "a b\n1 2"},
		{"empty", "", 0, ""},
		{"cut at a sentence", "One two three. Four five six. Seven eight nine ten.", 32, "One two three. Four five six.\n" + restSpoken},
		{"cut at a space", "aaaa bbbb cccc dddd eeee", 12, "aaaa bbbb…\n" + restSpoken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := speakable(tt.in, tt.max); got != tt.want {
				t.Errorf("speakable(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// FuzzSpeakable: never longer than the limit plus the closing sentence,
// never a fence, always valid UTF-8.
func FuzzSpeakable(f *testing.F) {
	f.Add("Hello **there**.\n```\ncode\n```\nbye", 10)
	f.Add("é😀 [x](y) `z`", 3)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		got := speakable(s, max)
		if !utf8.ValidString(got) && utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		if strings.Contains(got, "```") {
			t.Fatalf("a fence is read aloud: %q", got)
		}
		if max > 0 && utf8.RuneCountInString(got) > max+1+utf8.RuneCountInString(restSpoken)+1 {
			t.Fatalf("%d runes over a limit of %d: %q", utf8.RuneCountInString(got), max, got)
		}
	})
}
