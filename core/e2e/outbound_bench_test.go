package e2e

// BenchmarkOutboundTelegram: the host's share of a warm turn, in
// latency and in CPU, through the real binary, the real Telegram plugin
// and the fake Bot API, with an instant fake claude (its own static
// binary, fakeClaudeBin).
//
//	make build && go test ./core/e2e -run '^$' -bench OutboundTelegram -benchtime 1x
//
// One chat, one warm claude: a first turn starts claude, then outTurns
// turns run one after the other, each a short text whose reply fits one
// message. Per turn, on the machine's wall clock (all processes share it):
//
//	in   getUpdates hands the update out (telegramtest.Server.HandedOut)
//	     → claude has read the prompt's line from stdin (the run log's
//	     "start")
//	out  claude begins to write its result line (the run log's "result")
//	     → the fake Bot API receives the sendMessage that carries the reply
//
// and in+out, the host's whole overhead of the turn (claude's own time
// left out). Host CPU is utime+stime of the clawhost process
// (/proc/PID/stat) over the warm turns ÷ their number; the plugin's
// likewise, as information, and the minor page faults of each per turn
// (host-faults/turn, plugin-faults/turn: memory touched for the first
// time; in 100 turns most are the host's heap growing to its GOGC=400
// goal, 30 a turn, against 5 a turn over 1,500). -out.pprof=FILE writes a CPU profile of the
// host taken over the warm turns (from its admin endpoint's
// /debug/pprof/profile), for `go tool pprof -top`; -out.trace=FILE an
// execution trace of its first 3 s, for `go tool trace`.
//
// The machine is shared: compare builds by running this benchmark
// against each binary directory (CLAWHOST_BIN_DIR) in alternation, and
// read medians.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/procstat"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const (
	// outTurns is how many warm turns a round measures.
	outTurns = 100
	// outPace separates one turn's reply from the next message, so that
	// what the host does after a send (the outbox's bookkeeping) is not
	// counted in the next turn's latency.
	outPace = 20 * time.Millisecond
	// outChat is the chat (and user) of the benchmark.
	outChat = 7_000_001
)

var (
	outPprof = flag.String("out.pprof", "", "write a CPU profile of the host over BenchmarkOutboundTelegram's warm turns to this file")
	outTrace = flag.String("out.trace", "", "write an execution trace of the host over the first 3 s of BenchmarkOutboundTelegram's warm turns to this file")
)

func BenchmarkOutboundTelegram(b *testing.B) {
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		r := outRound(b, claude)
		b.ReportMetric(msOf(percentile(r.out, 50)), "out-p50-ms")
		b.ReportMetric(msOf(percentile(r.out, 99)), "out-p99-ms")
		b.ReportMetric(msOf(percentile(r.in, 50)), "in-p50-ms")
		b.ReportMetric(msOf(percentile(r.inOut, 50)), "inout-p50-ms")
		b.ReportMetric(msOf(percentile(r.inOut, 99)), "inout-p99-ms")
		b.ReportMetric(msOf(r.hostCPU), "host-cpu-ms/turn")
		b.ReportMetric(msOf(r.pluginCPU), "plugin-cpu-ms/turn")
		b.ReportMetric(r.hostFaults, "host-faults/turn")
		b.ReportMetric(r.pluginFaults, "plugin-faults/turn")
		b.ReportMetric(r.hostSwitches, "host-switches/turn")
		b.ReportMetric(r.pluginSwitches, "plugin-switches/turn")
	}
}

// outResult is one round: the per-turn latencies and CPU per turn.
type outResult struct {
	in, out, inOut     []time.Duration
	hostCPU, pluginCPU time.Duration
	// hostFaults and pluginFaults are minor page faults per warm turn.
	hostFaults, pluginFaults float64
	// hostSwitches and pluginSwitches are context switches per warm turn
	// (procSwitches).
	hostSwitches, pluginSwitches float64
}

