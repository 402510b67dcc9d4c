package e2e

// Host-level tests of the Discord channel: the real clawhost binary runs
// the real clawhost-discord plugin process against the fake Discord
// (plugins/discord/discordtest: REST and gateway on loopback), with the
// test binary as a fake claude CLI. Everything the bot says is read back
// from the fake's channels.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const dcToken = "DCTEST.e2e-token.secret"

// Users and the guild of the tests.
var (
	dcAlice = discordtest.User{ID: "100000000000000101", Username: "alice", GlobalName: "Alice"}
	dcCarol = discordtest.User{ID: "100000000000000103", Username: "carol"}
	dcBob   = discordtest.User{ID: "100000000000000102", Username: "bob"}
)

const dcGuild = "300000000000000001"

// dcEnv is a fake Discord and a clawhost with the discord plugin on it.
type dcEnv struct {
	d       *daemon
	srv     *discordtest.Server
	cfgPath string
	admin   string
	dm      map[string]discordtest.Channel // by user id
	general discordtest.Channel
	thread  discordtest.Channel
}

// startDiscordDaemon starts the fake (set up by prepare before the plugin
// connects) and clawhost, and returns once the plugin is connected.
func startDiscordDaemon(t *testing.T, messageContent bool, prepare func(*discordtest.Server), mods ...func(*Host)) *dcEnv {
	t.Helper()
	srv := discordtest.NewServer(dcToken)
	e := &dcEnv{srv: srv, dm: map[string]discordtest.Channel{}}
	for _, u := range []discordtest.User{dcAlice, dcCarol} {
		e.dm[u.ID] = srv.AddDM(u)
	}
	e.general = srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelGuildText, GuildID: dcGuild, Name: "general"})
	e.thread = srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelPublicThread, GuildID: dcGuild, Name: "ideas", ParentID: e.general.ID, OwnerID: dcBob.ID})
	if prepare != nil {
		prepare(srv)
	}
	dir := t.TempDir()
	e.admin = sdktest.FreeAddr(t)
	// Alice and Carol by DM; every member of #general when they mention
	// the bot.
	h := Host{
		Dir: dir,
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"dc:" + dcAlice.ID, "dc:" + dcCarol.ID},
			"groups": []string{"dc:" + e.general.ID}, "group_allow_from": []string{"dc:*"}, "require_mention": true},
		Admin: Attrs{"listen": e.admin},
		Plugins: []Plugin{{Name: "dc", Source: "discord", Config: Attrs{
			"token": dcToken, "api_endpoint": srv.Endpoint(), "message_content": messageContent}}},
	}
	e.d = launchOn(t, h, platform{name: "discord", close: srv.Close, requests: func() string { return dcRequestLog(srv) }}, mods...)
	e.cfgPath = e.d.ConfigPath()
	return e
}

// live waits for a gateway connection after handshakes IDENTIFY+RESUME.
func (e *dcEnv) live(t *testing.T, handshakes int) {
	t.Helper()
	bounded(t, "the Discord gateway live", func(ctx context.Context) error { return e.srv.WaitLive(ctx, handshakes) })
}

func dcRequestLog(srv *discordtest.Server) string {
	return requestLog(srv.Requests(""), func(r discordtest.Request) (time.Time, string) {
		return r.Time, fmt.Sprintf("%s %s %s", r.Method, r.Path, clip(string(r.Body), 80))
	})
}

// botMessages are the bot's messages in a channel, latest content.
func (e *dcEnv) botMessages(channelID string) []discordtest.Message {
	var out []discordtest.Message
	for _, m := range e.srv.Messages(channelID) {
		if m.Author.ID == discordtest.BotID && m.Content != "" {
			out = append(out, m)
		}
	}
	return out
}

// attached counts the bot's messages in channelID, with text or without,
// that carry a file named name of size bytes.
func (e *dcEnv) attached(channelID, name string, size int) int {
	n := 0
	for _, m := range e.srv.Messages(channelID) {
		if m.Author.ID != discordtest.BotID {
			continue
		}
		for _, a := range m.Attachments {
			if a.Filename == name && a.Size == size {
				n++
			}
		}
	}
	return n
}

