package main

import (
	"strings"
	"testing"
)

// TestFiguresTable: the embedded table parses, every judged figure has a
// goal's direction and every figure a benchmark; a line that is off is an
// error naming its line.
func TestFiguresTable(t *testing.T) {
	figs, err := parseFigures(figuresTSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) < 100 {
		t.Fatalf("%d figures read from figures.tsv", len(figs))
	}
	first := figure{Name: "inbound → claude stdin, warm session, p50", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "run-p50-ns", Goal: 1e6, Max: true, Scale: 1e6, Unit: "ms"}
	if figs[0] != first {
		t.Errorf("first figure %+v, want %+v", figs[0], first)
	}
	for _, f := range figs {
		if !strings.HasPrefix(f.Bench, "Benchmark") || f.Base != "" && !strings.HasPrefix(f.Base, "Benchmark") {
			t.Errorf("%q: benchmark %q, base %q", f.Name, f.Bench, f.Base)
		}
	}
	for _, c := range []struct{ tsv, want string }{
		{"# a comment\n\nname\tBenchmarkX\tns/op\tmax 1\t1\tms\t-\t-\n", ""},
		{"name\tBenchmarkX\tns/op\tinfo\t1e3\t-\tp-ms\tBenchmarkY\n", ""},
		{"# c\nname\tBenchmarkX\tns/op\tmax 1\t1\tms\t-\n", "figures.tsv:2: 7 columns"},
		{"name\tBenchmarkX\tns/op\tunder 1\t1\tms\t-\t-\n", `GOAL "under 1"`},
		{"name\tBenchmarkX\tns/op\tinfo 3\t1\tms\t-\t-\n", `GOAL "info 3"`},
		{"name\tBenchmarkX\tns/op\tmin x\t1\tms\t-\t-\n", `GOAL "min x"`},
		{"name\tBenchmarkX\tns/op\tinfo\t0\tms\t-\t-\n", `SCALE "0"`},
		{"\tBenchmarkX\tns/op\tinfo\t1\tms\t-\t-\n", "empty NAME"},
	} {
		_, err := parseFigures(c.tsv)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.tsv, err, c.want)
		}
	}
}
