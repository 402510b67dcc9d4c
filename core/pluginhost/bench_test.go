package pluginhost

import (
	"context"
	"os"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// BenchmarkUnaryCall measures a host→plugin unary call (Send to the
// loopback example, a real subprocess) and reports p50/p99 in µs.
func BenchmarkUnaryCall(b *testing.B) {
	h := New(Options{})
	defer h.Stop()
	spec, _ := loopbackSpec(b, "lo")
	spec.Path = os.Getenv("CLAWHOST_BIN_DIR") + "/clawhost-loopback"
	if os.Getenv("CLAWHOST_BIN_DIR") == "" {
		b.Skip("CLAWHOST_BIN_DIR not set (make bench sets it)")
	}
	h.Apply([]Spec{spec})
	plug, _, err := h.Instance("lo").WaitReady(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		_ = plug.SetTyping(ctx, channel.TypingRequest{ChatID: "c", On: true})
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := plug.SetTyping(ctx, channel.TypingRequest{ChatID: "c", On: true}); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkInboundStream measures inbound throughput from a plugin process
// (the test binary in "flood" mode) through Receive, the host's batching
// and acks, to the Inbound function.
func BenchmarkInboundStream(b *testing.B) {
	var got atomic.Int64
	done := make(chan struct{})
	target := int64(b.N)
	h := New(Options{Inbound: func(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
		if got.Add(int64(len(msgs))) >= target {
			select {
			case <-done:
			default:
				close(done)
			}
		}
		return nil
	}})
	defer h.Stop()
	sp := faultSpec("flood", "flood")
	sp.Env = append(sp.Env, "CLAWHOST_FLOOD_N="+strconv.Itoa(b.N))
	b.ResetTimer()
	t0 := time.Now()
	h.Apply([]Spec{sp})
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		b.Fatalf("received %d of %d", got.Load(), b.N)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "msgs/s")
}