// waitMessage waits until one of the bot's messages in channelID shows all
// of wants and returns it.
func (e *dcEnv) waitMessage(t *testing.T, channelID string, wants ...string) discordtest.Message {
	t.Helper()
	var found discordtest.Message
	sdktest.WaitFor(t, fmt.Sprintf("a message in %s showing %q", channelID, wants), func() bool {
		var ok bool
		found, ok = showing(e.botMessages(channelID), func(m discordtest.Message) string { return m.Content }, wants)
		return ok
	})
	return found
}

// count is how many of the bot's messages in channelID show s.
func (e *dcEnv) count(channelID, s string) int {
	return countShowing(e.botMessages(channelID), func(m discordtest.Message) string { return m.Content }, s)
}

// settle waits until the fake saw no REST call for quiet.
func (e *dcEnv) settle(t *testing.T, quiet time.Duration) {
	t.Helper()
	waitQuiet(t, quiet, func() time.Time {
		rs := e.srv.Requests("")
		if len(rs) == 0 {
			return time.Time{}
		}
		return rs[len(rs)-1].Time
	})
}

func (e *dcEnv) pushDM(u discordtest.User, text string) discordtest.Message {
	return e.srv.Push(discordtest.Message{ChannelID: e.dm[u.ID].ID, Author: u, Content: text})
}

