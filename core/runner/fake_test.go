package runner

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/envfilter"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/sandbox"
	"github.com/clawhost/clawhost/core/sandbox/helper"
	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
)

// The test binary doubles as a fake claude when FAKE_CLAUDE=1: it speaks the stream-json
// protocol, keeps "transcripts" under FAKE_CLAUDE_STATE and logs each start to
// FAKE_CLAUDE_STATE/starts. The prompt selects behaviour:
//
//	"crash"        exit 3 without a result
//	"exit0"        exit 0 without a result
//	"hang"         start a child `sleep 60` in the group, write its pid to <state>/child, then wait forever
//	"hang-noterm"  like hang, and ignore SIGTERM
//	"tool"         a tool_use message, then the result
//	"env"          "echo: env" and its environment, one NAME=value a line
//	"sh:CMD"       "echo: " and what `sh -c CMD` wrote to stdout and stderr
//	anything else  "echo: <prompt>"
//
// Timing, for benchmarks: FAKE_CLAUDE_START_MS (a start's delay before the first prompt is
// read) plus FAKE_CLAUDE_RESUME_MS per earlier prompt in the transcript when resuming (a
// long conversation is slower to resume), and FAKE_CLAUDE_TURN_MS before each result. A
// start between the Unix times FAKE_CLAUDE_SLOW_FROM_MS and FAKE_CLAUDE_SLOW_TO_MS takes
// FAKE_CLAUDE_SLOW_MS longer (a machine that is busy for a while).
func TestMain(m *testing.M) {
	if os.Getenv("FAKE_CLAUDE") == "1" {
		os.Exit(fakeClaude(os.Args[1:]))
	}
	if os.Getenv("FAKE_HOST") == "1" {
		os.Exit(fakeHost())
	}
	if len(os.Args) >= 2 && os.Args[1] == helper.Arg {
		helper.Testing.Weaken = os.Getenv("ZYGOTE_WEAKEN")
		os.Exit(helper.Main())
	}
	// The test binary is a helper (above), as clawhost's is: recycled sandboxes are
	// the default here as there.
	sandbox.EnableSandboxHelper()
	os.Exit(m.Run())
}

