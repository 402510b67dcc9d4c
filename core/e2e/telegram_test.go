package e2e

// Host-level tests of the Telegram channel: the real clawhost binary runs
// the real clawhost-telegram plugin process against the fake Bot API
// (plugins/telegram/telegramtest) on loopback, with the test binary as a
// fake claude CLI (core/internal/fakeclaude). Everything the bot says is
// read back from the fake's record of sendMessage/editMessageText calls.

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const (
	tgToken = "123456:TEST-clawhost-e2e"
	// tgWait bounds every single wait of these tests.
	tgWait = 45 * time.Second
)

// Chats and users of the tests. Each subtest of TestTelegramChannel talks
// in chats of its own, so the shared daemon's conversations never mix.
const (
	tgAlice    = 1001           // DM: echo
	tgCarol    = 1003           // DM: long reply
	tgDora     = 1004           // DM: HTML fallback
	tgStranger = 2999           // DM: not allowed
	tgBob      = 2002           // group member group_allow_from names
	tgGroup    = -1001234500001 // allowed group
	tgForum    = -1001234500002 // allowed forum supergroup
	tgTopic    = 77             // topic in tgForum
)

// tgPlugin is the telegram plugin as instance "tg" on the fake Bot API at
// endpoint, with the test token and long polls.
func tgPlugin(endpoint string) Plugin {
	return Plugin{Name: "tg", Source: "telegram", Config: Attrs{"token": tgToken, "api_endpoint": endpoint, "poll_timeout": 30}}
}

// startTelegramDaemon starts a fake Bot API and clawhost with only the
// telegram plugin pointed at it, and returns both once the plugin polls.
func startTelegramDaemon(t *testing.T, streaming string) (*daemon, *telegramtest.Server) {
	t.Helper()
	srv := telegramtest.NewServer(tgToken)
	dir := t.TempDir()
	// Only the telegram plugin, with the fake claude agent.
	h := Host{
		Dir: dir,
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1003", "tg:1004"},
			"groups":           []string{"tg:-1001234500001", "tg:-1001234500002"},
			"group_allow_from": []string{"tg:2002"}, "require_mention": true},
		Admin:    Attrs{"listen": "127.0.0.1:0"}, // an ephemeral port, for /metrics (see tgCounter)
		Messages: Attrs{"streaming": streaming},
		Plugins:  []Plugin{tgPlugin(srv.APIEndpoint())},
	}
	// Cleanups run last-registered first: the daemon stops before the fake
	// closes, so the plugin never sees its API vanish.
	t.Cleanup(srv.Close)
	return startOnTelegram(t, srv, h), srv
}

// tgRequestLog summarizes the fake's recorded requests for a failure log.
func tgRequestLog(srv *telegramtest.Server) string {
	return requestLog(srv.Requests(""), func(r telegramtest.Request) (time.Time, string) {
		p := map[string]string{}
		for k, v := range r.Params {
			if k == "commands" || k == "allowed_updates" {
				continue
			}
			p[k] = clip(strings.Join(v, ","), 60)
		}
		return r.Time, fmt.Sprintf("%s %v", r.Method, p)
	})
}

func tgUser(id int64, first string) telegramtest.User {
	return telegramtest.User{ID: id, FirstName: first}
}

// tgMessage is one message of the bot as the chat shows it in the end: its
// latest content after edits.
type tgMessage struct {
	telegramtest.Sent
	Edits int
}

// tgChat returns the bot's messages in chat, in the order they were first
// sent, each with its latest content.
func tgChat(srv *telegramtest.Server, chat int64) []tgMessage {
	id := strconv.FormatInt(chat, 10)
	var out []tgMessage
	at := map[int]int{}
	for _, s := range srv.Sent() {
		if s.ChatID != id {
			continue
		}
		if i, ok := at[s.MessageID]; ok {
			out[i].Sent = s
			out[i].Edits++
			continue
		}
		at[s.MessageID] = len(out)
		out = append(out, tgMessage{Sent: s})
	}
	return out
}

