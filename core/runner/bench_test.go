package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/procmem"
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

// BenchmarkWarmRSS starts one warm process per iteration and reports their mean VmRSS
// (claude's own, inside the sandbox) and the mean Pss of each one's process tree (what
// the warm_memory budget counts); no memory budget, so every one stays warm.
func BenchmarkWarmRSS(b *testing.B) {
	e := newReal(b, func(c *Config) { c.MaxWarm, c.WarmMemory = 64, NoWarmMemoryLimit })
	var keys []string
	var roots []int
	for i := 0; i < b.N; i++ {
		res := runTurn(b, e.r, TurnRequest{Key: strconv.Itoa(i), SessionID: uuid.NewString(), NewSession: true, Prompt: "hi"})
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		keys, roots = append(keys, strconv.Itoa(i)), append(roots, res.PID)
	}
	b.StopTimer()
	var rss, pss float64
	warm := e.r.Warm()
	for i, k := range keys {
		rss += vmRSS(warm[k])
		if v, ok := procmem.Tree(roots[i]); ok {
			pss += float64(v) / (1 << 20)
		}
	}
	b.ReportMetric(rss/float64(len(keys)), "rss-MB/process")
	b.ReportMetric(pss/float64(len(keys)), "tree-pss-MB/process")
}

// BenchmarkManyChats's fake claude: its start delay (FAKE_CLAUDE_START_MS), and a while
// from 5 s into the run during which every start takes 400 ms longer (a machine busy with
// something else for that long; 0, the default, for none).
var (
	manyChatsStart  = flag.Duration("manychats.start", 80*time.Millisecond, "BenchmarkManyChats: the fake claude's start delay")
	manyChatsHiccup = flag.Duration("manychats.hiccup", 0, "BenchmarkManyChats: how long starts take 400 ms longer, from 5 s into the run")
)

// BenchmarkManyChats: many chats share a few warm processes and MaxConcurrent 4 slots.
// It drives the fake claude (the test binary), which takes FAKE_CLAUDE_START_MS (80 ms,
// -manychats.start) plus FAKE_CLAUDE_RESUME_MS (10 ms) per earlier prompt to start and
// FAKE_CLAUDE_TURN_MS (30 ms) per turn, so a start costs several turns' time as with the
// real CLI. Each chat sends 3 turns; a chat's next message comes a few messages after its
// previous one (a conversation), the chats interleaved at random (fixed seed). Messages
// arrive at a fixed interval whether or not earlier turns are done. Reported: Run →
// Result latency of the turns (p50, p99), claude processes started per turn, restarts per
// turn (starts beyond each chat's first turn: a chat whose warm process was evicted), and
// the p50 of the measured start time (spawn to first output, Result.Wait.Startup). Run
// with -benchtime 1x; its flags go after -args.
//
// every=40ms and every=25ms: 200 chats, one agent, MaxWarm 4. Every 40 ms the slots keep
// up; every 25 ms they do not when most turns start a process.
//
// agents=3: 3 agents × 100 chats, each agent's MaxWarm 4 (12 warm processes at most in
// all), a turn every 40 ms. agents=1 is the same 300 chats and the same messages in the
// same order, one agent with MaxWarm 12: the pair differs only in the pool being split
// per agent, so compare agents=3 with agents=1, not with every=40ms (fewer chats, a third
// of the warm processes, a shorter run).
//
// The load is near the slots' capacity: 4 slots every 40 ms leave 160 ms of slot time per
// turn; a turn costs 30 ms and a start about 130 ms as measured (the 80 ms delay, the exec
// and the Go runtime's start on a busy machine). Kept warm, about a third of the turns
// start a process (each chat's first) and the slots keep up, with one agent or three
// alike. When starts are slow enough that even that is more slot time than arrives
// (about 350 ms measured; -manychats.start=400ms), turns wait longer than the scheduler's
// warm preference (4 start times, sched.go): a chat's next turn, which begins to wait for
// a slot only when its previous turn ends, waits behind the backlog while the cold turns
// ahead of it evict its idle process. Most turns then start a process, and the backlog
// grows for the rest of the run (latency in seconds, about 0.8 starts per turn), again
// for one agent and three alike. A busy spell of a few seconds is absorbed
// (-manychats.hiccup=3s: p99 about 1 s, starts per turn unchanged).
func BenchmarkManyChats(b *testing.B) {
	for _, interval := range []time.Duration{40 * time.Millisecond, 25 * time.Millisecond} {
		b.Run("every="+interval.String(), func(b *testing.B) { benchManyChats(b, interval, 200, 4, nil) })
	}
	b.Run("agents=1", func(b *testing.B) { benchManyChats(b, 40*time.Millisecond, 300, 12, nil) })
	b.Run("agents=3", func(b *testing.B) { benchManyChats(b, 40*time.Millisecond, 300, 4, []string{"ops", "dev", "docs"}) })
}

