package envfilter

import (
	"slices"
	"testing"
)

func TestKeep(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "TELEGRAM_BOT_TOKEN=secret", "LC_ALL=C", "LCX=no", "HOME=/root", "broken"}
	got := Keep(env, "PATH", "HOME", "LC_*")
	if want := []string{"PATH=/bin", "LC_ALL=C", "HOME=/root"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