// tgWaitMessage waits until one of the bot's messages in chat shows all of
// wants and returns it.
func tgWaitMessage(t *testing.T, srv *telegramtest.Server, chat int64, wants ...string) tgMessage {
	t.Helper()
	var found tgMessage
	sdktest.WaitFor(t, fmt.Sprintf("a message in chat %d showing %q", chat, wants), func() bool {
		var ok bool
		found, ok = showing(tgChat(srv, chat), func(m tgMessage) string { return m.Visible }, wants)
		return ok
	})
	return found
}

// tgSettle waits until the fake has recorded no request but getUpdates for
// quiet, so a reply's drafts and edits are over.
func tgSettle(t *testing.T, srv *telegramtest.Server, quiet time.Duration) {
	t.Helper()
	waitQuiet(t, quiet, func() time.Time {
		var last time.Time
		for _, r := range srv.Requests("") {
			if r.Method != "getUpdates" && r.Time.After(last) {
				last = r.Time
			}
		}
		return last
	})
}

// tgCount is how many of the bot's messages in chat show s.
func tgCount(srv *telegramtest.Server, chat int64, s string) int {
	return countShowing(tgChat(srv, chat), func(m tgMessage) string { return m.Visible }, s)
}

// TestTelegramChannel runs one daemon with the default streaming ("auto": a
// live draft edited in place, as Telegram can edit) and checks, chat by
// chat, what a Telegram user sees.
func TestTelegramChannel(t *testing.T) {
	start := time.Now()
	d, srv := startTelegramDaemon(t, "auto")
	t.Logf("daemon up after %v", time.Since(start).Round(time.Millisecond))

	// The menu is published once the plugin is ready; the first test that
	// needs a ready plugin waits for it.
	t.Run("CommandMenu", func(t *testing.T) {
		sdktest.WaitFor(t, "setMyCommands", func() bool { return len(srv.Commands()) > 0 })
		var names []string
		for _, c := range srv.Commands() {
			names = append(names, c.Command)
			if strings.TrimSpace(c.Description) == "" {
				t.Errorf("command %q has no description", c.Command)
			}
		}
		for _, want := range []string{"new", "reset", "status", "help", "stop", "whoami"} {
			if !slices.Contains(names, want) {
				t.Errorf("menu %v lacks %q", names, want)
			}
		}
	})

	t.Run("DirectMessage", func(t *testing.T) {
		srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "hello there dm-marker")
		m := tgWaitMessage(t, srv, tgAlice, "echo:", "dm-marker")
		if !strings.Contains(m.Visible, "[Telegram Alice") || !strings.Contains(m.Visible, "id:1001") {
			t.Errorf("reply %q: want the echo of the enveloped prompt", m.Visible)
		}
		if m.ThreadID != 0 {
			t.Errorf("DM reply in thread %d", m.ThreadID)
		}
		tgSettle(t, srv, 300*time.Millisecond)
		if n := tgCount(srv, tgAlice, "dm-marker"); n != 1 {
			t.Errorf("%d messages answer the DM, want 1: %+v", n, tgChat(srv, tgAlice))
		}
	})

	t.Run("StrangerRefused", func(t *testing.T) {
		srv.PushText(telegramtest.PrivateChat(tgStranger), tgUser(tgStranger, "Eve"), "let me in stranger-marker")
		m := tgWaitMessage(t, srv, tgStranger, "tg:2999")
		if strings.Contains(m.Visible, "echo") || strings.Contains(m.Visible, "stranger-marker") {
			t.Errorf("the stranger reached the agent: %q", m.Visible)
		}
	})

	t.Run("GroupMention", func(t *testing.T) {
		group := telegramtest.Supergroup(tgGroup, "Devs")
		bob := tgUser(tgBob, "Bob")
		unaddressed := srv.PushText(group, bob, "just chatting among us history-marker")
		// Nothing is said to an unaddressed message. The next, addressed
		// message is handled after it (arrivals are serialized per chat),
		// so its answer shows that the first was seen and kept.
		srv.PushText(group, bob, "@clawbot what do you think? mention-marker")
		m := tgWaitMessage(t, srv, tgGroup, "echo:", "mention-marker")
		for _, want := range []string{"[Chat messages since your last reply - for context]", "history-marker", "Devs"} {
			if !strings.Contains(m.Visible, want) {
				t.Errorf("reply lacks %q (group history): %q", want, m.Visible)
			}
		}
		if i, j := strings.Index(m.Visible, "history-marker"), strings.Index(m.Visible, "mention-marker"); i > j {
			t.Errorf("history after the current message in %q", m.Visible)
		}
		tgSettle(t, srv, 300*time.Millisecond)
		if msgs := tgChat(srv, tgGroup); len(msgs) != 1 {
			t.Errorf("bot sent %d messages to the group, want 1 (only the mention is answered): %+v", len(msgs), msgs)
		}
		if srv.Offset() <= unaddressed {
			t.Errorf("offset %d does not confirm update %d", srv.Offset(), unaddressed)
		}
	})

	t.Run("ForumTopic", func(t *testing.T) {
		forum := telegramtest.Supergroup(tgForum, "Forum")
		forum.IsForum = true
		text := "@clawbot in the topic topic-marker"
		srv.PushUpdate(map[string]any{"message": map[string]any{
			"message_id": 500, "date": time.Now().Unix(), "chat": forum, "from": tgUser(tgBob, "Bob"),
			"text": text, "entities": telegramtest.Entities(text),
			"message_thread_id": tgTopic, "is_topic_message": true,
			// In a topic every message replies to the topic's first message.
			"reply_to_message": map[string]any{"message_id": tgTopic, "date": time.Now().Unix(), "chat": forum,
				"forum_topic_created": map[string]any{"name": "Ops", "icon_color": 7322096}},
		}})
		m := tgWaitMessage(t, srv, tgForum, "echo:", "topic-marker")
		tgSettle(t, srv, 300*time.Millisecond)
		for _, s := range srv.Sent() {
			if s.ChatID == strconv.FormatInt(tgForum, 10) && s.ThreadID != tgTopic {
				t.Errorf("%s to the forum in thread %d, want %d: %q", s.Method, s.ThreadID, tgTopic, s.Visible)
			}
		}
		for _, r := range srv.Requests("sendChatAction") {
			if r.Params.Get("chat_id") == strconv.FormatInt(tgForum, 10) && r.Params.Get("message_thread_id") != strconv.Itoa(tgTopic) {
				t.Errorf("typing shown outside the topic: %v", r.Params)
			}
		}
		if strings.Contains(m.Visible, "Ops") {
			t.Errorf("the topic's creation message was quoted as a reply: %q", m.Visible)
		}
	})

	t.Run("LongReply", func(t *testing.T) {
		srv.PushText(telegramtest.PrivateChat(tgCarol), tgUser(tgCarol, "Carol"), "write a lot #blocks=6")
		tgWaitMessage(t, srv, tgCarol, "block 6:")
		tgSettle(t, srv, 500*time.Millisecond)
		msgs := tgChat(srv, tgCarol)
		chat := strconv.FormatInt(tgCarol, 10)
		var all strings.Builder
		sends := 0
		for _, s := range srv.Sent() {
			if s.ChatID != chat {
				continue
			}
			if s.Method == "sendMessage" {
				sends++
			}
			if n := telegramtest.UTF16Len(s.Visible); n > telegram.MaxTextLength {
				t.Errorf("%s of %d UTF-16 units", s.Method, n)
			}
		}
		for _, m := range msgs {
			all.WriteString(m.Visible + "\n")
		}
		text := all.String()
		t.Logf("%d sendMessage calls, %d messages in the end (%v)", sends, len(msgs), tgSizes(msgs))
		if sends < 2 || len(msgs) < 2 {
			t.Errorf("%d sendMessage calls, %d messages: a ~5.5k reply needs several", sends, len(msgs))
		}
		if n := telegramtest.UTF16Len(text); n < 5000 {
			t.Errorf("the chat shows %d UTF-16 units of the reply, want ~5.5k", n)
		}
		onceInOrder(t, text, "block %d:", 6)
		// No request was refused (too long or otherwise).
		if got, want := len(tgRequestsTo(srv, "sendMessage", chat))+len(tgRequestsTo(srv, "editMessageText", chat)), len(tgSentTo(srv, chat)); got != want {
			t.Errorf("%d send/edit requests but %d accepted", got, want)
		}
	})

	t.Run("HTMLFallback", func(t *testing.T) {
		chat := strconv.FormatInt(tgDora, 10)
		srv.Fail("sendMessage", 1, telegramtest.Failure{Code: 400, Description: `Bad Request: can't parse entities: Unsupported start tag "foo" at byte offset 7`})
		srv.PushText(telegramtest.PrivateChat(tgDora), tgUser(tgDora, "Dora"), "plain please html-marker")
		m := tgWaitMessage(t, srv, tgDora, "echo:", "html-marker")
		tgSettle(t, srv, 300*time.Millisecond)
		reqs := tgRequestsTo(srv, "sendMessage", chat)
		if len(reqs) != 2 {
			t.Fatalf("%d sendMessage requests to the chat, want the refused HTML and its plain resend:\n%s", len(reqs), tgRequestLog(srv))
		}
		refused, plain := reqs[0].Params, reqs[1].Params
		if refused.Get("parse_mode") != "HTML" {
			t.Errorf("first attempt parse_mode %q, want HTML", refused.Get("parse_mode"))
		}
		if _, ok := plain["parse_mode"]; ok {
			t.Errorf("resend has parse_mode %q, want none", plain.Get("parse_mode"))
		}
		// The text resent is exactly what the refused HTML shows.
		if vis, err := telegramtest.ParseHTML(refused.Get("text")); err != nil || strings.TrimSpace(vis) != plain.Get("text") {
			t.Errorf("resent text is not the refused one:\nrefused HTML %q\nplain        %q", refused.Get("text"), plain.Get("text"))
		}
		if m.ParseMode != "" || m.Text != plain.Get("text") {
			t.Errorf("the chat shows %q (parse_mode %q), want the plain resend", m.Text, m.ParseMode)
		}
		// The plugin falls back by itself (it never returns
		// formatting_rejected), so the host had nothing to retry.
		if strings.Contains(d.log.String(), "channel rejected the formatting") {
			t.Errorf("the host saw formatting_rejected: the plugin did not fall back to plain text itself")
		}
		if msgs := tgChat(srv, tgDora); len(msgs) != 1 {
			t.Errorf("%d messages in the chat, want 1: %+v", len(msgs), msgs)
		}
	})
}

