package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// scrape fetches the exposition text from m's handler.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read scrape: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape status %d: %s", resp.StatusCode, body)
	}
	return string(body)
}

// wantLines checks that every line appears verbatim in the exposition.
func wantLines(t *testing.T, text string, lines ...string) {
	t.Helper()
	have := make(map[string]bool)
	for _, l := range strings.Split(text, "\n") {
		have[l] = true
	}
	for _, l := range lines {
		if !have[l] {
			t.Errorf("exposition lacks %q", l)
		}
	}
}

func TestCountersAndGauges(t *testing.T) {
	t.Parallel()
	m := New()
	m.MessageIn("tg")
	m.MessageIn("tg")
	m.MessageIn("dc")
	m.MessageOut("tg")
	m.Dropped("tg", "not_allowed")
	m.Dropped("tg", "not_allowed")
	m.Dropped("tg", "mention_required")
	m.Duplicate("dc")
	m.SendError("tg", "rate_limited")
	m.RunnerError("timeout")
	m.SetQueueDepth(7)
	m.SetQueueDepth(3)
	m.SetActiveRuns(2)

	text := scrape(t, m)
	wantLines(t, text,
		`clawhost_messages_in_total{instance="tg"} 2`,
		`clawhost_messages_in_total{instance="dc"} 1`,
		`clawhost_messages_out_total{instance="tg"} 1`,
		`clawhost_messages_dropped_total{instance="tg",reason="not_allowed"} 2`,
		`clawhost_messages_dropped_total{instance="tg",reason="mention_required"} 1`,
		`clawhost_messages_duplicate_total{instance="dc"} 1`,
		`clawhost_send_errors_total{code="rate_limited",instance="tg"} 1`,
		`clawhost_runner_errors_total{kind="timeout"} 1`,
		`clawhost_queue_depth 3`,
		`clawhost_active_runs 2`,
		`# TYPE clawhost_messages_in_total counter`,
		`# TYPE clawhost_queue_depth gauge`,
	)
	if strings.Contains(text, `clawhost_messages_out_total{instance="dc"}`) {
		t.Error("a series appeared for a label value never used")
	}
}

func TestTurnHistogram(t *testing.T) {
	t.Parallel()
	m := New()
	m.Turn("main", 30*time.Millisecond, "ok")
	m.Turn("main", 1500*time.Millisecond, "ok")
	m.Turn("ops", 700*time.Second, "timeout")
	m.Turn("ops", -time.Second, "error") // clamped to 0

	wantLines(t, scrape(t, m),
		`clawhost_turns_total{agent="main",outcome="ok"} 2`,
		`clawhost_turns_total{agent="ops",outcome="timeout"} 1`,
		`clawhost_turns_total{agent="ops",outcome="error"} 1`,
		`# TYPE clawhost_turn_duration_seconds histogram`,
		`clawhost_turn_duration_seconds_bucket{le="0.05"} 2`,
		`clawhost_turn_duration_seconds_bucket{le="1"} 2`,
		`clawhost_turn_duration_seconds_bucket{le="2.5"} 3`,
		`clawhost_turn_duration_seconds_bucket{le="600"} 3`,
		`clawhost_turn_duration_seconds_bucket{le="+Inf"} 4`,
		`clawhost_turn_duration_seconds_sum 701.53`,
		`clawhost_turn_duration_seconds_count 4`,
	)
}

func TestWatchers(t *testing.T) {
	t.Parallel()
	m := New()
	text := scrape(t, m)
	for _, name := range []string{"clawhost_plugin_up", "clawhost_plugin_restarts_total", "clawhost_runner_warm_processes"} {
		if strings.Contains(text, name) {
			t.Errorf("%s exposed before a watcher was installed", name)
		}
	}

	warm := 1
	m.WatchWarm(func() int { return warm })
	m.WatchPlugins(func() []PluginStat {
		return []PluginStat{
			{Instance: "tg", Source: "telegram", State: "running", Ready: true, Restarts: 3},
			{Instance: "dc", Source: "discord", State: "backoff", Ready: false, Restarts: 0},
			{Instance: "tg", Ready: false, Restarts: 99}, // duplicate: ignored
		}
	})
	warm = 4 // evaluated at scrape, not at install
	text = scrape(t, m)
	wantLines(t, text,
		`clawhost_plugin_restarts_total{instance="tg"} 3`,
		`clawhost_plugin_restarts_total{instance="dc"} 0`,
		`clawhost_plugin_up{instance="tg"} 1`,
		`clawhost_plugin_up{instance="dc"} 0`,
		`clawhost_plugin_state{instance="tg",state="running"} 1`,
		`clawhost_plugin_state{instance="dc",state="backoff"} 1`,
		`# TYPE clawhost_plugin_restarts_total counter`,
		`# TYPE clawhost_plugin_up gauge`,
		`clawhost_runner_warm_processes 4`,
	)
	if strings.Contains(text, `clawhost_plugin_restarts_total{instance="tg"} 99`) {
		t.Error("duplicate instance overrode the first entry")
	}

	m.WatchPlugins(nil)
	if text := scrape(t, m); strings.Contains(text, "clawhost_plugin_up{") {
		t.Error("plugin metrics still exposed after WatchPlugins(nil)")
	}
}