func fakeClaude(args []string) int {
	state := os.Getenv("FAKE_CLAUDE_STATE")
	arg := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	sid, resume := arg("--session-id"), false
	if s := arg("--resume"); s != "" {
		sid, resume = s, true
	}
	f, _ := os.OpenFile(filepath.Join(state, "starts"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	fmt.Fprintf(f, "%d %s tmpdir=%s\n", os.Getpid(), strings.Join(args, " "), os.Getenv("TMPDIR"))
	f.Close()
	transcript := filepath.Join(state, sid+".jsonl")
	if resume {
		if _, err := os.Stat(transcript); err != nil {
			fmt.Fprintf(os.Stderr, "No conversation found with session ID: %s\n", sid)
			return 1
		}
	} else if _, err := os.Stat(transcript); err == nil {
		fmt.Fprintf(os.Stderr, "Error: Session ID %s is already in use.\n", sid)
		return 1
	}
	envMS := func(name string) time.Duration {
		n, _ := strconv.Atoi(os.Getenv(name))
		return time.Duration(n) * time.Millisecond
	}
	startDelay := envMS("FAKE_CLAUDE_START_MS")
	if resume {
		history, _ := os.ReadFile(transcript)
		startDelay += time.Duration(bytes.Count(history, []byte("\n"))) * envMS("FAKE_CLAUDE_RESUME_MS")
	}
	if now := time.Now().UnixMilli(); now >= envMS("FAKE_CLAUDE_SLOW_FROM_MS").Milliseconds() && now < envMS("FAKE_CLAUDE_SLOW_TO_MS").Milliseconds() {
		startDelay += envMS("FAKE_CLAUDE_SLOW_MS")
	}
	time.Sleep(startDelay)
	turnDelay := envMS("FAKE_CLAUDE_TURN_MS")
	if slices.Contains(args, "--bad-flag") {
		fmt.Fprintln(os.Stderr, "error: unknown option '--bad-flag'")
		return 1
	}
	out := json.NewEncoder(os.Stdout)
	warm := arg("--input-format") == "stream-json"
	in := bufio.NewReader(os.Stdin)
	for {
		var prompt string
		if warm {
			ln, err := in.ReadBytes('\n')
			if err != nil {
				return 0
			}
			var msg struct {
				Type      string
				RequestID string `json:"request_id"`
				Message   struct{ Content string }
			}
			_ = json.Unmarshal(ln, &msg)
			if msg.Type == "control_request" { // a spare's initialize and get_context_usage (spare.go)
				out.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": msg.RequestID}})
				continue
			}
			prompt = msg.Message.Content
		} else {
			b, _ := readAll(in)
			prompt = string(b)
		}
		history, _ := os.ReadFile(transcript)
		_ = os.WriteFile(transcript, append(history, []byte(prompt+"\n")...), 0o600)
		out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": sid})
		switch prompt {
		case "crash":
			return 3
		case "exit0":
			return 0
		case "hang", "hang-noterm":
			if prompt == "hang-noterm" {
				signal.Ignore(syscall.SIGTERM)
			}
			child := exec.Command("sleep", "60")
			_ = child.Start()
			_ = os.WriteFile(filepath.Join(state, "child"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
			out.Encode(map[string]any{"type": "assistant", "session_id": sid, "parent_tool_use_id": nil,
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "partial"}}}})
			select {}
		case "term-result":
			// The result is written as the stop comes: on SIGTERM.
			term := make(chan os.Signal, 1)
			signal.Notify(term, syscall.SIGTERM)
			out.Encode(map[string]any{"type": "assistant", "session_id": sid, "parent_tool_use_id": nil,
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "late answer"}}}})
			<-term
			out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "late answer", "session_id": sid,
				"stop_reason": "end_turn", "num_turns": 1, "duration_ms": 5, "total_cost_usd": 0.01, "usage": map[string]any{"input_tokens": 10, "output_tokens": 2}})
			return 143
		case "ask", "ask-cancel":
			// A permission question on stdout, as claude asks with
			// --permission-prompt-tool stdio; the answer is read from stdin.
			out.Encode(map[string]any{"type": "control_request", "request_id": "rq-1", "request": map[string]any{"subtype": "can_use_tool",
				"tool_name": "Bash", "input": map[string]any{"command": "rm -rf build"}, "tool_use_id": "toolu_1", "description": "clean",
				"permission_suggestions": []any{map[string]any{"type": "addRules", "behavior": "allow", "destination": "localSettings",
					"rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "rm -rf build"}}}}}})
			if prompt == "ask-cancel" {
				out.Encode(map[string]any{"type": "control_cancel_request", "request_id": "rq-1"})
				prompt = "withdrawn"
				break
			}
			ln, err := in.ReadBytes('\n')
			if err != nil {
				return 0
			}
			var cr struct {
				Type     string
				Response struct {
					Subtype   string `json:"subtype"`
					RequestID string `json:"request_id"`
					Response  struct {
						Behavior           string          `json:"behavior"`
						Message            string          `json:"message"`
						UpdatedInput       json.RawMessage `json:"updatedInput"`
						UpdatedPermissions json.RawMessage `json:"updatedPermissions"`
					} `json:"response"`
				} `json:"response"`
			}
			_ = json.Unmarshal(ln, &cr)
			r := cr.Response.Response
			prompt = fmt.Sprintf("%s %s %s %s input=%s perms=%s", cr.Type, cr.Response.RequestID, r.Behavior, r.Message, r.UpdatedInput, r.UpdatedPermissions)
		case "env":
			prompt += "\n" + strings.Join(os.Environ(), "\n")
		default:
			if cmd, ok := strings.CutPrefix(prompt, "sh:"); ok {
				b, _ := exec.Command("/bin/sh", "-c", cmd).CombinedOutput()
				prompt = string(b)
			}
		case "tool":
			out.Encode(map[string]any{"type": "assistant", "session_id": sid, "parent_tool_use_id": nil,
				"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{"command": "ls   -la\n/tmp"}}}}})
		}
		time.Sleep(turnDelay)
		text := "echo: " + prompt
		out.Encode(map[string]any{"type": "assistant", "session_id": sid, "parent_tool_use_id": nil,
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
		// Like claude 2.1.330: total_cost_usd and modelUsage are the
		// session's running totals (across --resume: one turn per
		// transcript line here), model_usage_since_last_result the turn's.
		history, _ = os.ReadFile(transcript)
		n := float64(strings.Count(string(history), "\n"))
		out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "session_id": sid,
			"stop_reason": "end_turn", "terminal_reason": "completed", "num_turns": 1, "duration_ms": 5, "total_cost_usd": 0.01 * n,
			"usage":      map[string]any{"input_tokens": 100, "output_tokens": 5, "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3},
			"modelUsage": map[string]any{"claude-fake": map[string]any{"outputTokens": 5 * n, "contextWindow": 200000, "costUSD": 0.01 * n}},
			"model_usage_since_last_result": map[string]any{"claude-fake": map[string]any{"inputTokens": 100, "outputTokens": 5,
				"cacheReadInputTokens": 7, "cacheCreationInputTokens": 3, "contextWindow": 200000, "costUSD": 0.01}}})
		if !warm {
			return 0
		}
	}
}

// fakeHost is a host process: a Runner with the fake claude running a "hang" turn. It
// prints claude's pid and blocks until killed.
func fakeHost() int {
	exe, _ := os.Executable()
	r, err := New(Config{Command: exe, Env: map[string]string{"FAKE_CLAUDE": "1", "FAKE_HOST": "", "FAKE_CLAUDE_STATE": os.Getenv("FAKE_CLAUDE_STATE")},
		StateDir: os.Getenv("FAKE_CLAUDE_STATE"), Sandbox: cmp.Or(os.Getenv("FAKE_SANDBOX"), SandboxOff)}, nil)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	turn, _ := r.Run(context.Background(), TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "hang"})
	<-turn.Events()
	for _, pid := range r.Warm() {
		fmt.Println(pid)
	}
	select {}
}

func readAll(r *bufio.Reader) ([]byte, error) {
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return b, nil
		}
	}
}

type fakeEnv struct {
	r     *Runner
	state string
}

func newFake(t testing.TB, mut func(*Config)) *fakeEnv {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	cfg := Config{
		Command:   exe,
		Env:       map[string]string{"FAKE_CLAUDE": "1", "FAKE_CLAUDE_STATE": state},
		Workspace: t.TempDir(),
		StateDir:  t.TempDir(),
		Timeout:   10 * time.Second,
		KillGrace: 300 * time.Millisecond,
		// The fake writes its log outside the workspace; TestFakeSandbox
		// runs it in the sandbox.
		Sandbox: SandboxOff,
	}
	if mut != nil {
		mut(&cfg)
	}
	r, err := New(cfg, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return &fakeEnv{r: r, state: state}
}

func (f *fakeEnv) starts(t testing.TB) []string {
	b, _ := os.ReadFile(filepath.Join(f.state, "starts"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestFakeWarmReuseAndArgs(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) {
		c.Model = "m1"
		c.AllowedTools = []string{"Read", "Bash(git log:*)"}
		c.DisallowedTools = []string{"Write", "Monitor"}
		c.MaxTurns = 3
	})
	sid := uuid.NewString()
	a := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "hi"})
	mustOK(t, a, "echo: hi")
	b := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "again"})
	mustOK(t, b, "echo: again")
	if !a.NewProcess || b.NewProcess || a.PID != b.PID {
		t.Fatalf("warm reuse: %v/%v pids %d/%d", a.NewProcess, b.NewProcess, a.PID, b.PID)
	}
	if a.Usage.PromptTokens() != 110 || a.Model != "claude-fake" || a.ContextWindow != 200000 || a.Usage.CostUSD != 0.01 || !a.Usage.PerTurnCost {
		t.Fatalf("usage/model: %+v", a)
	}
	// The second turn's cost is its own; claude's running total is kept apart.
	if b.Usage.CostUSD != 0.01 || b.Usage.SessionCostUSD != 0.02 || b.Usage.Models["claude-fake"].OutputTokens != 5 {
		t.Fatalf("second turn's usage %+v: want its own $0.01 of a $0.02 session", b.Usage)
	}
	starts := f.starts(t)
	if len(starts) != 1 {
		t.Fatalf("starts %q", starts)
	}
	for _, want := range []string{"-p --output-format stream-json --verbose --input-format stream-json --session-id " + sid,
		"--model m1", "--allowedTools Read,Bash(git log:*)", "--max-turns 3",
		"--disallowedTools ScheduleWakeup,CronCreate,CronDelete,CronList,Monitor,Bash(run_in_background:true),Agent(run_in_background:true),Write ", "tmpdir=" + f.r.Config().StateDir} {
		if !strings.Contains(starts[0], want) {
			t.Fatalf("start %q lacks %q", starts[0], want)
		}
	}
	if strings.Contains(starts[0], "hi") {
		t.Fatal("prompt in argv")
	}
}