// TestTelegramStreamedBlocks: with messages.streaming = "blocks" a reply the
// agent writes as six ~900-character messages 300ms apart reaches the chat
// as separate sendMessage calls while it is written, in order, each within
// Telegram's limit, none edited.
func TestTelegramStreamedBlocks(t *testing.T) {
	_, srv := startTelegramDaemon(t, "blocks")
	start := time.Now()
	srv.PushText(telegramtest.PrivateChat(tgCarol), tgUser(tgCarol, "Carol"), "stream it #blocks=6 #gap=300ms")
	first := tgWaitMessage(t, srv, tgCarol, "block 1:")
	firstAt := time.Since(start)
	tgWaitMessage(t, srv, tgCarol, "block 6:")
	lastAt := time.Since(start)
	tgSettle(t, srv, 500*time.Millisecond)
	t.Logf("block 1 shown after %v, block 6 after %v", firstAt.Round(time.Millisecond), lastAt.Round(time.Millisecond))
	if lastAt-firstAt < 500*time.Millisecond {
		t.Errorf("blocks 1 and 6 shown %v apart: the reply was not streamed", lastAt-firstAt)
	}
	if !strings.HasPrefix(first.Visible, "block 1:") {
		t.Errorf("first message %q", first.Visible)
	}
	msgs := tgChat(srv, tgCarol)
	t.Logf("%d messages (%v)", len(msgs), tgSizes(msgs))
	if len(msgs) < 2 {
		t.Errorf("%d messages, want the blocks as several", len(msgs))
	}
	var text strings.Builder
	for _, m := range msgs {
		if m.Edits != 0 || m.Method != "sendMessage" {
			t.Errorf("message %d edited %d times (%s) in blocks mode", m.MessageID, m.Edits, m.Method)
		}
		if n := telegramtest.UTF16Len(m.Visible); n > telegram.MaxTextLength {
			t.Errorf("message of %d UTF-16 units", n)
		}
		text.WriteString(m.Visible + "\n")
	}
	onceInOrder(t, text.String(), "block %d:", 6)
}

