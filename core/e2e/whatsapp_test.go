package e2e

// Host-level tests of the WhatsApp channel: the real clawhost binary runs
// the real clawhost-whatsapp plugin process — whatsmeow, its SQLite store,
// real Signal encryption — against the fake WhatsApp multi-device server
// (plugins/whatsapp/whatsapptest) on loopback, with the test binary as a
// fake claude CLI. The test plays the owner's phone (it scans the QR code
// the status page shows) and the contacts; everything the bot says is read
// back, decrypted, from the fake's record of sent messages.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"
	_ "modernc.org/sqlite" // to read and lock the stores of host and plugin

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/plugins/whatsapp"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// waWait bounds every single wait of these tests. Linking runs the real
// Signal key setup (hundreds of prekeys) in the plugin and the fake, on a
// machine that may be busy, so it is more generous than tgWait.
const waWait = 45 * time.Second

// The people and the group of the tests. The account (the owner's phone)
// is the fake's default: +15550000001, LID 100000000000001.
var (
	waAnn   = whatsapptest.ContactOptions{Phone: "15550002222", LID: "200000000000002", Name: "Ann"}
	waBob   = whatsapptest.ContactOptions{Phone: "15550003333", LID: "200000000000003", Name: "Bob"}
	waCarol = whatsapptest.ContactOptions{Phone: "15550004444", LID: "200000000000004", Name: "Carol"}
	waDave  = whatsapptest.ContactOptions{Phone: "15550005555", LID: "200000000000005", Name: "Dave"}
)

const waGroupID = "120363000000000042"

// waEnv is a fake WhatsApp and a clawhost with the whatsapp plugin on it.
type waEnv struct {
	d       *daemon
	srv     *whatsapptest.Server
	dir     string
	cfgPath string
	base    string // admin endpoint URL
	runLog  string // the fake claude's run log
}

// startWhatsAppDaemon starts the fake and clawhost; the plugin is not
// linked yet (see link).
func startWhatsAppDaemon(t *testing.T, selfChat bool, mods ...func(*Host)) *waEnv {
	t.Helper()
	srv, err := whatsapptest.New(whatsapptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	adminAddr := sdktest.FreeAddr(t)
	e := &waEnv{srv: srv, dir: dir, base: "http://" + adminAddr, runLog: filepath.Join(dir, "runs.log")}
	// Only the whatsapp plugin, as instance "wa", with the fake claude.
	h := Host{
		Dir: dir,
		Agent: Agent{Env: map[string]string{"CLAWHOST_FAKE_CLAUDE_LOG": e.runLog},
			Attrs: Attrs{"sandbox": "off"}}, // the fake claude and its tools write test files outside the workspace
		Access: Attrs{"dm_policy": "allowlist",
			"allow_from":       []string{"wa:+15550002222", "wa:+15550004444", "wa:+15550005555", "wa:+15550000001"},
			"groups":           []string{"wa:120363000000000042@g.us"},
			"group_allow_from": []string{"wa:*"}, // every member of the listed group
			"require_mention":  true},
		Admin:    Attrs{"listen": adminAddr},
		Messages: Attrs{"streaming": "off"}, // a reply comes whole: the channel's limit, not block streaming, splits it
		Plugins: []Plugin{{Name: "wa", Source: "whatsapp", Config: Attrs{
			"server_address": srv.Addr(), "server_root_key": srv.RootKeyHex(),
			"pacing": Attrs{"min": "0s", "max": "0s"}, "self_chat": selfChat}}},
	}
	for _, m := range mods {
		m(&h)
	}
	e.cfgPath = h.Write(t)
	t.Cleanup(srv.Close) // runs after the daemon stopped
	e.d = Launch(t, e.cfgPath)
	t.Cleanup(func() {
		// With binaries built with -race (CLAWHOST_BIN_DIR), a race in
		// the host or the plugin is reported in the daemon's log.
		if strings.Contains(e.d.log.String(), "DATA RACE") {
			t.Error("a data race was reported in the host or the plugin")
		}
		if t.Failed() {
			t.Logf("whatsapp: sent by the bot:\n%s", waSentLog(srv))
		}
	})
	return e
}

func waSentLog(srv *whatsapptest.Server) string {
	var b strings.Builder
	for _, m := range srv.Sent() {
		fmt.Fprintf(&b, "%s %s → %s %q\n", m.Time.Format("15:04:05.000"), m.ID, m.To, clip(m.Text(), 100))
	}
	for _, r := range srv.Receipts() {
		fmt.Fprintf(&b, "%s receipt %s %q %s\n", r.Time.Format("15:04:05.000"), r.ID, r.Type, r.To)
	}
	return b.String()
}

func waCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waWait)
	t.Cleanup(cancel)
	return ctx
}

