package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/core/chunk"
)

// claudeBin finds the real CLI: $CLAWHOST_CLAUDE_BIN or <repo>/.cache/claude-cli/node_modules/.bin/claude.
// Without it the test is skipped, unless CLAWHOST_REQUIRE_CLAUDE=1.
func claudeBin(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("CLAWHOST_CLAUDE_BIN"); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".cache", "claude-cli", "node_modules", ".bin", "claude")
			if _, err := os.Stat(p); err == nil {
				return p
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
		tb.Fatal("claude CLI not found (set CLAWHOST_CLAUDE_BIN or run npm install --prefix .cache/claude-cli @anthropic-ai/claude-code@2.1.330)")
	}
	tb.Skip("claude CLI not installed; see claudeBin")
	return ""
}

type realEnv struct {
	fake *anthropictest.Server
	r    *Runner
}

// newReal starts a fake API and a Runner driving the real CLI with a throwaway HOME.
func newReal(tb testing.TB, mut func(*Config)) *realEnv {
	tb.Helper()
	bin := claudeBin(tb)
	fake := anthropictest.New()
	tb.Cleanup(fake.Close)
	cfg := Config{
		Command: bin,
		Env: map[string]string{
			"HOME":               tb.TempDir(),
			"ANTHROPIC_BASE_URL": fake.URL(),
			"ANTHROPIC_API_KEY":  "test",
		},
		Workspace:   tb.TempDir(),
		StateDir:    tb.TempDir(),
		Timeout:     60 * time.Second,
		MaxRetries:  -1,
		KillGrace:   time.Second,
		IdleTimeout: time.Minute,
	}
	if mut != nil {
		mut(&cfg)
	}
	r, err := New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return &realEnv{fake: fake, r: r}
}

func runTurn(tb testing.TB, r *Runner, req TurnRequest) Result {
	tb.Helper()
	t, err := r.Run(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	return t.Wait()
}

func mustOK(tb testing.TB, res Result, want string) {
	tb.Helper()
	if res.Err != nil {
		tb.Fatalf("turn failed: %v (notice %q)", res.Err, res.Err.Notice)
	}
	if res.Text != want {
		tb.Fatalf("result text %q, want %q", res.Text, want)
	}
}

// waitGone waits until pid has exited (or is a zombie), bounded.
func waitGone(tb testing.TB, pid int, within time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("process %d still alive after %v", pid, within)
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// state is the field after "(comm)".
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestRealWarmFollowUpAndResume(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	sid := uuid.NewString()
	res := runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, NewSession: true, Prompt: "my name is Alice"})
	mustOK(t, res, "echo: my name is Alice")
	if !res.NewProcess || res.SessionID != sid || res.Usage.InputTokens == 0 || res.Model == "" {
		t.Fatalf("first turn: %+v", res)
	}
	first := res.PID

	res = runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, Prompt: "what is my name?"})
	mustOK(t, res, "echo: what is my name?")
	if res.NewProcess || res.PID != first {
		t.Fatalf("follow-up started a new process (pid %d, first %d)", res.PID, first)
	}
	reqs := e.fake.Requests()
	// The tools that answer after the turn are not offered to the model
	// (DefaultDisallowedTools); the others are.
	var body struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tl := range body.Tools {
		tools = append(tools, tl.Name)
	}
	for _, gone := range []string{"ScheduleWakeup", "CronCreate", "CronDelete", "CronList", "Monitor"} {
		if slices.Contains(tools, gone) {
			t.Errorf("tool %s offered to the model: %q", gone, tools)
		}
	}
	if !slices.Contains(tools, "Bash") || !slices.Contains(tools, "Read") {
		t.Errorf("tools %q: Bash and Read must stay", tools)
	}
	if got := reqs[len(reqs)-1].UserTexts(); !slices.Equal(got, []string{"my name is Alice", "what is my name?"}) {
		t.Fatalf("follow-up request history %q", got)
	}
	if got := reqs[len(reqs)-1].Header.Get("x-claude-code-session-id"); got != sid {
		t.Fatalf("session header %q, want %s", got, sid)
	}

	e.r.Stop("chat")
	waitGone(t, first, 10*time.Second)
	res = runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, Prompt: "and now?"})
	mustOK(t, res, "echo: and now?")
	if !res.NewProcess || res.SessionReset {
		t.Fatalf("turn after stop: new process %v, reset %v", res.NewProcess, res.SessionReset)
	}
	reqs = e.fake.Requests()
	want := []string{"my name is Alice", "what is my name?", "and now?"}
	if got := reqs[len(reqs)-1].UserTexts(); !slices.Equal(got, want) {
		t.Fatalf("resumed request history %q, want %q", got, want)
	}
}

