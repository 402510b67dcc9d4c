package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func lens(blocks []string) []int {
	var out []int
	for _, b := range blocks {
		out = append(out, utf8.RuneCountInString(b))
	}
	return out
}

func TestCoalescerCuts(t *testing.T) {
	t.Parallel()
	para := func(n int, ch string) string { return strings.Repeat(ch, n) }
	for _, tc := range []struct {
		name  string
		in    []string
		want  []int // block lengths from Add calls only
		final string
		rest  []int // from Finish
	}{
		{"short stays buffered", []string{"hello"}, nil, "", []int{5}},
		{"paragraph break after min", []string{para(850, "a") + "\n\n" + para(100, "b")}, []int{850}, "", []int{100}},
		{"paragraph break before min ignored", []string{para(500, "a") + "\n\n" + para(400, "b")}, nil, "", []int{902}},
		{"over max hard cut", []string{para(2500, "x")}, []int{1200, 1200}, "", []int{100}},
		{"over max newline", []string{para(1000, "a") + "\n" + para(300, "b")}, []int{1000}, "", []int{300}},
		{"over max sentence", []string{para(900, "a") + ". " + para(400, "b")}, []int{901}, "", []int{400}},
		{"over max space", []string{para(900, "a") + " " + para(400, "b")}, []int{900}, "", []int{400}},
		{"deltas accumulate", []string{para(400, "a"), para(400, "a"), "\n\n", para(10, "b")}, []int{800}, "", []int{10}},
		{"multibyte counts runes", []string{para(1300, "é")}, []int{1200}, "", []int{100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(0, 0)}
			c := NewCoalescer(CoalesceConfig{}, clk.now)
			var got []string
			for _, s := range tc.in {
				got = append(got, c.Add(s)...)
			}
			if g := lens(got); !equalInts(g, tc.want) {
				t.Fatalf("blocks %v, want %v", g, tc.want)
			}
			rest, diverged := c.Finish(tc.final)
			if g := lens(rest); !equalInts(g, tc.rest) || diverged {
				t.Fatalf("finish %v (diverged %v), want %v", g, diverged, tc.rest)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCoalescerIdle(t *testing.T) {
	t.Parallel()
	clk := &fakeClock{t: time.Unix(0, 0)}
	c := NewCoalescer(CoalesceConfig{}, clk.now)
	if out := c.Add("first bit"); out != nil {
		t.Fatal(out)
	}
	at, ok := c.Deadline()
	if !ok || !at.Equal(clk.t.Add(time.Second)) {
		t.Fatalf("deadline %v %v", at, ok)
	}
	clk.advance(999 * time.Millisecond)
	if out := c.Poll(); out != nil {
		t.Fatalf("flushed early: %q", out)
	}
	clk.advance(time.Millisecond)
	if out := c.Poll(); len(out) != 1 || out[0] != "first bit" {
		t.Fatalf("idle flush %q", out)
	}
	if _, ok := c.Deadline(); ok {
		t.Fatal("deadline with empty buffer")
	}
	// Nothing twice: the final result equal to the stream adds nothing.
	if out, diverged := c.Finish("first bit"); len(out) != 0 || diverged {
		t.Fatalf("finish repeated text: %q", out)
	}
}

func TestCoalescerReconcile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		blocks   []string
		final    string
		want     string
		diverged bool
	}{
		{"equal", []string{"hello world"}, "hello world", "hello world", false},
		{"last block of several", []string{"Let me check.", "Done: 42"}, "Done: 42", "Let me check.\n\nDone: 42", false},
		{"final longer", []string{"hello"}, "hello world", "hello world", false},
		{"empty final", []string{"partial"}, "", "partial", false},
		{"diverged", []string{"abc"}, "xyz", "abc|xyz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(0, 0)}
			c := NewCoalescer(CoalesceConfig{}, clk.now)
			var out []string
			for _, b := range tc.blocks {
				out = append(out, c.Add(b)...)
				c.EndBlock()
			}
			rest, diverged := c.Finish(tc.final)
			out = append(out, rest...)
			if got := strings.Join(out, "|"); got != tc.want || diverged != tc.diverged {
				t.Fatalf("got %q (diverged %v), want %q (%v)", got, diverged, tc.want, tc.diverged)
			}
		})
	}
}

func TestCoalescerFeedDeltasThenText(t *testing.T) {
	t.Parallel()
	c := NewCoalescer(CoalesceConfig{}, (&fakeClock{}).now)
	var out []string
	res := &Result{Text: "ab"}
	for _, e := range []Event{{Kind: EventTextDelta, Text: "a"}, {Kind: EventTextDelta, Text: "b"}, {Kind: EventText, Text: "ab"}, {Kind: EventBlockEnd}, {Kind: EventResult, Result: res}} {
		out = append(out, c.Feed(e)...)
	}
	if strings.Join(out, "|") != "ab" {
		t.Fatalf("got %q", out)
	}
}

// FuzzCoalescer checks the invariants: no block over MaxChars, the delivered text equals
// the input modulo whitespace, and nothing is lost or repeated.
// deliverBlocks runs a Coalescer over a turn's events with real timers: deliver gets each
// block, other (may be nil) every event as it arrives (tool progress, the result). It
// returns when events is closed.
func deliverBlocks(events <-chan Event, c *Coalescer, deliver func(block string), other func(Event)) {
	var timer *time.Timer
	var timerC <-chan time.Time
	rearm := func() {
		if timer != nil {
			timer.Stop()
			timerC = nil
		}
		if at, ok := c.Deadline(); ok {
			timer = time.NewTimer(max(at.Sub(c.now()), 0))
			timerC = timer.C
		}
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return
			}
			for _, b := range c.Feed(e) {
				deliver(b)
			}
			if other != nil {
				other(e)
			}
			rearm()
		case <-timerC:
			for _, b := range c.Poll() {
				deliver(b)
			}
			rearm()
		}
	}
}