func TestFakeOneShot(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.OneShot = true })
	sid := uuid.NewString()
	mustOK(t, runTurn(t, f.r, TurnRequest{SessionID: sid, NewSession: true, Prompt: "one"}), "echo: one")
	res := runTurn(t, f.r, TurnRequest{SessionID: sid, Prompt: "two"})
	mustOK(t, res, "echo: two")
	starts := f.starts(t)
	if len(starts) != 2 || strings.Contains(starts[0], "--input-format") || !strings.Contains(starts[1], "--resume "+sid) {
		t.Fatalf("starts %q", starts)
	}
	if len(f.r.Warm()) != 0 {
		t.Fatal("one-shot kept a process")
	}
}

func TestFakeIdleAndLRU(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.MaxWarm = 2; c.IdleTimeout = 300 * time.Millisecond })
	var pids []int
	for _, k := range []string{"a", "b", "c"} {
		res := runTurn(t, f.r, TurnRequest{Key: k, SessionID: uuid.NewString(), NewSession: true, Prompt: k})
		mustOK(t, res, "echo: "+k)
		pids = append(pids, res.PID)
	}
	// "a" was least recently used: stopped when "c" started.
	waitGone(t, pids[0], 3*time.Second)
	if w := f.r.Warm(); len(w) > 2 || w["a"] != 0 {
		t.Fatalf("warm after LRU: %v", w)
	}
	// Idle timeout stops the rest.
	waitGone(t, pids[1], 3*time.Second)
	waitGone(t, pids[2], 3*time.Second)
	if w := f.r.Warm(); len(w) != 0 {
		t.Fatalf("warm after idle: %v", w)
	}
}