func tgSizes(msgs []tgMessage) []int {
	var out []int
	for _, m := range msgs {
		out = append(out, telegramtest.UTF16Len(m.Visible))
	}
	return out
}

func tgRequestsTo(srv *telegramtest.Server, method, chat string) []telegramtest.Request {
	var out []telegramtest.Request
	for _, r := range srv.Requests(method) {
		if r.Params.Get("chat_id") == chat {
			out = append(out, r)
		}
	}
	return out
}

func tgSentTo(srv *telegramtest.Server, chat string) []telegramtest.Sent {
	var out []telegramtest.Sent
	for _, s := range srv.Sent() {
		if s.ChatID == chat {
			out = append(out, s)
		}
	}
	return out
}

// tgPluginPID returns the pid of the running clawhost-telegram process
// other than not (0 for none).
func tgPluginPID(d *daemon, not int) int { return pluginPID(d, "clawhost-telegram", not) }

// tgPollParked waits until the plugin is parked in a long poll that has
// passed the fake's failure script: every update is confirmed and the last
// getUpdates (which confirmed them, so it was sent after the last delivery)
// is younger than poll_timeout (30s), so it is still waiting for updates.
func tgPollParked(t *testing.T, srv *telegramtest.Server, lastID int) {
	t.Helper()
	sdktest.WaitFor(t, "a getUpdates long poll parked with every update confirmed", func() bool {
		rs := srv.Requests("getUpdates")
		if len(rs) == 0 || srv.Pending() != 0 {
			return false
		}
		last := rs[len(rs)-1]
		offset, _ := strconv.Atoi(last.Params.Get("offset"))
		return offset > lastID && time.Since(last.Time) < 20*time.Second
	})
}

