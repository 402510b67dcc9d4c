package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestLeftoverTMPDIRsRemoved: a host killed with -9 leaves its claudes' TMPDIRs (the files
// they wrote, their system prompt files) under data/runner/t; the next start removes them
// once it holds the data directory, and says so.
func TestLeftoverTMPDIRsRemoved(t *testing.T) {
	t.Parallel()
	var left []string
	h := startClaudeHost(t, clOptions{setup: func(dir string) {
		old := time.Now().Add(-time.Hour)
		for _, name := range []string{"1-1", "1-2", "4242-17"} {
			d := filepath.Join(dir, "data", "runner", "t", name)
			writeFile(t, filepath.Join(d, "system-prompt.md"), "an earlier run's chat")
			if err := os.Chtimes(d, old, old); err != nil {
				t.Fatal(err)
			}
			left = append(left, d)
		}
	}})
	sdktest.WaitFor(t, "the leftover TMPDIRs removed", func() error {
		for _, d := range left {
			if _, err := os.Stat(d); err == nil {
				return sdktest.Saw(false, "%s is still there", d)
			}
		}
		return sdktest.Saw(strings.Contains(h.log.String(), "removed the TMPDIRs of claude processes an earlier run left"), "no log line yet")
	})
}