func TestFakeAbortKillsGroup(t *testing.T) {
	t.Parallel()
	for _, prompt := range []string{"hang", "hang-noterm"} {
		t.Run(prompt, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, nil)
			sid := uuid.NewString()
			turn, err := f.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: prompt})
			if err != nil {
				t.Fatal(err)
			}
			ev := afterBegan(turn)
			if ev.Kind != EventText || ev.Text != "partial" {
				t.Fatalf("first event %+v", ev)
			}
			pid := f.r.Warm()["k"]
			child, _ := os.ReadFile(filepath.Join(f.state, "child"))
			childPID, _ := strconv.Atoi(string(child))
			if !f.r.Abort("k") {
				t.Fatal("no turn to abort")
			}
			res := turn.Wait()
			if res.Err == nil || res.Err.Kind != KindAborted || res.Streamed != "partial" {
				t.Fatalf("result %+v", res)
			}
			waitGone(t, pid, 2*time.Second)
			waitGone(t, childPID, 2*time.Second)
			// The next turn resumes in a new process.
			res = runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "next"})
			mustOK(t, res, "echo: next")
			if !res.NewProcess || !strings.Contains(f.starts(t)[1], "--resume "+sid) {
				t.Fatalf("after abort: %v %q", res.NewProcess, f.starts(t))
			}
		})
	}
}

