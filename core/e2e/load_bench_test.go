package e2e

// BenchmarkLoadTelegram: the throughput of the whole path — fake Bot API,
// the clawhost-telegram plugin process, clawhost, a fake claude — against
// the same harness with an instant echo bot in place of clawhost.
//
//	make build && go test ./core/e2e -run '^$' -bench LoadTelegram -benchtime 1x
//
// Each round queues loadChats×loadPerChat text messages in private chats
// on a fresh fake Bot API, all up front (round robin over the chats, as
// fast as PushText goes: ~20 ms for 2,000), and measures from the first
// push until every message has its reply. The echo and clawhost rounds
// alternate, loadRounds each, and the medians are reported: the machine
// is shared, so only the ratio within one run means something.
//
// A message is answered when its marker word ("q<chat>z<k>q") appears in
// exactly one message the bot shows in that chat (after edits). The fake
// claude echoes its prompt, which holds the message's text, so this holds
// in every queue mode: in followup (the default) each message is a turn
// of its own; in collect one reply may carry several markers. A marker
// seen in no reply is lost, one seen in two is doubled; either fails the
// benchmark, as does a reply in the wrong chat or with no marker.
//
// With the default agent settings every message starts a claude process
// (claude-starts = 2,000): 200 chats take turns through max_warm = 4 warm
// processes, so a chat's next turn finds its process evicted. The fake
// claude is a small static binary of its own (fakeClaudeBin), so its
// starts cost what a process start costs, not a test binary's init. -load.agent
// (e.g. -args -load.agent='max_warm = 200') shows what the rest of the
// path reaches without that.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const (
	loadChats   = 200
	loadPerChat = 10
	loadRounds  = 3
	// loadLimit bounds one round, from the first push to the last reply.
	loadLimit = 2 * time.Minute
	// loadEchoWorkers is how many sendMessage calls the echo bot has in
	// flight at once.
	loadEchoWorkers = 8
	// loadFirstChat is the id of the first chat (and of its user).
	loadFirstChat = 5_000_001
)

// loadHost is clawhost with only the telegram plugin, open DMs (every
// chat reaches the agent) and the defaults otherwise: queue mode, debounce
// (off), streaming and max_concurrent; agent and -load.agent are more
// settings of its agent block, runLog the fake claude's run log. max_warm
// is 4 unless they set it: the fake claude holds a few MB where the real
// one holds ~200, so the default warm_memory would keep every chat warm
// and the rounds would no longer measure the starts they are about.
func loadHost(dir, claude, runLog string, agent Attrs, endpoint string) Host {
	attrs := Attrs{"workspace": "./workspace"}
	if !strings.Contains(*loadAgent, "max_warm") {
		attrs["max_warm"] = 4
	}
	for k, v := range agent {
		attrs[k] = v
	}
	return Host{
		Dir:      dir,
		LogLevel: "-",
		Agent: Agent{Command: claude, Attrs: attrs, Raw: *loadAgent,
			Env: map[string]string{fakeclaude.EnvVar: "1", "CLAWHOST_FAKE_CLAUDE_LOG": runLog}},
		Access:  Attrs{"dm_policy": "open"},
		Plugins: []Plugin{tgPlugin(endpoint)},
	}
}

// loadAgent adds settings to the agent block of the load benchmarks'
// clawhost rounds, to try a pool between the two they measure, e.g.
// -args -load.agent='max_warm = 50' with BenchmarkLoadTelegram.
var loadAgent = flag.String("load.agent", "", "extra settings of the agent block in the clawhost rounds of BenchmarkLoadTelegram and BenchmarkLoadTelegramWarm (which sets max_warm and max_concurrent itself)")

var loadMarkerRE = regexp.MustCompile(`q(\d+)z(\d+)q`)

func BenchmarkLoadTelegram(b *testing.B) {
	benchLoad(b, nil)
}