func TestRealSessionMissingStartsFresh(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	res := runTurn(t, e.r, TurnRequest{SessionID: uuid.NewString(), Prompt: "hello again"})
	mustOK(t, res, "echo: hello again")
	if !res.SessionReset {
		t.Fatal("SessionReset not set after resuming a session without transcript")
	}
}

func TestRealExtraSystemPrompt(t *testing.T) {
	t.Parallel()
	e := newReal(t, func(c *Config) { c.SystemPrompt = "CONFIG-MARKER" })
	sid := uuid.NewString()
	res := runTurn(t, e.r, TurnRequest{SessionID: sid, NewSession: true, Prompt: "one", ExtraSystemPrompt: "HOOK-MARKER-1"})
	mustOK(t, res, "echo: one")
	sys := e.fake.Requests()[0].SystemText()
	if !strings.Contains(sys, "CONFIG-MARKER\n\nHOOK-MARKER-1") {
		t.Fatalf("system prompt lacks the appended text: ...%s", sys[max(0, len(sys)-200):])
	}
	res = runTurn(t, e.r, TurnRequest{SessionID: sid, Prompt: "two", ExtraSystemPrompt: "HOOK-MARKER-2"})
	mustOK(t, res, "echo: two")
	if !res.NewProcess {
		t.Fatal("changed extra system prompt did not restart the process")
	}
	last := e.fake.Requests()[len(e.fake.Requests())-1]
	if sys := last.SystemText(); !strings.Contains(sys, "HOOK-MARKER-2") || strings.Contains(sys, "HOOK-MARKER-1") {
		t.Fatalf("after change, system prompt has marker 2: %v, marker 1: %v", strings.Contains(sys, "HOOK-MARKER-2"), strings.Contains(sys, "HOOK-MARKER-1"))
	}
	if got := last.UserTexts(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("history after restart %q", got)
	}
}

