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
// 'sandbox = "off"' measures the host without the sandbox.
//
// Those figures come from a host with spare = false, whose every first turn
// starts claude. A second host in the same round keeps the defaults (a
// spare claude per agent, core/runner/spare.go, the fake answering the
// spare's initialize as the CLI does; max_warm unset): default-first-inout is what its
// first turns took, spare-first-turns-% how many ran on a spare (the
// fake's process started before the update was handed out) and
// spare-first-inout their in + out. -first.pprof=FILE
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
		// The first host starts claude for every first turn (spare = false);
		// the second keeps the defaults (a spare claude per agent, which a
		// brand-new chat adopts when it is ready; no max_warm, so the spare
		// does not wait for a warm slot: 30 chats fit warm_memory).
		srv, d, runLog := outHost(b, claude, admin, Attrs{"spare": false})
		var prof chan []byte
		if *firstPprof != "" {
			prof = outProfile(b, admin["listen"].(string), "profile?seconds=8")
		}
		started := measureFirstTurns(b, srv, d, runLog, chats)
		if prof != nil {
			if err := os.WriteFile(*firstPprof, <-prof, 0o600); err != nil {
				b.Fatal(err)
			}
		}
		if started.spare != 0 {
			b.Fatalf("%d first turns of a host with spare = false ran on a spare", started.spare)
		}
		b.ReportMetric(msOf(percentile(started.in, 50)), "first-in-p50-ms")
		b.ReportMetric(msOf(percentile(started.spawn, 50)), "first-proc-p50-ms")
		b.ReportMetric(msOf(percentile(started.stdin, 50)), "first-stdin-p50-ms")
		b.ReportMetric(msOf(percentile(started.inOut, 50)), "first-inout-p50-ms")
		b.ReportMetric(msOf(percentile(started.inOut, 90)), "first-inout-p90-ms")
		b.ReportMetric(msOf(started.cpu), "host-cpu-ms/first-turn")

		srv, d, runLog = outHost(b, claude, Attrs{"listen": ""}, Attrs{"max_warm": 0})
		def := measureFirstTurns(b, srv, d, runLog, firstTurnChats)
		b.ReportMetric(msOf(percentile(def.inOut, 50)), "default-first-inout-p50-ms")
		b.ReportMetric(100*float64(def.spare)/float64(firstTurnChats), "spare-first-turns-%")
		if len(def.onSpare) > 0 {
			b.ReportMetric(msOf(percentile(def.onSpare, 50)), "spare-first-inout-p50-ms")
			b.ReportMetric(msOf(percentile(def.spareIn, 50)), "spare-first-in-p50-ms")
		}
		b.ReportMetric(msOf(def.cpu), "default-host-cpu-ms/first-turn")
	}
}

// firstTurnRound is what measureFirstTurns measured, per first turn: in, first-proc
// and first-stdin (the spans of BenchmarkFirstTurnTelegram's comment; the
// last two only for turns that started their claude), in + out, in + out and
// in of the turns on a spare, how many of those, and the host's CPU per turn.
type firstTurnRound struct {
	in, spawn, stdin, inOut, onSpare, spareIn []time.Duration
	spare                                     int
	cpu                                       time.Duration
}

// measureFirstTurns sends the first message of chats new chats to the host d, one
// after the other, each waiting for its reply, and measures each turn. A
// turn ran on a spare when its fake claude's process started before the
// update was handed out.
func measureFirstTurns(b *testing.B, srv *telegramtest.Server, d *Daemon, runLog string, chats int) firstTurnRound {
	b.Helper()
	host := d.cmd.Process.Pid
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
	r := firstTurnRound{cpu: (cpuTime(host) - cpu0) / time.Duration(chats)}
	events := runEvents(runLog)
	procAt := map[string]int64{} // mark → when the process that read it logged its start
	for _, ev := range events {
		if len(ev.Marks) > 0 && ev.Event == "start" {
			procAt[ev.Marks[0]] = ev.Proc
		}
	}
	for _, s := range turnSpans(b, srv, events, ids, "first turn") {
		p := procAt[s.mark]
		if p == 0 {
			b.Fatalf("first turn %s: the run log names no process for it", s.mark)
		}
		r.in, r.inOut = append(r.in, s.in()), append(r.inOut, s.in()+s.out())
		if p < s.handed {
			r.spare++
			r.onSpare, r.spareIn = append(r.onSpare, s.in()+s.out()), append(r.spareIn, s.in())
			continue
		}
		r.spawn, r.stdin = append(r.spawn, time.Duration(p-s.handed)), append(r.stdin, time.Duration(s.start-p))
	}
	return r
}
