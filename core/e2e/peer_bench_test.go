package e2e

// BenchmarkPeerTelegram and BenchmarkPeerIdleTelegram: clawhost beside a
// peer gateway in one run, on one harness — issue 84's goals are ratios
// to the best peer measured in the same run, and cc-connect is the peer
// that was best on a warm turn and on a chat's first turn. Both
// gateways poll the same kind of fake Bot API (telegramtest) and run the
// same instant fake claude (fakeClaudeBin); cc-connect as its config
// example sets it up (a claudecode project, one Telegram platform), its
// per-user rate limit off so that a hundred turns in a row are answered.
//
//	make peer PEER_SRC=<a checkout of cc-connect>   # bin/peer/cc-connect
//	make build && CLAWHOST_PEER_CC_CONNECT=$PWD/bin/peer/cc-connect \
//	  go test ./core/e2e -run '^$' -bench 'Peer' -benchtime 1x
//
// Skipped without CLAWHOST_PEER_CC_CONNECT (make bench sets it when
// bin/peer/cc-connect exists). cc-connect has no setting for the Bot
// API's address; `make peer` applies testdata/cc-connect-bot-api.patch,
// which reads it from CC_TG_SERVER and changes nothing else.
//
// BenchmarkPeerTelegram, peerRounds rounds, medians:
//
//   - a warm turn, in and out as BenchmarkOutboundTelegram measures them
//     (update handed out → claude read the prompt; claude's result line
//     → the first sendMessage that shows the reply: cc-connect's live
//     preview, when it sends one), over outTurns turns of one chat:
//     cc-connect, clawhost at the default durability ("full") and at
//     "process";
//   - a chat's first turn over 30 new chats, as BenchmarkFirstTurnTelegram
//     measures it: cc-connect, clawhost with the defaults (a brand-new
//     chat adopts the agent's spare) and with spare = false;
//   - first, the load, once: 2,000 messages over 200 chats as
//     BenchmarkLoadTelegram sends them, to cc-connect, which keeps a
//     claude for every chat and may lose messages (its session queue
//     holds a few and drops the rest: its rate counts the answered ones),
//     and to clawhost with its defaults (sandboxed) at the warm budget the
//     real CLI gets here (BenchmarkLoadTelegramRealBudget's) and at
//     max_warm = 4 (BenchmarkLoadTelegram's).
//
// BenchmarkPeerIdleTelegram starts both idle, clawhost as
// BenchmarkIdleRSS's host with Telegram, and reads their memory and CPU at
// idleFor, as the peers were measured.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// peerEnv names the cc-connect binary the peer benchmarks run.
const peerEnv = "CLAWHOST_PEER_CC_CONNECT"

// peerRounds is how many warm and first-turn rounds of each gateway
// BenchmarkPeerTelegram alternates.
const peerRounds = 3

// peerBin returns the peer's binary or skips b.
func peerBin(b *testing.B) string {
	bin := os.Getenv(peerEnv)
	if bin == "" {
		b.Skipf("%s names no cc-connect binary (make peer PEER_SRC=…)", peerEnv)
	}
	return bin
}

// peerGateway is a running cc-connect: its fake Bot API, process and the
// fake claude's run log.
type peerGateway struct {
	srv    *telegramtest.Server
	pid    int
	runLog string
	stop   func() // kills it and the claude processes it started
}