func TestRealAbortAndTimeout(t *testing.T) {
	t.Parallel()
	e := newReal(t, func(c *Config) { c.PartialMessages = true })
	e.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if strings.Contains(r.LastUserText(), "stall") {
			// Part of the reply, then a long pause.
			return anthropictest.Reply{Text: "partial words... and the rest much later", Chunks: 2, ChunkDelay: time.Minute}
		}
		return anthropictest.Reply{}
	})
	sid := uuid.NewString()
	mustOK(t, runTurn(t, e.r, TurnRequest{Key: "a", SessionID: sid, NewSession: true, Prompt: "warm up"}), "echo: warm up")

	turn, err := e.r.Run(context.Background(), TurnRequest{Key: "a", SessionID: sid, Prompt: "stall please"})
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for ev := range turn.Events() {
		if ev.Kind == EventTextDelta {
			pid = e.r.Warm()["a"]
			start := time.Now()
			if !e.r.Abort("a") {
				t.Fatal("Abort found no running turn")
			}
			res := turn.Wait()
			if res.Err == nil || res.Err.Kind != KindAborted {
				t.Fatalf("after Abort: %+v", res.Err)
			}
			if !strings.HasPrefix(res.Streamed, "partial words") {
				t.Fatalf("partial text %q", res.Streamed)
			}
			// No result line, but message_start said what the request's
			// prompt cost in tokens: the ledger gets them, without a cost.
			if !res.UsageSeen || res.Usage.PromptTokens() == 0 || res.Usage.CostUSD != 0 || res.Model == "" {
				t.Fatalf("usage of the aborted turn: %+v seen %v model %q", res.Usage, res.UsageSeen, res.Model)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("abort took %v", d)
			}
			break
		}
	}
	if pid == 0 {
		t.Fatal("no delta before the stall")
	}
	waitGone(t, pid, 5*time.Second)
	res := runTurn(t, e.r, TurnRequest{Key: "a", SessionID: sid, Prompt: "after abort"})
	mustOK(t, res, "echo: after abort")
	if !res.NewProcess || res.SessionReset {
		t.Fatalf("turn after abort: new process %v, reset %v", res.NewProcess, res.SessionReset)
	}

	// Timeout: a second runner with a short per-turn timeout on the same fake.
	e2 := newReal(t, func(c *Config) { c.Timeout = 4 * time.Second })
	e2.fake.Enqueue(anthropictest.Reply{HeaderDelay: time.Minute})
	start := time.Now()
	res = runTurn(t, e2.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "slow"})
	if res.Err == nil || res.Err.Kind != KindTimeout {
		t.Fatalf("want timeout, got %+v", res.Err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	if len(e2.r.Warm()) != 0 {
		t.Fatalf("timed-out process still warm: %v", e2.r.Warm())
	}
}

func TestRealAPIErrors(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	e.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		switch r.LastUserText() {
		case "overload":
			return anthropictest.Overloaded()
		case "too long":
			return anthropictest.PromptTooLong()
		case "bad key":
			return anthropictest.Unauthorized()
		case "limit":
			return anthropictest.Reply{Status: 429}
		}
		return anthropictest.Reply{}
	})
	for _, tc := range []struct {
		prompt string
		kind   ErrorKind
		status int
	}{
		{"overload", KindOverloaded, 529},
		{"too long", KindPromptTooLong, 400},
		{"bad key", KindAuth, 401},
		{"limit", KindRateLimited, 429},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			sid := uuid.NewString()
			res := runTurn(t, e.r, TurnRequest{Key: tc.prompt, SessionID: sid, NewSession: true, Prompt: tc.prompt})
			if res.Err == nil || res.Err.Kind != tc.kind || res.APIErrorStatus != tc.status || res.Err.Notice == "" {
				t.Fatalf("got err %v status %d", res.Err, res.APIErrorStatus)
			}
			if res.Streamed != "" {
				t.Fatalf("synthetic API error message was streamed as text: %q", res.Streamed)
			}
			// The warm process survives an API error.
			// claude keeps the failed user message and merges the next one into it.
			res2 := runTurn(t, e.r, TurnRequest{Key: tc.prompt, SessionID: sid, Prompt: "fine now"})
			mustOK(t, res2, "echo: "+tc.prompt+"\nfine now")
			if res2.NewProcess {
				t.Fatal("API error discarded the warm process")
			}
		})
	}
}

func TestRealLongReplyBlocks(t *testing.T) {
	t.Parallel()
	e := newReal(t, func(c *Config) { c.PartialMessages = true })
	var paras []string
	for i := 0; i < 8; i++ {
		paras = append(paras, strings.Repeat("Sentence number "+strconv.Itoa(i)+" goes on. ", 20))
	}
	long := strings.Join(paras, "\n\n")
	e.fake.Enqueue(anthropictest.Reply{Text: long, Chunks: 24, ChunkDelay: 20 * time.Millisecond})
	turn, err := e.r.Run(context.Background(), TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "long"})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var deltas int
	var res *Result
	c := chunk.NewCoalescer(chunk.CoalesceConfig{}, nil)
	for ev := range turn.Events() {
		switch ev.Kind {
		case EventTextDelta:
			deltas++
			blocks = append(blocks, c.Delta(ev.Text)...)
		case EventBlockEnd:
			c.EndBlock()
		case EventResult:
			res = ev.Result
			rest, _ := c.Finish(res.Text)
			blocks = append(blocks, rest...)
		}
	}
	if res == nil || res.Err != nil || res.Text != long {
		t.Fatalf("result %+v", res)
	}
	if deltas < 10 || len(blocks) < 3 {
		t.Fatalf("%d deltas, %d blocks", deltas, len(blocks))
	}
	for i, b := range blocks {
		if n := len([]rune(b)); n > chunk.DefaultCoalesceMax || (n < chunk.DefaultCoalesceMin && i < len(blocks)-1) {
			t.Fatalf("block %d has %d chars", i, n)
		}
	}
	if strings.Join(strings.Fields(strings.Join(blocks, " ")), " ") != strings.Join(strings.Fields(long), " ") {
		t.Fatal("blocks do not add up to the reply")
	}
}

