package pluginclient

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
)

// envBenchPlugin makes the test binary serve benchChannel (TestMain): the
// plugin process of BenchmarkHostCall.
const envBenchPlugin = "CLAWHOST_PLUGINCLIENT_BENCH_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(envBenchPlugin) != "" {
		os.Exit(sdk.Serve(sdk.Plugin{Name: "bench", Channel: benchChannel{}}))
	}
	os.Exit(m.Run())
}

// benchChannel answers at once: the call's cost is the hop's.
type benchChannel struct{}

func (benchChannel) Capabilities() channel.Capabilities {
	return channel.Capabilities{MaxTextLength: 4096}
}
func (benchChannel) Run(ctx context.Context, _ channel.Inbox) error {
	<-ctx.Done()
	return nil
}
func (benchChannel) Send(context.Context, channel.SendRequest) (channel.SendResponse, error) {
	return channel.SendResponse{MessageIDs: []string{"1"}}, nil
}
func (benchChannel) SetTyping(context.Context, channel.TypingRequest) error { return nil }

// BenchmarkHostCall measures the host → plugin hop: a SetTyping to a real
// plugin process (this test binary, served by sdk.Serve, authenticated as
// a launched plugin is), alternately as a unary call and on the call
// stream, so that both see the same machine. It reports each one's p50
// and p99 in µs and the host's allocations per call.
//
//	go test ./sdk/pluginclient -run '^$' -bench HostCall -benchtime 4000x
func BenchmarkHostCall(b *testing.B) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{envBenchPlugin + "=1"}
	client := NewClient(Launch{Cmd: cmd, StartTimeout: 30 * time.Second, Logger: hclog.NewNullLogger()})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		b.Fatal(err)
	}
	p, err := Dispense(rpc)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if diags, err := p.Configure(ctx, schema.Config{Instance: "bench", JSON: []byte("{}"), DataDir: b.TempDir()}); err != nil || len(diags) > 0 {
		b.Fatalf("configure: %v %v", diags, err)
	}
	if _, err := p.Describe(ctx); err != nil {
		b.Fatal(err)
	}
	if p.calls.mode.Load() != modeStream {
		b.Fatal("the sdk's plugin did not declare the call stream")
	}
	modes := []struct {
		name string
		mode int32
	}{{"unary", modeUnary}, {"stream", modeStream}}
	call := func(mode int32) {
		p.calls.mode.Store(mode)
		if err := p.SetTyping(ctx, channel.TypingRequest{ChatID: "c", On: true}); err != nil {
			b.Fatal(err)
		}
	}
	for range 200 {
		for _, m := range modes {
			call(m.mode)
		}
	}
	lat := [2][]time.Duration{make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)}
	b.ResetTimer()
	for i := range b.N {
		k := i % 2
		t0 := time.Now()
		call(modes[k].mode)
		lat[k] = append(lat[k], time.Since(t0))
	}
	b.StopTimer()
	for k, m := range modes {
		l := lat[k]
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		b.ReportMetric(float64(l[len(l)/2].Nanoseconds())/1e3, m.name+"-p50-µs")
		b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds())/1e3, m.name+"-p99-µs")
		// The host's allocations per call, each mode on its own.
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const n = 500
		for range n {
			call(m.mode)
		}
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, m.name+"-allocs/call")
	}
}
