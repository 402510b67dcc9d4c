package runner

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

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
// defaults, agent.env, NoBackgroundTasks and TMPDIR, in that order (exec keeps the last of
// a duplicated name: agent.env cannot turn background tasks back on).
func TestEnv(t *testing.T) {
	t.Parallel()
	host := []string{"PATH=/bin", "TELEGRAM_BOT_TOKEN=secret", "HOME=/h", "LC_ALL=C", "LCX=no", "ANTHROPIC_API_KEY=k",
		"AWS_SECRET_ACCESS_KEY=x", "TMPDIR=/host/tmp", "DISABLE_TELEMETRY=0", "https_proxy=http://p", "MALFORMED"}
	c := Config{MaxRetries: 2, Env: map[string]string{"B": "2", "A": "1", "HOME": "/agent", "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS": "0"}}
	got := strings.Join(c.env(host, "/state/t/1"), " ")
	want := "PATH=/bin HOME=/h LC_ALL=C ANTHROPIC_API_KEY=k https_proxy=http://p " +
		"DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 CLAUDE_CODE_MAX_RETRIES=2 " +
		"A=1 B=2 CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=0 HOME=/agent CLAUDE_CODE_DISABLE_BACKGROUND_TASKS=1 TMPDIR=/state/t/1"
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

// TestDecodeLineOnce: a result line is decoded once, as a result, wherever claude puts
// its "type" (2.1.330 writes it late), and decodes to what decoding it as a message and
// then as a result gives; a line of another type with "type":"result" nested in it
// stays that type; a line that is not JSON is not a line.
func TestDecodeLineOnce(t *testing.T) {
	t.Parallel()
	real := `{"duration_api_ms":25,"stop_reason":"end_turn","session_id":"ef493ad6-9ada-4b0c-8210-8b2c62bc3304","total_cost_usd":0.017744,"usage":{"input_tokens":4426,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"modelUsage":{"claude-opus-5-5":{"inputTokens":4426,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.017744,"contextWindow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","fast_mode_disabled_reason":"sdk_opt_in_required","subagent_stats":{"spawned":0,"requested":{"background":0,"foreground":0,"unset":0},"started_in_background":0,"max_depth":0,"spawned_by_subagents":0,"completed":0,"failed":0,"killed":{"parent":0,"user":0,"system":0},"refused":{"depth_limit":0,"concurrency_limit":0,"budget":0},"by_type":{}},"safety_stops":0,"is_error":false,"num_turns":1,"subtype":"success","api_error_status":null,"result":"echo: hello","ttft_ms":146,"type":"result","duration_ms":157,"uuid":"91202160-9369-43de-a29b-5f9bf1fcd52c","begun_message_ids":["msg_fake_1b2f05205a1a49debf4a"],"ttft_stream_ms":144,"time_to_request_ms":132,"first_content_frame_ms":145,"queued_turn_count":0,"result_index":0,"model_usage_since_last_result":{"claude-opus-5-5":{"inputTokens":4426,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.017744,"contextWindow":1000000,"maxOutputTokens":128000,"thinkingTokens":0,"cacheCreationEphemeral5mInputTokens":0,"cacheCreationEphemeral1hInputTokens":0,"canonicalModel":"claude-opus-5-5","provider":"firstParty","costBasis":"list"}}}`
	for _, raw := range []string{real,
		`{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s1","errors":["boom"],"total_cost_usd":0.5}`} {
		ln, ok := decodeLine([]byte(raw))
		var m wireMsg
		var wr wireResult
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(raw), &wr); err != nil {
			t.Fatal(err)
		}
		if !ok || ln.res == nil || !reflect.DeepEqual(*ln.res, wr) {
			t.Fatalf("%.60s: decoded %v %+v, want the result %+v", raw, ok, ln.res, wr)
		}
		if ln.msg.Type != m.Type || ln.msg.Subtype != m.Subtype || ln.msg.SessionID != m.SessionID || string(ln.raw) != raw {
			t.Errorf("%.60s: message %+v, want %+v", raw, ln.msg, m)
		}
	}
	nested := `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Write","input":{"type":"result","x":1}}]},"session_id":"s2"}`
	if ln, ok := decodeLine([]byte(nested)); !ok || ln.msg.Type != "assistant" || ln.res != nil || ln.msg.SessionID != "s2" || len(ln.msg.Message) == 0 {
		t.Errorf("an assistant line with a nested result type: %v %+v", ok, ln)
	}
	if _, ok := decodeLine([]byte(`not json "type":"result"`)); ok {
		t.Error("a line that is not JSON decoded")
	}
}
