package reply

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestContainsFoldIsTheTokenPatternsFold checks the prefilter against what
// the token patterns match, (?i) and the quoted token, on texts built from
// case-folding variants (the Kelvin sign folds with k, ſ with s) and
// invalid UTF-8: a prefilter that says no where a pattern says yes would
// deliver a silent reply.
func TestContainsFoldIsTheTokenPatternsFold(t *testing.T) {
	alphabet := []string{"n", "N", "o", "O", "_", "r", "R", "e", "E", "p", "P", "l", "L", "y", "Y", "k", "K", "\u212a", "s", "S", "\u017f", " ", "\n", "*", "é", "\xff", "NO_REPLY", "no_reply", "No_RePlY"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, token := range []string{SilentToken, HeartbeatToken, "OK", "Skip", "é_x"} {
		re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(token))
		for range 20000 {
			s := ""
			for range rng.IntN(12) {
				s += alphabet[rng.IntN(len(alphabet))]
			}
			if got, want := containsFold(s, token), re.MatchString(s); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, the pattern says %v", s, token, got, want)
			}
		}
	}
	if !containsFold("\u212a", "k") || !containsFold("\u017fkip", "SKIP") || containsFold("NO_REPL", SilentToken) {
		t.Fatal("containsFold misses a fold or finds a missing token")
	}
}
