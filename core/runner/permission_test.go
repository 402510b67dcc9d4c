package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// askTurn runs prompt with AskPermission and hands each EventPermission to
// answer; it returns the result and the questions seen.
func askTurn(t *testing.T, r *Runner, req TurnRequest, answer func(*PermissionRequest)) (Result, []*PermissionRequest) {
	t.Helper()
	req.AskPermission = true
	turn, err := r.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var asked []*PermissionRequest
	var res Result
	for e := range turn.Events() {
		switch e.Kind {
		case EventPermission:
			asked = append(asked, e.Permission)
			answer(e.Permission)
		case EventResult:
			res = *e.Result
		}
	}
	return res, asked
}

// TestPermissionQuestionAndAnswer: a can_use_tool request becomes an
// EventPermission with the tool and its input; allow, always and deny go
// back as control responses of the shape claude reads; --permission-prompt-tool
// stdio is passed only when asked for, and a process started without it is
// not reused for a turn that asks.
func TestPermissionQuestionAndAnswer(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	sid := uuid.NewString()
	res, asked := askTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "ask"}, func(p *PermissionRequest) {
		p.Answer(Decision{Allow: true, Always: p.AlwaysRules()})
		p.Answer(Decision{Allow: false}) // only the first answer counts
	})
	if len(asked) != 1 || asked[0].Tool != "Bash" || asked[0].ID != "rq-1" || asked[0].ToolUseID != "toolu_1" || asked[0].Description != "clean" ||
		!strings.Contains(string(asked[0].Input), "rm -rf build") || len(asked[0].Suggestions) != 1 {
		t.Fatalf("asked %+v", asked)
	}
	// claude's suggested rule goes back as a session rule (its suggestion
	// named a settings file, which would outlive the session).
	want := `echo: control_response rq-1 allow  input={"command":"rm -rf build"} perms=[{"behavior":"allow","destination":"session","rules":[{"ruleContent":"rm -rf build","toolName":"Bash"}],"type":"addRules"}]`
	if res.Err != nil || res.Text != want {
		t.Fatalf("result %q err %v\nwant %q", res.Text, res.Err, want)
	}
	select {
	case <-asked[0].Withdrawn:
	default:
		t.Error("an answered question is not closed when the turn ended")
	}
	res, _ = askTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "ask"}, func(p *PermissionRequest) {
		p.Answer(Decision{Message: "Denied from the chat by ann."})
	})
	if want := `echo: control_response rq-1 deny Denied from the chat by ann. input= perms=`; res.Text != want {
		t.Fatalf("deny: %q, want %q", res.Text, want)
	}
	starts := f.starts(t)
	if len(starts) != 1 || !strings.Contains(starts[0], "--permission-prompt-tool stdio") {
		t.Fatalf("starts %q: want one warm process asking the host", starts)
	}
	// A turn that does not ask needs a process that does not route
	// questions to the host.
	mustOK(t, runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "plain"}), "echo: plain")
	if starts = f.starts(t); len(starts) != 2 || strings.Contains(starts[1], "--permission-prompt-tool") {
		t.Fatalf("starts %q", starts)
	}
}

// TestPermissionWithdrawn: claude's control_cancel_request withdraws the
// question: Withdrawn is closed and a late answer is dropped.
func TestPermissionWithdrawn(t *testing.T) {
	t.Parallel()
	f := newFake(t, nil)
	res, asked := askTurn(t, f.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "ask-cancel"}, func(p *PermissionRequest) {
		go func() {
			<-p.Withdrawn
			p.Answer(Decision{Allow: true})
		}()
	})
	mustOK(t, res, "echo: withdrawn")
	if len(asked) != 1 {
		t.Fatalf("asked %d", len(asked))
	}
}

// TestPermissionWaitIsNotTimedOut: agent.timeout counts claude's work, not
// the time a person takes to answer: a turn asked longer than its timeout
// still ends with its result; without a question the same timeout ends it.
func TestPermissionWaitIsNotTimedOut(t *testing.T) {
	t.Parallel()
	const timeout = time.Second // claude starting under load must fit in it
	f := newFake(t, func(c *Config) { c.Timeout = timeout })
	res, _ := askTurn(t, f.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "ask"}, func(p *PermissionRequest) {
		go func() {
			<-time.After(3 * timeout) // the person is slow
			p.Answer(Decision{Allow: true})
		}()
	})
	if res.Err != nil || !strings.Contains(res.Text, "rq-1 allow") {
		t.Fatalf("result %q err %v", res.Text, res.Err)
	}
	res = runTurn(t, f.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "hang"})
	if res.Err == nil || res.Err.Kind != KindTimeout {
		t.Fatalf("hang without a question: %v", res.Err)
	}
}