// plugin returns instance wa of /status.json.
func (e *waEnv) plugin(t *testing.T) admin.Plugin { return instanceOf(t, e.base, "wa") }

// waitState waits until instance wa's status matches and returns it; the
// admin endpoint may not be up yet.
func (e *waEnv) waitState(t *testing.T, what string, match func(admin.Plugin) bool) admin.Plugin {
	t.Helper()
	var p admin.Plugin
	sdktest.WaitFor(t, what, func() bool {
		code, body := get(t, e.base+"/status.json")
		var snap admin.Snapshot
		if code != 200 || json.Unmarshal([]byte(body), &snap) != nil {
			return false
		}
		for _, x := range snap.Plugins {
			if x.Instance == "wa" {
				p = x
				return match(p)
			}
		}
		return false
	})
	return p
}

func waShowsQR(p admin.Plugin) bool {
	return p.State == "needs_attention" && p.Attention != nil && p.Attention.Kind == "qr" && p.Attention.Data != ""
}

// link plays the owner linking the device: it waits for the QR code on
// the status page, checks that the page's image, `clawhost status`'s
// terminal drawing and /status.json carry the same code, scans it with
// the fake phone, and waits until the instance is ready. not is a QR code
// that must not be the one scanned (an old one), or "". It returns the
// code scanned.
func (e *waEnv) link(t *testing.T, not string) string {
	t.Helper()
	p := e.waitState(t, "a QR code on the status page", func(p admin.Plugin) bool {
		return waShowsQR(p) && p.Attention.Data != not
	})
	qr := p.Attention.Data
	if !strings.Contains(p.Message, "Linked devices") || p.Ready {
		t.Errorf("linking status: %+v", p)
	}
	code, page := get(t, e.base+"/")
	if onPage := pageQRText(t, page); code != 200 || onPage != qr {
		// The code may have rotated between the two reads; only a page
		// without a QR code at all is wrong.
		if onPage == "" {
			t.Fatalf("status page (HTTP %d) shows no QR code for wa:\n%s", code, page)
		}
		qr = onPage
	}
	rc, out := statusOut(e.cfgPath)
	if rc != 1 || !strings.Contains(out, "needs_attention") {
		t.Errorf("clawhost status exit %d while linking:\n%s", rc, out)
	}
	if term := terminalQRText(t, out); term == "" {
		t.Errorf("clawhost status draws no QR code:\n%s", out)
	}
	if err := e.srv.PairQR(waCtx(t), qr); err != nil {
		t.Fatalf("scan the QR code of the status page: %v", err)
	}
	e.waitState(t, "wa ready after the QR code was scanned", func(p admin.Plugin) bool { return p.State == "ready" && p.Ready })
	if err := e.srv.WaitLoggedIn(waCtx(t)); err != nil {
		t.Fatal(err)
	}
	return qr
}