func TestFakeTimeoutAndContext(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.Timeout = 500 * time.Millisecond })
	res := runTurn(t, f.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "hang"})
	if res.Err == nil || res.Err.Kind != KindTimeout || res.Err.Notice != notices[KindTimeout] {
		t.Fatalf("timeout: %+v", res.Err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	turn, _ := f.r.Run(ctx, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "hang"})
	<-turn.Events()
	cancel()
	if res := turn.Wait(); res.Err == nil || res.Err.Kind != KindAborted {
		t.Fatalf("cancel: %+v", res.Err)
	}
}

// A result claude writes as a shutdown stops it is the turn's result (not
// an abort that runs the turn again after the restart).
func TestResultWrittenAsTheStopComesIsKept(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	turn, err := f.r.Run(ctx, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "term-result"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range turn.Events() {
		if ev.Kind != EventBegan {
			break // claude is writing (began came as it read the prompt)
		}
	}
	cancel()
	if res := turn.Wait(); res.Err != nil || res.Text != "late answer" {
		t.Fatalf("result %+v err %v", res, res.Err)
	}
}

func TestFakeCrashAndRecovery(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	sid := uuid.NewString()
	mustOK(t, runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "a"}), "echo: a")
	for _, tc := range []struct{ prompt, detail string }{{"crash", "exit status 3"}, {"exit0", "without a result"}} {
		res := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: tc.prompt})
		if res.Err == nil || res.Err.Kind != KindCrash || !strings.Contains(res.Err.Detail, tc.detail) {
			t.Fatalf("%s: %+v", tc.prompt, res.Err)
		}
		res = runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "b"})
		mustOK(t, res, "echo: b")
		if !res.NewProcess {
			t.Fatalf("after %s the dead process was reused", tc.prompt)
		}
	}
	// A warm process killed from outside while idle: the next turn restarts transparently.
	pid := f.r.Warm()["k"]
	_ = syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid, 2*time.Second)
	res := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "c"})
	mustOK(t, res, "echo: c")
}

func TestFakeSessionFallbacks(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	// Resume of an unknown session: fresh session, reported.
	sid := uuid.NewString()
	res := runTurn(t, f.r, TurnRequest{SessionID: sid, Prompt: "x"})
	mustOK(t, res, "echo: x")
	if !res.SessionReset {
		t.Fatal("SessionReset not set")
	}
	// NewSession for a uuid that already has a transcript (another process): resumed.
	f.r.Stop(sid)
	res = runTurn(t, f.r, TurnRequest{Key: "other", SessionID: sid, NewSession: true, Prompt: "y"})
	mustOK(t, res, "echo: y")
	if res.SessionReset {
		t.Fatal("SessionReset set on an in-use id")
	}
}

func TestFakeUsageErrorAndNotFound(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.Args = []string{"--bad-flag"} })
	res := runTurn(t, f.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "x"})
	if res.Err == nil || res.Err.Kind != KindUsage || !strings.Contains(res.Err.Detail, "unknown option") {
		t.Fatalf("usage: %+v", res.Err)
	}
	f2 := newFake(t, func(c *Config) { c.Command = "claude-does-not-exist-here" })
	res = runTurn(t, f2.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "x"})
	if res.Err == nil || res.Err.Kind != KindCLINotFound || !strings.Contains(res.Err.Detail, "agent.command") ||
		!strings.Contains(res.Err.Detail, "npm install -g @anthropic-ai/claude-code") {
		t.Fatalf("not found: %+v", res.Err)
	}
}

