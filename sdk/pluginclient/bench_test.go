package pluginclient

import (
	"context"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
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

// envBenchEcho makes the test binary echo what it reads on descriptor 3
// (TestMain): the other end of BenchmarkHostCall's bare socket.
const envBenchEcho = "CLAWHOST_PLUGINCLIENT_BENCH_ECHO"

func TestMain(m *testing.M) {
	if os.Getenv(envBenchPlugin) != "" {
		os.Exit(sdk.Serve(sdk.Plugin{Name: "bench", Channel: benchChannel{}}))
	}
	if os.Getenv(envBenchEcho) != "" {
		echo(os.NewFile(3, "socket"))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// echo writes back what it reads from f until f ends, waiting in Go's
// network poller as a plugin's gRPC transport waits for the host.
func echo(f *os.File) {
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return
	}
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

// bareHop is the process hop with nothing on it: a Unix socket to an echo
// process (this test binary, see echo). Its round trip is the floor under
// a call of any protocol between two processes of this machine.
type bareHop struct {
	cmd  *exec.Cmd
	conn net.Conn
	buf  []byte
}

func startBareHop(tb testing.TB) *bareHop {
	tb.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "host"), os.NewFile(uintptr(fds[1]), "echo")
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{envBenchEcho + "=1"}
	cmd.ExtraFiles = []*os.File{theirs}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		mine.Close()
		tb.Fatal(err)
	}
	conn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		tb.Fatal(err)
	}
	return &bareHop{cmd: cmd, conn: conn, buf: make([]byte, 512)}
}

// roundTrip writes 48 bytes (a SetTyping call's frames are about that)
// and reads them back.
func (h *bareHop) roundTrip(tb testing.TB) {
	msg := h.buf[:48]
	if _, err := h.conn.Write(msg); err != nil {
		tb.Fatal(err)
	}
	for got := 0; got < len(msg); {
		n, err := h.conn.Read(h.buf[got:len(msg)])
		if err != nil {
			tb.Fatal(err)
		}
		got += n
	}
}

// close ends the echo: it reads the end of its socket and exits.
func (h *bareHop) close() {
	h.conn.Close()
	_ = h.cmd.Wait()
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
// stream, so that both see the same machine, and in the same alternation
// a round trip of a call's size on a bare Unix socket to an echo process
// that waits as a plugin waits ("bare"): the floor under a call of any
// protocol between two processes on this machine at that moment. It
// reports each one's p50 and p99 in µs and the host's allocations per
// call.
//
// The plugin runs on one processor, as clawhost launches plugins. The
// calls run in three passes: first with the benchmark's Go code on one processor,
// as clawhost's host runs it while lightly loaded (core/internal/procpace;
// a warm turn at a time is light), which gives the figures without a
// suffix, then on the processors the benchmark was given (-cpu), as the
// host runs once busy: the "-allprocs" figures. On the 2-core development
// VM most of a call's time is waking threads that sleep on the other,
// idle processor: on two processors the runtime hands a call between its
// threads, and each hand-over can cost such a wake (2026-11-27, 4 runs
// alternating: on the call stream, p50 39–46 µs with the host and the
// plugin on one processor each, 67–103 µs with the plugin on two, 76–96
// µs with the host on two; the bare socket 26–67 µs). A third pass, as
// the first, leaves both processes idle for 10 ms before each call (the
// "-idle" figures): the processors of a virtual machine idle that long
// sleep deeper, and waking them costs more (the bare socket's round trip
// 15 µs back to back, 60–120 µs after 50 µs–1 ms of idle, about 340 µs
// after 10 ms, measured between two small Go processes).
//
//	go test ./sdk/pluginclient -run '^$' -bench HostCall -benchtime 4000x
func BenchmarkHostCall(b *testing.B) {
	cmd := exec.Command(os.Args[0])
	// GOMAXPROCS=1 as clawhost launches every plugin unless its block's
	// env says otherwise (core/pluginhost/env.go, pluginDefaults).
	cmd.Env = []string{envBenchPlugin + "=1", "GOMAXPROCS=1"}
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
	bare := startBareHop(b)
	defer bare.close()
	// kinds: the unary call, the call on the stream, the bare round trip.
	kinds := []struct {
		name string
		run  func()
	}{
		{"unary", func() { hostCall(b, p, modeUnary) }},
		{"stream", func() { hostCall(b, p, modeStream) }},
		{"bare", func() { bare.roundTrip(b) }},
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	passes := []struct {
		procs  int
		suffix string
		gap    time.Duration // idle before each call
		most   int           // calls at most, of every kind together; 0: b.N
	}{{1, "", 0, 0}, {procs, "-allprocs", 0, 0}, {1, "-idle", idleGap, 3 * idleCalls}}
	b.ResetTimer()
	for _, pass := range passes {
		b.StopTimer()
		runtime.GOMAXPROCS(pass.procs)
		for range 200 {
			for _, k := range kinds {
				k.run()
			}
		}
		n := b.N
		if pass.most > 0 {
			n = min(n, pass.most)
		}
		lat := make([][]time.Duration, len(kinds))
		// Only the first pass is timed: ns/op, which sets b.N, is a
		// call's, not the idle pass's sleeps.
		if pass.suffix == "" {
			b.StartTimer()
		}
		for i := range n {
			if pass.gap > 0 {
				time.Sleep(pass.gap)
			}
			k := i % len(kinds)
			t0 := time.Now()
			kinds[k].run()
			lat[k] = append(lat[k], time.Since(t0))
		}
		b.StopTimer()
		for k, kind := range kinds {
			l := lat[k]
			if len(l) == 0 {
				continue
			}
			slices.Sort(l)
			b.ReportMetric(float64(l[len(l)/2].Nanoseconds())/1e3, kind.name+pass.suffix+"-p50-µs")
			b.ReportMetric(float64(l[len(l)*99/100].Nanoseconds())/1e3, kind.name+pass.suffix+"-p99-µs")
			if kind.name == "bare" || pass.suffix != "" {
				continue
			}
			// The host's allocations per call, each mode on its own.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const n = 500
			for range n {
				kind.run()
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, kind.name+"-allocs/call")
		}
	}
}

// idleGap is the idle time before each call of BenchmarkHostCall's
// "-idle" figures, idleCalls how many of each kind it makes: calls spaced
// as a chat's turns are, not back to back.
const (
	idleGap   = 10 * time.Millisecond
	idleCalls = 150
)

// hostCall makes one SetTyping call to p, unary or on the call stream.
func hostCall(b *testing.B, p *Plugin, mode int32) {
	p.calls.mode.Store(mode)
	if err := p.SetTyping(context.Background(), channel.TypingRequest{ChatID: "c", On: true}); err != nil {
		b.Fatal(err)
	}
}