func FuzzCoalescer(f *testing.F) {
	f.Add("hello\n\nworld", 3, uint8(10))
	f.Add(strings.Repeat("word ", 500), 7, uint8(200))
	f.Fuzz(func(t *testing.T, s string, parts int, minc uint8) {
		if !utf8.ValidString(s) || parts <= 0 || parts > 50 {
			return
		}
		c := NewCoalescer(CoalesceConfig{MinChars: int(minc) + 1, MaxChars: int(minc) + 40}, (&fakeClock{}).now)
		var out []string
		r := []rune(s)
		step := len(r)/parts + 1
		for i := 0; i < len(r); i += step {
			out = append(out, c.Add(string(r[i:min(i+step, len(r))]))...)
		}
		rest, _ := c.Finish(s)
		out = append(out, rest...)
		for _, b := range out {
			if utf8.RuneCountInString(b) > int(minc)+40 {
				t.Fatalf("block of %d runes", utf8.RuneCountInString(b))
			}
		}
		if strings.Join(strings.Fields(strings.Join(out, " ")), "") != strings.Join(strings.Fields(s), "") {
			t.Fatalf("text changed: %q -> %q", s, out)
		}
	})
}

func TestMemoryFlush(t *testing.T) {
	t.Parallel()
	zero, one := 0, 1
	m := MemoryFlush{ContextWindow: 100_000, ReserveTokens: 5_000, SoftThresholdTokens: 4_000}
	if got := m.Threshold(0); got != 91_000 {
		t.Fatalf("threshold %d, want 91000 (seed 001 §7 example)", got)
	}
	for _, tc := range []struct {
		name string
		m    MemoryFlush
		s    FlushState
		want bool
	}{
		{"below", m, FlushState{PromptTokens: 90_999}, false},
		{"at threshold", m, FlushState{PromptTokens: 91_000}, true},
		{"already flushed this cycle", m, FlushState{PromptTokens: 95_000, CompactionCount: 0, FlushedAtCompaction: &zero}, false},
		{"flushed in an earlier cycle", m, FlushState{PromptTokens: 95_000, CompactionCount: 1, FlushedAtCompaction: &zero}, true},
		{"flushed this cycle 1", m, FlushState{PromptTokens: 95_000, CompactionCount: 1, FlushedAtCompaction: &one}, false},
		// 1,000,000 - 23,000 (claude compacts at ~977k) - 50,000 (a twentieth).
		{"reported window", MemoryFlush{}, FlushState{PromptTokens: 927_000, ReportedContextWindow: 1_000_000}, true},
		{"reported window below", MemoryFlush{}, FlushState{PromptTokens: 926_999, ReportedContextWindow: 1_000_000}, false},
		// 200,000 - 23,000 - 10,000.
		{"default window", MemoryFlush{}, FlushState{PromptTokens: 167_000}, true},
		{"default window below", MemoryFlush{}, FlushState{PromptTokens: 166_999}, false},
		{"small window: the margin is at least 4,000", MemoryFlush{ContextWindow: 50_000}, FlushState{PromptTokens: 23_000}, true},
		{"disabled", MemoryFlush{Disabled: true}, FlushState{PromptTokens: 999_999}, false},
	} {
		if got := tc.m.Due(tc.s); got != tc.want {
			t.Errorf("%s: Due = %v, want %v", tc.name, got, tc.want)
		}
	}
	p, sp := MemoryFlush{}.Texts()
	if !strings.Contains(p, "NO_REPLY") || !strings.Contains(sp, "memory flush") {
		t.Fatalf("texts %q %q", p, sp)
	}
}

