package e2e

import (
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// TestBackgroundAgentStaysInTurn: through the real binary and the real
// claude CLI, a sub-agent claude starts (the Task tool, which claude 2.1.330
// would run in the background) runs inside the turn: its report is in the
// reply the chat gets; the model is offered no run_in_background and is told
// in the prompt section that nothing outlives its answer.
func TestBackgroundAgentStaysInTurn(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		users := strings.Join(r.UserTexts(), "\n")
		if strings.Contains(users, "SUBTASK") && !strings.Contains(users, "delegate it") {
			return anthropictest.Reply{Text: "SUB REPORT 42"}
		}
		for _, b := range r.Messages[len(r.Messages)-1].Content {
			if b.Type == "tool_result" {
				if strings.Contains(b.ResultText(), "SUB REPORT 42") {
					return anthropictest.Reply{Text: "The sub-agent says 42."}
				}
				return anthropictest.Reply{Text: "No report yet."}
			}
		}
		if strings.Contains(r.LastUserText(), "delegate it") {
			return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "Task", Input: map[string]any{
				"description": "sub work", "prompt": "SUBTASK compute", "subagent_type": "general-purpose", "run_in_background": true}}}
		}
		return anthropictest.Reply{}
	})
	rig.start(t, Host{
		Agent:    rig.agent(Attrs{"timeout": "60s"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Messages: Attrs{"streaming": "off"},
	})
	srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "delegate it")
	tgWaitMessage(t, srv, tgAlice, "The sub-agent says 42.")
	first := fake.Requests()[0]
	if !strings.Contains(first.SystemText(), "Nothing you start outlives your answer") {
		t.Error("the prompt section does not say that nothing outlives the answer")
	}
	if strings.Contains(string(first.Body), `"run_in_background"`) {
		t.Error("a tool offers run_in_background")
	}
}
