package discord_test

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/discord"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// BenchmarkInbound measures a MESSAGE_CREATE dispatched by the fake
// gateway until the host side of a real gRPC connection (sdktest) received
// it, saved in the plugin's state file on the way; the host acks each one.
// Reports p50 and p99.
func BenchmarkInbound(b *testing.B) {
	srv := discordtest.NewServer("BENCH.token.x")
	defer srv.Close()
	user := discordtest.User{ID: "100000000000000101", Username: "alice"}
	dm := srv.AddDM(user)
	dir := b.TempDir() // before Start: cleanups run last first
	h := sdktest.Start(b, discord.Plugin())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.Plugin.Describe(ctx); err != nil {
		b.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"token": srv.Token(), "api_endpoint": srv.Endpoint()})
	if diags, err := h.Plugin.Configure(ctx, schema.Config{Instance: "bench", JSON: cfg, DataDir: dir}); err != nil || len(diags) > 0 {
		b.Fatalf("configure: %v %v", err, diags)
	}
	s, err := h.Plugin.Receive(ctx, 16)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.WaitLive(ctx, 1); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		srv.Push(discordtest.Message{ChannelID: dm.ID, Author: user, Content: "bench"})
		select {
		case d := <-s.C:
			lat = append(lat, time.Since(start))
			if err := h.Plugin.Ack(ctx, d.ID); err != nil {
				b.Fatal(err)
			}
		case <-ctx.Done():
			b.Fatal("no delivery")
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkResume measures op 7 RECONNECT until the plugin's RESUME was
// answered (RESUMED sent) on a new connection.
func BenchmarkResume(b *testing.B) {
	srv := discordtest.NewServer("BENCH.token.x")
	defer srv.Close()
	dir := b.TempDir() // before Start: cleanups run last first
	h := sdktest.Start(b, discord.Plugin())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, _ := json.Marshal(map[string]any{"token": srv.Token(), "api_endpoint": srv.Endpoint()})
	if diags, err := h.Plugin.Configure(ctx, schema.Config{Instance: "bench", JSON: cfg, DataDir: dir}); err != nil || len(diags) > 0 {
		b.Fatalf("configure: %v %v", err, diags)
	}
	if _, err := h.Plugin.Receive(ctx, 16); err != nil {
		b.Fatal(err)
	}
	if err := srv.WaitLive(ctx, 1); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		srv.Reconnect()
		if err := srv.WaitLive(ctx, 2+i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