// loadWarmAgent keeps a claude process warm for every chat of the load
// and lets 64 turns run at once, so that a round starts claude once per
// chat (200 of 2,000 turns) instead of at nearly every turn: what the
// rest of the path (the Telegram plugin, the host, the journal, the
// turn over claude's stdin and stdout) carries when agent starts do not
// dominate.
var loadWarmAgent = Attrs{"max_warm": 200, "max_concurrent": 64}

// BenchmarkLoadTelegramWarm is BenchmarkLoadTelegram with loadWarmAgent.
func BenchmarkLoadTelegramWarm(b *testing.B) {
	benchLoad(b, loadWarmAgent)
}

// BenchmarkLoadTelegramRealBudget is BenchmarkLoadTelegram with as many
// warm processes as the default warm_memory keeps of the real CLI on this
// machine (a quarter of its memory, ≈ 210 MB a claude: 28 on 23 GB), not
// the fake claude's 4: the throughput a user with the real CLI and the
// defaults gets when 200 chats write at once (issue 84, goal 5).
func BenchmarkLoadTelegramRealBudget(b *testing.B) {
	warm := int(runner.DefaultWarmMemory(procmem.MemTotal()) / realCLIMemory)
	benchLoad(b, Attrs{"max_warm": warm})
	b.ReportMetric(float64(warm), "max_warm") // after b.Loop, which drops what came before
}

// realCLIMemory is what one warm claude of the real CLI 2.1.330 holds
// (docs/warm-memory.md: 184–210 MB resident).
const realCLIMemory = 210 << 20

// benchLoad runs loadRounds interleaved rounds of the echo bot and of
// clawhost (agent: extra settings of its agent block) and reports the
// medians.
func benchLoad(b *testing.B, agent Attrs) {
	claude := fakeClaudeBin(b, b.TempDir()) // before b.Loop: not timed
	for b.Loop() {
		var echo, claw []loadResult
		for r := range loadRounds {
			echo = append(echo, loadEchoRound(b))
			claw = append(claw, loadClawhostRound(b, r, claude, agent))
			b.Logf("round %d: echo %.0f msg/s, clawhost %.0f msg/s (%v, %d claude starts)",
				r+1, echo[r].rate(), claw[r].rate(), claw[r].elapsed.Round(time.Millisecond), claw[r].starts)
		}
		e, c := loadMedian(echo), loadMedian(claw)
		b.ReportMetric(c.rate(), "clawhost-msgs/s")
		b.ReportMetric(e.rate(), "echo-msgs/s")
		b.ReportMetric(100*c.rate()/e.rate(), "ratio-%")
		b.ReportMetric(float64(c.lost), "lost")
		b.ReportMetric(float64(c.doubled), "doubled")
		b.ReportMetric(float64(c.starts), "claude-starts")
	}
}

// loadResult is one round.
type loadResult struct {
	elapsed       time.Duration
	lost, doubled int
	starts        int    // claude processes started (clawhost rounds)
	sandbox       string // the sandbox the host reported (loadRoundOptions.sandbox)
}

func (r loadResult) rate() float64 {
	return float64(loadChats*loadPerChat) / r.elapsed.Seconds()
}

func loadMedian(rs []loadResult) loadResult {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b loadResult) int { return int(a.elapsed - b.elapsed) })
	return s[len(s)/2]
}

// loadEchoRound runs a round against the echo bot: the harness's ceiling.
func loadEchoRound(b *testing.B) loadResult {
	srv := telegramtest.NewServer(tgToken)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		echoBot(ctx, srv.URL()+"/bot"+tgToken+"/", loadEchoWorkers)
	}()
	defer func() { cancel(); <-done }()
	return loadRun(b, srv, "echo")
}

// loadClawhostRound runs a round against a fresh clawhost, with agent
// added to its agent block.
func loadClawhostRound(b *testing.B, round int, claude string, agent Attrs) loadResult {
	return loadClawhostRoundWith(b, round, claude, agent, loadRoundOptions{})
}