func TestFakeToolProgressAndSerialization(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	sid := uuid.NewString()
	turn, _ := f.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "tool"})
	second, _ := f.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, Prompt: "queued"})
	var kinds []string
	for ev := range turn.Events() {
		kinds = append(kinds, ev.Kind.String())
		if ev.Kind == EventToolUse && (ev.Tool.Name != "Bash" || ev.Tool.Summary != "ls -la /tmp") {
			t.Fatalf("tool %+v", ev.Tool)
		}
	}
	if strings.Join(kinds, ",") != "began,tool_use,text,result" {
		t.Fatalf("events %v", kinds)
	}
	res := second.Wait()
	mustOK(t, res, "echo: queued")
	if res.NewProcess {
		t.Fatal("queued turn did not reuse the process")
	}
}

// TestFakeEnvironment: claude sees agent.env, the few host variables it inherits and
// claude's own settings the host has — never the rest of the host's environment, where
// the host's secrets are.
func TestFakeEnvironment(t *testing.T) {
	const secret = "hunter2-host-secret"
	t.Setenv("CLAWHOST_TEST_SECRET", secret)
	t.Setenv("TELEGRAM_BOT_TOKEN", secret)
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9") // claude's own: passed through
	t.Setenv("LC_TIME", "C.UTF-8")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TMPDIR", t.TempDir()) // the host's; claude gets its own
	f := newFake(t, func(c *Config) {
		c.Env["AGENT_SETTING"] = "from-agent-env"
		c.Env["LANG"] = "POSIX" // agent.env wins over an inherited variable
	})
	res := runTurn(t, f.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "env"})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	lines := strings.Split(res.Text, "\n")
	if lines[0] != "echo: env" {
		t.Fatalf("result %q", res.Text)
	}
	cfg := f.r.Config()
	env := map[string]string{}
	for _, kv := range lines[1:] {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
		if strings.Contains(value, secret) {
			t.Errorf("claude sees the host's secret in %s", name)
		}
		_, configured := cfg.Env[name]
		runnerOwn := name == "TMPDIR" || name == "CLAUDE_CODE_MAX_RETRIES" || name == "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC" || name == "CLAUDE_CODE_DISABLE_AUTO_MEMORY" || name == "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS" || strings.HasPrefix(name, "DISABLE_")
		if !envfilter.Allowed(name, append(slices.Clone(inheritedEnv), claudeEnv...)...) && !configured && !runnerOwn {
			t.Errorf("claude inherited %s, which is neither allowed nor configured", name)
		}
	}
	for name, want := range map[string]string{
		"AGENT_SETTING":      "from-agent-env",
		"LANG":               "POSIX",
		"LC_TIME":            "C.UTF-8",
		"ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
		"PATH":               os.Getenv("PATH"),
		"DISABLE_TELEMETRY":  "1",
	} {
		if got, ok := env[name]; !ok || got != want {
			t.Errorf("%s = %q (set: %v), want %q", name, got, ok, want)
		}
	}
	if tmp := env["TMPDIR"]; !strings.HasPrefix(tmp, cfg.StateDir+string(filepath.Separator)) {
		t.Errorf("TMPDIR = %q, want the runner's own under %s", tmp, cfg.StateDir)
	}
}

// TestFakeDiesWithHost: SIGKILL to the host process takes claude (Pdeathsig) with it,
// in the sandbox too (bwrap gets Pdeathsig; --die-with-parent and the end of the pid
// namespace take claude).
func TestFakeDiesWithHost(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []string{SandboxOff, SandboxAuto} {
		t.Run(sandbox, func(t *testing.T) {
			t.Parallel()
			if sandbox == SandboxAuto {
				needBwrap(t)
			}
			exe, _ := os.Executable()
			host := exec.Command(exe)
			host.Env = append(os.Environ(), "FAKE_HOST=1", "FAKE_CLAUDE_STATE="+t.TempDir(), "FAKE_SANDBOX="+sandbox)
			out, _ := host.StdoutPipe()
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			defer host.Process.Kill()
			var pid int
			if _, err := fmt.Fscan(out, &pid); err != nil || pid == 0 {
				t.Fatalf("host did not report a claude pid: %v", err)
			}
			if !alive(pid) {
				t.Fatal("claude not running")
			}
			_ = host.Process.Kill()
			_ = host.Wait()
			// Pdeathsig reaches claude only; its tools (the fake's `sleep`) stay in its group.
			defer syscall.Kill(-pid, syscall.SIGKILL)
			waitGone(t, pid, 3*time.Second)
		})
	}
}

