package metrics

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestGrafanaDashboardNamesServedMetrics: every metric a query of
// examples/grafana/clawhost.json names is served by /metrics, and the
// dashboard shows turns, latency, cost, the queue, the plugins' states and
// the warm processes.
func TestGrafanaDashboardNamesServedMetrics(t *testing.T) {
	t.Parallel()
	m := New()
	m.Turn("main", time.Second, "ok")
	m.Usage("main", "tg", 0.01, [4]int64{1, 2, 3, 4})
	m.MessageIn("tg")
	m.MessageOut("tg")
	m.Dropped("tg", "rate")
	m.SendError("tg", "rate_limited")
	m.StoreError("write")
	m.RunnerError("timeout")
	m.WatchWarm(func() int { return 1 })
	m.WatchPlugins(func() []PluginStat { return []PluginStat{{Instance: "tg", State: "ready", Ready: true}} })
	served := map[string]bool{}
	for _, l := range strings.Split(scrape(t, m), "\n") {
		if name, ok := strings.CutPrefix(l, "# TYPE "); ok {
			f := strings.Fields(name)
			served[f[0]] = true
			if f[1] == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					served[f[0]+s] = true
				}
			}
		}
	}

	b, err := os.ReadFile("../../examples/grafana/clawhost.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	named := map[string]bool{}
	metric := regexp.MustCompile(`\bclawhost_[a-z0-9_]+`)
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			for _, name := range metric.FindAllString(q.Expr, -1) {
				named[name] = true
				if !served[name] {
					t.Errorf("panel %q queries %s, which /metrics does not serve", p.Title, name)
				}
			}
		}
	}
	for _, want := range []string{"clawhost_turns_total", "clawhost_turn_duration_seconds_bucket", "clawhost_cost_usd_total",
		"clawhost_queue_depth", "clawhost_plugin_state", "clawhost_plugin_up", "clawhost_runner_warm_processes"} {
		if !named[want] {
			t.Errorf("the dashboard shows no %s", want)
		}
	}
}
