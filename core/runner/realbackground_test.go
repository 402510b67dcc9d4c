package runner

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// TestRealNoBackgroundAgents: claude 2.1.330 starts a sub-agent (the Agent
// tool, "Task" on the wire) in the background unless told otherwise, and
// reports it in a turn of its own after the turn's result. With
// NoBackgroundTasks the sub-agent runs in the foreground: its report is the
// tool's result inside the turn, also when the model asks for the background
// explicitly (claude drops the parameter before the Agent(run_in_background:true)
// rule is asked; the rule is for a claude that ignores the variable). The tools
// the model is offered have no run_in_background.
func TestRealNoBackgroundAgents(t *testing.T) {
	t.Parallel()
	e := newReal(t, nil)
	e.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		users := strings.Join(r.UserTexts(), "\n")
		if strings.Contains(users, "SUBTASK") && !strings.Contains(users, "delegate") {
			return anthropictest.Reply{Text: "SUB REPORT 42"} // the sub-agent's own request
		}
		last := r.Messages[len(r.Messages)-1]
		for _, b := range last.Content {
			if b.Type == "tool_result" {
				return anthropictest.Reply{Text: "tool said: " + b.ResultText()}
			}
		}
		input := map[string]any{"description": "sub work", "prompt": "SUBTASK compute", "subagent_type": "general-purpose"}
		if strings.HasSuffix(r.LastUserText(), "in the background") {
			input["run_in_background"] = true
		}
		return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "Task", Input: input}}
	})
	sid := uuid.NewString()
	res := runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, NewSession: true, Prompt: "delegate"})
	if res.Err != nil || !strings.Contains(res.Text, "SUB REPORT 42") {
		t.Fatalf("the sub-agent's report is not the turn's tool result: %q (err %v)", res.Text, res.Err)
	}
	var body struct {
		Tools []struct {
			Name   string `json:"name"`
			Schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(e.fake.Requests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, tl := range body.Tools {
		if tl.Name == "Agent" || tl.Name == "Task" || tl.Name == "Bash" {
			seen = append(seen, tl.Name)
			if _, ok := tl.Schema.Properties["run_in_background"]; ok {
				t.Errorf("tool %s offers run_in_background", tl.Name)
			}
		}
	}
	if !slices.Contains(seen, "Bash") || len(seen) != 2 {
		t.Fatalf("tools Agent and Bash not both offered: %q", seen)
	}

	res = runTurn(t, e.r, TurnRequest{Key: "chat", SessionID: sid, Prompt: "delegate in the background"})
	if res.Err != nil || !strings.Contains(res.Text, "SUB REPORT 42") {
		t.Fatalf("an explicit background sub-agent did not report inside the turn: %q (err %v)", res.Text, res.Err)
	}
}
