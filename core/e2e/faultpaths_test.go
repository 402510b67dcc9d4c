package e2e

// Exactly once on the paths the chaos campaign does not drive (issue 56):
// a budget's refusal, /export's file and a pairing approval from the
// owner's button, each across a kill -9 of the host at three points chosen
// from what the fake Bot API saw (never from a sleep):
//
//   - in flight: the Bot API carried the answer's send out and holds its
//     answer when the host dies (its fate is unknown to the host: the
//     restart must not send it again, and may tell the chat once that part
//     of a reply may be missing);
//   - unconfirmed: the answer shows, but Telegram was never told that the
//     host stored the message (getUpdates fails with 502), so the next
//     plugin process gets it again and the host's dedupe must drop it;
//   - answered: the answer shows and the message is confirmed; the
//     restart must do nothing more.
//
// Each point starts its own host, so one point's leftovers cannot excuse
// another's.

import (
	"database/sql"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// killPoint is where the host is killed -9 around an answer.
type killPoint string

const (
	killInFlight    killPoint = "in-flight"
	killUnconfirmed killPoint = "unconfirmed"
	killAnswered    killPoint = "answered"
)

var killPoints = []killPoint{killInFlight, killUnconfirmed, killAnswered}

// acrossKill9 runs body once per kill point, in a subtest of its own on
// a new fault host started with h.
func acrossKill9(t *testing.T, h Host, body func(t *testing.T, f *faultHost, point killPoint)) {
	t.Helper()
	for _, point := range killPoints {
		t.Run(string(point), func(t *testing.T) { body(t, startFaultHost(t, h), point) })
	}
}

// noticeMissing is the notice of a reply part whose send's fate is
// unknown (core/delivery).
const noticeMissing = "may be missing"

// faultHost is one host on the fake Bot API with the fake claude logging
// its runs.
type faultHost struct {
	t      *testing.T
	srv    *telegramtest.Server
	d      *Daemon
	runLog string
	// last is the newest update pushed.
	last int
}

// startFaultHost starts h (its telegram plugin on a new fake Bot API is
// added here) and waits until the plugin polls.
func startFaultHost(t *testing.T, h Host) *faultHost {
	t.Helper()
	f := &faultHost{t: t, srv: telegramtest.NewServer(tgToken)}
	h.Dir = t.TempDir()
	f.runLog = filepath.Join(h.Dir, "claude-runs.jsonl")
	if h.Agent.Env == nil {
		h.Agent.Env = map[string]string{}
	}
	h.Agent.Env["CLAWHOST_FAKE_CLAUDE_LOG"] = f.runLog
	h.Agent.Attrs = Attrs{"sandbox": "off", "workspace": "./workspace", "timeout": "30s"} // the run log is outside the workspace
	h.Plugins = append([]Plugin{tgPlugin(f.srv.APIEndpoint())}, h.Plugins...)
	t.Cleanup(f.srv.Close)
	f.d = Start(t, h)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(f.srv))
		}
	})
	sdktest.WaitFor(t, "the plugin's first getUpdates", func() bool { return len(f.srv.Requests("getUpdates")) > 0 })
	return f
}

// push sends text from user in their direct chat.
func (f *faultHost) push(user telegramtest.User, text string) int {
	f.last = f.srv.PushText(telegramtest.PrivateChat(user.ID), user, text)
	return f.last
}

// crash runs act (which makes the host answer something) and kills the
// host -9 at point: method is the Bot API call that carries the answer,
// shown says the chat shows it. The host is started again and the test
// waits until every update is confirmed and the bot went quiet.
func (f *faultHost) crash(point killPoint, method string, act func(), shown func() bool) {
	f.crashThen(point, method, act, shown, shown)
}