// TestDiscordChannel runs one daemon and checks, conversation by
// conversation, what a Discord user sees.
func TestDiscordChannel(t *testing.T) {
	start := time.Now()
	e := startDiscordDaemon(t, true, nil)
	e.live(t, 1)
	t.Logf("plugin connected after %v", time.Since(start).Round(time.Millisecond))
	srv := e.srv

	t.Run("SlashCommandsRegistered", func(t *testing.T) {
		sdktest.WaitFor(t, "slash commands", func() bool { return len(srv.Commands("")) > 0 })
		var names []string
		for _, c := range srv.Commands("") {
			names = append(names, c.Name)
		}
		for _, want := range []string{"new", "status", "help"} {
			if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
				t.Errorf("commands %v lack %q", names, want)
			}
		}
	})

	t.Run("DirectMessage", func(t *testing.T) {
		e.pushDM(dcAlice, "hello there dm-marker")
		m := e.waitMessage(t, e.dm[dcAlice.ID].ID, "echo:", "dm-marker")
		if !strings.Contains(m.Content, "Discord") || !strings.Contains(m.Content, "Alice") {
			t.Errorf("reply %q: want the echo of the enveloped prompt labelled Discord", m.Content)
		}
		e.settle(t, 300*time.Millisecond)
		if n := e.count(e.dm[dcAlice.ID].ID, "dm-marker"); n != 1 {
			t.Errorf("%d messages answer the DM, want 1", n)
		}
		for _, s := range srv.Sent() {
			if string(s.AllowedMentions) != `{"parse":[],"replied_user":false}` && s.Method == "create" {
				t.Errorf("allowed_mentions %s", s.AllowedMentions)
			}
		}
	})

	t.Run("GuildMentionWithHistory", func(t *testing.T) {
		srv.Push(discordtest.Message{ChannelID: e.general.ID, Author: dcBob, Content: "just chatting history-marker"})
		srv.Push(discordtest.Message{ChannelID: e.general.ID, Author: dcBob, Content: "<@" + discordtest.BotID + "> what do you think? mention-marker",
			Mentions: []discordtest.User{srv.Bot()}})
		m := e.waitMessage(t, e.general.ID, "echo:", "mention-marker")
		if !strings.Contains(m.Content, "history-marker") {
			t.Errorf("reply lacks the group history: %q", m.Content)
		}
		if strings.Contains(m.Content, "<@"+discordtest.BotID+">") {
			t.Errorf("the raw mention reached the agent: %q", m.Content)
		}
		e.settle(t, 300*time.Millisecond)
		if n := len(e.botMessages(e.general.ID)); n != 1 {
			t.Errorf("%d bot messages in the channel, want 1 (only the mention is answered)", n)
		}
	})

	t.Run("ReplyToBot", func(t *testing.T) {
		bot := e.botMessages(e.general.ID)
		if len(bot) == 0 {
			t.Skip("no bot message to reply to")
		}
		srv.Push(discordtest.Message{ChannelID: e.general.ID, Author: dcBob, Content: "and why? reply-marker",
			MessageReference: &discordtest.MessageReference{MessageID: bot[len(bot)-1].ID}})
		e.waitMessage(t, e.general.ID, "echo:", "reply-marker")
	})

	t.Run("Thread", func(t *testing.T) {
		srv.Push(discordtest.Message{ChannelID: e.thread.ID, Author: dcBob, Content: "<@" + discordtest.BotID + "> in the thread thread-marker",
			Mentions: []discordtest.User{srv.Bot()}})
		e.waitMessage(t, e.thread.ID, "echo:", "thread-marker")
		if n := e.count(e.general.ID, "thread-marker"); n != 0 {
			t.Errorf("the thread's answer was posted in the parent channel")
		}
		typed := false
		for _, r := range srv.Requests(discordtest.RouteTyping) {
			typed = typed || strings.Contains(r.Path, "/channels/"+e.thread.ID+"/")
		}
		if !typed {
			t.Errorf("no typing shown in the thread")
		}
	})

	// The echo of 40 lines with a code block in them: split at 17 lines,
	// the fence closed and reopened across messages.
	t.Run("ManyLines", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("many lines lines-marker\n")
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&b, "line %02d\n", i)
			if i == 20 {
				b.WriteString("```go\nfunc main() {\n")
			}
			if i == 30 {
				b.WriteString("}\n```\n")
			}
		}
		e.pushDM(dcCarol, b.String())
		dm := e.dm[dcCarol.ID].ID
		e.waitMessage(t, dm, "line 40")
		e.settle(t, 500*time.Millisecond)
		msgs := e.botMessages(dm)
		if len(msgs) < 3 {
			t.Errorf("%d messages: 40+ lines need at least 3 of 17", len(msgs))
		}
		var all strings.Builder
		for _, m := range msgs {
			if n := strings.Count(m.Content, "\n") + 1; n > 17 {
				t.Errorf("message of %d lines: %q", n, m.Content)
			}
			if strings.Count(m.Content, "```")%2 != 0 {
				t.Errorf("unbalanced code fence in %q", m.Content)
			}
			all.WriteString(m.Content + "\n")
		}
		for i := 1; i <= 40; i++ {
			if c := strings.Count(all.String(), fmt.Sprintf("line %02d", i)); c != 1 {
				t.Errorf("line %02d shown %d times", i, c)
			}
		}
	})

	// Six ~900-character blocks: no message over 2000 characters.
	t.Run("LongReply", func(t *testing.T) {
		e.pushDM(dcCarol, "write a lot #blocks=6")
		dm := e.dm[dcCarol.ID].ID
		e.waitMessage(t, dm, "block 6:")
		e.settle(t, 500*time.Millisecond)
		var all strings.Builder
		n := 0
		for _, m := range e.botMessages(dm) {
			if !strings.Contains(m.Content, "block ") {
				continue
			}
			n++
			if c := utf8.RuneCountInString(m.Content); c > discordtest.MaxContentLength {
				t.Errorf("message of %d characters", c)
			}
			all.WriteString(m.Content + "\n")
		}
		if n < 3 {
			t.Errorf("%d messages: a ~5.4k reply needs at least 3", n)
		}
		for i := 1; i <= 6; i++ {
			if c := strings.Count(all.String(), fmt.Sprintf("block %d:", i)); c != 1 {
				t.Errorf("block %d shown %d times", i, c)
			}
		}
		for _, r := range srv.Requests(discordtest.RouteCreate) {
			if strings.Contains(string(r.Body), "Must be 2000") {
				t.Errorf("a message was refused as too long")
			}
		}
	})

	t.Run("SlashCommand", func(t *testing.T) {
		in := srv.PushCommand(e.general, dcBob, "status", "")
		sdktest.WaitFor(t, "the slash command's answer", func() bool {
			for _, s := range srv.Sent() {
				if s.Interaction == in.ID && s.Method == "original" && s.Content != "" {
					return true
				}
			}
			return false
		})
		cbs := srv.Callbacks()
		if len(cbs) == 0 || cbs[len(cbs)-1].Interaction != in.ID || cbs[len(cbs)-1].Type != 5 {
			t.Errorf("callbacks %+v: want the interaction deferred", cbs)
		}
	})

	t.Run("RateLimitedReply", func(t *testing.T) {
		srv.Fail(discordtest.RouteCreate, 1, discordtest.Failure{Status: 429, RetryAfter: 700 * time.Millisecond})
		srv.Fail(discordtest.RouteEdit, 1, discordtest.Failure{Status: 429, RetryAfter: 700 * time.Millisecond})
		e.pushDM(dcAlice, "slow down 429-marker")
		e.waitMessage(t, e.dm[dcAlice.ID].ID, "echo:", "429-marker")
		e.settle(t, 500*time.Millisecond)
		if n := e.count(e.dm[dcAlice.ID].ID, "429-marker"); n != 1 {
			t.Errorf("answered %d times after a 429, want once", n)
		}
	})

	t.Run("Op7ReconnectMidConversation", func(t *testing.T) {
		release := e.d.Visible("release-op7")
		hs := srv.Identifies() + srv.Resumes()
		e.pushDM(dcAlice, "slow one #wait="+release+" op7-first")
		sdktest.WaitFor(t, "typing for the slow turn", func() bool {
			for _, r := range srv.Requests(discordtest.RouteTyping) {
				if strings.Contains(r.Path, e.dm[dcAlice.ID].ID) && time.Since(r.Time) < 2*time.Second {
					return true
				}
			}
			return false
		})
		srv.Reconnect()
		e.pushDM(dcAlice, "during the gap op7-second")
		e.live(t, hs+1)
		if err := os.WriteFile(release, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		e.waitMessage(t, e.dm[dcAlice.ID].ID, "echo:", "op7-first")
		e.waitMessage(t, e.dm[dcAlice.ID].ID, "echo:", "op7-second")
		e.settle(t, 500*time.Millisecond)
		for _, m := range []string{"op7-first", "op7-second"} {
			if n := e.count(e.dm[dcAlice.ID].ID, m); n != 1 {
				t.Errorf("%q answered %d times, want once", m, n)
			}
		}
		if srv.Resumes() == 0 {
			t.Errorf("the plugin identified anew instead of resuming")
		}
	})
}