func (e *waEnv) contact(t *testing.T, o whatsapptest.ContactOptions) *whatsapptest.Contact {
	t.Helper()
	c, err := e.srv.AddContact(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sentTo returns the bot's messages to a chat, in order; a chat is named
// by any of its JIDs (a contact's phone number and LID, a group).
func (e *waEnv) sentTo(chat ...types.JID) []whatsapptest.SentMessage { return waSentTo(e.srv, chat...) }

// waSentTo returns the bot's messages to chat, named by any of its JIDs.
func waSentTo(srv *whatsapptest.Server, chat ...types.JID) []whatsapptest.SentMessage {
	var out []whatsapptest.SentMessage
	for _, m := range srv.Sent() {
		if slices.Contains(chat, m.To.ToNonAD()) {
			out = append(out, m)
		}
	}
	return out
}

// waitText waits until one of the bot's messages to chat shows all of
// wants and returns it.
func (e *waEnv) waitText(t *testing.T, chat []types.JID, wants ...string) whatsapptest.SentMessage {
	t.Helper()
	return waWaitText(t, e.srv, chat, wants...)
}

// waWaitText waits until one of the bot's messages to chat (any of its
// JIDs) shows all of wants and returns it.
func waWaitText(t *testing.T, srv *whatsapptest.Server, chat []types.JID, wants ...string) whatsapptest.SentMessage {
	t.Helper()
	var found whatsapptest.SentMessage
	sdktest.WaitFor(t, fmt.Sprintf("a message to %v showing %q", chat, wants), func() bool {
		var ok bool
		found, ok = showing(waSentTo(srv, chat...), whatsapptest.SentMessage.Text, wants)
		return ok
	})
	return found
}

// count is how many of the bot's messages to chat show s.
func (e *waEnv) count(chat []types.JID, s string) int {
	return countShowing(e.sentTo(chat...), whatsapptest.SentMessage.Text, s)
}

// settle waits until the bot sent nothing for quiet.
func (e *waEnv) settle(t *testing.T, quiet time.Duration) {
	t.Helper()
	sdktest.WaitFor(t, "the bot to go quiet", func() bool {
		s := e.srv.Sent()
		return len(s) == 0 || time.Since(s[len(s)-1].Time) >= quiet
	})
}

// turns counts the agent's turns whose prompt carried #mark=mark.
func (e *waEnv) turns(t *testing.T, mark string) int {
	t.Helper()
	f, err := os.Open(e.runLog)
	if os.IsNotExist(err) {
		return 0
	} else if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev fakeclaude.RunEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Event == "start" && slices.Contains(ev.Marks, mark) {
			n++
		}
	}
	return n
}

// receipted waits for the device's receipt of message id.
func (e *waEnv) receipted(t *testing.T, id string) {
	t.Helper()
	if _, err := e.srv.WaitReceipt(waCtx(t), id); err != nil {
		t.Fatalf("no receipt for %s: %v", id, err)
	}
}

func waChat(c *whatsapptest.Contact) []types.JID { return []types.JID{c.JID(), c.LID()} }

// TestWhatsAppChannel runs one daemon, links it by the QR code of the
// status page, and checks conversation by conversation what WhatsApp
// users see.
func TestWhatsAppChannel(t *testing.T) {
	start := time.Now()
	e := startWhatsAppDaemon(t, true)
	srv := e.srv

	t.Run("LinkByQR", func(t *testing.T) {
		e.link(t, "")
		t.Logf("linked and ready %v after the start", time.Since(start).Round(time.Millisecond))
		if rc, out := statusOut(e.cfgPath); rc != 0 || !strings.Contains(out, "ready") || strings.Contains(out, "scan this QR code") {
			t.Errorf("clawhost status exit %d once linked:\n%s", rc, out)
		}
		if p := e.plugin(t); p.Attention != nil {
			t.Errorf("attention left after linking: %+v", p.Attention)
		}
		if _, _, ok := srv.Device(); !ok {
			t.Errorf("the fake has no linked device")
		}
		// A successful link is progress from start to end: logging in
		// after the scan is "starting" at INFO, no ERROR line.
		for _, l := range strings.Split(e.d.Log(), "\n") {
			if strings.Contains(l, "[ERROR]") {
				t.Errorf("an ERROR line during a successful link: %s", l)
			}
		}
		if !strings.Contains(e.d.Log(), "plugin is starting: message=\"Linked to +") {
			t.Errorf("the login after the scan is not logged as a step:\n%s", e.d.Log())
		}
		// On purpose: idle, the linking's prekey upload and first sync are over.
		time.Sleep(2 * time.Second)
		t.Logf("plugin idle after linking: %s", waRSS(waPluginPID(e.d, 0)))
	})
	if t.Failed() {
		t.FailNow()
	}
	ann, bob, carol, dave := e.contact(t, waAnn), e.contact(t, waBob), e.contact(t, waCarol), e.contact(t, waDave)

	t.Run("DirectMessage", func(t *testing.T) {
		id, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "hello there dm-marker #mark=dm"})
		if err != nil {
			t.Fatal(err)
		}
		m := e.waitText(t, waChat(ann), "echo:", "dm-marker")
		if !strings.Contains(m.Text(), "WhatsApp") || !strings.Contains(m.Text(), "Ann") {
			t.Errorf("reply %q: want the echo of the enveloped prompt labelled WhatsApp, from Ann", m.Text())
		}
		e.receipted(t, id)
		e.settle(t, 500*time.Millisecond)
		if n := e.count(waChat(ann), "dm-marker"); n != 1 {
			t.Errorf("%d messages answer the DM, want 1", n)
		}
		if n := e.turns(t, "dm"); n != 1 {
			t.Errorf("the agent ran %d times for the DM, want 1", n)
		}
	})

	t.Run("GroupMentionWithHistory", func(t *testing.T) {
		g, err := srv.AddGroup(whatsapptest.GroupOptions{ID: waGroupID, Name: "Team", Members: []*whatsapptest.Contact{ann, bob}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := waCtx(t)
		chatter, err := ann.SendGroupText(ctx, g, whatsapptest.TextOptions{Text: "just chatting among us history-marker"})
		if err != nil {
			t.Fatal(err)
		}
		// The unaddressed message is stored (receipted) but not answered.
		e.receipted(t, chatter)
		id, err := bob.SendGroupText(ctx, g, whatsapptest.TextOptions{Text: "@100000000000001 what do you think? mention-marker #mark=group",
			Mentions: []types.JID{srv.LID()}})
		if err != nil {
			t.Fatal(err)
		}
		m := e.waitText(t, []types.JID{g.JID()}, "echo:", "mention-marker")
		for _, want := range []string{"history-marker", "Ann", "Bob"} {
			if !strings.Contains(m.Text(), want) {
				t.Errorf("the prompt lacks %q (the group history): %q", want, m.Text())
			}
		}
		if i, j := strings.Index(m.Text(), "history-marker"), strings.Index(m.Text(), "mention-marker"); i > j {
			t.Errorf("history after the current message in %q", m.Text())
		}
		var phones []string
		for _, r := range m.Recipients {
			phones = append(phones, r.User)
		}
		if !slices.Contains(phones, ann.JID().User) && !slices.Contains(phones, ann.LID().User) {
			t.Errorf("group reply decrypted by %v, not by the members", m.Recipients)
		}
		e.receipted(t, id)
		e.settle(t, 500*time.Millisecond)
		if n := len(e.sentTo(g.JID())); n != 1 {
			t.Errorf("%d bot messages in the group, want 1 (only the mention is answered)", n)
		}
		if n := e.turns(t, "group"); n != 1 {
			t.Errorf("the agent ran %d times for the mention, want 1", n)
		}
	})

	// Dave is allowed as +15550005555; WhatsApp addresses his message by
	// his LID (from=<lid>, the number only as sender_pn).
	t.Run("LIDAddressedSender", func(t *testing.T) {
		id, err := dave.SendText(waCtx(t), whatsapptest.TextOptions{Text: "via lid lid-marker #mark=lid", LIDAddressed: true})
		if err != nil {
			t.Fatal(err)
		}
		m := e.waitText(t, waChat(dave), "echo:", "lid-marker")
		if strings.Contains(m.Text(), "not allowed") || strings.Contains(m.Text(), "pairing") {
			t.Errorf("the LID-addressed sender was refused: %q", m.Text())
		}
		e.receipted(t, id)
		e.settle(t, 500*time.Millisecond)
		if n := len(e.sentTo(waChat(dave)...)); n != 1 {
			t.Errorf("%d messages to Dave, want the one answer", n)
		}
	})

	// The owner writes into "Message yourself" from the phone: answered
	// once; the bot's reply into the same chat (which the phone sees as
	// the account's own message, and which repeats #mark=self) is not
	// taken for a new message.
	t.Run("SelfChat", func(t *testing.T) {
		me := []types.JID{srv.JID(), srv.LID()}
		id, err := srv.PhoneSendText(waCtx(t), srv.JID(), whatsapptest.TextOptions{Text: "note to self self-marker #mark=self"})
		if err != nil {
			t.Fatal(err)
		}
		e.waitText(t, me, "echo:", "self-marker")
		e.receipted(t, id)
		// Another turn of the same session would have to follow the first;
		// give it the time a turn takes here, then count.
		e.settle(t, 2*time.Second)
		if n := e.count(me, "self-marker"); n != 1 {
			t.Errorf("%d messages in the self chat show the marker, want 1 (an echo loop?)", n)
		}
		if n := e.turns(t, "self"); n != 1 {
			t.Errorf("the agent ran %d times for the note to self, want 1", n)
		}
	})

	// A reply of ~8k UTF-16 units (most of them in surrogate pairs: ~4.5k
	// runes) is split into messages of at most 4000 units — as few as the
	// limit allows — every line once, in order.
	t.Run("LongReply", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("a long one long-marker\n")
		for i := 1; i <= 110; i++ {
			fmt.Fprintf(&b, "line %03d %s\n", i, strings.Repeat("😀", 30))
		}
		if _, err := carol.SendText(waCtx(t), whatsapptest.TextOptions{Text: b.String()}); err != nil {
			t.Fatal(err)
		}
		e.waitText(t, waChat(carol), "line 110")
		e.settle(t, time.Second)
		msgs := e.sentTo(waChat(carol)...)
		var all strings.Builder
		var sizes []int
		for _, m := range msgs {
			n := channel.TextLen(m.Text(), channel.LengthUTF16)
			sizes = append(sizes, n)
			if n > whatsapp.MaxTextLength {
				t.Errorf("message of %d UTF-16 units", n)
			}
			all.WriteString(m.Text() + "\n")
		}
		t.Logf("%d messages of %v UTF-16 units", len(msgs), sizes)
		t.Logf("plugin after the conversations: %s", waRSS(waPluginPID(e.d, 0)))
		total := 0
		for _, n := range sizes {
			total += n
		}
		if len(msgs) < 2 || len(msgs) > (total+whatsapp.MaxTextLength-1)/whatsapp.MaxTextLength+1 {
			t.Errorf("%d messages for %d UTF-16 units: want them split at the limit of %d, no finer", len(msgs), total, whatsapp.MaxTextLength)
		}
		onceInOrder(t, all.String(), "line %03d ", 110)
	})
}

