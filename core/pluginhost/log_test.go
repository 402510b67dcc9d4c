package pluginhost

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// logEveryLevel is the Configure of the "logs" fault plugin: one line per
// level through the plugin's *slog.Logger, with fields.
func logEveryLevel(ctx context.Context, cfg schema.Config) error {
	log := cfg.Logger.With("chat", "c1")
	log.Log(ctx, slog.LevelDebug-4, "plugin trace line", "n", 1)
	log.Debug("plugin debug line", "n", 2)
	log.Info("plugin info line", "after", 1500*time.Millisecond)
	log.WithGroup("http").Warn("plugin warn line", "status", 503)
	log.Error("plugin error line", "error", "boom")
	return nil
}

// line is a plugin log line as the host should show it.
type line struct {
	level, msg string
	fields     []string
}

// find returns the host log line with the level and message of l, or "".
func (l line) find(log string) string {
	for _, s := range strings.Split(log, "\n") {
		if strings.Contains(s, "["+l.level+"]") && strings.Contains(s, ": "+l.msg+":") {
			return s
		}
	}
	return ""
}

// TestPluginLogLines: what a plugin logs through schema.Config.Logger (a
// *slog.Logger) reaches the host log at its level, under the instance's
// name, with its fields (a duration as "1.5s", a group as a dotted key);
// lines below the host's log level are not sent.
func TestPluginLogLines(t *testing.T) {
	all := []line{
		{"TRACE", "plugin trace line", []string{"chat=c1", "n=1"}},
		{"DEBUG", "plugin debug line", []string{"chat=c1", "n=2"}},
		{"INFO", "plugin info line", []string{"chat=c1", "after=1.5s"}},
		{"WARN", "plugin warn line", []string{"chat=c1", "http.status=503"}},
		{"ERROR", "plugin error line", []string{"chat=c1", "error=boom"}},
	}
	for _, tc := range []struct {
		level      string
		want, lack []line
	}{
		{level: "trace", want: all},
		{level: "warn", want: all[3:], lack: all[:3]},
	} {
		t.Run(tc.level, func(t *testing.T) {
			log := &sdktest.Log{}
			h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Name: "pluginhost", Level: hclog.Trace, Output: log}), LogLevel: tc.level})
			t.Cleanup(h.Stop)
			h.Apply([]Spec{faultSpec("f", "logs")})
			waitState(t, h.Instance("f"), StateReady)
			h.Apply(nil)
			out := log.String()
			for _, w := range tc.want {
				got := w.find(out)
				if got == "" {
					t.Errorf("host log lacks the %s line %q", w.level, w.msg)
					continue
				}
				if !strings.Contains(got, "pluginhost.f.") {
					t.Errorf("line not under the instance's logger: %s", got)
				}
				for _, f := range w.fields {
					if !strings.Contains(got, " "+f) {
						t.Errorf("line lacks field %s: %s", f, got)
					}
				}
			}
			for _, l := range tc.lack {
				if got := l.find(out); got != "" {
					t.Errorf("host log has a line below level %s: %s", tc.level, got)
				}
			}
			if t.Failed() {
				t.Logf("host log:\n%s", out)
			}
		})
	}
}