func TestRealToolProgress(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	e.fake.Enqueue(anthropictest.Reply{Text: "Let me check.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "echo tool-ran-ok", "description": "say ok"}}})
	turn, err := e.r.Run(context.Background(), TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "use a tool"})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var tool *ToolUse
	for ev := range turn.Events() {
		kinds = append(kinds, ev.Kind.String())
		if ev.Kind == EventToolUse {
			tool = ev.Tool
		}
	}
	res := turn.Wait()
	mustOK(t, res, "echo: tool-ran-ok")
	if tool == nil || tool.Name != "Bash" || tool.Summary != "echo tool-ran-ok" {
		t.Fatalf("tool event %+v (events %v)", tool, kinds)
	}
	if want := "began,text,tool_use,text,result"; strings.Join(kinds, ",") != want {
		t.Fatalf("events %v, want %s", kinds, want)
	}
	if res.Streamed != "Let me check.\n\necho: tool-ran-ok" || res.NumTurns != 2 {
		t.Fatalf("streamed %q, turns %d", res.Streamed, res.NumTurns)
	}
}

// TestRealUsageReachesResult: the API's usage and the model's context window
// reach Result (the memory flush of core/turn decides on them).
func TestRealUsageReachesResult(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	e.fake.Enqueue(anthropictest.Reply{Text: "big", InputTokens: 180_000, OutputTokens: 7})
	res := runTurn(t, e.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "x"})
	mustOK(t, res, "big")
	if res.Usage.InputTokens != 180_000 || res.Usage.OutputTokens != 7 || res.Usage.CostUSD <= 0 || res.ContextWindow == 0 {
		t.Fatalf("usage %+v window %d", res.Usage, res.ContextWindow)
	}
	if res.Usage.PromptTokens() < 180_000 {
		t.Fatalf("prompt tokens %d, want at least the 180,000 the API reported", res.Usage.PromptTokens())
	}
}

// TestRealTurnCost: a turn's Usage.CostUSD is its own, warm and resumed,
// while claude's total_cost_usd (SessionCostUSD) is the session's running
// total across --resume: 100k input and 1k output tokens are $0.42 a turn.
func TestRealTurnCost(t *testing.T) {
	t.Parallel()
	e := newReal(t, func(c *Config) { c.MaxWarm = 1 })
	e.fake.SetResponder(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Text: "ok", InputTokens: 100_000, OutputTokens: 1000}
	})
	sid := uuid.NewString()
	var got []string
	for i, req := range []TurnRequest{{Key: "a", SessionID: sid, NewSession: true, Prompt: "one"}, {Key: "a", SessionID: sid, Prompt: "two"},
		{Key: "b", SessionID: uuid.NewString(), NewSession: true, Prompt: "evicts a"}, {Key: "a", SessionID: sid, Prompt: "three, resumed"}} {
		res := runTurn(t, e.r, req)
		mustOK(t, res, "ok")
		if i == 3 && !res.NewProcess {
			t.Fatal("the last turn was not resumed in a new process")
		}
		got = append(got, fmt.Sprintf("%.2f/%.2f/%v", res.Usage.CostUSD, res.Usage.SessionCostUSD, res.Usage.PerTurnCost))
	}
	if want := []string{"0.42/0.42/true", "0.42/0.84/true", "0.42/0.42/true", "0.42/1.26/true"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("turn cost/running total/per-turn: %v, want %v", got, want)
	}
}

