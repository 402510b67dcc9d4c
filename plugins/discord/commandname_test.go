package discord

import (
	"regexp"
	"strings"
	"testing"
)

// TestCommandNameIsDiscordsRule: the hand-written check accepts exactly
// what Discord's expression for a slash command name does.
func TestCommandNameIsDiscordsRule(t *testing.T) {
	t.Parallel()
	rule := regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)
	names := []string{"", "a", "model", "new-chat", "re_set", "x1", "Model", "with space", "/model",
		"é", "ß", "ǅ", "ª", "²", "٣", "Ⅻ", "日本", "ж", "Ж", "\xff", "a\x00",
		strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("é", 32), strings.Repeat("é", 33)}
	for r := rune(0); r < 0x3000; r += 7 {
		names = append(names, "a"+string(r))
	}
	for _, n := range names {
		if got, want := commandName(n), rule.MatchString(n); got != want {
			t.Errorf("commandName(%q) = %v, the expression says %v", n, got, want)
		}
	}
}

func FuzzCommandName(f *testing.F) {
	rule := regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)
	f.Add("model")
	f.Add("Ж-1")
	f.Fuzz(func(t *testing.T, n string) {
		if got, want := commandName(n), rule.MatchString(n); got != want {
			t.Errorf("commandName(%q) = %v, the expression says %v", n, got, want)
		}
	})
}