// TestUsageLimitReset: claude 2.1.330 logged in with a subscription (an
// OAuth token) and answered 429 with anthropic-ratelimit-unified-status
// rejected writes a rate_limit_event with the reset, then an error result
// (lines verbatim, abridged to the fields read): a usage limit with its
// reset time. A 429 whose event has no reset (retry-after, no unified
// headers: "not your usage limit") stays rate_limited.
func TestUsageLimitReset(t *testing.T) {
	t.Parallel()
	read := func(event, result string) *Error {
		var ev struct {
			Info wireRateLimit `json:"rate_limit_info"`
		}
		if err := json.Unmarshal([]byte(event), &ev); err != nil {
			t.Fatal(err)
		}
		var wr wireResult
		if err := json.Unmarshal([]byte(result), &wr); err != nil {
			t.Fatal(err)
		}
		return classifyResult(&wr, &ev.Info)
	}
	e := read(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795580167,"rateLimitType":"five_hour","isUsingOverage":false},"uuid":"b802b78a","session_id":"0d1d5297"}`,
		`{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":429,"api_error_type":"rate_limit_error","result":"You've hit your 5-hour limit · resets 4:16am (UTC)"}`)
	if e == nil || e.Kind != KindUsageLimit || !e.ResetAt.Equal(time.Unix(1795580167, 0)) {
		t.Errorf("subscription limit: %+v", e)
	}
	e = read(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","isUsingOverage":false},"uuid":"6717211c","session_id":"68f81a9a"}`,
		`{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":429,"api_error_type":"rate_limit_error","result":"API Error: Server is temporarily limiting requests (not your usage limit) · rate limited"}`)
	if e == nil || e.Kind != KindRateLimited || !e.ResetAt.IsZero() {
		t.Errorf("429 without a reset: %+v", e)
	}
	var wr wireResult
	_ = json.Unmarshal([]byte(`{"type":"result","is_error":true,"api_error_status":429,"api_error_type":"rate_limit_error","api_error":"usage_limit_reached","result":"You've hit your weekly limit · resets Nov 28, 2:47pm (UTC)"}`), &wr)
	if e := classifyResult(&wr, nil); e == nil || e.Kind != KindUsageLimit || !e.ResetAt.IsZero() {
		t.Errorf("usage_limit_reached without an event: %+v", e)
	}
}