func TestRealSteer(t *testing.T) {
	t.Parallel()
	t.Run("injected into a tool loop", func(t *testing.T) {
		t.Parallel()
		e := newReal(t, nil)
		if !e.r.CanSteer() {
			t.Fatal("CanSteer false in warm mode")
		}
		e.fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "sleep 2; echo slept"}}})
		turn, err := e.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: uuid.NewString(), NewSession: true, Prompt: "start"})
		if err != nil {
			t.Fatal(err)
		}
		for ev := range turn.Events() {
			if ev.Kind == EventToolUse {
				if ok, err := e.r.Steer("k", "steer now"); !ok || err != nil {
					t.Fatalf("Steer: %v %v", ok, err)
				}
			}
		}
		res := turn.Wait()
		mustOK(t, res, "echo: slept")
		if res.Steered != 1 {
			t.Fatalf("Steered %d", res.Steered)
		}
		reqs := e.fake.Requests()
		if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "steer now") {
			t.Fatalf("%d requests; steered text in the tool-result request: %v", len(reqs), len(reqs) == 2 && strings.Contains(string(reqs[1].Body), "steer now"))
		}
		if ok, _ := e.r.Steer("k", "late"); ok {
			t.Fatal("Steer accepted with no turn running")
		}
	})
	t.Run("queued behind a text reply", func(t *testing.T) {
		t.Parallel()
		e := newReal(t, nil)
		e.fake.Enqueue(anthropictest.Reply{Text: "slow text reply", Chunks: 3, ChunkDelay: 700 * time.Millisecond})
		sid := uuid.NewString()
		turn, err := e.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "start"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := e.fake.WaitRequest(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if ok, err := e.r.Steer("k", "steer now"); !ok || err != nil {
			t.Fatalf("Steer: %v %v", ok, err)
		}
		res := turn.Wait()
		mustOK(t, res, "echo: steer now")
		if res.Steered != 1 || res.Streamed != "slow text reply\n\necho: steer now" {
			t.Fatalf("steered %d, streamed %q", res.Steered, res.Streamed)
		}
		// Two results, one turn: its cost is both's, the whole of the
		// new session's running total.
		if res.Usage.CostUSD <= 0 || math.Abs(res.Usage.CostUSD-res.Usage.SessionCostUSD) > 1e-9 || len(res.Usage.Models) == 0 {
			t.Fatalf("the steered turn's usage %+v: want both results' cost, the session's total", res.Usage)
		}
		res = runTurn(t, e.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "after"})
		mustOK(t, res, "echo: after")
		if res.NewProcess {
			t.Fatal("process not reused after a steered turn")
		}
	})
}

// /model and /effort with the real CLI: the request at the API carries the
// model and output_config.effort, and the conversation goes on in the
// restarted process.
func TestRealModelAndEffort(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	sid := uuid.NewString()
	mustOK(t, runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, NewSession: true, Prompt: "my name is Alice", Model: "claude-sonnet-4-5"}), "echo: my name is Alice")
	if m := e.fake.Requests()[0].Model; m != "claude-sonnet-4-5" {
		t.Errorf("first request model %q", m)
	}
	// claude sends output_config.effort only for models that take it (the
	// default opus does; sonnet 4.5 got none in this run).
	res := runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, Prompt: "again", Model: "claude-opus-5-5", Effort: "high"})
	mustOK(t, res, "echo: again")
	if !res.NewProcess {
		t.Error("the new model did not restart the process")
	}
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1]
	var body struct {
		OutputConfig struct {
			Effort string `json:"effort"`
		} `json:"output_config"`
	}
	_ = json.Unmarshal(last.Body, &body)
	if last.Model != "claude-opus-5-5" || body.OutputConfig.Effort != "high" {
		t.Errorf("request model %q effort %q", last.Model, body.OutputConfig.Effort)
	}
	if u := last.UserTexts(); !slices.Equal(u, []string{"my name is Alice", "again"}) {
		t.Errorf("the conversation did not go on: %q", u)
	}
}