// startPeer starts cc-connect on a fresh fake Bot API with claude (the
// fake) first on its PATH, and waits for its first long poll. The test's
// end stops it if its caller did not.
func startPeer(b *testing.B, bin, claude string) *peerGateway {
	b.Helper()
	srv := telegramtest.NewServer(tgToken)
	b.Cleanup(srv.Close)
	dir := b.TempDir()
	path := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{path, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.Symlink(claude, filepath.Join(path, "claude")); err != nil {
		b.Fatal(err)
	}
	runLog := filepath.Join(dir, "claude-runs.jsonl")
	cfg := fmt.Sprintf(`data_dir = %q

[log]
level = "warn"

[rate_limit]
max_messages = 0

[[projects]]
name = "bench"

[projects.agent]
type = "claudecode"

[projects.agent.options]
work_dir = %q
mode = "default"

[[projects.platforms]]
type = "telegram"

[projects.platforms.options]
token = %q
allow_from = "*"
`, filepath.Join(dir, "data"), work, tgToken)
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "cc-connect.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	cmd.Env = append(os.Environ(), "PATH="+path+":"+os.Getenv("PATH"), "HOME="+dir,
		"CC_TG_SERVER="+srv.URL(), "CLAWHOST_FAKE_CLAUDE_LOG="+runLog)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop := sync.OnceFunc(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		log.Close()
	})
	b.Cleanup(stop)
	deadline := time.Now().Add(tgWait)
	for len(srv.Requests("getUpdates")) == 0 {
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			b.Fatalf("cc-connect not polling after %v:\n%s", tgWait, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &peerGateway{srv: srv, pid: cmd.Process.Pid, runLog: runLog, stop: stop}
}

// turn sends chat a message marked mark and waits for a message of the
// bot that shows it; it returns the update's id. The peer may send other
// messages before (a notice, a preview that another message replaces).
func (p *peerGateway) turn(b *testing.B, chat int64, mark string) int {
	b.Helper()
	id := p.srv.PushText(telegramtest.PrivateChat(chat), telegramtest.User{ID: chat, FirstName: "Peer"}, "bench "+mark+" #mark="+mark)
	ctx, cancel := context.WithTimeout(context.Background(), tgWait)
	defer cancel()
	for n := len(p.srv.Sent()) + 1; ; n++ {
		sent, err := p.srv.WaitSent(ctx, n)
		if err != nil {
			b.Fatalf("cc-connect, turn %s: %v", mark, err)
		}
		if slices.ContainsFunc(sent, func(s telegramtest.Sent) bool { return strings.Contains(s.Visible, mark) }) {
			return id
		}
	}
}

// peerWarm is BenchmarkOutboundTelegram's round with cc-connect: its
// spans and its CPU per warm turn.
func peerWarm(b *testing.B, bin, claude string) outResult {
	p := startPeer(b, bin, claude)
	defer p.stop()
	p.turn(b, outChat, "warm") // starts claude
	cpu0 := cpuTime(p.pid)
	updates := map[string]int{}
	for k := range outTurns {
		mark := fmt.Sprintf("q%dz%dq", outChat, k)
		updates[mark] = p.turn(b, outChat, mark)
		time.Sleep(outPace)
	}
	res := outResult{hostCPU: (cpuTime(p.pid) - cpu0) / outTurns}
	for _, s := range turnSpans(b, p.srv, runEvents(p.runLog), updates, "cc-connect turn") {
		res.in, res.out, res.inOut = append(res.in, s.in()), append(res.out, s.out()), append(res.inOut, s.in()+s.out())
	}
	return res
}

// peerFirst is BenchmarkFirstTurnTelegram's round with cc-connect: the
// first turn of firstTurnChats new chats, in + out.
func peerFirst(b *testing.B, bin, claude string) []time.Duration {
	p := startPeer(b, bin, claude)
	defer p.stop()
	ids := map[string]int{}
	for k := range firstTurnChats {
		chat := int64(outChat + 1 + k)
		mark := fmt.Sprintf("q%dz%dq", chat, 0)
		ids[mark] = p.turn(b, chat, mark)
		time.Sleep(outPace)
	}
	var out []time.Duration
	for _, s := range turnSpans(b, p.srv, runEvents(p.runLog), ids, "cc-connect first turn") {
		out = append(out, s.in()+s.out())
	}
	return out
}

// peerLoad is BenchmarkLoadTelegram's round with cc-connect. A message
// it drops has no reply, so the round ends when every message has one or
// none came for peerLoadQuiet; the rate is the answered ones over the
// time to the last.
func peerLoad(b *testing.B, bin, claude string) (rate float64, lost, doubled int) {
	p := startPeer(b, bin, claude)
	defer p.stop()
	start := time.Now()
	for k := range loadPerChat {
		for c := range loadChats {
			id := int64(loadFirstChat + c)
			p.srv.PushText(telegramtest.PrivateChat(id), telegramtest.User{ID: id, FirstName: "Load"},
				fmt.Sprintf("load message q%dz%dq", id, k))
		}
	}
	total := loadChats * loadPerChat
	tally := newLoadTally()
	answered, last := 0, time.Now()
	for tally.answered < total && time.Since(last) < peerLoadQuiet && time.Since(start) < loadLimit {
		time.Sleep(5 * time.Millisecond)
		tally.add(p.srv.Sent())
		if tally.answered != answered {
			answered, last = tally.answered, time.Now()
		}
	}
	for _, n := range tally.count {
		doubled += max(0, n-1)
	}
	return float64(answered) / last.Sub(start).Seconds(), total - answered, doubled
}

// peerLoadQuiet is how long peerLoad waits for a reply before it counts
// the messages without one as lost.
const peerLoadQuiet = 5 * time.Second

func BenchmarkPeerTelegram(b *testing.B) {
	bin := peerBin(b)
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		// The load first, before the rounds' hosts (stopped at the end)
		// idle beside it.
		rate, lost, doubled := peerLoad(b, bin, claude)
		warm := int(runner.DefaultWarmMemory(procmem.MemTotal()) / realCLIMemory)
		budget := loadClawhostRound(b, 0, claude, Attrs{"max_warm": warm})
		four := loadClawhostRound(b, 1, claude, nil)
		b.Logf("load: cc-connect %.0f msg/s, %d lost, %d doubled; clawhost %.0f msg/s (max_warm %d, the real CLI's budget), %.0f msg/s (max_warm 4)",
			rate, lost, doubled, budget.rate(), warm, four.rate())
		var peerIO, peerCPU, fullIO, fullCPU, procIO, peerFirstIO, defFirstIO, offFirstIO []float64
		for r := range peerRounds {
			pw := peerWarm(b, bin, claude)
			full := outRound(b, claude)
			proc := outRound(b, claude, Attrs{"durability": "process"})
			peerIO, peerCPU = append(peerIO, msOf(percentile(pw.inOut, 50))), append(peerCPU, msOf(pw.hostCPU))
			fullIO, fullCPU = append(fullIO, msOf(percentile(full.inOut, 50))), append(fullCPU, msOf(full.hostCPU+full.pluginCPU))
			procIO = append(procIO, msOf(percentile(proc.inOut, 50)))

			pf := peerFirst(b, bin, claude)
			srv, d, runLog := outHost(b, claude, Attrs{"listen": ""}, Attrs{"max_warm": 0})
			def := measureFirstTurns(b, srv, d, runLog, firstTurnChats)
			srv, d, runLog = outHost(b, claude, Attrs{"listen": ""}, Attrs{"spare": false})
			off := measureFirstTurns(b, srv, d, runLog, firstTurnChats)
			peerFirstIO = append(peerFirstIO, msOf(percentile(pf, 50)))
			defFirstIO, offFirstIO = append(defFirstIO, msOf(percentile(def.inOut, 50))), append(offFirstIO, msOf(percentile(off.inOut, 50)))
			b.Logf("round %d: warm in + out p50 cc-connect %.2f ms, clawhost %.2f (full) %.2f (process); first turn p50 cc-connect %.2f ms, clawhost %.2f (defaults, %d of %d on the spare) %.2f (spare = false)",
				r+1, peerIO[r], fullIO[r], procIO[r], peerFirstIO[r], defFirstIO[r], def.spare, firstTurnChats, offFirstIO[r])
		}

		m := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
		b.ReportMetric(m(peerIO), "peer-inout-p50-ms")
		b.ReportMetric(m(fullIO), "full-inout-p50-ms")
		b.ReportMetric(m(procIO), "process-inout-p50-ms")
		b.ReportMetric(m(fullIO)/m(peerIO), "full-inout-x-peer")
		b.ReportMetric(m(procIO)/m(peerIO), "process-inout-x-peer")
		b.ReportMetric(m(peerCPU), "peer-cpu-ms/turn")
		b.ReportMetric(m(fullCPU), "clawhost-cpu-ms/turn")
		b.ReportMetric(m(peerFirstIO), "peer-first-inout-p50-ms")
		b.ReportMetric(m(defFirstIO), "default-first-inout-p50-ms")
		b.ReportMetric(m(offFirstIO), "started-first-inout-p50-ms")
		b.ReportMetric(m(defFirstIO)/m(peerFirstIO), "default-first-x-peer")
		b.ReportMetric(rate, "peer-msgs/s")
		b.ReportMetric(float64(lost), "peer-lost")
		b.ReportMetric(budget.rate(), "clawhost-msgs/s")
		b.ReportMetric(budget.rate()/rate, "load-x-peer")
		b.ReportMetric(four.rate(), "clawhost-warm4-msgs/s")
		b.ReportMetric(four.rate()/rate, "load-warm4-x-peer")
	}
}