// dcPluginPID returns the pid of the running clawhost-discord process other
// than not (0 for none).
func dcPluginPID(d *daemon, not int) int { return pluginPID(d, "clawhost-discord", not) }

// TestDiscordPluginKilled kills the plugin (SIGKILL) while a turn runs and
// sends a message while it is dead: the host restarts it, the new process
// resumes the session from its data dir, and every message is answered
// exactly once.
func TestDiscordPluginKilled(t *testing.T) {
	e := startDiscordDaemon(t, true, nil)
	e.live(t, 1)
	srv, dm := e.srv, e.dm[dcAlice.ID].ID
	e.pushDM(dcAlice, "warm up warm-marker")
	e.waitMessage(t, dm, "echo:", "warm-marker")
	old := dcPluginPID(e.d, 0)
	if old == 0 {
		t.Fatal("no clawhost-discord process")
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", old)); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				t.Logf("plugin after one conversation: %s", strings.Join(strings.Fields(l), " "))
			}
		}
	}
	release := e.d.Visible("release-kill")
	e.pushDM(dcAlice, "slow one #wait="+release+" kill-marker")
	sdktest.WaitFor(t, "the turn to run (typing)", func() bool {
		for _, r := range srv.Requests(discordtest.RouteTyping) {
			if time.Since(r.Time) < 2*time.Second {
				return true
			}
		}
		return false
	})
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.pushDM(dcAlice, "while you were away dead-marker")
	var next int
	sdktest.WaitFor(t, "the host to restart the plugin", func() bool { next = dcPluginPID(e.d, old); return next != 0 })
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, dm, "echo:", "kill-marker")
	e.waitMessage(t, dm, "echo:", "dead-marker")
	e.pushDM(dcAlice, "and now? after-marker")
	e.waitMessage(t, dm, "echo:", "after-marker")
	e.settle(t, 500*time.Millisecond)
	for _, m := range []string{"warm-marker", "kill-marker", "dead-marker", "after-marker"} {
		if n := e.count(dm, m); n != 1 {
			t.Errorf("%q answered %d times, want exactly once", m, n)
		}
	}
	if srv.Identifies() != 1 {
		t.Errorf("%d identifies: the restarted plugin did not resume the session", srv.Identifies())
	}
}