// The memory flush is due before claude compacts by itself: after a turn
// whose prompt crossed the default threshold of a 1M window (927,000,
// core/turn's MemoryFlush{}.Threshold(1_000_000)), the flush turn reaches
// the API as it is, with no compaction first; claude compacts only from
// about 977,000 (turn.DefaultFlushReserveTokens).
func TestRealMemoryFlushComesBeforeCompaction(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	sid := uuid.NewString()
	e.fake.Enqueue(anthropictest.Reply{Text: "long conversation", InputTokens: 930_000})
	res := runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, NewSession: true, Prompt: "one"})
	mustOK(t, res, "long conversation")
	const threshold = 1_000_000 - 23_000 - 50_000 // turn's default for a 1M window
	if res.ContextWindow != 1_000_000 || res.Usage.PromptTokens() < threshold {
		t.Fatalf("flush not due after %d of %d", res.Usage.PromptTokens(), res.ContextWindow)
	}
	prompt := "Pre-compaction memory flush. Store durable memories now. If nothing to store, reply with NO_REPLY."
	system := "Pre-compaction memory flush turn."
	flush := runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, Prompt: prompt, ExtraSystemPrompt: system})
	if flush.Err != nil || flush.Compacted {
		t.Fatalf("flush turn: err %v, compacted %v", flush.Err, flush.Compacted)
	}
	for _, r := range e.fake.Requests() {
		if strings.Contains(strings.Join(r.UserTexts(), " "), "create a detailed summary") {
			t.Fatalf("claude compacted before the flush (request %d)", r.Seq)
		}
	}
	last := e.fake.Requests()[len(e.fake.Requests())-1]
	if u := last.UserTexts(); !strings.Contains(u[len(u)-1], "Pre-compaction memory flush") {
		t.Fatalf("the flush prompt did not reach the API: %q", u)
	}
}

// TestRealAgents: each agent's turns run the real CLI in that agent's
// workspace with its system prompt and environment; a turn naming no agent
// (or an unknown one) runs the runner's own configuration.
func TestRealAgents(t *testing.T) {
	t.Parallel()
	opsWS := t.TempDir()
	var mainWS string
	e := newReal(t, func(c *Config) {
		c.Name, c.SystemPrompt = "main", "MAIN-MARKER"
		mainWS = c.Workspace
		env := maps.Clone(c.Env)
		env["AGENT_MARK"] = "ops"
		c.Agents = map[string]Config{"ops": {Command: c.Command, Env: env, Workspace: opsWS, SystemPrompt: "OPS-MARKER", Timeout: 30 * time.Second}}
	})
	for _, c := range []struct{ agent, ws, mark, not string }{
		{"", mainWS, "MAIN-MARKER", "OPS-MARKER"},
		{"ops", opsWS, "OPS-MARKER", "MAIN-MARKER"},
		{"main", mainWS, "MAIN-MARKER", "OPS-MARKER"},
	} {
		n := len(e.fake.Requests())
		res := runTurn(t, e.r, TurnRequest{Key: "k-" + c.agent, Agent: c.agent, SessionID: uuid.NewString(), NewSession: true, Prompt: "hi " + c.agent})
		mustOK(t, res, "echo: hi "+c.agent)
		sys := e.fake.Requests()[n].SystemText()
		if !strings.Contains(sys, c.mark) || strings.Contains(sys, c.not) {
			t.Errorf("agent %q: the system prompt has %s: %v, %s: %v", c.agent, c.mark, strings.Contains(sys, c.mark), c.not, strings.Contains(sys, c.not))
		}
		if body := string(e.fake.Requests()[n].Body); !strings.Contains(body, "Primary working directory: "+c.ws+`\n`) {
			t.Errorf("agent %q: claude did not work in %s", c.agent, c.ws)
		}
	}
	if _, err := e.r.Run(context.Background(), TurnRequest{Agent: "ops", SessionID: uuid.NewString(), NewSession: true, Prompt: "x", PermissionMode: "acceptEdits"}); err == nil {
		t.Error("a permission mode the agent does not offer was accepted (plan is the one any turn may ask for)")
	}
	if _, err := e.r.Run(context.Background(), TurnRequest{Agent: "nobody", SessionID: uuid.NewString(), NewSession: true, Prompt: "x"}); err == nil {
		t.Error("a turn of an agent nobody configured ran (with another agent's workspace)")
	}
}
