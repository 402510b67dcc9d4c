package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestLedgerTurnCosts: the usage ledger charges each turn its own cost,
// to the sender whose turn it was — through the real binary, the real
// claude CLI (whose total_cost_usd is the claude session's running total,
// across --resume) and the fake Anthropic API answering every request
// with 100k input and 1k output tokens ($0.42 as the CLI prices them):
//   - Alice's two warm turns in her direct chat, then Alice's and Bob's
//     turns in a group's shared session;
//   - Bob's turn stopped with /stop while the API streams (50k input
//     tokens): charged those tokens at the price the completed turns
//     showed, marked an estimate;
//   - a kill -9 of the host, then turns resumed in new claude processes
//     in the direct chat and the group;
//   - `clawhost usage -json` and /usage all per person equal the sum of
//     the true per-turn costs to the cent;
//   - Erin, held to a $1 daily budget, sends ten messages in rounds of
//     four chats at once: the API is asked for no more than her budget
//     and one turn ($1.42).
func TestLedgerTurnCosts(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	const (
		in, out   = 100_000, 1000
		turnUSD   = 0.42 // 100k × $4/M + 1k × $20/M
		stallIn   = 50_000
		stalledAt = "partial words"
	)
	fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if strings.Contains(r.LastUserText(), "stall") {
			return anthropictest.Reply{Text: stalledAt + " ... and the rest much later", Chunks: 2, ChunkDelay: time.Hour, InputTokens: stallIn}
		}
		return anthropictest.Reply{Text: "echo: " + r.LastUserText(), InputTokens: in, OutputTokens: out}
	})
	adminAddr := sdktest.FreeAddr(t)
	const alice, bob, erin = 1001, 2002, 5005
	const group = tgGroup
	erinGroups := []int64{-1001234500011, -1001234500012, -1001234500013}
	groups := []string{fmt.Sprint("tg:", group)}
	for _, g := range erinGroups {
		groups = append(groups, fmt.Sprint("tg:", g))
	}
	d := rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "120s"}),
		// Alice and Bob are owners: exempt from the budget, which holds
		// Erin alone.
		Access: Attrs{"dm_policy": "allowlist", "owners": []string{"tg:1001", "tg:2002"}, "allow_from": []string{"tg:1001", "tg:2002", "tg:5005"},
			"groups": groups, "group_allow_from": []string{"tg:1001", "tg:2002", "tg:5005"}, "require_mention": false},
		Admin:    Attrs{"listen": adminAddr},
		Messages: Attrs{"timezone": "UTC", "turn_card": "off"},
		Blocks:   []Block{{Type: "budget", Attrs: Attrs{"per_sender_daily_usd": 1}}},
	})
	user := map[int64]telegramtest.User{alice: tgUser(alice, "Alice"), bob: tgUser(bob, "Bob"), erin: tgUser(erin, "Erin")}
	say := func(chat telegramtest.Chat, who int64, text string) {
		srv.PushText(chat, user[who], text)
		tgWaitMessage(t, srv, chat.ID, "echo:", text)
	}
	dm := telegramtest.PrivateChat
	team := telegramtest.Supergroup(group, "Team")

	// Warm turns in a direct chat, then a group's shared session.
	say(dm(alice), alice, "alice-dm-1")
	say(dm(alice), alice, "alice-dm-2")
	say(team, alice, "alice-group-1")
	say(team, bob, "bob-group-1")

	// A turn stopped while the API streams.
	srv.PushText(dm(bob), user[bob], "bob stall please")
	tgWaitMessage(t, srv, bob, stalledAt)
	srv.PushText(dm(bob), user[bob], "/stop")
	type record struct {
		Sender       string  `json:"sender"`
		InputTokens  int64   `json:"input_tokens"`
		OutputTokens int64   `json:"output_tokens"`
		CostUSD      float64 `json:"cost_usd"`
		Estimate     bool    `json:"estimate"`
		Outcome      string  `json:"outcome"`
	}
	var stopped record
	sdktest.WaitFor(t, "the stopped turn's ledger row", func() bool {
		var rows []record
		code, body := get(t, "http://"+adminAddr+"/usage.json")
		if code != 200 || json.Unmarshal([]byte(body), &rows) != nil {
			return false
		}
		for _, r := range rows {
			if r.Outcome == "aborted" {
				stopped = r
				return true
			}
		}
		return false
	})

	// A kill -9, then turns resumed in new claude processes.
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.spawn()
	d.waitFor(func() bool { code, _ := get(t, "http://"+adminAddr+"/healthz"); return code == 200 }, "/healthz 200 after the restart")
	say(dm(alice), alice, "alice-dm-3")
	say(team, bob, "bob-group-2")

	// Erin's burst: four chats at once, three rounds (ten messages).
	erinChats := []telegramtest.Chat{dm(erin)}
	for _, g := range erinGroups {
		erinChats = append(erinChats, telegramtest.Supergroup(g, "Erin's"))
	}
	answered := func(chat int64) int {
		n := 0
		for _, m := range tgChat(srv, chat) {
			if strings.Contains(m.Visible, "echo:") || strings.Contains(m.Visible, "Not run:") {
				n++
			}
		}
		return n
	}
	sentTo := make([]int, len(erinChats))
	for sent := 0; sent < 10; {
		var wg sync.WaitGroup
		for c, chat := range erinChats[:min(len(erinChats), 10-sent)] {
			sent++
			sentTo[c]++
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				srv.PushText(chat, user[erin], fmt.Sprintf("erin-burst-%d-%d", n, c))
			}(sentTo[c])
		}
		wg.Wait()
		for c, chat := range erinChats {
			sdktest.WaitFor(t, fmt.Sprintf("erin's message %d answered in chat %d", sentTo[c], chat.ID), func() bool { return answered(chat.ID) >= sentTo[c] })
		}
	}

	// The true costs: $0.42 a request of each sender's turns; Bob's
	// stopped turn its 50k input tokens at the $4/M the completed turns
	// showed.
	truth := map[string]float64{}
	for _, r := range fake.Requests() {
		text := r.LastUserText()
		for who, tag := range map[string]string{"tg:1001": "alice-", "tg:2002": "bob-group-", "tg:5005": "erin-burst-"} {
			if strings.Contains(text, tag) {
				truth[who] += turnUSD
			}
		}
	}
	if stopped.Sender != "tg:2002" || !stopped.Estimate || stopped.InputTokens < stallIn/2 {
		t.Errorf("the stopped turn's row %+v: want Bob's, an estimate, the %d input tokens the API reported", stopped, stallIn)
	}
	stoppedUSD := float64(stopped.InputTokens)*4e-6 + float64(stopped.OutputTokens)*20e-6
	if math.Abs(stopped.CostUSD-stoppedUSD) > 0.005 || stopped.CostUSD < 0.1 {
		t.Errorf("the stopped turn costs $%.4f in the ledger, want $%.4f (its tokens at the completed turns' prices)", stopped.CostUSD, stoppedUSD)
	}
	truth["tg:2002"] += stoppedUSD
	if truth["tg:1001"] != 4*turnUSD || math.Abs(truth["tg:2002"]-2*turnUSD-stoppedUSD) > 1e-9 {
		t.Errorf("requests per sender %v: want Alice's 4 turns and Bob's 2 and the stopped one", truth)
	}

	var ledger struct {
		Rows []struct {
			Key       string  `json:"key"`
			Turns     int     `json:"turns"`
			CostUSD   float64 `json:"cost_usd"`
			Estimates int     `json:"estimates"`
		} `json:"rows"`
		Total struct {
			CostUSD      float64 `json:"cost_usd"`
			Estimates    int     `json:"estimates"`
			EstimatedUSD float64 `json:"estimated_usd"`
		} `json:"total"`
	}
	raw := teamCLI(t, d.ConfigPath(), "usage", "-by", "person", "-json")
	if err := json.Unmarshal(raw, &ledger); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range ledger.Rows {
		got[r.Key] = r.CostUSD
	}
	for who, want := range truth {
		if math.Round(got[who]*100) != math.Round(want*100) {
			t.Errorf("clawhost usage -json: %s $%.4f, the true per-turn costs sum to $%.4f", who, got[who], want)
		}
	}
	if ledger.Total.Estimates != 1 || math.Abs(ledger.Total.EstimatedUSD-stopped.CostUSD) > 1e-9 {
		t.Errorf("clawhost usage -json total %+v: want the stopped turn as the one estimate", ledger.Total)
	}
	if truth["tg:5005"] > 1+turnUSD+1e-9 {
		t.Errorf("Erin's burst: the API was asked for $%.2f against her $1 budget, more than one $%.2f turn over", truth["tg:5005"], turnUSD)
	}
	// /usage all, for an owner, says the same.
	srv.PushText(dm(alice), user[alice], "/usage all")
	all := tgWaitMessage(t, srv, alice, "Usage, last 30 days").Visible
	for _, want := range []string{
		fmt.Sprintf("tg:1001 — $%.2f, 4 turns", truth["tg:1001"]),
		fmt.Sprintf("tg:2002 — ~$%.2f, 3 turns (1 estimated)", truth["tg:2002"]),
		fmt.Sprintf("tg:5005 — $%.2f, %d turns", truth["tg:5005"], int(math.Round(truth["tg:5005"]/turnUSD))),
	} {
		if !strings.Contains(all, want) {
			t.Errorf("/usage all lacks %q:\n%s", want, all)
		}
	}
	t.Logf("clawhost usage -json: %s", raw)
}
