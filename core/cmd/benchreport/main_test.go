package main

import (
	"strings"
	"testing"
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
BenchmarkIdleRSS-2   1   0 ns/op   7.5 host-tg-anon-MB   12.5 host-tg-web-anon-MB   0.31 idle-cpu-ms/s
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
		"≤ 6.30 MB",     // issue 58's goal
		"7.50 MB",
		"65.0 µs", // the ledger row: 190 − 125
		"0.31 ms/s",
		"125 µs",
		"190 µs",
		"not run",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "echo bot") || strings.Contains(table, "%") {
		t.Errorf("the retired echo-bot ratio is still in the table:\n%s", table)
	}
	// p50 passes, p99 and the pipeline fail, fsyncs pass; lost and
	// doubled pass; host + Telegram (7.5 over 6.3) and + web chat fail,
	// idle CPU passes.
	if failed != 4 || judged != 9 {
		t.Errorf("failed %d of %d judged, want 4 of 9:\n%s", failed, judged, table)
	}
}