// manyChatsTurns is the turns each chat of BenchmarkManyChats sends.
const manyChatsTurns = 3

// manyChatsMsg is one message of BenchmarkManyChats: its place in the order, its chat.
type manyChatsMsg struct {
	at   float64
	chat int
}

// manyChatsTraffic is the messages of chats chats in the order they are sent, the same
// for every row with as many chats (a fixed seed).
func manyChatsTraffic(chats int) []manyChatsMsg {
	rng := rand.New(rand.NewPCG(1, 2))
	var msgs []manyChatsMsg
	for c := 0; c < chats; c++ {
		at := rng.Float64() * float64(chats*manyChatsTurns)
		for range manyChatsTurns {
			msgs = append(msgs, manyChatsMsg{at, c})
			at += 1 + rng.ExpFloat64()*3
		}
	}
	slices.SortFunc(msgs, func(x, y manyChatsMsg) int { return cmp.Compare(x.at, y.at) })
	return msgs
}

// benchManyChats sends the turns of chats chats, one every interval. Without agents one
// agent has MaxWarm maxWarm; with agents, chat i is agent agents[i%len(agents)]'s, each
// agent with MaxWarm maxWarm (and the runner's MaxWarm their sum).
func benchManyChats(b *testing.B, interval time.Duration, chats, maxWarm int, agents []string) {
	msgs := manyChatsTraffic(chats)
	var lat, startup []time.Duration
	starts := 0
	for range b.N {
		f := newFake(b, func(c *Config) {
			c.MaxWarm, c.MaxConcurrent, c.Timeout = maxWarm, 4, 5*time.Minute
			c.Env["FAKE_CLAUDE_START_MS"] = strconv.FormatInt(manyChatsStart.Milliseconds(), 10)
			c.Env["FAKE_CLAUDE_RESUME_MS"] = "10"
			c.Env["FAKE_CLAUDE_TURN_MS"] = "30"
			if *manyChatsHiccup > 0 {
				from := time.Now().Add(5 * time.Second)
				c.Env["FAKE_CLAUDE_SLOW_FROM_MS"] = strconv.FormatInt(from.UnixMilli(), 10)
				c.Env["FAKE_CLAUDE_SLOW_TO_MS"] = strconv.FormatInt(from.Add(*manyChatsHiccup).UnixMilli(), 10)
				c.Env["FAKE_CLAUDE_SLOW_MS"] = "400"
			}
			if len(agents) > 0 {
				c.MaxWarm = maxWarm * len(agents)
				c.Agents = map[string]Config{}
				for _, id := range agents {
					a := *c
					a.Agents, a.MaxWarm = nil, maxWarm
					c.Agents[id] = a
				}
			}
		})
		sids := make([]string, chats)
		for i := range sids {
			sids[i] = uuid.NewString()
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		began := time.Now()
		for j, m := range msgs {
			time.Sleep(time.Until(began.Add(time.Duration(j) * interval)))
			first := !slices.ContainsFunc(msgs[:j], func(e manyChatsMsg) bool { return e.chat == m.chat })
			start := time.Now()
			req := TurnRequest{Key: "chat-" + strconv.Itoa(m.chat), SessionID: sids[m.chat], NewSession: first, Prompt: "turn " + strconv.Itoa(j)}
			if len(agents) > 0 {
				req.Agent = agents[m.chat%len(agents)]
			}
			turn, err := f.r.Run(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := turn.Wait()
				d := time.Since(start)
				if res.Err != nil {
					b.Error(res.Err)
				}
				mu.Lock()
				lat = append(lat, d)
				if res.NewProcess && res.Wait.Startup > 0 {
					startup = append(startup, res.Wait.Startup)
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if len(agents) > 0 { // each agent within its own MaxWarm
			per := map[string]int{}
			for k := range f.r.Warm() {
				i, _ := strconv.Atoi(strings.TrimPrefix(k, "chat-"))
				per[agents[i%len(agents)]]++
			}
			for id, n := range per {
				if n > maxWarm {
					b.Fatalf("agent %s has %d warm processes, more than its max_warm %d", id, n, maxWarm)
				}
			}
		}
		starts += len(f.starts(b))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return float64(d[int(p*float64(len(d)-1)+0.5)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(lat, 0.50), "turn-p50-ms")
	b.ReportMetric(pct(lat, 0.99), "turn-p99-ms")
	b.ReportMetric(float64(starts)/float64(len(lat)), "starts/turn")
	b.ReportMetric(float64(starts-chats*b.N)/float64(len(lat)), "restarts/turn")
	b.ReportMetric(pct(startup, 0.50), "start-p50-ms")
}

// BenchmarkSandboxStart: what a sandboxed start costs the host beyond
// claude's own, with each chat's claude state (chatstate.go) and without:
// "prepare" is the host's work before exec (the mount list, the chat's
// state directory on a later start), "exec" a bwrap with that mount list
// running /bin/true. A warm turn pays neither (the process is reused).
//
// The exec/ rows break a start down, each adding to the one before, all
// running /bin/true: "plain" without bwrap, "bwrap" with bwrap's own
// process, mount namespace and root (--ro-bind / /), "pid" adds the pid
// namespace with its init process (--unshare-pid --die-with-parent),
// "dev-proc" a /dev and /proc of the sandbox's own; chat-state/exec is the
// whole list. Each reports wall time per start (ns/op) and the mounts it
// asks of bwrap beyond the first.
//
//	go test -run '^$' -bench SandboxStart -benchtime 200x ./core/runner
func BenchmarkSandboxStart(b *testing.B) {
	needBwrap(b)
	data, ws := b.TempDir(), b.TempDir()
	cfgDir := filepath.Join(data, "claude")
	for _, d := range []string{cfgDir, filepath.Join(data, "runner", "t", "1"), filepath.Join(ws, ".claude")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfgDir, ".claude.json"), []byte(`{"userID":"x","projects":{}}`), 0o600); err != nil {
		b.Fatal(err)
	}
	c := Config{Workspace: ws, Hide: []string{data}}
	r := &Runner{cfg: Config{StateDir: filepath.Join(data, "runner")}.withDefaults()}
	r.sandboxes.Store(&map[sandboxKey]agentSandbox{sandboxKeyOf(&c): {bwrap: "bwrap"}})
	env := []string{"HOME=" + data, "CLAUDE_CONFIG_DIR=" + cfgDir}
	run := func(b *testing.B, exe string, argv []string) {
		b.ReportMetric(float64(bwrapMounts(argv)), "mounts")
		for i := 0; i < b.N; i++ {
			if out, err := sandboxCmd(b, exe, argv...).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	}
	b.Run("exec/plain", func(b *testing.B) { run(b, "/bin/true", nil) })
	for _, tc := range []struct{ name, args string }{
		{"bwrap", "--ro-bind / /"},
		{"pid", "--die-with-parent --unshare-pid --ro-bind / /"},
		{"dev-proc", "--die-with-parent --unshare-pid --ro-bind / / --dev /dev --proc /proc"},
	} {
		b.Run("exec/"+tc.name, func(b *testing.B) { run(b, "bwrap", append(strings.Fields(tc.args), "--", "/bin/true")) })
	}
	for _, tc := range []struct {
		name  string
		state string
	}{{"shared-config", ""}, {"chat-state", chatStateDir(r.cfg.StateDir, "agent:main:tg:direct:1")}} {
		l := sandboxLaunch{tmp: filepath.Join(data, "runner", "t", "1"), env: env, chatState: tc.state, sessionID: uuid.NewString(), resume: true}
		b.Run(tc.name+"/prepare", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := sandboxedArgv(r, &c, "/bin/true", l); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/exec", func(b *testing.B) {
			exe, argv, err := sandboxedArgv(r, &c, "/bin/true", l)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s %s", exe, strings.Join(argv, " "))
			run(b, exe, argv)
		})
	}
}

// BenchmarkWarmMemory: the warm_memory budget under a realistic mix — 50 chats, Zipf-like
// activity (chat i writes about 1/(i+1)^1.1 as often as the busiest), 300 turns one every
// 40 ms on 4 slots — with a 2 GB budget beside the same traffic with every chat kept warm
// (no limit), interleaved in each iteration. The fake claude (BenchmarkManyChats's
// timings: 80 ms to start, 10 ms more per earlier prompt to resume, 30 ms a turn) is
// small, so the pool is told each process holds 210 MB, the real CLI's figure (the meter
// port): the budget keeps 9 warm. Reported, for returning chats' turns (not a chat's
// first): Run → claude's first text, p50 with the budget, p50 all warm and their ratio
// (the goal: at most 1.2); with the budget, the p50 of those that ran warm and of those
// that started claude, the share that ran warm, and claude starts per turn. Run with
// -benchtime 1x.
func BenchmarkWarmMemory(b *testing.B) {
	const chats, turns, every = 50, 300, 40 * time.Millisecond
	rng := rand.New(rand.NewPCG(5, 8))
	zipf := rand.NewZipf(rng, 1.1, 1, chats-1)
	order := make([]int, turns)
	for i := range order {
		order[i] = int(zipf.Uint64())
	}
	var budget, all, warmLat, coldLat []time.Duration
	var starts, turnsRun int
	for range b.N {
		for _, limited := range []bool{false, true} {
			lat, warm, st := benchWarmMemory(b, order, chats, every, limited)
			if limited {
				budget = append(budget, lat...)
				for i, d := range lat {
					if warm[i] {
						warmLat = append(warmLat, d)
					} else {
						coldLat = append(coldLat, d)
					}
				}
				starts += st
				turnsRun += len(order)
			} else {
				all = append(all, lat...)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(p50ms(budget), "budget-p50-ms")
	b.ReportMetric(p50ms(all), "allwarm-p50-ms")
	b.ReportMetric(p50ms(budget)/p50ms(all), "p50-ratio")
	b.ReportMetric(p50ms(warmLat), "budget-warm-p50-ms")
	b.ReportMetric(p50ms(coldLat), "budget-cold-p50-ms")
	b.ReportMetric(float64(len(warmLat))/float64(len(budget)), "warm-share")
	b.ReportMetric(float64(starts)/float64(turnsRun), "starts/turn")
}

// benchWarmMemory runs the turns of BenchmarkWarmMemory (chat order[j] writes the j-th
// message) on a runner with a 2 GB budget of 210 MB processes (limited) or none, and
// returns the returning chats' times to first text, whether each ran warm, and the
// claude processes started.
func benchWarmMemory(b *testing.B, order []int, chats int, every time.Duration, limited bool) ([]time.Duration, []bool, int) {
	f := newFake(b, func(c *Config) {
		c.MaxConcurrent, c.Timeout, c.WarmMemory = 4, 5*time.Minute, NoWarmMemoryLimit
		if limited {
			c.WarmMemory = 2 << 30
		}
		c.Env["FAKE_CLAUDE_START_MS"] = "80"
		c.Env["FAKE_CLAUDE_RESUME_MS"] = "10"
		c.Env["FAKE_CLAUDE_TURN_MS"] = "30"
	})
	f.r.meter, f.r.unmeasured = &recordingMeter{dflt: procMemory}, procMemory
	sids := make([]string, chats)
	for i := range sids {
		sids[i] = uuid.NewString()
	}
	seen := make([]bool, chats)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var lat []time.Duration
	var warm []bool
	began := time.Now()
	for j, c := range order {
		time.Sleep(time.Until(began.Add(time.Duration(j) * every)))
		first := !seen[c]
		seen[c] = true
		start := time.Now()
		turn, err := f.r.Run(context.Background(), TurnRequest{Key: "chat-" + strconv.Itoa(c), SessionID: sids[c], NewSession: first, Prompt: "turn " + strconv.Itoa(j)})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var text time.Time
			var res *Result
			for e := range turn.Events() {
				switch {
				case e.Kind == EventText && text.IsZero():
					text = time.Now()
				case e.Kind == EventResult:
					res = e.Result
				}
			}
			if res == nil || res.Err != nil || text.IsZero() {
				b.Errorf("turn %d: %+v", j, res)
				return
			}
			if first {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, text.Sub(start))
			warm = append(warm, res.Wait.Start == StartWarm)
		}()
		if limited {
			if p := f.r.Pool(); p.Memory > 2<<30+procMemory { // the one starting may be counted before its room was made
				b.Fatalf("warm processes hold %d MB of a 2048 MB budget", p.Memory>>20)
			}
		}
	}
	wg.Wait()
	return lat, warm, len(f.starts(b))
}

// bwrapMounts counts the mounts argv asks of bwrap beyond its first (--ro-bind / /).
func bwrapMounts(argv []string) int {
	n := 0
	for _, a := range argv {
		switch a {
		case "--bind", "--ro-bind", "--tmpfs", "--dev", "--proc":
			n++
		case "--":
			return max(0, n-1)
		}
	}
	return max(0, n-1)
}

// BenchmarkDecodeResultLine: claude 2.1.330's result line on the reply's path, decoded
// once (decodeLine) against as a message and then again as a result (before).
func BenchmarkDecodeResultLine(b *testing.B) {
	raw := []byte(`{"duration_api_ms":25,"stop_reason":"end_turn","session_id":"ef493ad6-9ada-4b0c-8210-8b2c62bc3304","total_cost_usd":0.017744,"usage":{"input_tokens":4426,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-opus-5-5":{"inputTokens":4426,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.017744,"contextWindow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","fast_mode_disabled_reason":"sdk_opt_in_required","subagent_stats":{"spawned":0,"requested":{"background":0,"foreground":0,"unset":0},"started_in_background":0,"max_depth":0,"spawned_by_subagents":0,"completed":0,"failed":0,"killed":{"parent":0,"user":0,"system":0},"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{}},"safety_stops":0,"is_error":false,"num_turns":1,"subtype":"success","api_error_status":null,"result":"echo: hello","ttft_ms":146,"type":"result","duration_ms":157,"uuid":"91202160-9369-43de-a29b-5f9bf1fcd52c","begun_message_ids":["msg_fake_1b2f05205a1a49debf4a"],"ttft_stream_ms":144,"time_to_request_ms":132,"first_content_frame_ms":145,"queued_turn_count":0,"result_index":0,"model_usage_since_last_result":{"claude-opus-5-5":{"inputTokens":4426,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.017744,"contextWindow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}}}`)
	b.Run("once", func(b *testing.B) {
		for b.Loop() {
			ln, _ := decodeLine(raw)
			var wr wireResult
			if ln.res != nil {
				wr = *ln.res
			}
			_ = wr
		}
	})
	b.Run("twice", func(b *testing.B) {
		for b.Loop() {
			var m wireMsg
			_ = json.Unmarshal(raw, &m)
			var wr wireResult
			_ = json.Unmarshal(raw, &wr)
		}
	})
}

// sandboxedArgv is what PerStart runs for the process l describes, of c, running path:
// bwrap and its argv, the sandbox prepared first (as spawn does).
func sandboxedArgv(r *Runner, c *Config, path string, l sandboxLaunch) (string, []string, error) {
	l.exe = path
	if err := r.prepared(c, l); err != nil {
		return "", nil, err
	}
	return "bwrap", append(c.sandboxSpecFor(l).BwrapArgs(), path), nil
}

// sandboxCmd is exec.Command(exe, argv...) for the bwrap argv sandboxedArgv returns: the
// syscall filter on descriptor 3, as sandbox.PerStart starts it.
func sandboxCmd(tb testing.TB, exe string, argv ...string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(exe, argv...)
	f, err := confine.FilterFile()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	cmd.ExtraFiles = []*os.File{f}
	return cmd
}
