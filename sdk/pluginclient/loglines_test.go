package pluginclient

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestPluginLinesSayEachFieldOnce: a plugin's line as go-plugin re-logs it
// (its fields, @module and a trailing timestamp) keeps the plugin's fields
// and loses the two duplicates, also through Named and With; a field a
// plugin names "timestamp" itself, not last, is kept.
func TestPluginLinesSayEachFieldOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	base := hclog.New(&hclog.LoggerOptions{Name: "clawhost.lo", Output: &buf, Level: hclog.Debug})
	l := pluginLines{base}.Named("clawhost-loopback").With("k", "v")
	l.Info("loopback listening", "@module", "loopback", "addr", "127.0.0.1:1", "timestamp", "2026-11-25T07:37:17.098+0100")
	l.Warn("own", "timestamp", "mine", "x", 1)
	l.Log(hclog.Error, "odd", "@module", "loopback", "dangling")
	got := buf.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), got)
	}
	if !strings.Contains(lines[0], "clawhost.lo.clawhost-loopback: loopback listening: k=v addr=127.0.0.1:1") ||
		strings.Contains(lines[0], "@module") || strings.Contains(lines[0], "timestamp=") {
		t.Errorf("plugin line: %s", lines[0])
	}
	if !strings.Contains(lines[1], "timestamp=mine x=1") {
		t.Errorf("a plugin's own timestamp field was dropped: %s", lines[1])
	}
	if strings.Contains(lines[2], "@module") || !strings.Contains(lines[2], "dangling") {
		t.Errorf("odd args: %s", lines[2])
	}
}
