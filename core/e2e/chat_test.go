package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// chatHost is the real claude CLI against the fake Anthropic API behind
// the telegram plugin on the fake Bot API: Alice by DM, and group 1 where
// Bob (2002) may talk and claude sees every message (require_mention
// false).
type chatHost struct {
	d    *daemon
	fake *anthropictest.Server
	srv  *telegramtest.Server
	ws   string
}

func startChatHost(t *testing.T) *chatHost {
	t.Helper()
	bin := clClaudeBin(t)
	h := &chatHost{fake: anthropictest.New(), srv: telegramtest.NewServer(tgToken)}
	t.Cleanup(h.fake.Close)
	t.Cleanup(h.srv.Close)
	dir := t.TempDir()
	h.ws = filepath.Join(dir, "workspace")
	h.d = Start(t, Host{
		Dir:   dir,
		Agent: RealClaude(bin, filepath.Join(dir, "home"), h.fake.URL(), Attrs{"workspace": h.ws, "timeout": "60s"}),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "groups": []string{"tg:-1001234500001"},
			"group_allow_from": []string{"tg:2002"}, "require_mention": false},
		Admin:    Attrs{"listen": ""},
		Messages: Attrs{"streaming": "off"},
		Plugins:  []Plugin{tgPlugin(h.srv.APIEndpoint())},
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(h.srv))
		}
	})
	sdktest.WaitFor(t, "the plugin's first getUpdates", func() bool { return len(h.srv.Requests("getUpdates")) > 0 })
	return h
}

// documents are the files the bot sent to chat.
func (h *chatHost) documents(chat string) []telegramtest.Sent {
	var out []telegramtest.Sent
	for _, s := range h.srv.Sent() {
		if s.ChatID == chat && s.File != nil {
			out = append(out, s)
		}
	}
	return out
}

func sendFile(path, caption string) anthropictest.Reply {
	return anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__send_file", Input: map[string]any{"path": path, "caption": caption}}}
}

