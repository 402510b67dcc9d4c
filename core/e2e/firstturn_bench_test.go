package e2e

// BenchmarkFirstTurnTelegram: the host's share of the first turn of a
// chat, the one that starts claude, through the real binary, the
// Telegram plugin and the fake Bot API, with the instant fake claude and
// the default settings (the sandbox included, when the machine has
// bubblewrap). As BenchmarkOutboundTelegram, per turn: in (the update
// handed out → claude has read the prompt: the session made, claude
// started in its sandbox) and out (claude's result line → the
// sendMessage at the fake API); first-inout is their sum, the host's
// whole work for the turn with claude's own start-up inside it (a
// static fake claude: a few exec's worth).
//
//	make build && go test ./core/e2e -run '^$' -bench FirstTurnTelegram -benchtime 1x
//
// firstTurnChats chats each send one message, one after the other (the
// host was warmed by a turn of another chat); host-cpu-ms/first-turn is
// the host's CPU over them ÷ their number. first-proc splits in: the
// update handed out → the fake claude's process logged its start (the
// host's work before the exec, the exec, bubblewrap's when sandboxed, the
// fake's Go runtime start), and first-stdin the rest (that log line →
// the prompt's line read from stdin: the host writing the prompt, and
// the run log's own open-write-close in the fake). -load.agent
// 'sandbox = "off"' measures the host without the sandbox. -first.pprof=FILE
// writes a CPU profile of the host over the round's first turns (from its
// admin endpoint, 8 s; the round then has firstTurnChatsProfiled chats so
// that the profile is all first turns), for `go tool pprof -top`.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// firstTurnChats is how many first turns a round measures;
// firstTurnChatsProfiled with -first.pprof.
const (
	firstTurnChats         = 30
	firstTurnChatsProfiled = 300
)

var firstPprof = flag.String("first.pprof", "", "write a CPU profile of the host over BenchmarkFirstTurnTelegram's first turns to this file")

func BenchmarkFirstTurnTelegram(b *testing.B) {
	claude := fakeClaudeBin(b, b.TempDir())
	chats := firstTurnChats
	if *firstPprof != "" {
		chats = firstTurnChatsProfiled
	}
	for b.Loop() {
		admin := Attrs{"listen": ""}
		if *firstPprof != "" {
			admin = Attrs{"listen": sdktest.FreeAddr(b), "pprof": true}
		}
		srv, d, runLog := outHost(b, claude, admin)
		host := d.cmd.Process.Pid
		var prof chan []byte
		if *firstPprof != "" {
			prof = outProfile(b, admin["listen"].(string))
		}
		cpu0 := cpuTime(host)
		ids := map[string]int{}
		for k := range chats {
			chat := int64(outChat + 1 + k)
			mark := fmt.Sprintf("q%dz%dq", chat, 0)
			text := "bench " + mark + " #mark=" + mark
			ids[mark] = srv.PushText(telegramtest.PrivateChat(chat), telegramtest.User{ID: chat, FirstName: "First"}, text)
			ctx, cancel := context.WithTimeout(context.Background(), tgWait)
			sent, err := srv.WaitSent(ctx, k+2)
			cancel()
			if err != nil {
				b.Fatalf("first turn %s: %v\n%s", mark, err, d.log.String())
			}
			if last := sent[len(sent)-1]; !strings.Contains(last.Visible, mark) {
				b.Fatalf("first turn %s: the bot's message %d is %q, not the reply", mark, k+2, last.Visible)
			}
			time.Sleep(outPace)
		}
		cpu := (cpuTime(host) - cpu0) / time.Duration(chats)
		if prof != nil {
			if err := os.WriteFile(*firstPprof, <-prof, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		events := runEvents(runLog)
		// A sandboxed fake has its own PID namespace: every one has the same
		// pid there. The turns run one after the other, so a turn's process
		// is the latest that logged its start with that pid.
		lastProc := map[int]int64{}  // pid → when the latest fake with it logged its start
		procAt := map[string]int64{} // mark → when its fake's process logged its start
		for _, ev := range events {
			if ev.Event == "proc" {
				lastProc[ev.PID] = ev.At
			}
			if len(ev.Marks) > 0 && ev.Event == "start" && procAt[ev.Marks[0]] == 0 {
				procAt[ev.Marks[0]] = lastProc[ev.PID]
			}
		}
		var in, inOut, spawn, stdin []time.Duration
		for _, s := range turnSpans(b, srv, events, ids, "first turn") {
			if p := procAt[s.mark]; p != 0 {
				spawn, stdin = append(spawn, time.Duration(p-s.handed)), append(stdin, time.Duration(s.start-p))
			}
			in, inOut = append(in, s.in()), append(inOut, s.in()+s.out())
		}
		b.ReportMetric(msOf(percentile(in, 50)), "first-in-p50-ms")
		if len(spawn) > 0 {
			b.ReportMetric(msOf(percentile(spawn, 50)), "first-proc-p50-ms")
			b.ReportMetric(msOf(percentile(stdin, 50)), "first-stdin-p50-ms")
		}
		b.ReportMetric(msOf(percentile(inOut, 50)), "first-inout-p50-ms")
		b.ReportMetric(msOf(percentile(inOut, 90)), "first-inout-p90-ms")
		b.ReportMetric(msOf(cpu), "host-cpu-ms/first-turn")
	}
}
