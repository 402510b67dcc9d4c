package e2e

// BenchmarkOutboundDurability: what the fsync costs a warm turn, and the
// reply path at the durability the peers give (a write survives the
// death of the process, not a power loss). Rounds of
// BenchmarkOutboundTelegram alternate between storage { durability =
// "full" } (the default: the accept and the reply's send attempt are
// fsynced) and "process" (no fsync), durabRounds of each, interleaved so
// that the machine's load moves both alike; each figure is the median of
// its rounds' p50s.
//
//	make build && go test ./core/e2e -run '^$' -bench OutboundDurability -benchtime 1x
//
// The process-* figures are the PROCESS column of the turn rows of make
// bench's table (core/cmd/benchreport). fsync-out-ms is full's out p50 minus process's: the fsync on the reply's
// path; fsync-inout-ms likewise for in + out (the accept's fsync too).

import (
	"slices"
	"testing"
	"time"
)

// durabRounds is how many rounds of each durability one run measures.
const durabRounds = 3

func BenchmarkOutboundDurability(b *testing.B) {
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		var full, process []outResult
		for range durabRounds {
			full = append(full, outRound(b, claude, Attrs{"durability": "full"}))
			process = append(process, outRound(b, claude, Attrs{"durability": "process"}))
		}
		fo, po := roundsP50(full, func(r outResult) []time.Duration { return r.out }), roundsP50(process, func(r outResult) []time.Duration { return r.out })
		fio, pio := roundsP50(full, func(r outResult) []time.Duration { return r.inOut }), roundsP50(process, func(r outResult) []time.Duration { return r.inOut })
		b.ReportMetric(msOf(fo), "full-out-p50-ms")
		b.ReportMetric(msOf(po), "process-out-p50-ms")
		b.ReportMetric(msOf(fio), "full-inout-p50-ms")
		b.ReportMetric(msOf(pio), "process-inout-p50-ms")
		// The rest of the turn rows at "process" (the PROCESS column of
		// core/cmd/benchreport's table).
		b.ReportMetric(msOf(roundsP50(process, func(r outResult) []time.Duration { return r.in })), "process-in-p50-ms")
		b.ReportMetric(msOf(roundsP(process, 99, func(r outResult) []time.Duration { return r.out })), "process-out-p99-ms")
		b.ReportMetric(msOf(roundsP(process, 99, func(r outResult) []time.Duration { return r.inOut })), "process-inout-p99-ms")
		b.ReportMetric(msOf(fo-po), "fsync-out-ms")
		b.ReportMetric(msOf(fio-pio), "fsync-inout-ms")
		b.ReportMetric(msOf(roundsMedian(process, func(r outResult) time.Duration { return r.hostCPU })), "process-host-cpu-ms/turn")
		b.ReportMetric(msOf(roundsMedian(full, func(r outResult) time.Duration { return r.hostCPU })), "full-host-cpu-ms/turn")
	}
}

// roundsP50 is the median over rounds of each round's p50 of what of.
func roundsP50(rs []outResult, of func(outResult) []time.Duration) time.Duration {
	return roundsP(rs, 50, of)
}

// roundsP is the median over rounds of each round's p-th percentile of
// what of.
func roundsP(rs []outResult, p int, of func(outResult) []time.Duration) time.Duration {
	return roundsMedian(rs, func(r outResult) time.Duration { return percentile(of(r), p) })
}

// roundsMedian is the median over rounds of of.
func roundsMedian(rs []outResult, of func(outResult) time.Duration) time.Duration {
	v := make([]time.Duration, len(rs))
	for i, r := range rs {
		v[i] = of(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}