// crashThen is crash with after, not shown, awaited after the restart:
// what must show in the end (a notice told at most once may be lost at
// killInFlight).
func (f *faultHost) crashThen(point killPoint, method string, act func(), shown, after func() bool) {
	t, srv := f.t, f.srv
	t.Helper()
	tgPollParked(t, srv, f.last)
	switch point {
	case killInFlight:
		// The Bot API carries the call out and answers nothing: the chat
		// shows it, the host cannot know. A file's upload has its
		// connection dropped instead (the fake never notices the client of
		// a silenced multipart call gone: its body is not read to the end,
		// so the server's close would wait for it forever); the plugin then
		// fails the call, and the host marks it uncertain itself, so the
		// kill lands after that.
		before := f.sentBy(method)
		fault := telegramtest.AcceptedSilence()
		if method == "sendDocument" {
			fault = telegramtest.AcceptedThenDropped()
		}
		srv.Fail(method, 1, fault)
		act()
		sdktest.WaitFor(t, method+" carried out, its answer held", func() bool { return f.sentBy(method) > before })
	case killUnconfirmed:
		// The parked poll answers with what act pushes; every later poll
		// fails until the kill, so nothing is confirmed.
		srv.Fail("getUpdates", -1, telegramtest.ServerError(502))
		act()
		sdktest.WaitFor(t, "the answer shown and recorded sent", func() bool { return shown() && f.settled() })
	case killAnswered:
		act()
		sdktest.WaitFor(t, "the answer shown and recorded sent", func() bool { return shown() && f.settled() })
		tgPollParked(t, srv, f.last)
	}
	_ = f.d.cmd.Process.Kill()
	_ = f.d.cmd.Wait()
	srv.ClearFailures()
	f.d.spawn()
	tgPollParked(t, srv, f.last)
	if point == killUnconfirmed {
		sdktest.WaitFor(t, "the host to drop the message Telegram delivered again", func() bool {
			return strings.Contains(f.d.Log(), "duplicate message ignored")
		})
	}
	sdktest.WaitFor(t, "the answer shown", func() bool { return after() && f.settled() })
	tgSettle(t, srv, 1500*time.Millisecond)
}

// sentBy is how many calls of method the Bot API carried out.
func (f *faultHost) sentBy(method string) int {
	n := 0
	for _, s := range f.srv.Sent() {
		if s.Method == method {
			n++
		}
	}
	return n
}

// told checks that chat shows want exactly once, and no notice that part
// of a reply may be missing but where the kill held a send's answer
// (killInFlight: the host cannot know the send was carried out, and says
// so, once).
func (f *faultHost) told(point killPoint, chat int64, want string) {
	f.t.Helper()
	if n := tgCount(f.srv, chat, want); n != 1 {
		f.t.Errorf("%s: chat %d shows %q %d times, want once", point, chat, want, n)
	}
}

// noticesOK checks the notices that part of a reply may be missing: at
// most one in all at killInFlight, none at the other points.
func (f *faultHost) noticesOK(point killPoint, chats ...int64) {
	f.t.Helper()
	n := 0
	for _, c := range chats {
		n += tgCount(f.srv, c, noticeMissing)
	}
	if n > 1 || n == 1 && point != killInFlight {
		f.t.Errorf("%s: %d notices that part of a reply may be missing", point, n)
	}
}

// settled says the journal holds no open entry: every message is done,
// failed or dropped, its reply's chunks recorded sent. (A kill between a
// chunk reaching the chat and its record makes it uncertain: the chat is
// told a part may be missing although it shows; the campaign counts that
// window, these tests kill on either side of it.)
func (f *faultHost) settled() bool {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.d.Dir(), "data", "clawhost.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return false
	}
	defer db.Close()
	var open int
	err = db.QueryRow(`SELECT count(*) FROM journal WHERE state NOT IN ('done', 'failed', 'dropped')`).Scan(&open)
	return err == nil && open == 0
}

// runs is how many turns the fake claude started for mark.
func (f *faultHost) runs(mark string) int {
	n := 0
	for _, ev := range runEvents(f.runLog) {
		if ev.Event == "start" && slices.Contains(ev.Marks, mark) {
			n++
		}
	}
	return n
}