// waRSS is the resident set of process pid, from /proc.
func waRSS(pid int) string {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return "no VmRSS"
}

// waPluginPID returns the pid of the running clawhost-whatsapp process
// other than not (0 for none).
func waPluginPID(d *daemon, not int) int { return pluginPID(d, "clawhost-whatsapp", not) }

// openDB opens a SQLite file the way the host and the plugin do (WAL),
// with one connection.
func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestWhatsAppPluginKilled kills the plugin (SIGKILL) in the window the
// design promises to cover: the host has durably stored a message, but
// the plugin never sent WhatsApp its receipt. The window is made wide on
// purpose: the test holds the host database's write lock, so the host's
// store of the message waits; once the plugin has decrypted the message
// (it is in whatsmeow's event buffer) and is waiting for the host, the
// plugin is stopped (SIGSTOP), the lock released, the host stores the
// message and acks to a stopped process, and the plugin is killed. The
// host restarts it; WhatsApp (the fake) delivers the unreceipted message
// again, the host recognises the copy, and the message is answered
// exactly once — and now receipted.
func TestWhatsAppPluginKilled(t *testing.T) {
	e := startWhatsAppDaemon(t, false)
	e.link(t, "")
	srv := e.srv
	ann := e.contact(t, waAnn)
	ctx := waCtx(t)
	if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "warm up warm-marker"}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "echo:", "warm-marker")
	old := waPluginPID(e.d, 0)
	if old == 0 {
		t.Fatal("no clawhost-whatsapp process")
	}
	hostDB := openDB(t, filepath.Join(e.dir, "data", "clawhost.db"))
	pluginDB := openDB(t, filepath.Join(e.dir, "data", "plugins", "wa", "whatsapp.db"))

	// Take the host database's write lock (on a connection of its own).
	lock, err := openDB(t, filepath.Join(e.dir, "data", "clawhost.db")).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			if _, err := lock.ExecContext(context.Background(), "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer unlock()

	// The agent answers only once the test creates release, after the
	// restart: no Send can be under way to the stopped plugin (a Send cut
	// by the kill is not repeated, by design: it may have gone out).
	release := e.d.Visible("release")
	id, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "store me kill-marker #mark=kill #wait=" + release})
	if err != nil {
		t.Fatal(err)
	}
	// Decrypted and buffered: the handler runs next and hands the
	// message to the host, whose store waits for the lock.
	sdktest.WaitFor(t, "the plugin to decrypt the message", func() bool {
		var n int
		err := pluginDB.QueryRow(`SELECT count(*) FROM whatsmeow_event_buffer WHERE plaintext IS NOT NULL`).Scan(&n)
		return err == nil && n > 0
	})
	// The handler's call to the host cannot be observed from here; it
	// follows the buffer's commit within microseconds. Give it ample time
	// (on purpose: there is no event to wait on).
	time.Sleep(300 * time.Millisecond)
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	unlock()
	sdktest.WaitFor(t, "the host to store the message", func() bool {
		var n int
		err := hostDB.QueryRow(`SELECT count(*) FROM journal WHERE instance = 'wa' AND message_id = ?`, id).Scan(&n)
		return err == nil && n == 1
	})
	if !slices.Contains(srv.Pending(), id) {
		t.Fatalf("the message was receipted before the kill: the window was missed (pending %v)", srv.Pending())
	}
	killedAt := time.Now()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	logins := srv.Logins()
	var next int
	sdktest.WaitFor(t, "the host to restart the plugin", func() bool { next = waPluginPID(e.d, old); return next != 0 })
	if err := srv.WaitLogins(ctx, logins+1); err != nil {
		t.Fatal(err)
	}
	t.Logf("plugin pid %d killed, restarted as %d, logged in after %v", old, next, time.Since(killedAt).Round(time.Millisecond))
	e.receipted(t, id)
	sdktest.WaitFor(t, "the host to drop the redelivered copy", func() bool {
		return strings.Contains(e.d.log.String(), "duplicate message ignored") && strings.Contains(e.d.log.String(), id)
	})
	if n := e.count(waChat(ann), "kill-marker"); n != 0 {
		t.Fatalf("answered %d times before the agent was released", n)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "echo:", "kill-marker")
	if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "and now? after-marker"}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "echo:", "after-marker")
	e.settle(t, time.Second)
	for _, m := range []string{"warm-marker", "kill-marker", "after-marker"} {
		if n := e.count(waChat(ann), m); n != 1 {
			t.Errorf("%q answered %d times, want exactly once", m, n)
		}
	}
	if n := e.turns(t, "kill"); n != 1 {
		t.Errorf("the agent ran %d times for the message, want once", n)
	}
	if p := e.plugin(t); p.State != "ready" || p.Restarts < 1 {
		t.Errorf("after the kill: %+v", p)
	}
}

