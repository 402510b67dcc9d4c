package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// teamCLI runs `clawhost <args…> -config cfg` and returns its stdout.
func teamCLI(t *testing.T, cfg string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir(t), "clawhost"), append(args, "-config", cfg)...)
	cmd.Dir = filepath.Dir(cfg)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("clawhost %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return out
}

// TestTeamTelegram: a team on one bot, through the real binary, the real
// claude CLI against the fake Anthropic API (each answer in the group
// reports 125,000 input tokens, about $0.75 as the CLI prices them) and
// the fake Bot API.
//   - In the group, Alice's first turn runs, her second after the budget's
//     warning, her third is refused with the notice and never reaches
//     claude, while Bob is served.
//   - Erin sends 100 messages in a burst under access.rate "5/min": five
//     are answered, she is told once, the rest are recorded.
//   - Dave (unknown) gets a pairing code; the owner is asked in her own
//     chat and presses Approve; Dave is told and the message that asked is
//     answered once;
//     a wrong /approve code is refused and the owner's /revoke withdraws
//     Dave's approval; Bob's /schedule is refused; the owner's /usage all
//     lists everyone; the owner's /export sends the group's session as a
//     file once, holding Alice's and Bob's messages with claude's replies
//     and the refused one with the host's notice, in order.
//   - status.json has the usage table (per day, person, agent) and the
//     audit section; the page shows both.
//   - After a refused reload (a broken file), a reload and a kill -9,
//     `clawhost usage -json` has a ledger row per turn that ran with the
//     tokens the API reported, and `clawhost audit -json` parses and holds
//     every kind of decision made.
func TestTeamTelegram(t *testing.T) {
	t.Parallel()
	rig := newTgClaude(t)
	fake, srv := rig.fake, rig.srv
	const perTurn = 125000
	fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if strings.Contains(r.LastUserText(), "flood") {
			return anthropictest.Reply{Text: "echo: " + r.LastUserText(), InputTokens: 100} // Erin's are cheap
		}
		return anthropictest.Reply{Text: "echo: " + r.LastUserText(), InputTokens: perTurn}
	})
	adminAddr := sdktest.FreeAddr(t)
	const alice, bob, carol, dave, erin = 1001, 2002, 3003, 4004, 5005
	d := rig.start(t, Host{
		Agent: rig.agent(Attrs{"timeout": "60s"}),
		Access: Attrs{"dm_policy": "pairing", "owners": []string{"tg:3003"}, "allow_from": []string{"tg:1001", "tg:2002", "tg:5005"},
			"groups": []string{fmt.Sprint("tg:", tgGroup)}, "group_allow_from": []string{"tg:1001", "tg:2002"}, "require_mention": false,
			"rate": "5/min"},
		Admin: Attrs{"listen": adminAddr},
		// No live draft: the test sends each next message once it sees
		// the answer, and a draft shows the answer's words before the
		// turn ends and records the reply (the export's order is the
		// journal's).
		Messages: Attrs{"timezone": "UTC", "turn_card": "off", "streaming": "off"},
		Blocks: []Block{
			{Type: "budget", Attrs: Attrs{"per_sender_daily_usd": 1, "warn_at": "40%"}},
			{Type: "audit", Attrs: Attrs{"keep": "30d"}},
		},
	})
	group := telegramtest.Supergroup(tgGroup, "Team")
	user := map[int64]telegramtest.User{alice: tgUser(alice, "Alice"), bob: tgUser(bob, "Bob"), carol: tgUser(carol, "Carol"), dave: tgUser(dave, "Dave"), erin: tgUser(erin, "Erin")}
	inGroup := func(who int64, text string) { srv.PushText(group, user[who], text) }
	direct := func(who int64, text string) { srv.PushText(telegramtest.PrivateChat(who), user[who], text) }

	// The budget: $1 a day, warned at 40 %.
	inGroup(alice, "first from alice")
	tgWaitMessage(t, srv, tgGroup, "echo:", "first from alice")
	inGroup(alice, "second from alice")
	tgWaitMessage(t, srv, tgGroup, "Budget: your daily budget is", "budget.per_sender_daily_usd")
	tgWaitMessage(t, srv, tgGroup, "echo:", "second from alice")
	inGroup(alice, "third from alice")
	tgWaitMessage(t, srv, tgGroup, "Not run: your daily budget is spent", "resets at 00:00 (UTC) tomorrow")
	inGroup(bob, "bob asks")
	tgWaitMessage(t, srv, tgGroup, "echo:", "bob asks")
	for _, r := range fake.Requests() {
		if strings.Contains(r.LastUserText(), "third from alice") {
			t.Fatal("the refused message reached claude")
		}
	}

	// The flood limit.
	for i := range 100 {
		direct(erin, fmt.Sprintf("flood %03d", i))
	}
	tgWaitMessage(t, srv, erin, "faster than this bot takes them", "at most 5 a minute")

	// Pairing, a refused command, /usage all, /export.
	direct(dave, "hello?")
	codeMsg := tgWaitMessage(t, srv, dave, "Your pairing code is")
	code := regexp.MustCompile(`pairing code is (\S+) `).FindStringSubmatch(codeMsg.Visible)
	if code == nil {
		t.Fatalf("no code in %q", codeMsg.Visible)
	}
	// The owner is asked in her own chat, with buttons; her Approve
	// lets Dave in, tells him, and answers the message that asked.
	req := tgWaitMessage(t, srv, carol, "Dave asks to talk to the bot", "tg:4004", code[1])
	approve := ""
	for _, row := range req.Keyboard {
		for _, b := range row {
			if strings.Contains(b.Text, "Approve") {
				approve = b.Data
			}
		}
	}
	if approve != "/approve "+code[1] {
		t.Fatalf("the owner's request has no Approve button: %+v", req.Keyboard)
	}
	if _, err := srv.PressButton(telegramtest.PrivateChat(carol), req.MessageID, approve, user[carol]); err != nil {
		t.Fatal(err)
	}
	tgWaitMessage(t, srv, carol, "Approved tg:4004")
	tgWaitMessage(t, srv, dave, "An owner approved you")
	tgWaitMessage(t, srv, dave, "echo:", "hello?")
	// A wrong code, then the owner withdraws Dave's approval.
	direct(carol, "/approve NOTACODE")
	tgWaitMessage(t, srv, carol, "Unknown pairing code.")
	direct(carol, "/revoke tg:4004")
	tgWaitMessage(t, srv, carol, "Revoked tg:4004")
	inGroup(bob, "/schedule list")
	tgWaitMessage(t, srv, tgGroup, "Only an owner can use /schedule")
	sdktest.WaitFor(t, "Erin's five answers", func() bool { return tgCount(srv, erin, "echo:") >= 5 })
	direct(carol, "/usage all")
	usage := tgWaitMessage(t, srv, carol, "Usage, last 30 days", "People:")
	for _, who := range []string{"tg:1001", "tg:2002", "tg:5005"} {
		if !strings.Contains(usage.Visible, who) {
			t.Errorf("/usage all lacks %s:\n%s", who, usage.Visible)
		}
	}
	inGroup(carol, "/export")
	tgWaitMessage(t, srv, tgGroup, "This session as Markdown")
	var export []string
	for _, s := range srv.Sent() {
		if s.Method == "sendDocument" && s.ChatID == fmt.Sprint(tgGroup) && s.File != nil {
			export = append(export, string(s.File.Data))
		}
	}
	if len(export) != 1 {
		t.Fatalf("%d export files sent to the group, want 1", len(export))
	}
	// From the journal (who, when, what was answered) and claude's
	// transcript; the refused message is there as the host answered it.
	for _, want := range []string{"# Session agent:main:tg:group:", "journal (messages and replies) and claude's transcript", "## Alice (tg:1001) · ",
		"\n\nfirst from alice\n\n**claude** · ", "echo:", "\n\nsecond from alice\n\n", "## Bob (tg:2002) · ", "\n\nbob asks\n\n**claude** · ",
		"\n\nthird from alice\n\n**clawhost** (answered by the host; claude did not see it) · "} {
		if !strings.Contains(export[0], want) {
			t.Errorf("the export lacks %q:\n%s", want, export[0])
		}
	}
	if i, j := strings.Index(export[0], "third from alice"), strings.Index(export[0], "bob asks"); i < 0 || j < i {
		t.Errorf("the export is not in the order the messages came:\n%s", export[0])
	}
	tgSettle(t, srv, time.Second)
	if n := tgCount(srv, erin, "echo:"); n != 5 {
		t.Errorf("Erin got %d answers, want 5", n)
	}
	if n := tgCount(srv, erin, "faster than this bot"); n != 1 {
		t.Errorf("Erin was told %d times, want once", n)
	}
	if n := tgCount(srv, dave, "echo:"); n != 1 {
		t.Errorf("Dave's held message was answered %d times, want once", n)
	}

	// Sessions are named by who they are with: the group by its title,
	// Erin's direct chat by her name.
	_, body := get(t, "http://"+adminAddr+"/status.json")
	if !strings.Contains(body, `"name": "Team"`) || !strings.Contains(body, `"name": "Erin"`) {
		t.Errorf("sessions not named on the status page: %s", body)
	}
	// The status page's usage table and audit section, as status.json
	// has them.
	var snap struct {
		Usage *struct {
			Days, People, Agents []struct {
				Key   string `json:"key"`
				Turns int    `json:"turns"`
			}
		} `json:"usage"`
		Audit []struct{ Kind, Actor, Subject, Decision string } `json:"audit"`
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Usage == nil || len(snap.Usage.Days) == 0 || len(snap.Usage.Agents) != 1 || snap.Usage.Agents[0].Key != "main" {
		t.Errorf("status.json usage: %+v", snap.Usage)
	} else {
		people := map[string]int{}
		for _, r := range snap.Usage.People {
			people[r.Key] = r.Turns
		}
		if people["tg:1001"] != 2 || people["tg:2002"] != 1 || people["tg:5005"] != 5 {
			t.Errorf("status.json usage per person %v, want Alice 2, Bob 1, Erin 5", people)
		}
	}
	revoked := false
	for _, e := range snap.Audit {
		revoked = revoked || (e.Kind == "revoke" && e.Decision == "revoked" && e.Subject == "tg:4004" && e.Actor == "tg:3003")
	}
	if !revoked {
		t.Errorf("status.json audit lacks the revocation: %+v", snap.Audit)
	}
	if _, page := get(t, "http://"+adminAddr+"/"); !strings.Contains(page, "<h2>Usage</h2>") || !strings.Contains(page, "<h2>Audit trail</h2>") || !strings.Contains(page, "tg:4004") {
		t.Errorf("the status page lacks its usage and audit sections")
	}

	// A refused reload (a broken file), a reload, a kill -9, and the
	// ledger and the trail read back.
	good, err := os.ReadFile(d.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.ConfigPath(), append(slices.Clone(good), "\nbudget {\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	sdktest.WaitFor(t, "the refused reload", func() bool { return strings.Contains(d.Log(), "configuration refused") })
	if err := os.WriteFile(d.ConfigPath(), good, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	sdktest.WaitFor(t, "the reload", func() bool { return strings.Contains(d.Log(), "configuration reloaded") })
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.spawn()
	d.waitFor(func() bool { code, _ := get(t, "http://"+adminAddr+"/healthz"); return code == 200 }, "/healthz 200 after the restart")

	var ledger struct {
		By   string `json:"by"`
		Rows []struct {
			Key          string  `json:"key"`
			Turns        int     `json:"turns"`
			InputTokens  int64   `json:"input_tokens"`
			OutputTokens int64   `json:"output_tokens"`
			CostUSD      float64 `json:"cost_usd"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(teamCLI(t, d.ConfigPath(), "usage", "-by", "person", "-json"), &ledger); err != nil {
		t.Fatal(err)
	}
	turns := map[string]int{}
	for _, r := range ledger.Rows {
		turns[r.Key] = r.Turns
		if r.Key != "tg:5005" && (r.InputTokens < int64(r.Turns)*perTurn || r.CostUSD < 0.4*float64(r.Turns)) || r.CostUSD <= 0 {
			t.Errorf("%s: %d turns, %d input tokens, $%.4f: not what the API and the CLI reported", r.Key, r.Turns, r.InputTokens, r.CostUSD)
		}
	}
	if turns["tg:1001"] != 2 || turns["tg:2002"] != 1 || turns["tg:5005"] != 5 {
		t.Errorf("ledger turns per person %v, want Alice 2, Bob 1, Erin 5", turns)
	}
	if out := string(teamCLI(t, d.ConfigPath(), "usage", "-by", "agent", "-since", "1d")); !strings.Contains(out, "main") || !strings.Contains(out, "turns") {
		t.Errorf("clawhost usage -by agent:\n%s", out)
	}
	if out := string(teamCLI(t, d.ConfigPath(), "audit", "-kind", "budget")); !strings.Contains(out, "per_sender_daily_usd tg:1001") || strings.Contains(out, "pairing") {
		t.Errorf("clawhost audit -kind budget:\n%s", out)
	}
	var trail []struct {
		Kind, Actor, Subject, Decision, Detail string
	}
	if err := json.Unmarshal(teamCLI(t, d.ConfigPath(), "audit", "-json"), &trail); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range trail {
		have[e.Kind+" "+e.Decision] = true
		if strings.Contains(e.Detail, code[1]) || strings.Contains(e.Subject, code[1]) {
			t.Errorf("the pairing code is in the trail: %+v", e)
		}
	}
	if turns["tg:4004"] != 1 {
		t.Errorf("Dave's held message: %d turns in the ledger, want 1", turns["tg:4004"])
	}
	for _, want := range []string{"budget warned", "budget refused", "rate refused", "pairing approved", "pairing refused", "revoke revoked",
		"command allowed", "command refused", "reload applied", "reload refused"} {
		if !have[want] {
			t.Errorf("the audit trail lacks %q: %+v", want, trail)
		}
	}
}
