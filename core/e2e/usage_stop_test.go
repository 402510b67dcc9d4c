package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestStoppedTurnInTheLedger: a turn stopped with /stop while the API
// streams its answer has no result line from claude; its ledger row has
// the tokens claude's messages reported on the way (the request's input
// tokens, from message_start), the outcome aborted, and those tokens'
// cost at the model's price, marked an estimate — through the real
// binary, the real CLI and the fake Bot API.
func TestStoppedTurnInTheLedger(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	const prompt = 42000
	fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if strings.Contains(r.LastUserText(), "stall") {
			// Part of the answer, then nothing until the test ends.
			return anthropictest.Reply{Text: "partial words ... and the rest much later", Chunks: 2, ChunkDelay: time.Hour, InputTokens: prompt}
		}
		return anthropictest.Reply{Text: "echo: " + r.LastUserText()}
	})
	adminAddr := sdktest.FreeAddr(t)
	const alice = 1001
	rig.start(t, Host{
		Agent:    rig.agent(Attrs{"timeout": "120s"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Admin:    Attrs{"listen": adminAddr},
		Messages: Attrs{"timezone": "UTC", "turn_card": "off"},
	})
	chat, user := telegramtest.PrivateChat(alice), tgUser(alice, "Alice")
	srv.PushText(chat, user, "stall please")
	tgWaitMessage(t, srv, alice, "partial words") // claude is streaming the answer
	srv.PushText(chat, user, "/stop")

	type record struct {
		Sender       string  `json:"sender"`
		Model        string  `json:"model"`
		InputTokens  int64   `json:"input_tokens"`
		OutputTokens int64   `json:"output_tokens"`
		CostUSD      float64 `json:"cost_usd"`
		Estimate     bool    `json:"estimate"`
		Outcome      string  `json:"outcome"`
	}
	var rows []record
	sdktest.WaitFor(t, "the stopped turn's ledger row", func() bool {
		code, body := get(t, "http://"+adminAddr+"/usage.json")
		return code == 200 && json.Unmarshal([]byte(body), &rows) == nil && len(rows) > 0
	})
	if len(rows) != 1 {
		t.Fatalf("%d ledger rows, want 1: %+v", len(rows), rows)
	}
	r := rows[0]
	if r.Sender != "tg:1001" || r.Outcome != "aborted" || r.CostUSD <= 0 || !r.Estimate || r.Model == "" {
		t.Errorf("the stopped turn's row %+v: want tg:1001, aborted, an estimated cost, the model", r)
	}
	// The prompt's tokens as the API reported them (input and cache
	// together: claude may move part of the prompt into the cache).
	if r.InputTokens < prompt/2 || r.OutputTokens < 1 {
		t.Errorf("the stopped turn's tokens %+v: want the %d the API reported before the stop", r, prompt)
	}
}
