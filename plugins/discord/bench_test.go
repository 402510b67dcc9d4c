package discord_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/plugins/discord"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/channel"
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

// BenchmarkSendMarkdown measures Send of a markdown reply of about 1,700
// characters (headings, emphasis, links, a list, a table, a code block)
// against the fake's REST API, until Discord's answer: rendered by the
// plugin ("own", as a host without SendRequest.Rendered has it) or taken
// from the host's rendering ("host").
//
// Figures (2 shared cores, load 2.2, medians of `go test -run '^$' -bench
// BenchmarkSendMarkdown -benchtime 1000x -count 5 -benchmem
// ./plugins/discord/`): own 338 µs, 88.6 kB, 592 allocs; host 175 µs,
// 29.6 kB, 177 allocs per Send.
func BenchmarkSendMarkdown(b *testing.B) {
	srv := discordtest.NewServer("BENCH.token.x")
	defer srv.Close()
	ch := srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelGuildText, GuildID: "300000000000000001", Name: "general"})
	a := discord.New()
	cfg, _ := json.Marshal(map[string]any{"token": srv.Token(), "api_endpoint": srv.Endpoint()})
	if err := a.Configure(context.Background(), schema.Config{Instance: "bench", JSON: cfg, DataDir: b.TempDir()}); err != nil {
		b.Fatal(err)
	}
	md := benchReply()
	out, vis := markup.RenderVisible(md, markup.Markdown)
	for _, c := range []struct {
		name string
		pre  *channel.Rendered
	}{{"own", nil}, {"host", &channel.Rendered{Markup: channel.MarkupMarkdown, Text: out, Visible: vis}}} {
		b.Run(c.name, func(b *testing.B) {
			req := channel.SendRequest{ChatID: ch.ID, Text: md, Format: channel.FormatMarkdown, Rendered: c.pre}
			for b.Loop() {
				if _, err := a.Send(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchReply is a markdown reply as an agent writes one.
func benchReply() string {
	var s strings.Builder
	s.WriteString("## What changed\n\nThe **send step** now takes the host's rendering; see [the design](https://example.com/design) and `markup.RenderVisibleFrom`.\n\n")
	for i := range 8 {
		fmt.Fprintf(&s, "- item %d: *emphasis*, a [link](https://example.com/%d) and `code %d`\n", i, i, i)
	}
	s.WriteString("\n| step | before | after |\n|---|---|---|\n| parse | 100 | 0 |\n| request | 30 | 30 |\n\n")
	s.WriteString("```go\nfunc render(text string) string {\n\treturn markup.Render(text, markup.Markdown)\n}\n```\n\n")
	s.WriteString("> A quoted line with **bold** and _italic_ text.\n\n")
	for i := range 6 {
		fmt.Fprintf(&s, "%d. Step %d explains ~~nothing~~ something about the ***reply*** path.\n", i+1, i+1)
	}
	return s.String()
}
