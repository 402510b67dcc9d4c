package runner

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// A reload's new model reaches the next turn of a chat whose claude is warm: the
// warm process started with the old model is replaced by one that resumes the session
// with the new one; an Update that changes nothing a turn runs with keeps it warm.
func TestUpdateReachesWarmProcess(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) { c.Model = "m1" })
	cfg := f.r.Config()
	sid := uuid.NewString()
	a := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "one"})
	mustOK(t, a, "echo: one")

	same := cfg
	same.MaxWarm = cfg.MaxWarm + 5 // not a next-turn field: ignored
	if err := f.r.Update(same); err != nil {
		t.Fatal(err)
	}
	b := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "two"})
	mustOK(t, b, "echo: two")
	if b.NewProcess || b.PID != a.PID {
		t.Fatalf("an Update without next-turn changes replaced the warm process (%d → %d)", a.PID, b.PID)
	}

	next := cfg
	next.Model = "m2"
	next.SystemPrompt = "be brief"
	if err := f.r.Update(next); err != nil {
		t.Fatal(err)
	}
	c := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "three"})
	mustOK(t, c, "echo: three")
	if !c.NewProcess || c.Wait.Start != StartChanged {
		t.Fatalf("third turn: new process %v, start %v; want a new process for the changed settings", c.NewProcess, c.Wait.Start)
	}
	starts := f.starts(t)
	if len(starts) != 2 || !strings.Contains(starts[1], "--model m2") || !strings.Contains(starts[1], "--resume "+sid) {
		t.Fatalf("starts %q: want a second start resuming %s with --model m2", starts, sid)
	}
	if got := f.r.profile("").Model; got != "m2" {
		t.Fatalf("profile model %q", got)
	}
	if f.r.Config().MaxWarm != cfg.MaxWarm {
		t.Fatal("Update changed a field that needs a restart")
	}
}

// A named agent's next-turn settings update with the runner's; an invalid configuration
// changes nothing.
func TestUpdateNamedAgentAndInvalid(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) {
		c.Agents = map[string]Config{"ops": {Command: c.Command, Env: c.Env, Workspace: c.Workspace, Sandbox: SandboxOff, Model: "o1"}}
	})
	cfg := f.r.Config()
	before := f.r.profile("ops")
	next := cfg
	next.Agents = map[string]Config{"ops": {Command: cfg.Command, Env: cfg.Env, Workspace: cfg.Workspace, Sandbox: SandboxOff, Model: "o2"}}
	if err := f.r.Update(next); err != nil {
		t.Fatal(err)
	}
	if got := f.r.profile("ops"); got == before || got.Model != "o2" || got.Workspace != before.Workspace {
		t.Fatalf("ops profile after Update: %+v", got)
	}
	if f.r.profile("") != f.r.current().main {
		t.Fatal("default profile not the live one")
	}
	bad := cfg
	bad.PermissionMode = "yolo"
	if err := f.r.Update(bad); err == nil {
		t.Fatal("an invalid permission mode was accepted")
	}
	if f.r.profile("ops").Model != "o2" {
		t.Fatal("a refused Update changed the profiles")
	}
	for _, name := range NextTurnFields {
		if !slices.Contains(configFieldNames(), name) {
			t.Fatalf("NextTurnFields names %q, not a Config field", name)
		}
	}
}

func configFieldNames() []string {
	var out []string
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		out = append(out, t.Field(i).Name)
	}
	return out
}