func TestValidateRoot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		cfg     Config
		euid    int
		sandbox string
		wantErr string
	}{
		{"bypass as root", Config{PermissionMode: "bypassPermissions"}, 0, "", `agent.permission_mode = "bypassPermissions"`},
		{"skip flag as root", Config{Args: []string{"--dangerously-skip-permissions"}}, 0, "", `agent.args "--dangerously-skip-permissions"`},
		{"bypass as root in sandbox env", Config{PermissionMode: "bypassPermissions", Env: map[string]string{"IS_SANDBOX": "1"}}, 0, "", ""},
		{"bypass as root host sandbox", Config{PermissionMode: "bypassPermissions"}, 0, "1", ""},
		{"bypass as user", Config{PermissionMode: "bypassPermissions"}, 1000, "", ""},
		{"bad mode", Config{PermissionMode: "yolo"}, 1000, "", `agent.permission_mode "yolo"`},
		{"bypass as root, claude as another user", Config{PermissionMode: "bypassPermissions", RunAs: &runas.User{Name: "nobody", UID: 65534}}, 0, "", ""},
		{"run_as when not root", Config{RunAs: &runas.User{Name: "nobody", UID: 65534}}, 1000, "", `agent.run_as "nobody": clawhost must run as root`},
		{"bad settings", Config{Settings: "users"}, 1000, "", `agent.settings "users"`},
		{"bad sandbox", Config{Sandbox: "bwrap"}, 1000, "", `agent.sandbox "bwrap"`},
	} {
		err := tc.cfg.validate(tc.euid, tc.sandbox)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

// A session's /model and /effort reach claude's argv; changing one
// restarts the warm process with --resume, so the conversation goes on.
func TestFakeModelAndEffortOverrides(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.Model = "m-config" })
	sid := uuid.NewString()
	a := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "one"})
	mustOK(t, a, "echo: one")
	b := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "two", Model: "m-chat", Effort: "high"})
	mustOK(t, b, "echo: two")
	c := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "three", Model: "m-chat", Effort: "high"})
	mustOK(t, c, "echo: three")
	if !b.NewProcess || c.NewProcess || b.PID == a.PID || c.PID != b.PID {
		t.Fatalf("processes: %d %d %d (new %v %v %v)", a.PID, b.PID, c.PID, a.NewProcess, b.NewProcess, c.NewProcess)
	}
	starts := f.starts(t)
	if len(starts) != 2 || !strings.Contains(starts[0], "--model m-config") || strings.Contains(starts[0], "--effort") ||
		!strings.Contains(starts[1], "--resume "+sid) || !strings.Contains(starts[1], "--model m-chat") || !strings.Contains(starts[1], "--effort high") {
		t.Fatalf("starts %q", starts)
	}
}

// A chat's /mode reaches --permission-mode only when the configuration
// offers it.
func TestFakePermissionModeOverride(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.PermissionMode = "dontAsk"; c.PermissionModes = []string{"acceptEdits"} })
	sid := uuid.NewString()
	if _, err := f.r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "x", PermissionMode: "bypassPermissions"}); err == nil {
		t.Fatal("a mode the configuration does not offer was run")
	}
	mustOK(t, runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "one"}), "echo: one")
	mustOK(t, runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "two", PermissionMode: "acceptEdits"}), "echo: two")
	starts := f.starts(t)
	if len(starts) != 2 || !strings.Contains(starts[0], "--permission-mode dontAsk") || !strings.Contains(starts[1], "--permission-mode acceptEdits") || !strings.Contains(starts[1], "--resume "+sid) {
		t.Fatalf("starts %q", starts)
	}
}