// tgStatusURL finds the admin endpoint (port 0 in startTelegramDaemon's host) in the
// daemon's "status page" log line.
var tgStatusURL = regexp.MustCompile(`status page: url=(http://([^/\s]+))/ token_file=(\S+)`)

// tgCounter returns the value of the daemon's Prometheus counter name for
// instance tg; 0 while nothing was counted.
func tgCounter(t *testing.T, d *daemon, name string) int {
	t.Helper()
	m := tgStatusURL.FindStringSubmatch(d.log.String())
	if m == nil {
		t.Fatal("the clawhost log names no admin endpoint")
	}
	// An ephemeral port: get finds the token by the address the log names.
	adminTokens.Store(m[2], m[3])
	_, body := get(t, m[1]+"/metrics")
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+`{instance="tg"} `); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return int(f)
		}
	}
	return 0
}

// tgWaitConfirmed waits until the host has heard back from the plugin about
// every message the fake accepted: its count of successful Send calls
// equals the fake's count of sent messages. Then no Send is in flight, and
// killing the plugin cannot hit the one window where a reply may be sent
// twice: a Send that reached Telegram but whose answer died with the
// plugin is retried (delivery is at-least-once per chunk, with a window of
// one Send; see core/store).
func tgWaitConfirmed(t *testing.T, d *daemon, srv *telegramtest.Server) {
	t.Helper()
	sdktest.WaitFor(t, "the host to hear back about every message sent", func() bool {
		sent := 0
		for _, s := range srv.Sent() {
			if s.Method == "sendMessage" {
				sent++
			}
		}
		return tgCounter(t, d, "clawhost_messages_out_total") == sent
	})
}