// TestRealPermissionAllowDenyAlways drives the real CLI: the fake API
// makes the model call Bash outside the workspace, which needs approval.
// Allowed, the command runs; denied, it does not and the model reads the
// message; "always" allows the same command again in the same process
// without a question, not another one.
func TestRealPermissionAllowDenyAlways(t *testing.T) {
	t.Parallel()
	// Outside the workspace the sandbox's filesystem is read-only.
	e := newReal(t, func(c *Config) { c.Sandbox = SandboxOff })
	dir := t.TempDir()
	touch := func(name string) anthropictest.Reply {
		return anthropictest.Reply{Text: "working", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "touch " + filepath.Join(dir, name), "description": "touch " + name}}}
	}
	sid := uuid.NewString()
	e.fake.Enqueue(touch("denied"), anthropictest.Reply{Text: "ok, not done"})
	res, asked := askTurn(t, e.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "touch denied"}, func(p *PermissionRequest) {
		p.Answer(Decision{Message: "Denied from the chat by ann."})
	})
	mustOK(t, res, "ok, not done")
	if len(asked) != 1 || asked[0].Tool != "Bash" || asked[0].BlockedPath == "" {
		t.Fatalf("asked %+v", asked)
	}
	var in struct{ Command string }
	if json.Unmarshal(asked[0].Input, &in); in.Command != "touch "+filepath.Join(dir, "denied") {
		t.Fatalf("input %s", asked[0].Input)
	}
	if _, err := os.Stat(filepath.Join(dir, "denied")); err == nil {
		t.Fatal("a denied command ran")
	}
	if body := string(e.fake.Requests()[1].Body); !strings.Contains(body, "Denied from the chat by ann.") {
		t.Fatal("the model did not read the denial")
	}

	// "Always" is the exact rule claude suggests (the command itself): the
	// same command again runs without a question, another one is asked.
	// (A command claude asks about for a path outside the workspace, like
	// the touch above, is asked again whatever Bash rule it got — only a
	// whole-tool "Bash" rule passes that check, and this host never grants
	// one; the host answers the repeat from the session's rules.)
	curl := func(path string) anthropictest.Reply {
		return anthropictest.Reply{Text: "working", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "curl -s http://127.0.0.1:1/" + path, "description": "fetch"}}}
	}
	e.fake.Enqueue(curl("a"), curl("a"), curl("b"), anthropictest.Reply{Text: "all done"})
	res, asked = askTurn(t, e.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "fetch a, a again, and b"}, func(p *PermissionRequest) {
		p.Answer(Decision{Allow: true, Always: p.AlwaysRules()})
	})
	mustOK(t, res, "all done")
	want := []string{"Bash(curl -s http://127.0.0.1:1/a)", "Bash(curl -s http://127.0.0.1:1/b)"}
	if len(asked) != 2 {
		t.Fatalf("%d questions, want 2: the repeated command must not ask, the other must", len(asked))
	}
	for i, p := range asked {
		if got := p.AlwaysRules(); len(got) != 1 || got[0].String() != want[i] {
			t.Errorf("question %d: rules %v, want %s", i, got, want[i])
		}
	}
}