// loadRoundOptions are a clawhost round's settings beyond its agent's.
type loadRoundOptions struct {
	// as is the user clawhost runs as (LaunchAs); nil: the test's.
	as *hostUser
	// sandbox turns the host's admin endpoint on and asks it, after the
	// round, which sandbox its claudes ran in (loadResult.sandbox).
	sandbox bool
	// extra is more of the host's configuration (Host.Extra), e.g. its
	// queue block.
	extra string
}

// loadClawhostRoundWith is loadClawhostRound with o.
func loadClawhostRoundWith(b *testing.B, round int, claude string, agent Attrs, o loadRoundOptions) loadResult {
	srv := telegramtest.NewServer(tgToken)
	defer srv.Close()
	dir := filepath.Join(b.TempDir(), fmt.Sprintf("round%d", round))
	if o.as != nil {
		// hostUser.own opens the one directory above the host's to the
		// user, t.TempDir's own: the host's is a t.TempDir.
		dir = b.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	// In the workspace: claude's sandbox (bubblewrap, on by default)
	// lets it write there only, and a run log it cannot write counts no
	// starts.
	runLog := filepath.Join(dir, "workspace", "claude-runs.jsonl")
	h := loadHost(dir, claude, runLog, agent, srv.APIEndpoint())
	h.Extra = o.extra
	if o.sandbox {
		h.Admin = Attrs{"listen": sdktest.FreeAddr(b)}
	}
	d := LaunchAs(b, h.Write(b), o.as)
	defer d.stop()
	assertRunsAs(b, d, o.as)
	// Ready: the plugin polls and the host has published the command menu.
	deadline := time.Now().Add(tgWait)
	for len(srv.Requests("getUpdates")) == 0 || len(srv.Commands()) == 0 {
		if time.Now().After(deadline) {
			b.Fatalf("clawhost not ready after %v:\n%s", tgWait, d.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	res := loadRun(b, srv, "clawhost")
	res.starts = loadClaudeStarts(runLog)
	if o.sandbox {
		res.sandbox = statusSandbox(b, d.cfgPath)
	}
	return res
}

// loadClaudeStarts counts the fake claude processes of a run log.
func loadClaudeStarts(path string) int {
	data, _ := os.ReadFile(path)
	n := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		var ev fakeclaude.RunEvent
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "proc" {
			n++
		}
	}
	return n
}

// loadRun queues the round's messages on srv, waits until each has its
// reply and checks that none is lost or doubled.
func loadRun(b *testing.B, srv *telegramtest.Server, who string) loadResult {
	return loadRunN(b, srv, who, loadChats, loadPerChat)
}

// loadRunN is loadRun with chats×perChat messages.
func loadRunN(b *testing.B, srv *telegramtest.Server, who string, chats, perChat int) loadResult {
	b.Helper()
	total := chats * perChat
	start := time.Now()
	for k := range perChat {
		for c := range chats {
			id := int64(loadFirstChat + c)
			srv.PushText(telegramtest.PrivateChat(id), telegramtest.User{ID: id, FirstName: "Load"},
				fmt.Sprintf("load message q%dz%dq", id, k))
		}
	}
	tally := newLoadTally()
	var elapsed time.Duration
	for tally.answered < total {
		if time.Since(start) > loadLimit {
			b.Fatalf("%s: %d of %d messages answered after %v", who, tally.answered, total, loadLimit)
		}
		time.Sleep(5 * time.Millisecond)
		tally.add(srv.Sent())
		elapsed = time.Since(start)
	}
	// Let late sends (a doubled reply, an edit) land before counting.
	for quiet := time.Now(); time.Since(quiet) < 300*time.Millisecond; time.Sleep(20 * time.Millisecond) {
		if tally.add(srv.Sent()) {
			quiet = time.Now()
		}
	}
	res := loadResult{elapsed: elapsed, lost: total - tally.answered}
	for _, n := range tally.count {
		res.doubled += max(0, n-1)
	}
	if res.lost > 0 || res.doubled > 0 || tally.stray > 0 {
		b.Fatalf("%s: %d lost, %d doubled, %d replies without a marker or in the wrong chat (e.g. %q)",
			who, res.lost, res.doubled, tally.stray, tally.strayExample)
	}
	return res
}

// loadTally counts the markers of the bot's messages as it shows them
// after edits.
type loadTally struct {
	seen         int               // entries of Sent processed
	shown        map[string]string // "chat/message id" → visible text
	count        map[string]int    // marker → messages showing it
	answered     int               // markers with count ≥ 1
	stray        int               // messages without a marker of their chat
	strayExample string
}

func newLoadTally() *loadTally {
	return &loadTally{shown: map[string]string{}, count: map[string]int{}}
}

// add processes the entries of sent not seen yet and reports whether
// there were any.
func (t *loadTally) add(sent []telegramtest.Sent) bool {
	if len(sent) == t.seen {
		return false
	}
	for _, s := range sent[t.seen:] {
		key := s.ChatID + "/" + strconv.Itoa(s.MessageID)
		if old, ok := t.shown[key]; ok {
			t.mark(s.ChatID, old, -1)
		}
		t.shown[key] = s.Visible
		t.mark(s.ChatID, s.Visible, +1)
	}
	t.seen = len(sent)
	return true
}

// mark adds d to the count of each marker of chat in text (once however
// often the text repeats it: "doubled" is a marker two messages show).
func (t *loadTally) mark(chat, text string, d int) {
	found := false
	seen := map[string]bool{} // a marker counts once a message
	for _, m := range loadMarkerRE.FindAllStringSubmatch(text, -1) {
		if m[1] != chat || seen[m[0]] {
			continue
		}
		found, seen[m[0]] = true, true
		before := t.count[m[0]]
		t.count[m[0]] += d
		switch after := t.count[m[0]]; {
		case before == 0 && after > 0:
			t.answered++
		case before > 0 && after == 0:
			t.answered--
		}
	}
	if !found {
		t.stray += d
		if d > 0 && t.strayExample == "" {
			t.strayExample = text
		}
	}
}

// echoBot is the ceiling: a bot that long-polls api (".../bot<token>/")
// and answers each text "echo: <text>", with workers sendMessage calls in
// flight at once, fetching the next batch while the last one is answered.
// It returns when ctx ends.
func echoBot(ctx context.Context, api string, workers int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers + 1}}
	type reply struct {
		chat int64
		text string
	}
	jobs := make(chan reply, 1024)
	for range workers {
		go func() {
			for j := range jobs {
				form := url.Values{"chat_id": {strconv.FormatInt(j.chat, 10)}, "text": {"echo: " + j.text}}
				if resp, err := echoPost(ctx, client, api+"sendMessage", form); err == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	defer close(jobs)
	offset := 0
	for ctx.Err() == nil {
		form := url.Values{"timeout": {"30"}}
		if offset > 0 {
			form.Set("offset", strconv.Itoa(offset))
		}
		resp, err := echoPost(ctx, client, api+"getUpdates", form)
		if err != nil {
			return
		}
		var body struct {
			Result []struct {
				UpdateID int `json:"update_id"`
				Message  struct {
					Chat struct {
						ID int64 `json:"id"`
					} `json:"chat"`
					Text string `json:"text"`
				} `json:"message"`
			} `json:"result"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			return
		}
		for _, u := range body.Result {
			offset = max(offset, u.UpdateID+1)
			select {
			case jobs <- reply{u.Message.Chat.ID, u.Message.Text}:
			case <-ctx.Done():
				return
			}
		}
	}
}

func echoPost(ctx context.Context, c *http.Client, u string, form url.Values) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.Do(req)
}

// fakeClaudeBin builds the fake claude into dir as a small static binary
// (once per benchmark)
// of its own (core/cmd/fakeclaude): the test binary acting as claude costs
// ~28 ms per start, which would be most of what a round measures with
// every message a claude start.
func fakeClaudeBin(tb testing.TB, dir string) string {
	tb.Helper()
	path := filepath.Join(dir, "claude")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", path, "github.com/clawhost/clawhost/core/cmd/fakeclaude")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build the fake claude: %v\n%s", err, out)
	}
	return path
}