// Result lines verbatim from reference/claude-cli.md §5 (abridged to the fields read).
func TestClassifyResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line string
		want       ErrorKind
	}{
		{"success", `{"type":"result","subtype":"success","is_error":false,"result":"echo: hello"}`, ""},
		{"529", `{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":529,"api_error_type":"overloaded_error","result":"API Error: 529 Overloaded."}`, KindOverloaded},
		{"prompt too long", `{"type":"result","subtype":"success","is_error":true,"terminal_reason":"prompt_too_long","api_error_status":400,"api_error_type":"invalid_request_error","result":"Prompt is too long · ..."}`, KindPromptTooLong},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":true,"terminal_reason":"max_turns","errors":["Reached maximum number of turns (1)"]}`, KindMaxTurns},
		{"budget", `{"type":"result","subtype":"error_max_budget_usd","is_error":true,"terminal_reason":"budget_exhausted","errors":["Reached maximum budget ($0.001)"]}`, KindMaxBudget},
		{"not logged in", `{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":null,"result":"Not logged in · Please run /login"}`, KindAuth},
		{"invalid key", `{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"api_error_type":"authentication_error","result":"Invalid API key · Fix external API key"}`, KindAuth},
		{"429", `{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error_type":"rate_limit_error","result":"API Error: Request rejected (429)"}`, KindRateLimited},
		{"500", `{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"api_error_type":"api_error","result":"API Error: 500"}`, KindAPI},
		{"refused", `{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"result":"API Error: Connection refused"}`, KindAPI},
		{"sigint", `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_streaming","result":null}`, KindAborted},
		{"no conversation", `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["No conversation found with session ID: x"]}`, KindSessionMissing},
	} {
		var wr wireResult
		if err := json.Unmarshal([]byte(tc.line), &wr); err != nil {
			t.Fatal(err)
		}
		got := classifyResult(&wr, nil)
		if (got == nil) != (tc.want == "") || (got != nil && (got.Kind != tc.want || got.Notice == "")) {
			t.Errorf("%s: got %+v, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		code   int
		empty  bool
		stderr string
		want   ErrorKind
	}{
		{1, true, "error: unknown option '--no-such-flag'", KindUsage},
		{1, true, "No conversation found with session ID: x", KindSessionMissing},
		{0, true, "", KindCrash},
		{143, true, "", KindCrash},
		{1, false, "", KindCrash},
	} {
		if got := classifyExit(tc.code, tc.empty, tc.stderr); got.Kind != tc.want {
			t.Errorf("exit %d %q: got %s, want %s", tc.code, tc.stderr, got.Kind, tc.want)
		}
	}
}

func TestSummarizeInput(t *testing.T) {
	t.Parallel()
	if got := summarizeInput(json.RawMessage(`{"command":"echo  hi\nthere","description":"say"}`)); got != "echo hi there" {
		t.Fatal(got)
	}
	if got := summarizeInput(json.RawMessage(`{"file_path":"` + strings.Repeat("a", 100) + `"}`)); utf8.RuneCountInString(got) != 80 {
		t.Fatal(got)
	}
}

// TestEnv: claude's environment keeps only the allowed host variables, then the runner's
// defaults, agent.env and TMPDIR, in that order (exec keeps the last of a duplicated name).
func TestEnv(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=/bin", "TELEGRAM_BOT_TOKEN=secret", "HOME=/h", "LC_ALL=C", "LCX=no", "ANTHROPIC_API_KEY=k",
		"AWS_SECRET_ACCESS_KEY=x", "TMPDIR=/host/tmp", "DISABLE_TELEMETRY=0", "https_proxy=http://p", "MALFORMED"}
	c := Config{MaxRetries: 2, Env: map[string]string{"B": "2", "A": "1", "HOME": "/agent"}}
	got := strings.Join(c.env(host, "/state/t/1"), " ")
	want := "PATH=/bin HOME=/h LC_ALL=C ANTHROPIC_API_KEY=k https_proxy=http://p " +
		"DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=2 " +
		"A=1 B=2 HOME=/agent TMPDIR=/state/t/1"
	if got != want {
		t.Errorf("env =\n%s\nwant\n%s", got, want)
	}
}

// Output claude wrote while no turn was reading (a wake-up it scheduled)
// is dropped, but never silently: a result is logged at WARN with its text.
func TestBetweenTurnsOutputIsLogged(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &buf})
	p := &proc{key: "tg:direct:1", pid: 42, msgs: make(chan line, 4)}
	raw := []byte(`{"type":"result","subtype":"success","result":"Reminder: the oven is on","session_id":"s"}`)
	var m wireMsg
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	p.msgs <- line{msg: wireMsg{Type: "assistant"}, raw: []byte(`{"type":"assistant"}`)}
	p.msgs <- line{msg: m, raw: raw}
	p.discardUnread(log)
	out := buf.String()
	if !strings.Contains(out, "[WARN]") || !strings.Contains(out, "between turns") || !strings.Contains(out, "Reminder: the oven is on") || !strings.Contains(out, "key=tg:direct:1") {
		t.Errorf("log %q", out)
	}
	if len(p.msgs) != 0 {
		t.Errorf("%d lines left", len(p.msgs))
	}
}

