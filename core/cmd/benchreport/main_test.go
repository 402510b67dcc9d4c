package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/golden"
)

func TestReport(t *testing.T) {
	out := `goos: linux
BenchmarkInboundToRun/sync=FULL-2   5000   650000 ack-p50-ns   900000 run-p50-ns   7000000 run-p99-ns   1.000 fsyncs/msg
BenchmarkInboundToRun/sync=FULL-2   5000   650000 ack-p50-ns   1100000 run-p50-ns   6000000 run-p99-ns   1.000 fsyncs/msg
BenchmarkInboundToRun/sync=FULL-2   5000   650000 ack-p50-ns   800000 run-p50-ns   4000000 run-p99-ns   1.000 fsyncs/msg
BenchmarkRecordReplyLedger/usage=false-2   300   125000 ns/op   2765 B/op   71 allocs/op
BenchmarkRecordReplyLedger/usage=true-2   300   190000 ns/op   3646 B/op   89 allocs/op
BenchmarkPipeline-2   10000   346200 ns/op   2889 msgs/s   7.100 writes/msg   13.48 statements/msg   39304 B/op   686 allocs/op
BenchmarkLoadTelegram-2   1   0 ns/op   131 ratio-%   2400 clawhost-msgs/s   0 lost   0 doubled
BenchmarkIdleRSS-2   1   0 ns/op   8.5 host-tg-anon-MB   12.5 host-tg-web-anon-MB   0.21 idle-cpu-ms/s
--- BENCH: BenchmarkPipeline
    bench_test.go:1: BenchmarkPipeline-2 1 2 x/y
PASS
`
	res, err := parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if got := res["BenchmarkInboundToRun/sync=FULL"]["run-p50-ns"]; len(got) != 3 {
		t.Fatalf("run-p50-ns values: %v", got)
	}
	var b strings.Builder
	failed, judged := report(&b, res)
	table := b.String()
	for _, want := range []string{
		"≤ 1.00 ms",
		"0.90 ms", // p50: median of 0.8, 0.9, 1.1
		"6.00 ms", // p99: median of 7, 6, 4
		"2889 msg/s",
		"≥ 10000 msg/s", // the pipeline's floor
		"13.5",          // statements per message, info
		"≤ 7.75 MB",     // issue 84's goal
		"8.50 MB",
		"65.0 µs", // the ledger row: 190 − 125
		"0.21 ms/s",
		"125 µs",
		"190 µs",
		"not run",
		"PROCESS", // the column of the turn rows at durability "process"
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "echo bot") || strings.Contains(table, "%") {
		t.Errorf("the retired echo-bot ratio is still in the table:\n%s", table)
	}
	// p50 passes, p99 and the pipeline fail, fsyncs pass; lost and
	// doubled pass; host + Telegram (8.5 over 7.75) and + web chat fail,
	// idle CPU passes.
	if failed != 4 || judged != 9 {
		t.Errorf("failed %d of %d judged, want 4 of 9:\n%s", failed, judged, table)
	}
}

// TestReportBeside: the tree's results beside a base build's, each three
// interleaved rounds, give one table with both medians, the change and the
// tree's verdict (testdata/beside.golden; -update rewrites it). A figure
// only one side ran shows "—" for the other and no change.
func TestReportBeside(t *testing.T) {
	read := func(name string) map[string]map[string][]float64 {
		t.Helper()
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		res, err := parse(f)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// A few figures of the kinds the table has (a goal to stay under, one
	// to reach, info), not the whole list: the golden file stays as it is
	// when figures are added.
	figs := []figure{
		{Name: "inbound → claude stdin, warm session, p50", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "run-p50-ns", Goal: 1e6, Max: true, Scale: 1e6, Unit: "ms"},
		{Name: "inbound → claude stdin, warm session, p99", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "run-p99-ns", Goal: 5e6, Max: true, Scale: 1e6, Unit: "ms"},
		{Name: "pipeline, no-op agent, 1,000 sessions, replies delivered", Bench: "BenchmarkPipeline", Metric: "msgs/s", Goal: 10000, Scale: 1, Unit: "msg/s"},
		{Name: "pipeline: SQL statements per message", Bench: "BenchmarkPipeline", Metric: "statements/msg", Info: true, Scale: 1, Unit: ""},
		{Name: "cluster ordering check (OlderOpen), one read", Bench: "BenchmarkOlderOpen", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
		{Name: "idle anonymous memory, host + Telegram", Bench: "BenchmarkIdleRSS", Metric: "host-tg-anon-MB", Goal: 8, Max: true, Scale: 1, Unit: "MB"},
		{Name: "out: claude's result → sendMessage, warm, p50", Bench: "BenchmarkOutboundTelegram", Metric: "out-p50-ms", Process: "process-out-p50-ms", Goal: 3, Max: true, Scale: 1, Unit: "ms"},
	}
	var b strings.Builder
	failed, judged := reportBeside(&b, figs, read("base.txt"), read("tree.txt"), "v0.1.0", nil)
	got := b.String()
	golden.Check(t, filepath.Join("testdata", "beside.golden"), []byte(got))
	// The tree: run p50 0.90 ms (median of 0.8, 0.9, 1.0) and p99 5 ms
	// keep their bounds, the pipeline's 11,000 msg/s reaches its floor;
	// idle memory did not run.
	if failed != 0 || judged != 4 {
		t.Errorf("failed %d of %d judged, want 0 of 4:\n%s", failed, judged, got)
	}
	for _, want := range []string{
		"V0.1.0", "TREE", "CHANGE",
		"1.00 ms", "0.90 ms", "-10%", // run p50: base median 1.0, tree 0.9
		"2889 msg/s", "11000 msg/s", "+281%",
		"200 µs", // BenchmarkOlderOpen: the tree's alone
		"V0.1.0 PROCESS", "TREE PROCESS",
		"3.50 ms", "2.50 ms", "2.20 ms", "1.20 ms", // out p50 at "full", then at "process": base 3.5 / 2.2, tree 2.5 / 1.2
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "out: claude's result") && !strings.Contains(strings.Join(strings.Fields(line), " "), "-29% 2.20 ms 1.20 ms pass") {
			t.Errorf("the turn row lacks its durability \"process\" values, base's then tree's: %q", line)
		}
		if strings.HasPrefix(line, "inbound → claude stdin, warm session, p50") && strings.Count(line, "—") != 2 {
			t.Errorf("a row without a \"process\" figure shows one: %q", line)
		}
		if strings.HasPrefix(line, "cluster ordering check (OlderOpen), one read") && !strings.Contains(line, "—  ") {
			t.Errorf("a figure the base did not run shows a base value or a change: %q", line)
		}
	}
}

func TestPercent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		b, t float64
		want string
	}{{100, 112, "+12%"}, {100, 97, "-3%"}, {5, 5, "0%"}, {0, 0, "0%"}, {0, 3, "—"}, {-2, -1, "+50%"}} {
		if got := percent(c.b, c.t); got != c.want {
			t.Errorf("percent(%v, %v) = %q, want %q", c.b, c.t, got, c.want)
		}
	}
}