// TestRealAlwaysEditRuleCoversTheFile: claude suggests only wider updates
// for a Write outside the workspace (acceptEdits, the directory); the
// rule this host derives, Edit(//path), is one claude takes: a second
// Write and an Edit of that file run without a question, a Write of
// another file in the same directory is asked about.
func TestRealAlwaysEditRuleCoversTheFile(t *testing.T) {
	t.Parallel()
	// Outside the workspace the sandbox's filesystem is read-only.
	e := newReal(t, func(c *Config) { c.Sandbox = SandboxOff })
	dir := t.TempDir()
	p, other := filepath.Join(dir, "f.txt"), filepath.Join(dir, "g.txt")
	write := func(path, content string) anthropictest.Reply {
		return anthropictest.Reply{Text: "w", ToolUse: &anthropictest.ToolUse{Name: "Write", Input: map[string]any{"file_path": path, "content": content}}}
	}
	e.fake.Enqueue(write(p, "one\n"), write(p, "two\n"),
		anthropictest.Reply{Text: "e", ToolUse: &anthropictest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": p, "old_string": "two", "new_string": "three"}}},
		write(other, "x\n"), anthropictest.Reply{Text: "done"})
	res, asked := askTurn(t, e.r, TurnRequest{Key: "k", SessionID: uuid.NewString(), NewSession: true, Prompt: "write"}, func(q *PermissionRequest) {
		q.Answer(Decision{Allow: true, Always: q.AlwaysRules()})
	})
	mustOK(t, res, "done")
	if len(asked) != 2 || asked[0].AlwaysRules()[0].String() != "Edit(/"+p+")" || asked[1].Tool != "Write" || !strings.Contains(string(asked[1].Input), "g.txt") {
		t.Fatalf("asked %d: %+v", len(asked), asked)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "three\n" {
		t.Errorf("file %q %v", b, err)
	}
}

// TestRealAskUserQuestion: with the host answering, claude routes its
// AskUserQuestion tool to the host as a permission question; the answers
// go back in the allowed input and the model reads them as the tool's
// result.
func TestRealAskUserQuestion(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	q := map[string]any{"questions": []any{map[string]any{"question": "Which color?", "header": "Color", "multiSelect": false,
		"options": []any{map[string]any{"label": "Red", "description": "warm"}, map[string]any{"label": "Blue", "description": "cool"}}}}}
	e.fake.Enqueue(anthropictest.Reply{Text: "asking", ToolUse: &anthropictest.ToolUse{Name: "AskUserQuestion", Input: q}}, anthropictest.Reply{Text: "blue it is"})
	res, asked := askTurn(t, e.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "pick"}, func(p *PermissionRequest) {
		var in map[string]any
		_ = json.Unmarshal(p.Input, &in)
		in["answers"] = map[string]string{"Which color?": "Blue"}
		b, _ := json.Marshal(in)
		p.Answer(Decision{Allow: true, UpdatedInput: b})
	})
	mustOK(t, res, "blue it is")
	if len(asked) != 1 || asked[0].Tool != AskUserQuestion {
		t.Fatalf("asked %+v", asked)
	}
	if body := string(e.fake.Requests()[1].Body); !strings.Contains(body, `\"Which color?\"=\"Blue\"`) {
		t.Errorf("the model did not get the answer: %s", body[max(0, len(body)-3000):])
	}
}

// TestRealImageBlocks: a turn's images reach the API as image content
// blocks before the text, with the bytes sent (the CLI passes the
// stream-json user message's blocks through); a turn without images
// sends its text as before.
func TestRealImageBlocks(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")
	e.fake.Enqueue(anthropictest.Reply{Text: "a tiny picture"})
	res := runTurn(t, e.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "what is this?", Images: []Image{{MIME: "image/png", Data: png}}})
	mustOK(t, res, "a tiny picture")
	// The user message carries the image block (the bytes sent, base64)
	// and then the prompt's text block.
	body := string(e.fake.Requests()[0].Body)
	block := `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(png) + `"}}`
	at, text := strings.Index(body, block), strings.Index(body, `{"text":"what is this?`)
	if at < 0 || text < at {
		t.Fatalf("image block at %d, text at %d: %.2000s", at, text, body[max(0, len(body)-2000):])
	}
}

// TestRealPlanMode: in plan mode claude writes its plan to the file its
// system prompt names and asks to leave plan mode with the file's text as
// ExitPlanMode's input; allowed, the model reads the approval and the
// turn goes on out of plan mode. The process that left plan mode is not
// reused for the next plan-mode turn (claude would not be planning in
// it): that turn starts claude again, in plan mode, where a denial keeps
// it planning and the model reads the denial's message.
func TestRealPlanMode(t *testing.T) {
	t.Parallel()
	e := newReal(t, func(c *Config) { c.PermissionModes = []string{"default"} })
	planPath := regexp.MustCompile(`create your plan at (\S+?\.md)|A plan file already exists at (\S+?\.md)`)
	var mu sync.Mutex
	script := map[int]func(body string) anthropictest.Reply{}
	step := 0
	e.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		mu.Lock()
		defer mu.Unlock()
		step++
		if f := script[step]; f != nil {
			return f(string(r.Body))
		}
		return anthropictest.Reply{Text: "ok"}
	})
	writePlan := func(text string) func(string) anthropictest.Reply {
		return func(body string) anthropictest.Reply {
			m := planPath.FindStringSubmatch(body)
			if m == nil {
				return anthropictest.Reply{Text: "no plan file named"}
			}
			return anthropictest.Reply{Text: "planning", ToolUse: &anthropictest.ToolUse{Name: "Write", Input: map[string]any{"file_path": m[1] + m[2], "content": text}}}
		}
	}
	exit := func(string) anthropictest.Reply {
		return anthropictest.Reply{Text: "done planning", ToolUse: &anthropictest.ToolUse{Name: ExitPlanMode, Input: map[string]any{}}}
	}
	script[1], script[2] = writePlan("# The plan\n1. one\n2. two\n"), exit
	sid := uuid.NewString()
	res, asked := askTurn(t, e.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "plan it", PermissionMode: PlanMode}, func(p *PermissionRequest) {
		p.Answer(Decision{Allow: true})
	})
	mustOK(t, res, "ok")
	if len(asked) != 1 || asked[0].Tool != ExitPlanMode {
		t.Fatalf("asked %+v", asked)
	}
	var in struct{ Plan, PlanFilePath string }
	if err := json.Unmarshal(asked[0].Input, &in); err != nil || in.Plan != "# The plan\n1. one\n2. two\n" || !strings.HasSuffix(in.PlanFilePath, ".md") {
		t.Fatalf("ExitPlanMode input %s", asked[0].Input)
	}
	if !anyRequest(e.fake, "User has approved your plan") {
		t.Fatal("the model did not read the approval")
	}

	mu.Lock()
	script[4], script[5] = writePlan("# Plan two\n"), exit
	mu.Unlock()
	res, asked = askTurn(t, e.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "plan again", PermissionMode: PlanMode}, func(p *PermissionRequest) {
		p.Answer(Decision{Message: "Keep planning: feedback follows."})
	})
	mustOK(t, res, "ok")
	if !res.NewProcess || len(asked) != 1 || asked[0].Tool != ExitPlanMode {
		t.Fatalf("new process %v, asked %+v: the process that left plan mode must not plan again", res.NewProcess, asked)
	}
	if !anyRequest(e.fake, "Keep planning: feedback follows.") || anyRequest(e.fake, "You are not in plan mode") {
		t.Fatal("the model did not read the denial in plan mode")
	}
}

