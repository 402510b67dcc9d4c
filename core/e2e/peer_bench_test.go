package e2e

// BenchmarkPeerTelegram and BenchmarkPeerIdleTelegram: clawhost beside
// peer gateways in one run, on one harness — issue 84's goals are ratios
// to the best peer measured in the same run. The peers are those of the
// issue's side-by-side run that were best at something: cc-connect (a
// warm turn, a chat's first turn, idle anonymous memory) and PicoClaw
// (the start, the load, idle RSS). Every gateway polls its own fake Bot
// API (telegramtest) and runs the same instant fake claude
// (fakeClaudeBin), each set up as its docs set it up (peerKinds).
//
//	make peer PEER_SRC=<a cc-connect checkout> PICOCLAW_SRC=<a PicoClaw checkout>
//	make build && CLAWHOST_PEER_CC_CONNECT=$PWD/bin/peer/cc-connect \
//	  CLAWHOST_PEER_PICOCLAW=$PWD/bin/peer/picoclaw \
//	  go test ./core/e2e -run '^$' -bench 'Peer' -benchtime 1x
//
// A peer runs when its variable names its binary (make bench sets them
// for the binaries bin/peer holds); with none, both benchmarks skip.
// cc-connect has no setting for the Bot API's address: `make peer`
// applies testdata/cc-connect-bot-api.patch, which reads it from
// CC_TG_SERVER and changes nothing else. PicoClaw has one (base_url).
//
// BenchmarkPeerTelegram reports each peer's figures under its name and
// clawhost's ratios to the best of them ("-x-best"):
//
//   - first, the load, once: 2,000 messages over 200 chats as
//     BenchmarkLoadTelegram sends them, to each peer (cc-connect keeps a
//     claude per chat, PicoClaw starts `claude -p` per model call; either
//     may lose messages, and its rate counts the answered ones) and to
//     clawhost with its defaults (sandboxed) at the warm budget the real
//     CLI gets here (BenchmarkLoadTelegramRealBudget's) and at
//     max_warm = 4 (BenchmarkLoadTelegram's), and at that budget with
//     queue { mode = "collect" }: a chat's waiting messages answered
//     together, as PicoClaw answers them;
//   - then peerRounds rounds, medians, of a warm turn, in and out as
//     BenchmarkOutboundTelegram measures them (update handed out →
//     claude read the prompt; claude's result line → the first
//     sendMessage that shows the reply: a live preview, when the gateway
//     sends one), over outTurns turns of one chat, clawhost at the default
//     durability ("full") and at "process"; and of a chat's first turn
//     over 30 new chats, as BenchmarkFirstTurnTelegram measures it,
//     clawhost with the defaults (a brand-new chat adopts the agent's
//     spare) and with spare = false.
//
// BenchmarkPeerIdleTelegram starts them all idle, clawhost as
// BenchmarkIdleRSS's host with Telegram, and reads their memory and CPU at
// idleFor, as the run measured the peers.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// peerRounds is how many warm and first-turn rounds of each gateway
// BenchmarkPeerTelegram alternates.
const peerRounds = 3

// peerBin is a peer kind and its binary.
type peerBin struct {
	peerKind
	bin string
}

// availablePeers are the peers whose binary its variable names (in
// peerKinds' order), or b is skipped when there is none.
func availablePeers(b *testing.B) []peerBin {
	var out []peerBin
	for _, k := range peerKinds {
		if bin := os.Getenv(k.env); bin != "" {
			out = append(out, peerBin{k, bin})
		}
	}
	if len(out) == 0 {
		b.Skip("no peer binary: CLAWHOST_PEER_CC_CONNECT or CLAWHOST_PEER_PICOCLAW (make peer)")
	}
	return out
}

// peerKind is a peer gateway the benchmarks can run: its name, the
// variable that names its binary, and how it is set up.
type peerKind struct {
	name, env string
	// token is the bot's token: telego, PicoClaw's Telegram library,
	// accepts only a token of Telegram's shape.
	token string
	// configure writes the peer's configuration under dir for the bot
	// token on the fake Bot API at api (its base URL), claude run in
	// work, and returns its arguments and what its environment adds.
	configure func(b *testing.B, dir, work, api, token string) (args, env []string)
}

