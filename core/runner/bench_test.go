package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// Benchmarks drive the real CLI against the fake API; run with e.g.
//
//	go test -run '^$' -bench . -benchtime 20x ./core/runner

func reportPercentiles(b *testing.B, name string, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	pct := func(p float64) float64 {
		i := int(p*float64(len(d)-1) + 0.5)
		return float64(d[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), name+"-p50-ms")
	b.ReportMetric(pct(0.95), name+"-p95-ms")
}

// vmRSS reads VmRSS of pid in MB (0 if unavailable).
func vmRSS(pid int) float64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

// benchTurnToRequest measures Run → request arriving at the fake API.
func benchTurnToRequest(b *testing.B, oneShot bool) {
	e := newReal(b, func(c *Config) { c.OneShot = oneShot })
	sid := uuid.NewString()
	mustOK(b, runTurn(b, e.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "warm up"}), "echo: warm up")
	var lat []time.Duration
	var rss []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := e.fake.Count() + 1
		start := time.Now()
		turn, err := e.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, Prompt: "turn " + strconv.Itoa(i)})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, err := e.fake.WaitRequest(ctx, n)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, req.Arrived.Sub(start))
		res := turn.Wait()
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		if !oneShot {
			if r := vmRSS(res.PID); r > 0 {
				rss = append(rss, r)
			}
		}
	}
	b.StopTimer()
	reportPercentiles(b, "run-to-request", lat)
	if len(rss) > 0 {
		b.ReportMetric(rss[len(rss)-1], "warm-rss-MB")
	}
}

// BenchmarkWarmTurnToRequest: follow-up turn on a warm process.
func BenchmarkWarmTurnToRequest(b *testing.B) { benchTurnToRequest(b, false) }

// BenchmarkOneShotTurnToRequest: a fresh `claude -p --resume` process per turn.
func BenchmarkOneShotTurnToRequest(b *testing.B) { benchTurnToRequest(b, true) }

// BenchmarkLastTokenToEvent: the fake writes the last text delta → the caller receives the
// event carrying it (delta with partial messages, the complete block without).
func BenchmarkLastTokenToEvent(b *testing.B) {
	for _, partial := range []bool{true, false} {
		name := "blocks"
		if partial {
			name = "partial"
		}
		b.Run(name, func(b *testing.B) {
			e := newReal(b, func(c *Config) { c.PartialMessages = partial })
			e.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
				return anthropictest.Reply{Text: "one two three four five six", Chunks: 6, ChunkDelay: 5 * time.Millisecond}
			})
			sid := uuid.NewString()
			runTurn(b, e.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "warm up"})
			var lat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := e.fake.Count() + 1
				turn, err := e.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, Prompt: "go " + strconv.Itoa(i)})
				if err != nil {
					b.Fatal(err)
				}
				var got time.Time
				var text string
				for ev := range turn.Events() {
					switch ev.Kind {
					case EventTextDelta:
						text += ev.Text
						if strings.HasSuffix(text, "six") && got.IsZero() {
							got = time.Now()
						}
					case EventText:
						if !partial && got.IsZero() {
							got = time.Now()
						}
					}
				}
				req := e.fake.Requests()[n-1]
				if got.IsZero() || req.LastTokenAt().IsZero() {
					b.Fatalf("no final text event (%q)", text)
				}
				lat = append(lat, got.Sub(req.LastTokenAt()))
			}
			b.StopTimer()
			reportPercentiles(b, "last-token-to-event", lat)
		})
	}
}

// BenchmarkWarmRSS starts one warm process per iteration and reports their mean VmRSS.
func BenchmarkWarmRSS(b *testing.B) {
	e := newReal(b, func(c *Config) { c.MaxWarm = 64 })
	var pids []int
	for i := 0; i < b.N; i++ {
		res := runTurn(b, e.r, TurnRequest{Key: strconv.Itoa(i), SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		pids = append(pids, res.PID)
	}
	b.StopTimer()
	var sum float64
	for _, p := range pids {
		sum += vmRSS(p)
	}
	b.ReportMetric(sum/float64(len(pids)), "rss-MB/process")
}