// TestTelegramPluginRestart kills the plugin process (SIGKILL) twice, each
// time where the design promises exactly-once answers: once after the host
// acked an update but before the plugin could confirm it to Telegram, while
// the agent is still working on it, and once with no Send in flight and an
// update waiting that no plugin has fetched yet. Each time the host restarts
// the plugin as a new process; the unconfirmed update is fetched again, the
// redelivered copy is dropped by the host's dedupe, the reply goes out
// through the new process, and each update is answered exactly once.
func TestTelegramPluginRestart(t *testing.T) {
	d, srv := startTelegramDaemon(t, "auto")
	alice := telegramtest.PrivateChat(tgAlice)
	from := tgUser(tgAlice, "Alice")

	warm := srv.PushText(alice, from, "warm up warm-marker")
	tgWaitMessage(t, srv, tgAlice, "echo:", "warm-marker")
	tgWaitConfirmed(t, d, srv)
	// The host publishes the command menu each time the plugin is ready.
	sdktest.WaitFor(t, "the command menu", func() bool { return len(srv.Requests("setMyCommands")) > 0 })
	menus := len(srv.Requests("setMyCommands"))
	old := tgPluginPID(d, 0)
	if old == 0 {
		t.Fatal("no clawhost-telegram process")
	}

	// 1. Acked by the host, not confirmed to Telegram. The parked long
	// poll returns the update; every later getUpdates fails, so the offset
	// that would confirm it never reaches the fake. The agent answers only
	// once the test creates release, so the turn is certainly in flight
	// across the restart and no Send can be under way when the plugin dies.
	tgPollParked(t, srv, warm)
	polls := len(srv.Requests("getUpdates"))
	srv.Fail("getUpdates", -1, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	release := d.Visible("release")
	id := srv.PushText(alice, from, "slow one #wait="+release+" restart-marker")
	// The plugin polls again only after the host acked the update.
	sdktest.WaitFor(t, "the plugin to hand the update over and poll again", func() bool { return len(srv.Requests("getUpdates")) > polls })
	if srv.Pending() != 1 {
		t.Fatalf("%d updates pending, want the unconfirmed one", srv.Pending())
	}
	killedAt := time.Now()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.ClearFailures()
	var next int
	sdktest.WaitFor(t, "the host to restart the plugin", func() bool { next = tgPluginPID(d, old); return next != 0 })
	t.Logf("plugin pid %d killed, restarted as %d after %v", old, next, time.Since(killedAt).Round(time.Millisecond))
	sdktest.WaitFor(t, "the host to drop the redelivered copy", func() bool {
		return tgCounter(t, d, "clawhost_messages_duplicate_total") > 0
	})
	sdktest.WaitFor(t, "the restarted plugin to confirm the update", func() bool { return srv.Offset() > id })
	// The restarted plugin fetched the update again (without an offset, or
	// one not past it); the killed one only ever asked for offset id+1.
	refetched := slices.ContainsFunc(srv.Requests("getUpdates"), func(r telegramtest.Request) bool {
		o, err := strconv.Atoi(r.Params.Get("offset"))
		return r.Time.After(killedAt) && (err != nil || o <= id)
	})
	if !refetched {
		t.Errorf("no getUpdates after the restart fetched update %d again: the redelivery path was not exercised", id)
	}
	if n := tgCount(srv, tgAlice, "restart-marker"); n != 0 {
		t.Fatalf("answered %d times before the agent was released", n)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tgWaitMessage(t, srv, tgAlice, "echo:", "restart-marker")
	tgWaitConfirmed(t, d, srv)

	// 2. An update that arrives while the plugin is dead.
	if err := syscall.Kill(next, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	id2 := srv.PushText(alice, from, "while you were away dead-marker")
	sdktest.WaitFor(t, "the host to restart the plugin again", func() bool { return tgPluginPID(d, next) != 0 })
	tgWaitMessage(t, srv, tgAlice, "echo:", "dead-marker")
	sdktest.WaitFor(t, "the update to be confirmed", func() bool { return srv.Offset() > id2 })

	// A later message in the same chat is answered after any duplicate
	// would have been: one session runs and delivers in order. Once the
	// host heard back about a Send for each of the four answers, count.
	srv.PushText(alice, from, "and now? after-marker")
	tgWaitMessage(t, srv, tgAlice, "echo:", "after-marker")
	markers := []string{"warm-marker", "restart-marker", "dead-marker", "after-marker"}
	sdktest.WaitFor(t, "the host to hear back about every answer", func() bool {
		return tgCounter(t, d, "clawhost_messages_out_total") >= len(markers)
	})
	for _, marker := range markers {
		if n := tgCount(srv, tgAlice, marker); n != 1 {
			t.Errorf("%q answered %d times, want exactly once", marker, n)
		}
	}
	sdktest.WaitFor(t, "each restarted plugin to publish the command menu", func() bool {
		return len(srv.Requests("setMyCommands")) >= menus+2
	})
}