// ccConnect is cc-connect as its config example sets it up: a claudecode
// project (a stream-json claude kept per chat) and one Telegram platform,
// its per-user rate limit off.
var ccConnect = peerKind{name: "cc-connect", env: "CLAWHOST_PEER_CC_CONNECT", token: tgToken, configure: func(b *testing.B, dir, work, api, token string) ([]string, []string) {
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
`, filepath.Join(dir, "data"), work, token)
	path := filepath.Join(dir, "config.toml")
	writePeerFile(b, path, cfg)
	return []string{"--config", path}, []string{"CC_TG_SERVER=" + api}
}}

// picoClaw is PicoClaw's gateway with its claude-cli provider (a
// `claude -p` per model call, the fake in its print mode) and one
// Telegram channel (its base_url setting names the fake Bot API).
var picoClaw = peerKind{name: "picoclaw", env: "CLAWHOST_PEER_PICOCLAW", token: "123456789:AAHclawhostPeerBenchmarkToken012345", configure: func(b *testing.B, dir, work, api, token string) ([]string, []string) {
	cfg := map[string]any{
		"version": 3,
		"agents": map[string]any{"defaults": map[string]any{
			"workspace": work, "restrict_to_workspace": true, "model_name": "fake", "max_tool_iterations": 20}},
		"model_list": []map[string]any{{"model_name": "fake", "model": "claude-cli/claude-code", "workspace": work}},
		"channel_list": map[string]any{"telegram": map[string]any{
			"enabled": true, "type": "telegram", "allow_from": []string{"*"},
			"settings": map[string]any{"token": token, "base_url": api, "streaming": map[string]any{"enabled": true}}}},
		"gateway": map[string]any{"host": "127.0.0.1", "port": freePort(b), "log_level": "warn"},
	}
	data, _ := json.Marshal(cfg)
	path := filepath.Join(dir, "config.json")
	writePeerFile(b, path, string(data))
	return []string{"gateway"}, []string{"PICOCLAW_HOME=" + dir, "PICOCLAW_CONFIG=" + path, fakeclaude.PrintEnvVar + "=1"}
}}

// freePort is a free TCP port on loopback.
func freePort(b *testing.B) int {
	_, port, _ := net.SplitHostPort(sdktest.FreeAddr(b))
	n, _ := strconv.Atoi(port)
	return n
}

// peerKinds are the peers the benchmarks know.
var peerKinds = []peerKind{ccConnect, picoClaw}

// writePeerFile writes a peer's configuration file or fails b.
func writePeerFile(b *testing.B, path, data string) {
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		b.Fatal(err)
	}
}

// peerGateway is a running peer: its fake Bot API, process and the fake
// claude's run log.
type peerGateway struct {
	name   string
	srv    *telegramtest.Server
	pid    int
	runLog string
	log    string // its stdout and stderr
	stop   func() // kills it and the claude processes it started
}

// startPeer starts the peer kind on a fresh fake Bot API
// with claude (the fake) first on its PATH, and waits for its first long
// poll. The test's end stops it if its caller did not.
func startPeer(b *testing.B, kind peerBin, claude string) *peerGateway {
	b.Helper()
	srv := telegramtest.NewServer(kind.token)
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
	args, env := kind.configure(b, dir, work, srv.URL(), kind.token)
	log, err := os.Create(filepath.Join(dir, kind.name+".log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(kind.bin, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, log, log
	cmd.Env = append(append(os.Environ(), "PATH="+path+":"+os.Getenv("PATH"), "HOME="+dir,
		"CLAWHOST_FAKE_CLAUDE_LOG="+runLog), env...)
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
			b.Fatalf("%s not polling after %v:\n%s", kind.name, tgWait, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return &peerGateway{name: kind.name, log: log.Name(), srv: srv, pid: cmd.Process.Pid, runLog: runLog, stop: stop}
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
			out, _ := os.ReadFile(p.log)
			b.Fatalf("%s, turn %s: %v\n%s", p.name, mark, err, out)
		}
		if slices.ContainsFunc(sent, func(s telegramtest.Sent) bool { return strings.Contains(s.Visible, mark) }) {
			return id
		}
	}
}

// peerWarm is BenchmarkOutboundTelegram's round with a peer: its spans
// and its CPU per warm turn.
func peerWarm(b *testing.B, pb peerBin, claude string) outResult {
	p := startPeer(b, pb, claude)
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
	for _, s := range turnSpans(b, p.srv, runEvents(p.runLog), updates, p.name+" turn") {
		res.in, res.out, res.inOut = append(res.in, s.in()), append(res.out, s.out()), append(res.inOut, s.in()+s.out())
	}
	return res
}

// peerFirst is BenchmarkFirstTurnTelegram's round with a peer: the first
// turn of firstTurnChats new chats, in + out.
func peerFirst(b *testing.B, pb peerBin, claude string) []time.Duration {
	p := startPeer(b, pb, claude)
	defer p.stop()
	ids := map[string]int{}
	for k := range firstTurnChats {
		chat := int64(outChat + 1 + k)
		mark := fmt.Sprintf("q%dz%dq", chat, 0)
		ids[mark] = p.turn(b, chat, mark)
		time.Sleep(outPace)
	}
	var out []time.Duration
	for _, s := range turnSpans(b, p.srv, runEvents(p.runLog), ids, p.name+" first turn") {
		out = append(out, s.in()+s.out())
	}
	return out
}

// peerLoad is BenchmarkLoadTelegram's round with a peer. A message it
// drops has no reply, so the round ends when every message has one or
// none came for peerLoadQuiet; the rate is the answered ones over the
// time to the last.
func peerLoad(b *testing.B, pb peerBin, claude string) (rate float64, lost, doubled int) {
	p := startPeer(b, pb, claude)
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

// median is the middle of v (the upper one of an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func BenchmarkPeerTelegram(b *testing.B) {
	peers := availablePeers(b)
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		// The loads first, before the rounds' hosts (stopped at the end)
		// idle beside them.
		bestRate := 0.0
		for _, pb := range peers {
			rate, lost, doubled := peerLoad(b, pb, claude)
			b.Logf("load: %s %.0f msg/s, %d lost, %d doubled", pb.name, rate, lost, doubled)
			b.ReportMetric(rate, pb.name+"-msgs/s")
			b.ReportMetric(float64(lost), pb.name+"-lost")
			bestRate = max(bestRate, rate)
		}
		warm := int(runner.DefaultWarmMemory(procmem.MemTotal()) / realCLIMemory)
		budget := loadClawhostRound(b, 0, claude, Attrs{"max_warm": warm})
		four := loadClawhostRound(b, 1, claude, nil)
		collect := loadClawhostRoundWith(b, 2, claude, Attrs{"max_warm": warm}, loadRoundOptions{extra: "queue {\n  mode = \"collect\"\n}\n"})
		b.Logf("load: clawhost %.0f msg/s (max_warm %d, the real CLI's budget), %.0f msg/s (max_warm 4), %.0f msg/s (the budget, queue mode \"collect\")",
			budget.rate(), warm, four.rate(), collect.rate())

		peerIO, peerCPU, peerFirstIO := map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
		var fullIO, fullCPU, procIO, defFirstIO, offFirstIO []float64
		for r := range peerRounds {
			for _, pb := range peers {
				pw, pf := peerWarm(b, pb, claude), peerFirst(b, pb, claude)
				peerIO[pb.name] = append(peerIO[pb.name], msOf(percentile(pw.inOut, 50)))
				peerCPU[pb.name] = append(peerCPU[pb.name], msOf(pw.hostCPU))
				peerFirstIO[pb.name] = append(peerFirstIO[pb.name], msOf(percentile(pf, 50)))
				b.Logf("round %d: %s: warm in + out p50 %.2f ms, first turn p50 %.2f ms", r+1, pb.name, peerIO[pb.name][r], peerFirstIO[pb.name][r])
			}
			full := outRound(b, claude)
			proc := outRound(b, claude, Attrs{"durability": "process"})
			fullIO, fullCPU = append(fullIO, msOf(percentile(full.inOut, 50))), append(fullCPU, msOf(full.hostCPU+full.pluginCPU))
			procIO = append(procIO, msOf(percentile(proc.inOut, 50)))
			srv, d, runLog := outHost(b, claude, Attrs{"listen": ""}, Attrs{"max_warm": 0})
			def := measureFirstTurns(b, srv, d, runLog, firstTurnChats)
			srv, d, runLog = outHost(b, claude, Attrs{"listen": ""}, Attrs{"spare": false})
			off := measureFirstTurns(b, srv, d, runLog, firstTurnChats)
			defFirstIO, offFirstIO = append(defFirstIO, msOf(percentile(def.inOut, 50))), append(offFirstIO, msOf(percentile(off.inOut, 50)))
			b.Logf("round %d: clawhost: warm in + out p50 %.2f ms (full) %.2f (process); first turn p50 %.2f ms (defaults, %d of %d on the spare) %.2f (spare = false)",
				r+1, fullIO[r], procIO[r], defFirstIO[r], def.spare, firstTurnChats, offFirstIO[r])
		}
		bestIO, bestFirst := 0.0, 0.0
		for _, pb := range peers {
			io, first := median(peerIO[pb.name]), median(peerFirstIO[pb.name])
			b.ReportMetric(io, pb.name+"-inout-p50-ms")
			b.ReportMetric(median(peerCPU[pb.name]), pb.name+"-cpu-ms/turn")
			b.ReportMetric(first, pb.name+"-first-inout-p50-ms")
			if bestIO == 0 || io < bestIO {
				bestIO = io
			}
			if bestFirst == 0 || first < bestFirst {
				bestFirst = first
			}
		}
		b.ReportMetric(median(fullIO), "full-inout-p50-ms")
		b.ReportMetric(median(procIO), "process-inout-p50-ms")
		b.ReportMetric(median(fullIO)/bestIO, "full-inout-x-best")
		b.ReportMetric(median(procIO)/bestIO, "process-inout-x-best")
		b.ReportMetric(median(fullCPU), "clawhost-cpu-ms/turn")
		b.ReportMetric(median(defFirstIO), "default-first-inout-p50-ms")
		b.ReportMetric(median(offFirstIO), "started-first-inout-p50-ms")
		b.ReportMetric(median(defFirstIO)/bestFirst, "default-first-x-best")
		b.ReportMetric(budget.rate(), "clawhost-msgs/s")
		b.ReportMetric(four.rate(), "clawhost-warm4-msgs/s")
		b.ReportMetric(budget.rate()/bestRate, "load-x-best")
		b.ReportMetric(four.rate()/bestRate, "load-warm4-x-best")
		b.ReportMetric(collect.rate(), "clawhost-collect-msgs/s")
		b.ReportMetric(collect.rate()/bestRate, "load-collect-x-best")
	}
}

func BenchmarkPeerIdleTelegram(b *testing.B) {
	peers := availablePeers(b)
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		tg := telegramtest.NewServer(tgToken)
		b.Cleanup(tg.Close)
		p := tgPlugin(tg.APIEndpoint())
		delete(p.Config, "poll_timeout")
		h := startIdleHost(b, Host{Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}}, Plugins: []Plugin{p}},
			map[string]string{"tg": "clawhost-telegram"})
		var running []*peerGateway
		for _, pb := range peers {
			running = append(running, startPeer(b, pb, claude))
		}
		h.waitReady(b, nil)
		ready := time.Now()
		time.Sleep(idleSettle)
		cpu0, t0 := h.cpu(), time.Now()
		peer0 := map[string]time.Duration{}
		for _, g := range running {
			peer0[g.name] = cpuTime(g.pid)
		}
		time.Sleep(time.Until(ready.Add(idleFor)))
		cpu1, t1 := h.cpu(), time.Now()
		perS := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / t1.Sub(t0).Seconds() }
		pids := h.pids()
		anon, rss := anonMB(pids[""])+anonMB(pids["tg"]), rssMB(pids[""])+rssMB(pids["tg"])
		bestAnon, bestRSS := 0.0, 0.0
		for _, g := range running {
			a, r := anonMB(g.pid), rssMB(g.pid)
			b.ReportMetric(a, g.name+"-anon-MB")
			b.ReportMetric(r, g.name+"-rss-MB")
			b.ReportMetric(perS(cpuTime(g.pid)-peer0[g.name]), g.name+"-idle-cpu-ms/s")
			if bestAnon == 0 || a < bestAnon {
				bestAnon = a
			}
			if bestRSS == 0 || r < bestRSS {
				bestRSS = r
			}
		}
		b.ReportMetric(anon, "host-tg-anon-MB")
		b.ReportMetric(rss, "host-tg-rss-MB")
		b.ReportMetric(anon/bestAnon, "anon-x-best")
		b.ReportMetric(rss/bestRSS, "rss-x-best")
		b.ReportMetric(perS(cpu1-cpu0), "idle-cpu-ms/s")
	}
	b.ReportMetric(0, "ns/op")
}