// TestClaudeKnowsItsChat: through the real binary and the real claude CLI,
// claude's system prompt carries the messaging section (Telegram, a direct
// chat, NO_REPLY, send_file), the same text for the session's next turn
// (its warm process keeps it); send_file sends a workspace file to the
// chat once, with the reply, and refuses one outside the workspace with
// the tool's error; "/model opus explain this" runs "explain this" on opus
// and tells claude once; /new is told once; in the group, claude's
// NO_REPLY to chatter sends nothing, and its first prompt there carries the
// group intro; its react tool sets the bot's reaction on the message and
// sends nothing; /stop is told once, in the request after it.
func TestClaudeKnowsItsChat(t *testing.T) {
	t.Parallel()
	h := startChatHost(t)
	alice, aliceChat := tgUser(tgAlice, "Alice"), telegramtest.PrivateChat(tgAlice)
	if err := os.WriteFile(filepath.Join(h.ws, "report.txt"), []byte("quarterly numbers"), 0o600); err != nil {
		t.Fatal(err)
	}

	// send_file.
	h.fake.Enqueue(sendFile("report.txt", "Q3 report"), anthropictest.Reply{Text: "Here it is."})
	h.srv.PushText(aliceChat, alice, "send me the report")
	tgWaitMessage(t, h.srv, tgAlice, "Here it is.")
	first := apiRequest(t, h.fake, 1)
	for _, want := range []string{"## Messaging", "a direct chat on Telegram", "send_file tool", "Today is "} {
		if !strings.Contains(first.SystemText(), want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	if strings.Contains(first.SystemText(), "reply with exactly NO_REPLY") {
		t.Errorf("a direct chat's system prompt offers NO_REPLY (group guidance)")
	}
	if res := apiRequest(t, h.fake, 2).LastUserText(); !strings.Contains(res, "report.txt will be sent to the chat with your answer.") {
		t.Errorf("send_file's result: %q", res)
	}
	sdktest.WaitFor(t, "the document", func() bool { return len(h.documents("1001")) == 1 })
	doc := h.documents("1001")[0]
	if doc.File.Filename != "report.txt" || string(doc.File.Data) != "quarterly numbers" {
		t.Errorf("document %q %q", doc.File.Filename, doc.File.Data)
	}
	if tgCount(h.srv, tgAlice, "Q3 report") != 1 {
		t.Errorf("the caption was not sent once: %+v", tgChat(h.srv, tgAlice))
	}

	// A path outside the workspace: the tool's error, nothing sent.
	h.fake.Enqueue(sendFile("/etc/hostname", ""), anthropictest.Reply{Text: "I cannot send that one."})
	h.srv.PushText(aliceChat, alice, "send me /etc/hostname")
	tgWaitMessage(t, h.srv, tgAlice, "I cannot send that one.")
	if res := apiRequest(t, h.fake, 4).LastUserText(); !strings.Contains(res, "hostname was not sent: it is outside the workspace") {
		t.Errorf("send_file outside the workspace: %q", res)
	}
	if n := len(h.documents("1001")); n != 1 {
		t.Errorf("%d documents, want the one", n)
	}
	if apiRequest(t, h.fake, 3).SystemText() != first.SystemText() {
		t.Error("the messaging section changed between two turns of the session")
	}
	// ...and the session's second turn ran in the first one's warm
	// process, which kept it.
	var starts []string
	sdktest.WaitFor(t, "the second turn's log line", func() bool {
		starts = nil
		for _, l := range strings.Split(h.d.Log(), "\n") {
			if strings.Contains(l, "turn done:") && strings.Contains(l, "session=agent:main:tg:direct:1001 ") {
				_, start, _ := strings.Cut(l, " start=")
				start, _, _ = strings.Cut(start, " ")
				starts = append(starts, start)
			}
		}
		return len(starts) >= 2
	})
	if starts[1] != "warm" {
		t.Errorf("the session's turns started %q; want the second warm", starts)
	}

	// An inline directive.
	h.fake.Enqueue(anthropictest.Reply{Text: "Explained."})
	h.srv.PushText(aliceChat, alice, "/model opus explain this")
	tgWaitMessage(t, h.srv, tgAlice, "Explained.")
	r := apiRequest(t, h.fake, 5)
	if r.Model != "opus" && !strings.Contains(r.Model, "opus") {
		t.Errorf("the directive's model did not reach the API: %q", r.Model)
	}
	if u := r.LastUserText(); !strings.Contains(u, "explain this") || strings.Contains(u, "/model opus") ||
		strings.Count(u, "System: The model is now opus") != 1 {
		t.Errorf("the prompt after /model opus explain this: %q", u)
	}
	h.fake.Enqueue(anthropictest.Reply{Text: "Still here."})
	h.srv.PushText(aliceChat, alice, "and now?")
	tgWaitMessage(t, h.srv, tgAlice, "Still here.")
	if u := apiRequest(t, h.fake, 6).LastUserText(); strings.Contains(u, "System:") {
		t.Errorf("an event was told twice: %q", u)
	}

	// /new is told once.
	h.srv.PushText(aliceChat, alice, "/new")
	tgWaitMessage(t, h.srv, tgAlice, "New session started.")
	h.fake.Enqueue(anthropictest.Reply{Text: "Fresh start."})
	h.srv.PushText(aliceChat, alice, "hello again")
	tgWaitMessage(t, h.srv, tgAlice, "Fresh start.")
	if u := apiRequest(t, h.fake, 7).LastUserText(); strings.Count(u, "System: The user started a new conversation (/new)") != 1 {
		t.Errorf("the prompt after /new: %q", u)
	}

	// The group: chatter gets NO_REPLY, and nothing is sent.
	group, bob := telegramtest.Supergroup(tgGroup, "Team"), tgUser(2002, "Bob")
	h.fake.Enqueue(anthropictest.Reply{Text: "NO_REPLY"})
	h.srv.PushText(group, bob, "lunch anyone?")
	g := apiRequest(t, h.fake, 8)
	if !strings.Contains(g.SystemText(), `a group chat on Telegram ("Team")`) || !strings.Contains(g.SystemText(), "most are not for you") {
		t.Errorf("the group's section:\n%s", g.SystemText())
	}
	if u := g.LastUserText(); !strings.Contains(u, `System: This is your first turn in the group "Team".`) || !strings.Contains(u, "Bob") {
		t.Errorf("the group's first prompt: %q", u)
	}
	tgSettle(t, h.srv, 500*time.Millisecond)
	if msgs := tgChat(h.srv, tgGroup); len(msgs) != 0 {
		t.Errorf("NO_REPLY sent something to the group: %+v", msgs)
	}

	// A reaction instead of an answer: 🎉 on Bob's message, nothing sent.
	if !strings.Contains(g.SystemText(), "call the react tool") {
		t.Errorf("the section does not offer reactions:\n%s", g.SystemText())
	}
	h.fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__react", Input: map[string]any{"emoji": "🎉"}}},
		anthropictest.Reply{Text: "NO_REPLY"})
	shipped := h.srv.PushText(group, bob, "we shipped it!") + 1000 // the message id
	if res := apiRequest(t, h.fake, 10).LastUserText(); !strings.Contains(res, "Reacted with 🎉.") {
		t.Errorf("react's result: %q", res)
	}
	sdktest.WaitFor(t, "the reaction", func() bool { return h.srv.Reaction(tgGroup, shipped) == "🎉" })
	tgSettle(t, h.srv, 500*time.Millisecond)
	if msgs := tgChat(h.srv, tgGroup); len(msgs) != 0 {
		t.Errorf("a reaction sent a message to the group: %+v", msgs)
	}

	// /stop is told once: the request after it carries it, the next one
	// does not.
	h.fake.Enqueue(anthropictest.Reply{Text: "never shown", HeaderDelay: time.Minute})
	h.srv.PushText(aliceChat, alice, "a long task")
	apiRequestStarted(t, h.fake, 11)
	h.srv.PushText(aliceChat, alice, "/stop")
	tgWaitMessage(t, h.srv, tgAlice, "Stopped.")
	h.fake.Enqueue(anthropictest.Reply{Text: "After the stop."}, anthropictest.Reply{Text: "Once more."})
	h.srv.PushText(aliceChat, alice, "what now?")
	tgWaitMessage(t, h.srv, tgAlice, "After the stop.")
	if u := apiRequest(t, h.fake, 12).LastUserText(); strings.Count(u, "System: The user used /stop: your answer in progress was stopped.") != 1 {
		t.Errorf("the prompt after /stop: %q", u)
	}
	h.srv.PushText(aliceChat, alice, "and then?")
	tgWaitMessage(t, h.srv, tgAlice, "Once more.")
	if u := apiRequest(t, h.fake, 13).LastUserText(); strings.Contains(u, "System:") {
		t.Errorf("/stop was told twice: %q", u)
	}
	if tgCount(h.srv, tgAlice, "never shown") != 0 {
		t.Error("the stopped turn's answer was shown")
	}
}

// TestSendFileAcrossKill9: the host is SIGKILLed after claude's send_file
// call and before its reply: the turn runs again after the restart and
// the file reaches the chat once.
func TestSendFileAcrossKill9(t *testing.T) {
	t.Parallel()
	h := startChatHost(t)
	alice, aliceChat := tgUser(tgAlice, "Alice"), telegramtest.PrivateChat(tgAlice)
	if err := os.WriteFile(filepath.Join(h.ws, "plot.txt"), []byte("a plot"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The answer after the tool call hangs: the host dies waiting for it.
	h.fake.Enqueue(sendFile("plot.txt", ""), anthropictest.Reply{Text: "never", HeaderDelay: time.Minute})
	h.srv.PushText(aliceChat, alice, "send me the plot")
	apiRequestStarted(t, h.fake, 2) // the request after the tool call
	_ = h.d.cmd.Process.Kill()
	_ = h.d.cmd.Wait()
	h.fake.Enqueue(sendFile("plot.txt", ""), anthropictest.Reply{Text: "Here is the plot."})
	h.d.spawn()
	tgWaitMessage(t, h.srv, tgAlice, "Here is the plot.")
	tgSettle(t, h.srv, 500*time.Millisecond)
	if n := len(h.documents("1001")); n != 1 {
		t.Errorf("%d documents after the restart, want 1", n)
	}
	if n := tgCount(h.srv, tgAlice, "Here is the plot."); n != 1 {
		t.Errorf("the reply %d times", n)
	}
}

// TestSendFileDiscordAfterTheCard: a turn that ran long enough for the
// turn card ends by editing the card into the answer, and the file claude
// sent goes as a message of its own (an edit carries no new attachment):
// it reaches the chat once all the same. (Under load TestSendFileDiscord
// took this path and counted only the messages with text.)
func TestSendFileDiscordAfterTheCard(t *testing.T) {
	t.Parallel()
	fake, e, _ := discordWithRealClaude(t)
	// The answer comes 4 s after the tool's result: the card (3 s) shows.
	fake.Enqueue(sendFile("report.txt", ""), anthropictest.Reply{Text: "Here it is.", HeaderDelay: 4 * time.Second})
	e.pushDM(dcAlice, "send me the report")
	m := e.waitMessage(t, e.dm[dcAlice.ID].ID, "Here it is.")
	e.settle(t, 500*time.Millisecond)
	if len(e.srv.Requests(discordtest.RouteEdit)) == 0 {
		t.Fatalf("the answer was not an edit of the card (answer %+v): the test did not take its path", m)
	}
	if n := e.attached(e.dm[dcAlice.ID].ID, "report.txt", len("quarterly numbers")); n != 1 {
		t.Errorf("report.txt attached %d times (answer %+v)", n, m)
	}
}

// webchatWithRealClaude starts a webchat daemon whose agent is the real
// claude CLI against a new fake API (see realClaudeIn), its page open in
// b; it returns the fake and the workspace.
func webchatWithRealClaude(t *testing.T, b *webchattest.Browser) (*anthropictest.Server, string) {
	t.Helper()
	fake, mod, ws := realClaudeIn(t)
	var h Host
	mod(&h)
	startWebchatIn(t, b, h)
	return fake, ws
}

// whatsAppWithRealClaude starts a WhatsApp daemon whose agent is the real
// claude CLI against a new fake API (see realClaudeIn), linked, with Ann
// in its contacts; it returns the fake, the daemon and Ann.
func whatsAppWithRealClaude(t *testing.T) (*anthropictest.Server, *waEnv, *whatsapptest.Contact) {
	t.Helper()
	fake, mod, _ := realClaudeIn(t)
	e := startWhatsAppDaemon(t, false, mod)
	e.link(t, "")
	return fake, e, e.contact(t, waAnn)
}

// discordWithRealClaude starts a Discord daemon whose agent is the real
// claude CLI against a new fake API, in a workspace holding report.txt;
// it returns the fake, the daemon (its bot live) and the workspace.
func discordWithRealClaude(t *testing.T) (*anthropictest.Server, *dcEnv, string) {
	fake, mod, ws := realClaudeIn(t)
	e := startDiscordDaemon(t, true, nil, mod)
	e.live(t, 1)
	return fake, e, ws
}

// realClaudeIn makes a new fake Anthropic API (closed after the host stops)
// and a host modifier that makes the agent the real claude CLI against it,
// in a workspace holding report.txt; it returns the fake, the modifier and
// that workspace.
func realClaudeIn(t *testing.T) (*anthropictest.Server, func(*Host), string) {
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	bin := clClaudeBin(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "report.txt"), []byte("quarterly numbers"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fake, func(h *Host) {
		h.Agent = RealClaude(bin, filepath.Join(dir, "home"), fake.URL(), Attrs{"workspace": ws, "timeout": "60s"})
		h.Messages = Attrs{"streaming": "off"}
	}, ws
}

// TestSendFileDiscord: claude's send_file reaches a Discord DM once, as an
// attachment of its answer; a file over Discord's 10 MB (the limit the
// plugin declares, which the section tells claude) is refused with the
// tool's error and nothing is attached.
func TestSendFileDiscord(t *testing.T) {
	t.Parallel()
	fake, e, ws := discordWithRealClaude(t)
	fake.Enqueue(sendFile("report.txt", ""), anthropictest.Reply{Text: "Here it is."})
	e.pushDM(dcAlice, "send me the report")
	m := e.waitMessage(t, e.dm[dcAlice.ID].ID, "Here it is.")
	e.settle(t, 500*time.Millisecond)
	if n := e.attached(e.dm[dcAlice.ID].ID, "report.txt", len("quarterly numbers")); n != 1 {
		t.Errorf("report.txt attached %d times (answer %+v)", n, m)
	}
	if sys := fake.Requests()[0].SystemText(); !strings.Contains(sys, "only files inside the workspace can be sent, up to 10 MB") {
		t.Errorf("the section does not say Discord's limit:\n%s", sys)
	}

	if err := os.WriteFile(filepath.Join(ws, "big.bin"), make([]byte, 11<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(sendFile("big.bin", ""), anthropictest.Reply{Text: "It is too big to send."})
	e.pushDM(dcAlice, "send me the big file")
	e.waitMessage(t, e.dm[dcAlice.ID].ID, "It is too big to send.")
	e.settle(t, 500*time.Millisecond)
	reqs := fake.Requests()
	if res := reqs[len(reqs)-1].LastUserText(); !strings.Contains(res, "big.bin was not sent: it has 11.0 MB, more than the 10.0 MB a file sent may have") {
		t.Errorf("send_file's result: %q", res)
	}
	if n := e.attached(e.dm[dcAlice.ID].ID, "big.bin", 11<<20); n != 0 {
		t.Errorf("big.bin was attached %d times", n)
	}
}

// TestSendFileWhatsApp: claude's send_file reaches a WhatsApp contact once,
// as a document the fake decrypts to the file's bytes.
func TestSendFileWhatsApp(t *testing.T) {
	t.Parallel()
	fake, e, ann := whatsAppWithRealClaude(t)
	fake.Enqueue(sendFile("report.txt", "the report"), anthropictest.Reply{Text: "Here it is."})
	if _, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "send me the report"}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "Here it is.")
	var docs []whatsapptest.SentMessage
	sdktest.WaitFor(t, "the document", func() bool {
		docs = nil
		for _, m := range e.sentTo(waChat(ann)...) {
			if m.Message.GetDocumentMessage() != nil {
				docs = append(docs, m)
			}
		}
		return len(docs) > 0
	})
	e.settle(t, 500*time.Millisecond)
	if len(docs) != 1 {
		t.Fatalf("%d documents, want 1", len(docs))
	}
	if b, err := e.srv.DownloadSent(docs[0]); err != nil || string(b) != "quarterly numbers" {
		t.Errorf("the document: %q, %v", b, err)
	}
}

// TestFilesWebchat: in headless Chromium, a file picked in the page
// reaches claude as an attachment (its path in the prompt, the file in the
// session's media directory), and claude's send_file shows under its
// answer as a link the page downloads — once.
func TestFilesWebchat(t *testing.T) {
	t.Parallel()
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	fake, ws := webchatWithRealClaude(t, b)

	// Upload.
	src := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(src, []byte("notes from the browser"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(anthropictest.Reply{Text: "Got your notes."})
	if err := chromedp.Do(b.Ctx, chromedp.SetValue(chromedp.CSS("#input"), "read my notes"), chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{src})); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "Got your notes."); err != nil {
		t.Fatal(err)
	}
	u := apiRequest(t, fake, 1).LastUserText()
	i := strings.Index(u, filepath.Join(ws, "media"))
	if !strings.Contains(u, "read my notes") || i < 0 {
		t.Fatalf("the prompt names no attachment in the media directory: %q", u)
	}
	path := strings.Fields(u[i:])[0]
	if got, err := os.ReadFile(strings.Trim(path, ")]`'\",")); err != nil || string(got) != "notes from the browser" {
		t.Errorf("the attachment %s: %q %v", path, got, err)
	}

	// send_file.
	fake.Enqueue(sendFile("report.txt", ""), anthropictest.Reply{Text: "Here is the report."})
	if err := b.Send("send me the report"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "Here is the report."); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.querySelector('#log .msg.bot .files a.file')`); err != nil {
		t.Fatal(err)
	}
	type link struct {
		N    int    `json:"n"`
		Body string `json:"body"`
	}
	l, err := chromedp.Run(b.Ctx, chromedp.Evaluate[link](`(async () => {
		const as = document.querySelectorAll('#log .msg.bot .files a.file');
		const r = await fetch(as[0].href);
		return {n: as.length, body: await r.text()};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if l.N != 1 || l.Body != "quarterly numbers" {
		t.Errorf("the page shows %d file links; the first downloads %q", l.N, l.Body)
	}
}