func TestRuntimeCollectors(t *testing.T) {
	t.Parallel()
	text := scrape(t, New())
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if !strings.Contains(text, "\n"+name+" ") {
			t.Errorf("exposition lacks %s", name)
		}
	}
}

func TestOwnRegistry(t *testing.T) {
	t.Parallel()
	a, b := New(), New()
	a.MessageIn("tg")
	if strings.Contains(scrape(t, b), `clawhost_messages_in_total{instance="tg"}`) {
		t.Error("two Metrics share a registry")
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	m := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst := []string{"tg", "dc"}[i%2]
			for range 1000 {
				m.MessageIn(inst)
				m.SendError(inst, "rate_limited")
			}
		}()
	}
	wg.Wait()
	wantLines(t, scrape(t, m),
		`clawhost_messages_in_total{instance="tg"} 4000`,
		`clawhost_messages_in_total{instance="dc"} 4000`,
		`clawhost_send_errors_total{code="rate_limited",instance="dc"} 4000`,
	)
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	m := New()
	m.MessageIn("tg")
	m.Dropped("tg", "not_allowed")
	m.Turn("main", time.Second, "ok")
	allocs := testing.AllocsPerRun(100, func() {
		m.MessageIn("tg")
		m.MessageOut("tg")
		m.Dropped("tg", "not_allowed")
		m.Turn("main", time.Second, "ok")
		m.SetQueueDepth(5)
		m.SetActiveRuns(1)
	})
	if allocs != 0 {
		t.Errorf("hot path allocates %.1f times per call", allocs)
	}
}

func BenchmarkMessageIn(b *testing.B) {
	m := New()
	b.ReportAllocs()
	for b.Loop() {
		m.MessageIn("tg")
	}
}

func TestClusterMetrics(t *testing.T) {
	t.Parallel()
	m := New()
	text := scrape(t, m)
	for _, name := range []string{"clawhost_host_info", "clawhost_hosts_live", "clawhost_leases_held"} {
		if strings.Contains(text, name) {
			t.Errorf("%s exposed before it was set", name)
		}
	}

	m.SetHostInfo("h0", "sqlite")
	m.SetHostInfo("h1", "postgres") // replaces
	var calls int
	var deadline bool
	m.WatchCluster(func(ctx context.Context) (ClusterStat, error) {
		calls++
		_, deadline = ctx.Deadline()
		return ClusterStat{HostsLive: 2, Held: map[string]int{"host": 1, "channel": 2, "relay": 1}}, nil
	})
	text = scrape(t, m)
	wantLines(t, text,
		`clawhost_host_info{engine="postgres",host_id="h1"} 1`,
		`clawhost_hosts_live 2`,
		`clawhost_leases_held{kind="host"} 1`,
		`clawhost_leases_held{kind="channel"} 2`,
		`clawhost_leases_held{kind="session"} 0`,
		`clawhost_leases_held{kind="relay"} 1`,
		`# TYPE clawhost_hosts_live gauge`,
		`# TYPE clawhost_leases_held gauge`,
	)
	if strings.Contains(text, `host_id="h0"`) {
		t.Error("the replaced host info is still exposed")
	}
	if calls != 1 || !deadline {
		t.Errorf("the cluster was read %d times per scrape (want 1), with a deadline: %v", calls, deadline)
	}

	// The store does not answer: the two metrics are left out, the rest
	// is served and the failure counted.
	m.WatchCluster(func(context.Context) (ClusterStat, error) {
		return ClusterStat{}, errors.New("list leases: connection refused")
	})
	text = scrape(t, m)
	if strings.Contains(text, "clawhost_hosts_live ") || strings.Contains(text, "clawhost_leases_held{") {
		t.Errorf("cluster metrics exposed although the read failed:\n%s", text)
	}
	wantLines(t, text, `clawhost_host_info{engine="postgres",host_id="h1"} 1`)
	// The failure is counted after the scrape it spoiled: the next shows it.
	wantLines(t, scrape(t, m), `promhttp_metric_handler_errors_total{cause="gathering"} 1`)
}

// TestUsageCounters: each turn's cost and tokens add up per agent and
// instance (and kind of token).
func TestUsageCounters(t *testing.T) {
	t.Parallel()
	m := New()
	m.Usage("main", "tg", 0.25, [4]int64{1000, 50, 200, 0})
	m.Usage("main", "tg", 0.5, [4]int64{2000, 100, 0, 10})
	m.Usage("ops", "dc", 1, [4]int64{1, 2, 3, 4})
	wantLines(t, scrape(t, m),
		`clawhost_cost_usd_total{agent="main",instance="tg"} 0.75`,
		`clawhost_cost_usd_total{agent="ops",instance="dc"} 1`,
		`clawhost_tokens_total{agent="main",instance="tg",kind="input"} 3000`,
		`clawhost_tokens_total{agent="main",instance="tg",kind="output"} 150`,
		`clawhost_tokens_total{agent="main",instance="tg",kind="cache_read"} 200`,
		`clawhost_tokens_total{agent="main",instance="tg",kind="cache_creation"} 10`,
		`clawhost_tokens_total{agent="ops",instance="dc",kind="cache_creation"} 4`,
	)
}
