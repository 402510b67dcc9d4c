package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// The benchmarks run the plugin against the fake WhatsApp (whatsapptest) on
// loopback: the real whatsmeow client, its SQLite store and real Signal
// encryption on both sides, so the figures include the fake's own crypto.
//
// Figures (2 shared cores, Xeon, go1.26.8, another heavy job beside;
// medians of 3 runs of `go test -run '^$' -bench . -count 3
// ./plugins/whatsapp/`):
//
//	BenchmarkPairToReady        119 ms/op   p50 118.5 ms  p99 153.9 ms
//	BenchmarkInboundToAccepted  1.79 ms/op  p50 1.21 ms   p99 4.34 ms
//	                                        receipt p50 1.59 ms
//
// Binary: `go build -trimpath -ldflags='-s -w'
// ./plugins/whatsapp/cmd/clawhost-whatsapp` is 25,993,481 bytes (24.8 MiB;
// 37.7 MB unstripped). Memory: VmRSS of the clawhost-whatsapp process
// under the real clawhost, linked and idle, is ~33.5 MB (33,448–33,528 kB
// over 3 runs), ~36.2 MB after the conversations of TestWhatsAppChannel
// (logged by that test).

// benchConfig is the plugin's config block for srv, without pacing.
func benchConfig(srv *whatsapptest.Server) map[string]any {
	return map[string]any{"server_address": srv.Addr(), "server_root_key": srv.RootKeyHex(),
		"pacing": map[string]string{"min": "0s", "max": "0s"}, "read_receipts": false}
}

// BenchmarkPairToReady measures linking a fresh device: from the phone
// scanning the QR code the plugin reports (PairQR) until the plugin reports
// ready — pair-success, the client's signature, the 515 restart, the login
// with the new credentials and the upload of 812 prekeys. Each iteration is
// a new plugin instance with an empty data dir; the fake replaces the
// device linked before. Reports p50 and p99.
func BenchmarkPairToReady(b *testing.B) {
	srv, err := whatsapptest.New(whatsapptest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	cfg, _ := json.Marshal(benchConfig(srv))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		a, st := New(), &sdktest.Statuses{}
		if err := a.Configure(context.Background(), schema.Config{Instance: "bench", DataDir: b.TempDir(), JSON: cfg, Status: st}); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- a.Run(ctx, newInbox()) }()
		qr, next := st.Wait(b, 0, "a QR code", isQR)
		b.StartTimer()
		start := time.Now()
		pctx, pcancel := context.WithTimeout(context.Background(), waitLong)
		err = srv.PairQR(pctx, qr.Attention.Data)
		pcancel()
		if err != nil {
			b.Fatal(err)
		}
		st.Wait(b, next, "ready", isReady)
		lat = append(lat, time.Since(start))
		b.StopTimer()
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

// BenchmarkInboundToAccepted measures a direct message from a contact —
// encrypted by the fake, delivered over the websocket, decrypted and
// buffered by whatsmeow, converted by the plugin — until the host side of
// a real gRPC connection (sdktest) has it; the host then acks it and the
// plugin's receipt reaches the fake before the next message. Reports p50
// and p99 of "sent → host has it" (p50-µs, p99-µs) and of the whole round
// to the receipt (receipt-p50-µs).
func BenchmarkInboundToAccepted(b *testing.B) {
	srv, err := whatsapptest.New(whatsapptest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ann, err := srv.AddContact(whatsapptest.ContactOptions{Phone: "15550009999", LID: "200000000000009", Name: "Ann"})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir() // before Start: cleanups run last first
	h := sdktest.Start(b, Plugin())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, _ := json.Marshal(benchConfig(srv))
	if diags, err := h.Plugin.Configure(ctx, schema.Config{Instance: "bench", JSON: cfg, DataDir: dir}); err != nil || len(diags) > 0 {
		b.Fatalf("configure: %v %v", err, diags)
	}
	states, _, err := h.Plugin.WatchStatus(ctx)
	if err != nil {
		b.Fatal(err)
	}
	s, err := h.Plugin.Receive(ctx, 16)
	if err != nil {
		b.Fatal(err)
	}
	if err := linkBy(ctx, srv, states); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	round := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		id, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: fmt.Sprintf("bench %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		select {
		case d, ok := <-s.C:
			if !ok {
				b.Fatalf("receive stream ended: %v", s.Err())
			}
			lat = append(lat, time.Since(start))
			if d.Message.MessageID != id {
				b.Fatalf("delivered %s, sent %s", d.Message.MessageID, id)
			}
			if err := h.Plugin.Ack(ctx, d.ID); err != nil {
				b.Fatal(err)
			}
		case <-ctx.Done():
			b.Fatal("no delivery")
		}
		if _, err := srv.WaitReceipt(ctx, id); err != nil {
			b.Fatal(err)
		}
		round = append(round, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, lat)
	slices.Sort(round)
	if len(round) > 0 {
		b.ReportMetric(float64(round[len(round)/2].Microseconds()), "receipt-p50-µs")
	}
}

// linkBy scans the first QR code among states and waits for ready after
// it.
func linkBy(ctx context.Context, srv *whatsapptest.Server, states <-chan status.Status) error {
	paired := false
	for {
		select {
		case st, ok := <-states:
			if !ok {
				return fmt.Errorf("status stream ended before ready")
			}
			switch {
			case isQR(st) && !paired:
				paired = true
				if err := srv.PairQR(ctx, st.Attention.Data); err != nil {
					return err
				}
			case isReady(st) && paired: // the stream may open with a ready before the first report
				return srv.WaitLoggedIn(ctx)
			}
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", ctx.Err())
		}
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