// TestDiscordMentionOnly: with message_content = false the bot runs
// without the privileged intent; in a server it sees only what addresses
// it (the unaddressed message is not in the history the agent gets), DMs
// work.
func TestDiscordMentionOnly(t *testing.T) {
	e := startDiscordDaemon(t, false, func(srv *discordtest.Server) { srv.SetMessageContentAllowed(false) })
	e.live(t, 1)
	srv := e.srv
	if srv.Intents()&discordtest.IntentMessageContent != 0 {
		t.Fatalf("identified with the Message Content intent")
	}
	srv.Push(discordtest.Message{ChannelID: e.general.ID, Author: dcBob, Content: "private chatter secret-marker"})
	srv.Push(discordtest.Message{ChannelID: e.general.ID, Author: dcBob, Content: "<@" + discordtest.BotID + "> hi mention-only-marker", Mentions: []discordtest.User{srv.Bot()}})
	m := e.waitMessage(t, e.general.ID, "echo:", "mention-only-marker")
	if strings.Contains(m.Content, "secret-marker") {
		t.Errorf("the unaddressed message reached the agent: %q", m.Content)
	}
	e.pushDM(dcAlice, "a dm dm-only-marker")
	e.waitMessage(t, e.dm[dcAlice.ID].ID, "echo:", "dm-only-marker")
}

// TestDiscordIntentNotEnabled: the Message Content intent is off in the
// portal (4014 at start): the instance is not ready, `clawhost status`
// and /status.json say needs_attention with what to do, and the plugin
// neither restarts nor identifies again; once the intent is on, `clawhost
// retry dc` makes the same process connect.
func TestDiscordIntentNotEnabled(t *testing.T) {
	e := startDiscordDaemon(t, true, func(srv *discordtest.Server) { srv.SetMessageContentAllowed(false) })
	var rc int
	var out string
	e.d.waitFor(func() bool { rc, out = statusOut(e.cfgPath); return strings.Contains(out, "needs_attention") }, "dc needs_attention")
	if rc != 1 || !strings.Contains(out, "Message Content") || !strings.Contains(out, "message_content = false") {
		t.Errorf("status exit %d:\n%s", rc, out)
	}
	if strings.Contains(out, dcToken) {
		t.Errorf("status shows the token")
	}
	base := "http://" + e.admin
	st := instanceOf(t, base, "dc")
	if st.State != "needs_attention" {
		t.Errorf("status.json: %+v", st)
	}
	// The status page says it too, with the link to the Developer Portal
	// and the retry button; /healthz is not ok.
	if code, page := get(t, base+"/"); code != 200 || !strings.Contains(page, "needs_attention") ||
		!strings.Contains(page, "Message Content Intent") || !strings.Contains(page, "https://discord.com/developers/applications") ||
		!strings.Contains(page, "/plugins/dc/retry") || strings.Contains(page, dcToken) {
		t.Errorf("status page (HTTP %d) lacks the attention of dc:\n%s", code, page)
	}
	if code, body := get(t, base+"/healthz"); code != 503 || !strings.Contains(body, `"instance":"dc"`) {
		t.Errorf("healthz: HTTP %d %s", code, body)
	}
	n := e.srv.Identifies()
	time.Sleep(500 * time.Millisecond) // on purpose: a restart or a new IDENTIFY would come now
	if got := instanceOf(t, base, "dc"); got.PID != st.PID || got.Restarts != 0 {
		t.Errorf("the plugin was restarted: %+v", got)
	}
	if e.srv.Identifies() != n {
		t.Errorf("identified again (%d → %d) with a fatal close code", n, e.srv.Identifies())
	}

	// The operator enables the intent and asks for a retry: ready, same process.
	e.srv.SetMessageContentAllowed(true)
	var rout, rerr bytes.Buffer
	if rc := run([]string{"retry", "dc", "-config", e.cfgPath}, &rout, &rerr); rc != 0 {
		t.Fatalf("clawhost retry dc: exit %d: %s%s", rc, rout.String(), rerr.String())
	}
	e.d.waitFor(func() bool { rc, out = statusOut(e.cfgPath); return rc == 0 }, "dc ready after the retry")
	if got := instanceOf(t, base, "dc"); got.PID != st.PID || got.State != "ready" {
		t.Errorf("after the retry: %+v (pid was %d)", got, st.PID)
	}
	e.pushDM(dcAlice, "hello after retry retry-marker")
	e.waitMessage(t, e.dm[dcAlice.ID].ID, "echo:", "retry-marker")
}