// TestSettingsArgs: claude always gets an explicit permission mode, pinned
// setting sources and --strict-mcp-config, so nothing in the operator's
// ~/.claude/settings.json (defaultMode, allow rules, hooks, MCP servers)
// applies unless agent.settings = "user" says so.
func TestSettingsArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		l    launch
		want string
	}{
		{"defaults", Config{}.withDefaults(), launch{}, "--permission-mode default --setting-sources project --strict-mcp-config"},
		{"configured mode", Config{PermissionMode: "dontAsk"}.withDefaults(), launch{}, "--permission-mode dontAsk --setting-sources project --strict-mcp-config"},
		{"chat's mode", Config{PermissionMode: "dontAsk"}.withDefaults(), launch{mode: "plan"}, "--permission-mode plan --setting-sources project --strict-mcp-config"},
		{"operator's settings", Config{Settings: SettingsUser}.withDefaults(), launch{}, "--permission-mode default --setting-sources user,project,local --strict-mcp-config"},
	} {
		if got := strings.Join(tc.cfg.args(tc.l), " "); !strings.Contains(got, tc.want) {
			t.Errorf("%s: args %q lack %q", tc.name, got, tc.want)
		}
	}
}

// TestConfigDirEnv: CLAUDE_CONFIG_DIR is the bot's own directory over the
// host's; agent.env may still name another.
func TestConfigDirEnv(t *testing.T) {
	t.Parallel()
	host := []string{"HOME=/root", "CLAUDE_CONFIG_DIR=/root/.claude-work"}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{ConfigDir: "/srv/data/claude"}, "/srv/data/claude"},
		{Config{ConfigDir: "/srv/data/claude", Env: map[string]string{"CLAUDE_CONFIG_DIR": "/srv/own"}}, "/srv/own"},
		{Config{}, "/root/.claude-work"},
	} {
		if got := lookupEnv(tc.cfg.env(host, "/t"), "CLAUDE_CONFIG_DIR"); got != tc.want {
			t.Errorf("%+v: CLAUDE_CONFIG_DIR = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}

// TestLoginHint: "Not logged in" says where claude looked and the two ways
// to log the bot in; other auth errors are left alone.
func TestLoginHint(t *testing.T) {
	t.Parallel()
	notLoggedIn := func() *Error {
		return classifyResult(&wireResult{IsError: true, Subtype: "success", TerminalReason: "api_error", Result: ptr("Not logged in · Please run /login")}, nil)
	}
	e := notLoggedIn()
	Config{ConfigDir: "/srv/data/claude"}.loginHint(e, []string{"HOME=/root"})
	for _, want := range []string{"Not logged in", "/srv/data/claude has no credentials and no ANTHROPIC_API_KEY is configured",
		"Set ANTHROPIC_API_KEY in agent.env", "`CLAUDE_CONFIG_DIR=/srv/data/claude claude` and type /login"} {
		if !strings.Contains(e.Detail, want) {
			t.Errorf("detail %q lacks %q", e.Detail, want)
		}
	}
	e = notLoggedIn()
	Config{}.loginHint(e, []string{"HOME=/home/op"})
	if !strings.Contains(e.Detail, "/home/op/.claude has no credentials") || !strings.Contains(e.Detail, "run `claude` and type /login") {
		t.Errorf("without a config dir: %q", e.Detail)
	}
	other := classifyResult(&wireResult{IsError: true, APIErrorStatus: ptr(401), Result: ptr("Invalid API key · Fix external API key")}, nil)
	before := other.Detail
	Config{ConfigDir: "/x"}.loginHint(other, nil)
	if other.Kind != KindAuth || other.Detail != before {
		t.Errorf("invalid key changed: %q", other.Detail)
	}
}

func ptr[T any](v T) *T { return &v }