// TestWhatsAppLoggedOut: the owner removes the device on the phone
// (stream error 401, device_removed). The plugin stays up in
// needs_attention, saying what happened and what to do, without a
// restart; `clawhost retry wa` makes it offer a fresh QR code, scanning it
// links a new device, and messages are answered again.
func TestWhatsAppLoggedOut(t *testing.T) {
	e := startWhatsAppDaemon(t, false)
	oldQR := e.link(t, "")
	first := e.plugin(t)
	oldPN, _, _ := e.srv.Device()
	e.srv.RemoveDevice()
	p := e.waitState(t, "needs_attention after the logout", func(p admin.Plugin) bool { return p.State == "needs_attention" })
	if !strings.Contains(p.Message, "logged this device out") || p.Attention == nil || p.Attention.Retry != "Show a new QR code" || p.Ready {
		t.Errorf("status after the logout: %+v", p)
	}
	rc, out := statusOut(e.cfgPath)
	if rc != 1 || !strings.Contains(out, "needs_attention") || !strings.Contains(out, "clawhost retry wa") || !strings.Contains(out, "logged this device out") {
		t.Errorf("clawhost status exit %d after the logout:\n%s", rc, out)
	}
	if code, page := get(t, e.base+"/"); code != 200 || !strings.Contains(page, "/plugins/wa/retry") {
		t.Errorf("status page (HTTP %d) lacks the retry of wa:\n%s", code, page)
	}
	if code, _ := get(t, e.base+"/healthz"); code != 503 {
		t.Errorf("/healthz: HTTP %d, want 503", code)
	}
	if p.PID != first.PID || p.Restarts != 0 {
		t.Errorf("the plugin was restarted: %+v (pid was %d)", p, first.PID)
	}

	var rout, rerr bytes.Buffer
	if rc := run([]string{"retry", "wa", "-config", e.cfgPath}, &rout, &rerr); rc != 0 {
		t.Fatalf("clawhost retry wa: exit %d: %s%s", rc, rout.String(), rerr.String())
	}
	e.link(t, oldQR)
	newPN, _, ok := e.srv.Device()
	if !ok || newPN == oldPN {
		t.Errorf("device %v after relinking, was %v: want a new device", newPN, oldPN)
	}
	if p := e.plugin(t); p.PID != first.PID {
		t.Errorf("relinked by a new process (pid %d, was %d), not by the retry", p.PID, first.PID)
	}
	ann := e.contact(t, waAnn)
	id, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "are you back? relink-marker"})
	if err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "echo:", "relink-marker")
	e.receipted(t, id)
}

