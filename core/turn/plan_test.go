package turn

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/runner"
)

// TestPlanTurnAndFeedback: "/plan <text>" runs the text as a turn in plan
// mode that asks in the chat even where the agent does not ask about tool
// use (a tool use other than the plan is denied at once there); a plan
// sent back makes the next message of the person who sent it back a
// plan-mode turn whose prompt says it is the feedback on the plan — once:
// the message after that is an ordinary turn again. A stored "always" for
// ExitPlanMode covers no plan.
func TestPlanTurnAndFeedback(t *testing.T) {
	t.Parallel()
	f, a := newApprovalFixture(t, Settings{Streaming: StreamOff})
	a.keep = true
	ctx := context.Background()
	plan, decided := runner.NewPermissionRequest("rq1", runner.ExitPlanMode, []byte(`{"plan":"1. x"}`))
	bash, denied := runner.NewPermissionRequest("rq2", "Bash", []byte(`{"command":"rm -rf /"}`))
	f.agent.events = []runner.Event{{Kind: runner.EventPermission, Permission: bash}, {Kind: runner.EventPermission, Permission: plan}}
	f.turns.Run(ctx, f.request("tg", "/plan add a login page"))
	for _, ch := range []<-chan runner.Decision{denied, decided} {
		select {
		case d := <-ch:
			if d.Allow {
				t.Fatalf("allowed %+v", d)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("not answered")
		}
	}
	r := f.agent.reqs[0]
	if r.PermissionMode != runner.PlanMode || !r.AskPermission || !strings.Contains(r.Prompt, "add a login page") || strings.Contains(r.Prompt, "/plan") {
		t.Fatalf("plan turn: mode %q ask %v prompt %q", r.PermissionMode, r.AskPermission, r.Prompt)
	}
	if len(a.asked) != 1 {
		t.Fatalf("asked %d times: only the plan is asked about in a turn that asks because it plans", len(a.asked))
	}
	s, _ := f.db.Session(ctx, testKey.String())
	if fb := storedMeta(s).PlanFeedback; fb == nil || fb.From != "tg:5" {
		t.Fatalf("plan feedback %+v", fb)
	}
	f.turns.allowAlways(ctx, testKey.String(), []runner.Rule{{Tool: runner.ExitPlanMode}})

	f.agent.events = nil
	f.turns.Run(ctx, f.request("tg", "use OAuth, not passwords"))
	r = f.agent.reqs[1]
	if r.PermissionMode != runner.PlanMode || !strings.HasPrefix(r.Prompt, "[The message below is Ann's feedback on your plan") || !strings.Contains(r.Prompt, "use OAuth, not passwords") {
		t.Fatalf("feedback turn: mode %q prompt %q", r.PermissionMode, r.Prompt)
	}
	s, _ = f.db.Session(ctx, testKey.String())
	if fb := storedMeta(s).PlanFeedback; fb != nil {
		t.Fatalf("the feedback turn did not clear it: %+v", fb)
	}

	again, decided := runner.NewPermissionRequest("rq3", runner.ExitPlanMode, []byte(`{"plan":"2. y"}`))
	f.agent.events = []runner.Event{{Kind: runner.EventPermission, Permission: again}}
	a.keep = false
	f.turns.Run(ctx, f.request("tg", "thanks"))
	r = f.agent.reqs[2]
	if r.PermissionMode == runner.PlanMode || strings.Contains(r.Prompt, "feedback on your plan") {
		t.Fatalf("an ordinary turn after the feedback: mode %q prompt %q", r.PermissionMode, r.Prompt)
	}
	if d := <-decided; !d.Allow || len(d.Always) > 0 || len(a.auto) > 0 || len(a.asked) != 2 {
		t.Fatalf("a stored ExitPlanMode rule must not answer a plan: %+v auto %v asked %d", d, a.auto, len(a.asked))
	}
}

// TestPlanByDefault: an agent whose permission_mode is "plan" plans every
// turn, and its turns ask in the chat (so the plan can be approved) even
// where the agent does not ask about tool use; an agent in another mode
// does not.
func TestPlanByDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode       string
		plan, asks bool
	}{{"plan", true, true}, {"dontAsk", false, false}, {"", false, false}} {
		f, _ := newApprovalFixture(t, Settings{Streaming: StreamOff, PermissionMode: tt.mode})
		f.turns.Run(context.Background(), f.request("tg", "hello"))
		r := f.agent.reqs[0]
		if (r.PermissionMode == runner.PlanMode) != tt.plan || r.AskPermission != tt.asks {
			t.Errorf("agent mode %q: turn mode %q, asks %v", tt.mode, r.PermissionMode, r.AskPermission)
		}
	}
}