// anyRequest reports whether a request to the fake carried s.
func anyRequest(f *anthropictest.Server, s string) bool {
	for _, r := range f.Requests() {
		if strings.Contains(string(r.Body), s) {
			return true
		}
	}
	return false
}

// TestRealAskUserQuestionShapes: the answer shapes core/approval sends
// are ones claude 2.1.330 takes: a multi-select's labels joined with ", "
// (as its own card answers; an array would reach the model as "S,L"), and
// questions left unanswered (no answer, annotation unanswered =
// "skipped"), which the model reads as not answered.
func TestRealAskUserQuestionShapes(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	q := map[string]any{"questions": []any{
		map[string]any{"question": "Which sizes?", "header": "Sizes", "multiSelect": true,
			"options": []any{map[string]any{"label": "S", "description": "small"}, map[string]any{"label": "M", "description": "medium"}, map[string]any{"label": "L", "description": "large"}}},
		map[string]any{"question": "Which day?", "header": "Day", "multiSelect": false,
			"options": []any{map[string]any{"label": "Mon", "description": "monday"}, map[string]any{"label": "Tue", "description": "tuesday"}}},
	}}
	answer := func(answers map[string]any, annotations map[string]any) func(*PermissionRequest) {
		return func(p *PermissionRequest) {
			var in map[string]any
			_ = json.Unmarshal(p.Input, &in)
			in["answers"] = answers
			if annotations != nil {
				in["annotations"] = annotations
			}
			b, _ := json.Marshal(in)
			p.Answer(Decision{Allow: true, UpdatedInput: b})
		}
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "asking", ToolUse: &anthropictest.ToolUse{Name: AskUserQuestion, Input: q}}, anthropictest.Reply{Text: "noted"})
	sid := uuid.NewString()
	res, _ := askTurn(t, e.r, TurnRequest{SessionID: sid, NewSession: true, Prompt: "pick"},
		answer(map[string]any{"Which sizes?": "S, L"}, map[string]any{"Which day?": map[string]any{"unanswered": "skipped"}}))
	mustOK(t, res, "noted")
	if !anyRequest(e.fake, `\"Which sizes?\"=\"S, L\"`) {
		for _, r := range e.fake.Requests() {
			b := string(r.Body)
			if i := strings.LastIndex(b, "tool_result"); i >= 0 {
				t.Logf("%s", b[i:min(len(b), i+600)])
			}
		}
		t.Error("the model did not get the multi-select's labels")
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "asking", ToolUse: &anthropictest.ToolUse{Name: AskUserQuestion, Input: q}}, anthropictest.Reply{Text: "going on"})
	res, _ = askTurn(t, e.r, TurnRequest{SessionID: sid, Prompt: "pick again"},
		answer(map[string]any{}, map[string]any{"Which sizes?": map[string]any{"unanswered": "skipped"}, "Which day?": map[string]any{"unanswered": "skipped"}}))
	mustOK(t, res, "going on")
	if !anyRequest(e.fake, "The user did not answer the questions.") {
		t.Error("the model did not read that nobody answered")
	}
}