// outHost starts a host with the defaults on a fresh fake Bot API and
// warms its claude with one turn; admin is its admin block, agent adds to
// its agent block (nil: none). The test's end stops both.
func outHost(b *testing.B, claude string, admin, agent Attrs, storage ...Attrs) (*telegramtest.Server, *Daemon, string) {
	b.Helper()
	srv := telegramtest.NewServer(tgToken)
	b.Cleanup(srv.Close)
	dir := b.TempDir()
	// In the workspace: the sandbox lets claude write only there.
	runLog := filepath.Join(dir, "workspace", "claude-runs.jsonl")
	h := loadHost(dir, claude, runLog, agent, srv.APIEndpoint())
	h.Admin = admin
	if len(storage) > 0 {
		h.Storage = storage[0]
	}
	d := Launch(b, h.Write(b))
	b.Cleanup(func() { d.stop() })
	deadline := time.Now().Add(tgWait)
	for len(srv.Requests("getUpdates")) == 0 || len(srv.Commands()) == 0 {
		if time.Now().After(deadline) {
			b.Fatalf("clawhost not ready after %v:\n%s", tgWait, d.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	outTurn(b, srv, d, "warm", 1) // starts claude
	return srv, d, runLog
}

// outRound starts a host, warms its claude with one turn and measures
// outTurns more.
// storage, when given, is the host's storage block.
func outRound(b *testing.B, claude string, storage ...Attrs) outResult {
	b.Helper()
	admin := Attrs{"listen": ""}
	file, what := *outPprof, "profile?seconds=8"
	if *outTrace != "" {
		file, what = *outTrace, "trace?seconds=3"
	}
	if file != "" {
		admin = Attrs{"listen": sdktest.FreeAddr(b), "pprof": true}
	}
	srv, d, runLog := outHost(b, claude, admin, nil, storage...)
	host := d.cmd.Process.Pid
	plugin := tgPluginPID(d, 0)
	var prof chan []byte
	if file != "" {
		prof = outProfile(b, admin["listen"].(string), what)
	}
	hostCPU0, pluginCPU0 := cpuTime(host), cpuTime(plugin)
	hostFaults0, pluginFaults0 := procFaults(host), procFaults(plugin)
	hostSwitches0, pluginSwitches0 := procSwitches(host), procSwitches(plugin)
	updates := map[string]int{}
	for k := range outTurns {
		mark := fmt.Sprintf("q%dz%dq", outChat, k)
		updates[mark] = outTurn(b, srv, d, mark, k+2)
		time.Sleep(outPace)
	}
	res := outResult{hostCPU: (cpuTime(host) - hostCPU0) / outTurns, pluginCPU: (cpuTime(plugin) - pluginCPU0) / outTurns,
		hostFaults: float64(procFaults(host)-hostFaults0) / outTurns, pluginFaults: float64(procFaults(plugin)-pluginFaults0) / outTurns,
		hostSwitches: float64(procSwitches(host)-hostSwitches0) / outTurns, pluginSwitches: float64(procSwitches(plugin)-pluginSwitches0) / outTurns}
	if prof != nil {
		if err := os.WriteFile(file, <-prof, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for _, s := range turnSpans(b, srv, runEvents(runLog), updates, "turn") {
		res.in, res.out, res.inOut = append(res.in, s.in()), append(res.out, s.out()), append(res.inOut, s.in()+s.out())
	}
	return res
}

// turnSpan is one turn's times (ns): its update handed out to the plugin,
// the fake claude's start and result, and the reply's sendMessage.
type turnSpan struct {
	mark                        string
	handed, start, result, sent int64
}

// in is the time from the update handed out to claude's start.
func (s turnSpan) in() time.Duration { return time.Duration(s.start - s.handed) }

// out is the time from claude's result to the reply's send.
func (s turnSpan) out() time.Duration { return time.Duration(s.sent - s.result) }

// turnSpans returns the span of each turn of updates (its mark → its
// update's id) from the fake claude's run events and the fake Bot API's
// requests; a missing time fails b (what names the turns).
func turnSpans(b *testing.B, srv *telegramtest.Server, events []fakeclaude.RunEvent, updates map[string]int, what string) []turnSpan {
	b.Helper()
	at := map[string]map[string]int64{} // mark → event → ns
	for _, ev := range events {
		if len(ev.Marks) > 0 {
			if at[ev.Marks[0]] == nil {
				at[ev.Marks[0]] = map[string]int64{}
			}
			at[ev.Marks[0]][ev.Event] = ev.At
		}
	}
	sends := srv.Requests("sendMessage")
	var out []turnSpan
	for mark, id := range updates {
		handed := srv.HandedOut(id)
		start, result := at[mark]["start"], at[mark]["result"]
		i := slices.IndexFunc(sends, func(r telegramtest.Request) bool { return strings.Contains(r.Params.Get("text"), mark) })
		if handed.IsZero() || start == 0 || result == 0 || i < 0 {
			b.Fatalf("%s %s: handed out %v, claude start %d, result %d, send %d: a timestamp is missing", what, mark, handed, start, result, i)
		}
		out = append(out, turnSpan{mark: mark, handed: handed.UnixNano(), start: start, result: result, sent: sends[i].Time.UnixNano()})
	}
	return out
}

// outTurn sends one message marked mark (and directives, for the fake
// claude) and waits for the n-th message the bot sends, which must be its
// reply; it returns the update's id.
func outTurn(b *testing.B, srv *telegramtest.Server, d *Daemon, mark string, n int, directives ...string) int {
	b.Helper()
	text := strings.Join(append([]string{"bench", mark, "#mark=" + mark}, directives...), " ")
	id := srv.PushText(telegramtest.PrivateChat(outChat), telegramtest.User{ID: outChat, FirstName: "Out"}, text)
	ctx, cancel := context.WithTimeout(context.Background(), tgWait)
	defer cancel()
	sent, err := srv.WaitSent(ctx, n)
	if err != nil {
		b.Fatalf("turn %s: %v\n%s", mark, err, d.log.String())
	}
	if last := sent[len(sent)-1]; len(sent) != n || !strings.Contains(last.Visible, mark) && len(directives) == 0 {
		b.Fatalf("turn %s: the bot's message %d is %q (%d sent), not the reply", mark, n, last.Visible, len(sent))
	}
	return id
}

// firstTurns is how many streamed turns BenchmarkFirstTextTelegram
// measures; firstDeltas and firstGap shape each: 20 deltas 20 ms apart,
// about what claude streams in 0.4 s.
const (
	firstTurns  = 20
	firstDeltas = 20
	firstGap    = "20ms"
)

// BenchmarkFirstTextTelegram: first visible text. From claude's first
// text delta (the fake claude's #stream, as the CLI writes it with
// --include-partial-messages) to the first request at the fake Bot API
// that shows the reply's text (a draft's sendMessage or an edit, or a
// block), in a warm session with the default settings (Telegram edits:
// streaming "auto" is a live draft).
//
//	make build && go test ./core/e2e -run '^$' -bench FirstTextTelegram -benchtime 1x
func BenchmarkFirstTextTelegram(b *testing.B) {
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		srv, d, runLog := outHost(b, claude, Attrs{"listen": ""}, nil)
		marks := make([]string, firstTurns)
		for k := range marks {
			marks[k] = fmt.Sprintf("f%dz%dq", outChat, k)
			n := len(srv.Sent())
			outTurn(b, srv, d, marks[k], n+1, fmt.Sprintf("#stream=%d", firstDeltas), "#gap="+firstGap)
			// The turn ends with the reply: the draft edited to it.
			ctx, cancel := context.WithTimeout(context.Background(), tgWait)
			for !strings.Contains(outShown(srv), fmt.Sprintf("word%d", firstDeltas)) {
				if _, err := srv.WaitSent(ctx, len(srv.Sent())+1); err != nil {
					cancel()
					b.Fatalf("turn %s: the whole reply never showed: %v", marks[k], err)
				}
			}
			cancel()
			time.Sleep(outPace)
		}
		delta := map[string]int64{}
		for _, ev := range runEvents(runLog) {
			if ev.Event == "delta" && len(ev.Marks) > 0 {
				delta[ev.Marks[0]] = ev.At
			}
		}
		var first []time.Duration
		reqs := srv.Requests("")
		for _, m := range marks {
			i := slices.IndexFunc(reqs, func(r telegramtest.Request) bool {
				return r.Time.UnixNano() > delta[m] && strings.Contains(r.Params.Get("text"), "word1")
			})
			if delta[m] == 0 || i < 0 {
				b.Fatalf("turn %s: first delta at %d, no request showing its text (%d)", m, delta[m], i)
			}
			first = append(first, time.Duration(reqs[i].Time.UnixNano()-delta[m]))
		}
		b.ReportMetric(msOf(percentile(first, 50)), "first-text-p50-ms")
		b.ReportMetric(msOf(percentile(first, 90)), "first-text-p90-ms")
	}
}

// outShown is the text of the bot's last message, as shown.
func outShown(srv *telegramtest.Server) string {
	sent := srv.Sent()
	if len(sent) == 0 {
		return ""
	}
	return sent[len(sent)-1].Visible
}

// outProfile starts a CPU profile or a trace of the host at its admin
// endpoint (what: the path under /debug/pprof/ with its length) and
// returns where it arrives; the profile ends when the warm turns take
// about 10 s at most (its length).
func outProfile(b *testing.B, addr, what string) chan []byte {
	b.Helper()
	ch := make(chan []byte, 1)
	tok := AdminToken(addr)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/debug/pprof/"+what, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- nil
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		ch <- data
	}()
	return ch
}

// procFaults is how many minor page faults process pid took (0 when it
// cannot be read): memory touched for the first time, or given back to
// the kernel and touched again.
func procFaults(pid int) int64 {
	st, _ := procstat.Read(pid)
	return st.Int(7)
}

// procSwitches is how many times the threads of pid alive now gave up
// their processor, to wait or to another thread (the voluntary and
// involuntary context switches of /proc/PID/task/*/status). On a
// virtual machine each wait and wake-up of a thread costs tens of
// microseconds of CPU, so this count explains much of a turn's CPU.
func procSwitches(pid int) int64 {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var n int64
	for _, t := range tasks {
		raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		for line := range strings.SplitSeq(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += k
			} else if v, ok := strings.CutPrefix(line, "nonvoluntary_ctxt_switches:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += k
			}
		}
	}
	return n
}

// runEvents reads the fake claude's run log.
func runEvents(path string) []fakeclaude.RunEvent {
	data, _ := os.ReadFile(path)
	var out []fakeclaude.RunEvent
	for line := range strings.SplitSeq(string(data), "\n") {
		var ev fakeclaude.RunEvent
		if json.Unmarshal([]byte(line), &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
