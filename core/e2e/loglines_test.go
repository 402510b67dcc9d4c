package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLogLines: through the real binary under TZ=Europe/Berlin, every log
// line starts with an RFC 3339 time (+01:00, not hclog's +0100); a
// plugin's line says each field once (no @module, no go-plugin
// timestamp=); the runner's logger is named once; a finished turn is one
// INFO "turn done" line with its session, sender, duration, tokens and
// cost.
func TestLogLines(t *testing.T) {
	t.Setenv("TZ", "Europe/Berlin") // the host inherits it; not parallel
	d := startDaemon(t, false)
	d.post("u1", "hello")
	if got := d.nextSend("chat-u1"); got == "" {
		t.Fatal("no answer")
	}
	d.waitFor(func() bool { return strings.Contains(d.Log(), "turn done") }, "the turn's log line")
	log := d.Log()
	lines := strings.Split(strings.TrimSpace(log), "\n")
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	_, want := time.Now().In(berlin).Zone()
	stamped := 0
	for _, l := range lines {
		first, _, _ := strings.Cut(l, " ")
		if !strings.HasPrefix(first, "20") {
			continue // a continuation line (a multi-line value)
		}
		stamped++
		ts, err := time.Parse(time.RFC3339, first)
		if err != nil {
			t.Errorf("not an RFC 3339 time: %q in %s", first, l)
			continue
		}
		if _, off := ts.Zone(); off != want {
			t.Errorf("offset %d s, want Berlin's %d s: %s", off, want, l)
		}
	}
	if stamped < 5 {
		t.Errorf("only %d log lines with a time", stamped)
	}
	plugin := regexp.MustCompile(`(?m)^.*clawhost\.lo\.clawhost-loopback: loopback listening:.*$`).FindString(log)
	if plugin == "" || !strings.Contains(plugin, "addr=127.0.0.1:") || strings.Contains(plugin, "@module") || strings.Contains(plugin, "timestamp=") {
		t.Errorf("the plugin's line: %q", plugin)
	}
	if strings.Contains(log, "@module=") || strings.Contains(log, " timestamp=") {
		t.Errorf("a duplicated field in the log:\n%s", log)
	}
	if strings.Contains(log, "runner.runner") || !strings.Contains(log, "clawhost.runner:") {
		t.Errorf("the runner's logger name:\n%s", log)
	}
	turn := regexp.MustCompile(`(?m)^.*\[INFO\] .*: turn done:.*$`).FindString(log)
	for _, f := range []string{"session=", "sender=lo:u1", "outcome=ok", "duration=", "input_tokens=", "output_tokens=", "cost_usd="} {
		if !strings.Contains(turn, f) {
			t.Errorf("turn line without %s: %q", f, turn)
		}
	}
}