// ledger is the usage ledger's rows, read from the journal's database.
func (f *faultHost) ledger() int {
	f.t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.d.Dir(), "data", "clawhost.db")+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM usage`).Scan(&n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestBudgetRefusalAcrossKill9: Alice's first turn spends her daily
// budget; her second message is refused with the notice. Killed -9 around
// the refusal, the host tells her once, never runs the turn and charges
// nothing for it.
func TestBudgetRefusalAcrossKill9(t *testing.T) {
	t.Parallel()
	alice := tgUser(tgAlice, "Alice")
	acrossKill9(t, Host{
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Messages: Attrs{"streaming": "off", "turn_card": "off", "timezone": "UTC"},
		// The fake claude's turn costs $0.0125: one turn spends it.
		Blocks: []Block{{Type: "budget", Attrs: Attrs{"per_sender_daily_usd": 0.01}}},
	}, func(t *testing.T, f *faultHost, point killPoint) {
		f.push(alice, "first #mark=b1")
		tgWaitMessage(t, f.srv, tgAlice, "echo:", "first")
		const refusal = "Not run: your daily budget is spent"
		f.crash(point, "sendMessage", func() { f.push(alice, "second #mark=b2") },
			func() bool { return tgCount(f.srv, tgAlice, refusal) > 0 })
		f.told(point, tgAlice, refusal)
		f.noticesOK(point, tgAlice)
		if n := f.runs("b2"); n != 0 {
			t.Errorf("the refused message's turn ran %d times", n)
		}
		if n := f.runs("b1"); n != 1 {
			t.Errorf("the first turn ran %d times, want once", n)
		}
		if n := f.ledger(); n != 1 {
			t.Errorf("the ledger has %d rows, want the first turn's only", n)
		}
	})
}

// TestExportAcrossKill9: Alice's /export, killed -9 around its answer:
// the session's file reaches her once.
func TestExportAcrossKill9(t *testing.T) {
	t.Parallel()
	alice := tgUser(tgAlice, "Alice")
	acrossKill9(t, Host{
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Messages: Attrs{"streaming": "off", "turn_card": "off"},
	}, func(t *testing.T, f *faultHost, point killPoint) {
		f.push(alice, "hello #mark=x1")
		tgWaitMessage(t, f.srv, tgAlice, "echo:", "hello")
		const answer = "This session as Markdown"
		f.crash(point, "sendDocument", func() { f.push(alice, "/export") },
			func() bool { return tgCount(f.srv, tgAlice, answer) > 0 })
		docs := 0
		for _, s := range f.srv.Sent() {
			if s.ChatID == strconv.Itoa(tgAlice) && s.Method == "sendDocument" && s.File != nil && strings.HasPrefix(s.File.Filename, "session-") {
				docs++
			}
		}
		if docs != 1 {
			t.Errorf("%s: the export's file was sent %d times, want once", point, docs)
		}
		f.told(point, tgAlice, answer)
		f.noticesOK(point, tgAlice)
		if n := f.runs("x1"); n != 1 {
			t.Errorf("the conversation's turn ran %d times, want once", n)
		}
	})
}

// TestPairingApprovalAcrossKill9: Dave (unknown) asks; the owner, Carol,
// presses Approve on the request in her chat. Killed -9 around the press,
// the host approves Dave once: Carol is told once, Dave is told once and
// his held message is answered once.
func TestPairingApprovalAcrossKill9(t *testing.T) {
	t.Parallel()
	const carolID, daveID = 3003, 4004
	carol, dave := tgUser(carolID, "Carol"), tgUser(daveID, "Dave")
	acrossKill9(t, Host{
		Access:   Attrs{"dm_policy": "pairing", "owners": []string{"tg:3003"}},
		Messages: Attrs{"streaming": "off", "turn_card": "off"},
	}, func(t *testing.T, f *faultHost, point killPoint) {
		f.push(dave, "hello? #mark=p1")
		codeMsg := tgWaitMessage(t, f.srv, daveID, "Your pairing code is")
		code := regexp.MustCompile(`pairing code is (\S+) `).FindStringSubmatch(codeMsg.Visible)
		if code == nil {
			t.Fatalf("no code in %q", codeMsg.Visible)
		}
		req := tgWaitMessage(t, f.srv, carolID, "Dave asks to talk to the bot", code[1])
		approve := ""
		for _, row := range req.Keyboard {
			for _, b := range row {
				if strings.Contains(b.Text, "Approve") {
					approve = b.Data
				}
			}
		}
		if approve == "" {
			t.Fatalf("the owner's request has no Approve button: %+v", req.Keyboard)
		}
		const approved, toldDave = "Approved tg:4004", "An owner approved you"
		// In flight, the send held may be Dave's notice instead of
		// Carol's answer (the two go at once): Carol's answer, recorded
		// as being sent when the host died, is then told as a part
		// that may be missing, not sent again.
		carolTold := func() bool {
			return tgCount(f.srv, carolID, approved) > 0 || point == killInFlight && tgCount(f.srv, carolID, noticeMissing) > 0
		}
		answered := func() bool { return carolTold() && tgCount(f.srv, daveID, "echo:") > 0 }
		f.crashThen(point, "sendMessage", func() {
			if _, err := f.srv.PressButton(telegramtest.PrivateChat(carolID), req.MessageID, approve, carol); err != nil {
				t.Fatal(err)
			}
			f.last++ // the callback query is the fake's next update
		}, func() bool { return answered() && tgCount(f.srv, daveID, toldDave) > 0 }, answered)
		if point != killInFlight || tgCount(f.srv, carolID, approved) > 0 {
			f.told(point, carolID, approved)
		}
		// The notice is told at most once: only the call that journals
		// the held message's copy tells it, after the journal took the
		// copy, so a kill between the two loses the notice (the answer
		// still comes), never doubles it.
		if n := tgCount(f.srv, daveID, toldDave); n > 1 || n == 0 && point != killInFlight {
			t.Errorf("%s: Dave was told %q %d times", point, toldDave, n)
		}
		f.told(point, daveID, "echo:")
		f.noticesOK(point, carolID, daveID)
		if n := f.runs("p1"); n != 1 {
			t.Errorf("%s: the held message's turn ran %d times, want once", point, n)
		}
	})
}