// TestWhatsAppClientOutdated: WhatsApp refuses the client version (405 at
// login). The instance needs attention, and what to do names the
// web_version setting; the plugin is not restarted.
func TestWhatsAppClientOutdated(t *testing.T) {
	e := startWhatsAppDaemon(t, false)
	e.link(t, "")
	first := e.plugin(t)
	e.srv.SetFailure(whatsapptest.Failure{Reason: whatsapptest.FailureClientOutdated})
	if err := e.srv.DropConnection(); err != nil {
		t.Fatal(err)
	}
	p := e.waitState(t, "needs_attention after the 405", func(p admin.Plugin) bool { return p.State == "needs_attention" })
	if !strings.Contains(p.Message, "web_version") || !strings.Contains(p.Message, "405") || p.Attention == nil || p.Attention.Retry != "Reconnect" {
		t.Errorf("status after the 405: %+v", p)
	}
	rc, out := statusOut(e.cfgPath)
	if rc != 1 || !strings.Contains(out, "web_version") || !strings.Contains(out, "clawhost retry wa") {
		t.Errorf("clawhost status exit %d after the 405:\n%s", rc, out)
	}
	refused := 0
	for _, ev := range e.srv.Events() {
		if ev.Kind == whatsapptest.EventLoginRefused && ev.Detail == "405" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d logins refused with 405, want 1 (no reconnect loop)", refused)
	}
	if p.PID != first.PID || p.Restarts != 0 {
		t.Errorf("the plugin was restarted: %+v (pid was %d)", p, first.PID)
	}
}
