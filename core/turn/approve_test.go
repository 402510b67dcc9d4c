package turn

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
)

// fakeApprovals records the questions asked and the uses allowed by a
// stored rule; every question is answered "always".
type fakeApprovals struct {
	mu    sync.Mutex
	asked []string // the commands asked about
	from  []*message.Message
	auto  []string // the rules that allowed a use
	// keep: a plan is sent back (Keep planning) by the asker.
	keep bool
}

func (a *fakeApprovals) Ask(_ context.Context, _ sessionkey.Key, _ message.Target, from *message.Message, req *runner.PermissionRequest, _ QuestionCard) (runner.Decision, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, command(req))
	a.from = append(a.from, from)
	if req.Tool == runner.ExitPlanMode && a.keep {
		return runner.Decision{Message: "keep planning"}, from.From
	}
	return runner.Decision{Allow: true, Always: req.AlwaysRules()}, ""
}

func (a *fakeApprovals) Auto(_ sessionkey.Key, _ *runner.PermissionRequest, rule runner.Rule) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.auto = append(a.auto, rule.String())
}

func command(req *runner.PermissionRequest) string {
	var in struct{ Command string }
	_ = json.Unmarshal(req.Input, &in)
	return in.Command
}

func newApprovalFixture(t *testing.T, set Settings) (*fixture, *fakeApprovals) {
	t.Helper()
	f := newFixture(t, set)
	a := &fakeApprovals{}
	f.turns = New(Options{Agent: f.agent, Channels: fakeChannels{}, Hooks: fakeHooks{}, Output: f.out, Store: f.db, Settings: set,
		MemoryFlush: MemoryFlush{Disabled: true}, Now: func() time.Time { return f.now }, Approvals: a})
	return f, a
}

// ask runs a turn in which claude asks about Bash cmd, and returns the
// decision the question got.
func (f *fixture) ask(cmd string) runner.Decision {
	f.t.Helper()
	in, _ := json.Marshal(map[string]string{"command": cmd})
	req, decided := runner.NewPermissionRequest("rq", "Bash", in)
	f.agent.events = []runner.Event{{Kind: runner.EventPermission, Permission: req}}
	f.turns.Run(context.Background(), f.request("tg", "go"))
	select {
	case d := <-decided:
		return d
	case <-time.After(10 * time.Second):
		f.t.Fatalf("%q was not answered", cmd)
	}
	return runner.Decision{}
}

// TestAlwaysIsTheExactRule: an "always" stores the rule it granted with
// the session ("Bash(git log:*)"); a later question that rule covers is
// answered without asking (and claude gets the rule again); one it does
// not cover — another command, a compound command behind the allowed
// prefix — is asked about.
func TestAlwaysIsTheExactRule(t *testing.T) {
	t.Parallel()
	f, a := newApprovalFixture(t, Settings{Streaming: StreamOff, Approvals: true})
	ctx := context.Background()
	if d := f.ask("git log --oneline"); !d.Allow || len(d.Always) != 1 || d.Always[0].String() != "Bash(git log:*)" {
		t.Fatalf("decision %+v", d)
	}
	if s, _ := f.db.Session(ctx, testKey.String()); !slices.Equal(storedMeta(s).Always, []string{"Bash(git log:*)"}) {
		t.Fatalf("stored %q", storedMeta(s).Always)
	}
	if d := f.ask("git log -p"); !d.Allow || len(d.Always) != 1 || d.Always[0].String() != "Bash(git log:*)" {
		t.Errorf("covered: %+v", d)
	}
	f.ask("git push --force")
	f.ask("git log; curl x | sh")
	if want := []string{"git log --oneline", "git push --force", "git log; curl x | sh"}; !slices.Equal(a.asked, want) {
		t.Errorf("asked %q, want %q", a.asked, want)
	}
	if !slices.Equal(a.auto, []string{"Bash(git log:*)"}) {
		t.Errorf("auto %q", a.auto)
	}
	if a.from[0] == nil || a.from[0].From != "tg:5" {
		t.Errorf("asker %+v", a.from[0])
	}
	if s, _ := f.db.Session(ctx, testKey.String()); !slices.Equal(storedMeta(s).Always, []string{"Bash(git log:*)", "Bash(git push:*)"}) {
		t.Errorf("stored %q", storedMeta(s).Always)
	}
}

// TestBareToolNameIsNoGrant: a session that stored "Bash" (an "always"
// from before rules were scoped) is asked again.
func TestBareToolNameIsNoGrant(t *testing.T) {
	t.Parallel()
	f, a := newApprovalFixture(t, Settings{Streaming: StreamOff, Approvals: true})
	ctx := context.Background()
	f.ask("true") // the session exists from here on: the rule is stored
	f.turns.allowAlways(ctx, testKey.String(), []runner.Rule{{Tool: "Bash"}})
	if s, _ := f.db.Session(ctx, testKey.String()); !slices.Contains(storedMeta(s).Always, "Bash") {
		t.Fatalf("stored %q", storedMeta(s).Always)
	}
	f.ask("id")
	if !slices.Equal(a.asked, []string{"true", "id"}) || len(a.auto) != 0 {
		t.Errorf("asked %q, auto %q", a.asked, a.auto)
	}
}

// TestCodeRunningStoredRuleIsNoGrant: a session that stored "Bash(git:*)"
// (an "always" of a version that derived it for "git -C dir status") is
// asked again, and a new "always" grants the narrow rule.
func TestCodeRunningStoredRuleIsNoGrant(t *testing.T) {
	t.Parallel()
	f, a := newApprovalFixture(t, Settings{Streaming: StreamOff, Approvals: true})
	ctx := context.Background()
	f.ask("true") // the session exists from here on
	f.turns.allowAlways(ctx, testKey.String(), []runner.Rule{{Tool: "Bash", Content: "git:*"}})
	if s, _ := f.db.Session(ctx, testKey.String()); !slices.Contains(storedMeta(s).Always, "Bash(git:*)") {
		t.Fatalf("stored %q", storedMeta(s).Always)
	}
	d := f.ask("git -c core.sshCommand=x fetch")
	if !slices.Equal(a.asked, []string{"true", "git -c core.sshCommand=x fetch"}) || len(a.auto) != 0 {
		t.Errorf("asked %q, auto %q", a.asked, a.auto)
	}
	if len(d.Always) != 1 || d.Always[0].String() != "Bash(git -c core.sshCommand=x fetch:*)" {
		t.Errorf("always %+v", d.Always)
	}
}

// TestAskOnlyWhereListed: a session's /mode ask asks only while
// agent.permission_modes lists "ask", and "ask" never reaches claude as a
// permission mode.
func TestAskOnlyWhereListed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		modes []string
		asks  bool
	}{
		{nil, false},
		{[]string{"plan"}, false},
		{[]string{"plan", "ask"}, true},
	} {
		f, _ := newApprovalFixture(t, Settings{Streaming: StreamOff, PermissionModes: tt.modes})
		ctx := context.Background()
		if _, err := f.turns.SetOverrides(ctx, testKey, func(o *session.Overrides) error { o.Mode = ModeAsk; return nil }); err != nil {
			t.Fatal(err)
		}
		f.turns.Run(ctx, f.request("tg", "go"))
		if r := f.agent.reqs[0]; r.AskPermission != tt.asks || r.PermissionMode != "" {
			t.Errorf("modes %q: asks %v, mode %q; want asks %v and no mode", tt.modes, r.AskPermission, r.PermissionMode, tt.asks)
		}
	}
}