func BenchmarkPeerIdleTelegram(b *testing.B) {
	bin := peerBin(b)
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		tg := telegramtest.NewServer(tgToken)
		b.Cleanup(tg.Close)
		p := tgPlugin(tg.APIEndpoint())
		delete(p.Config, "poll_timeout")
		h := startIdleHost(b, Host{Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}}, Plugins: []Plugin{p}},
			map[string]string{"tg": "clawhost-telegram"})
		peer := startPeer(b, bin, claude)
		h.waitReady(b, nil)
		ready := time.Now()
		time.Sleep(idleSettle)
		cpu0, peer0, t0 := h.cpu(), cpuTime(peer.pid), time.Now()
		time.Sleep(time.Until(ready.Add(idleFor)))
		cpu1, peer1, t1 := h.cpu(), cpuTime(peer.pid), time.Now()
		pids := h.pids()
		anon, rss := anonMB(pids[""])+anonMB(pids["tg"]), rssMB(pids[""])+rssMB(pids["tg"])
		perS := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / t1.Sub(t0).Seconds() }
		b.ReportMetric(anon, "host-tg-anon-MB")
		b.ReportMetric(anonMB(peer.pid), "peer-anon-MB")
		b.ReportMetric(anon/anonMB(peer.pid), "anon-x-peer")
		b.ReportMetric(rss, "host-tg-rss-MB")
		b.ReportMetric(rssMB(peer.pid), "peer-rss-MB")
		b.ReportMetric(rss/rssMB(peer.pid), "rss-x-peer")
		b.ReportMetric(perS(cpu1-cpu0), "idle-cpu-ms/s")
		b.ReportMetric(perS(peer1-peer0), "peer-idle-cpu-ms/s")
	}
	b.ReportMetric(0, "ns/op")
}
