package webchat_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

func TestIdentityCookiePersistsAndInboundDelivered(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	c, hello := connect(t, ctx, r.Link())
	if hello.MaxBytes != webchat.MaxInboundBytes || len(hello.Commands) != 3 {
		t.Errorf("hello: max_bytes %d commands %v", hello.MaxBytes, hello.Commands)
	}
	if err := c.Send(ctx, "c1", "hello there"); err != nil {
		t.Fatal(err)
	}
	m, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := c.SenderID()
	if id == "" || m.ChatID != id || m.Sender.ID != id || m.ChatType != channel.ChatDirect || m.Text != "hello there" || m.MessageID == "" {
		t.Fatalf("inbound %+v, want direct chat %q", m, id)
	}

	// The identity cookie is HttpOnly and SameSite=Strict.
	res, err := bearerGet(r, r.URL())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	sc := res.Header.Get("Set-Cookie")
	for _, want := range []string{webchat.IdentityCookie + "=", "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %q", sc, want)
		}
	}

	// A reconnect (reload) of the same browser is the same conversation.
	hello, err = c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hello.History) != 1 || hello.History[0].ID != m.MessageID {
		t.Fatalf("history after reconnect: %+v", hello.History)
	}
	if err := c.Send(ctx, "c2", "again"); err != nil {
		t.Fatal(err)
	}
	if m2, _ := r.inbox.Next(ctx); m2.ChatID != id {
		t.Errorf("second message in chat %q, want %q", m2.ChatID, id)
	}

	// Another browser is another conversation.
	other, hello2 := connect(t, ctx, r.Link())
	if other.SenderID() == id || len(hello2.History) != 0 {
		t.Errorf("second browser: id %q history %d", other.SenderID(), len(hello2.History))
	}
}

func TestSentOnlyAfterHostAck(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	r.inbox.Hold()
	if err := c.Send(ctx, "c1", "wait for it"); err != nil {
		t.Fatal(err)
	}
	ev := nextOf(t, ctx, c, webchat.EventMessage)
	if ev.Message.Status != webchat.StatusSending || ev.Message.ClientID != "c1" || ev.Message.Role != webchat.RoleUser {
		t.Fatalf("before ack: %+v", ev.Message)
	}
	r.inbox.Release()
	up := nextOf(t, ctx, c, webchat.EventUpdate)
	if up.Message.ID != ev.Message.ID || up.Message.Status != webchat.StatusSent || up.Seq != ev.Seq+1 {
		t.Fatalf("after ack: seq %d %+v (message seq %d)", up.Seq, up.Message, ev.Seq)
	}
}

func TestSendEditTypingReachEveryTabOfTheChat(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{}
	r := start(t, setup{opts: webchat.Options{AfterFunc: clock.AfterFunc}})
	ctx := testCtx(t)
	tab1, _ := connect(t, ctx, r.Link())
	tab2 := &webchattest.Client{HTTP: tab1.HTTP}
	*tab2 = *tab1
	tab2.Conn = nil
	if _, err := tab2.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tab2.Close)
	stranger, _ := connect(t, ctx, r.Link())
	chat := tab1.SenderID()

	if err := r.SetTyping(ctx, channel.TypingRequest{ChatID: chat, On: true}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Send(ctx, channel.SendRequest{ChatID: chat, Text: "**draft**", Format: channel.FormatMarkdown})
	if err != nil || len(res.MessageIDs) != 1 {
		t.Fatalf("send: %v %v", res, err)
	}
	if err := r.Edit(ctx, channel.EditRequest{ChatID: chat, MessageID: res.MessageIDs[0], Text: "**draft** grows", Format: channel.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetTyping(ctx, channel.TypingRequest{ChatID: chat, On: false}); err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*webchattest.Client{tab1, tab2} {
		var seqs []uint64
		ty := nextOf(t, ctx, tab, webchat.EventTyping)
		msg := nextOf(t, ctx, tab, webchat.EventMessage)
		up := nextOf(t, ctx, tab, webchat.EventUpdate)
		off := nextOf(t, ctx, tab, webchat.EventTyping)
		seqs = append(seqs, ty.Seq, msg.Seq, up.Seq, off.Seq)
		for i := 1; i < len(seqs); i++ {
			if seqs[i] != seqs[i-1]+1 {
				t.Errorf("sequence numbers %v not consecutive", seqs)
			}
		}
		if !ty.Typing || off.Typing {
			t.Errorf("typing on=%v off=%v", ty.Typing, off.Typing)
		}
		if msg.Message.HTML != "<p><strong>draft</strong></p>\n" || msg.Message.Role != webchat.RoleBot || msg.Message.ID != res.MessageIDs[0] {
			t.Errorf("message %+v", msg.Message)
		}
		if up.Message.ID != msg.Message.ID || !strings.Contains(up.Message.HTML, "grows") || !up.Message.Edited {
			t.Errorf("update %+v", up.Message)
		}
	}
	if got := clock.pending(); len(got) != 0 {
		t.Errorf("typing timers left after On=false: %v", got)
	}

	// The stranger saw none of it: its next event is its own.
	if err := stranger.Send(ctx, "s1", "me"); err != nil {
		t.Fatal(err)
	}
	if ev := nextOf(t, ctx, stranger, webchat.EventMessage); ev.Message.Role != webchat.RoleUser {
		t.Errorf("stranger got %+v", ev)
	}
}

func TestTypingClearsAfterTTL(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{}
	r := start(t, setup{opts: webchat.Options{AfterFunc: clock.AfterFunc}})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	if err := r.SetTyping(ctx, channel.TypingRequest{ChatID: c.SenderID(), On: true}); err != nil {
		t.Fatal(err)
	}
	if ev := nextOf(t, ctx, c, webchat.EventTyping); !ev.Typing {
		t.Fatal("typing not shown")
	}
	if got := clock.pending(); len(got) != 1 || got[0] != webchat.TypingTTL {
		t.Fatalf("pending timers %v, want one of %s", got, webchat.TypingTTL)
	}
	clock.fire()
	if ev := nextOf(t, ctx, c, webchat.EventTyping); ev.Typing {
		t.Fatal("typing not cleared by the TTL")
	}
	// A reconnect shows the cleared state.
	hello, err := c.Connect(ctx)
	if err != nil || hello.Typing {
		t.Fatalf("hello typing=%v err=%v", hello.Typing, err)
	}
}

func TestSendErrors(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	chat := c.SenderID()
	res, err := r.Send(ctx, channel.SendRequest{ChatID: chat, Text: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "u", "mine"); err != nil {
		t.Fatal(err)
	}
	user := nextOf(t, ctx, c, webchat.EventMessage)
	for user.Message.Role != webchat.RoleUser {
		user = nextOf(t, ctx, c, webchat.EventMessage)
	}
	tests := []struct {
		name string
		err  error
		want channel.Code
	}{
		{"unknown chat", sendErr(r.Send(ctx, channel.SendRequest{ChatID: "web-nobody", Text: "x"})), channel.CodeChatNotFound},
		{"too long", sendErr(r.Send(ctx, channel.SendRequest{ChatID: chat, Text: strings.Repeat("é", webchat.MaxTextLength+1)})), channel.CodeMessageTooLong},
		{"surrogate pairs count twice", sendErr(r.Send(ctx, channel.SendRequest{ChatID: chat, Text: strings.Repeat("😀", webchat.MaxTextLength/2+1)})), channel.CodeMessageTooLong},
		{"missing file", sendErr(r.Send(ctx, channel.SendRequest{ChatID: chat, Media: []channel.OutboundMedia{{Path: "/nonexistent/x"}}})), channel.CodeInvalidRequest},
		{"empty", sendErr(r.Send(ctx, channel.SendRequest{ChatID: chat})), channel.CodeInvalidRequest},
		{"edit unknown message", r.Edit(ctx, channel.EditRequest{ChatID: chat, MessageID: "b-nope", Text: "x"}), channel.CodeInvalidRequest},
		{"edit user message", r.Edit(ctx, channel.EditRequest{ChatID: chat, MessageID: user.Message.ID, Text: "x"}), channel.CodeForbidden},
		{"edit unknown chat", r.Edit(ctx, channel.EditRequest{ChatID: "web-nobody", MessageID: res.MessageIDs[0], Text: "x"}), channel.CodeChatNotFound},
		{"typing unknown chat", r.SetTyping(ctx, channel.TypingRequest{ChatID: "web-nobody", On: true}), channel.CodeChatNotFound},
	}
	for _, tt := range tests {
		if got := channel.CodeOf(tt.err); got != tt.want {
			t.Errorf("%s: got %v (%v), want %s", tt.name, got, tt.err, tt.want)
		}
	}
	if _, err := r.Send(ctx, channel.SendRequest{ChatID: chat, Text: strings.Repeat("x", webchat.MaxTextLength)}); err != nil {
		t.Errorf("send at the limit: %v", err)
	}
}

func sendErr(_ channel.SendResponse, err error) error { return err }

func TestHistorySurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := start(t, setup{dataDir: dir})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	if err := c.Send(ctx, "c1", "remember me"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.inbox.Next(ctx); err != nil {
		t.Fatal(err)
	}
	nextOf(t, ctx, c, webchat.EventUpdate) // sent
	res, err := r.Send(ctx, channel.SendRequest{ChatID: c.SenderID(), Text: "I will", Format: channel.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	nextOf(t, ctx, c, webchat.EventMessage) // the reply
	addr := strings.TrimSuffix(strings.TrimPrefix(r.URL(), "http://"), "/")
	r.stop()
	if _, err := c.Next(ctx); err == nil {
		t.Fatal("socket still open after the plugin stopped")
	} else if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Logf("close: %v", err)
	}
	st, err := os.Stat(filepath.Join(dir, "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("history.json mode %v, want 0600", st.Mode().Perm())
	}

	r2 := start(t, setup{dataDir: dir, listen: addr})
	hello, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hello.History) != 2 || hello.History[0].Status != webchat.StatusSent || hello.History[1].ID != res.MessageIDs[0] || hello.History[1].HTML != "<p>I will</p>\n" {
		t.Fatalf("history after restart: %+v", hello.History)
	}
	// Sequence numbers continue; the old draft can still be edited.
	if err := r2.Edit(ctx, channel.EditRequest{ChatID: c.SenderID(), MessageID: res.MessageIDs[0], Text: "I did"}); err != nil {
		t.Fatal(err)
	}
	if up := nextOf(t, ctx, c, webchat.EventUpdate); up.Seq != hello.Seq+1 {
		t.Errorf("update seq %d after hello seq %d", up.Seq, hello.Seq)
	}
}

// TestRepliesWrittenBeforeTheyReturn: Send and Edit return once the
// history file holds what they did — the host records a reply delivered
// then, and a kill -9 of the host takes the plugin with it. Two in a row:
// the flush loop writes at most every 250 ms, so the second would wait.
func TestRepliesWrittenBeforeTheyReturn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := start(t, setup{dataDir: dir})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	onDisk := func(want string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "history.json"))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("history.json lacks %q when the call returned (%v):\n%s", want, err, b)
		}
	}
	var ids []string
	for _, text := range []string{"first reply", "second reply"} {
		res, err := r.Send(ctx, channel.SendRequest{ChatID: c.SenderID(), Text: text})
		if err != nil {
			t.Fatal(err)
		}
		onDisk(text)
		ids = append(ids, res.MessageIDs[0])
	}
	for _, text := range []string{"first edit", "second edit"} {
		if err := r.Edit(ctx, channel.EditRequest{ChatID: c.SenderID(), MessageID: ids[1], Text: text}); err != nil {
			t.Fatal(err)
		}
		onDisk(text)
	}
}

func TestInboundLimitsAndUTF8(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	if err := c.Send(ctx, "big", strings.Repeat("a", webchat.MaxInboundBytes+1)); err != nil {
		t.Fatal(err)
	}
	ev := nextOf(t, ctx, c, webchat.EventError)
	if ev.ClientID != "big" || !strings.Contains(ev.Error, "too long") || !strings.Contains(ev.Error, "64 KiB") {
		t.Errorf("oversize: %+v", ev)
	}
	if err := c.Send(ctx, "blank", "  \n"); err != nil {
		t.Fatal(err)
	}
	if ev := nextOf(t, ctx, c, webchat.EventError); ev.ClientID != "blank" {
		t.Errorf("blank: %+v", ev)
	}
	// Invalid UTF-8 in the frame is replaced.
	if err := c.Conn.Write(ctx, websocket.MessageText, []byte("{\"type\":\"send\",\"text\":\"a\xffb\"}")); err != nil {
		t.Fatal(err)
	}
	m, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "a\uFFFDb" {
		t.Errorf("text %q, want a\\uFFFDb", m.Text)
	}
	// A frame beyond the frame limit closes the connection with 1009.
	if err := c.Conn.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", 8*webchat.MaxInboundBytes+1))); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := c.Next(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
				t.Errorf("huge frame: %v, want close 1009", err)
			}
			break
		}
	}
}

func TestUserTextIsEscaped(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	if err := c.Send(ctx, "x", `<script>alert(1)</script><img src=x onerror=alert(2)> **not bold**`); err != nil {
		t.Fatal(err)
	}
	ev := nextOf(t, ctx, c, webchat.EventMessage)
	want := `<div class="plain">&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; **not bold**</div>`
	if ev.Message.HTML != want {
		t.Errorf("user html\n got %s\nwant %s", ev.Message.HTML, want)
	}
}

// unauthorized checks that each of urls, fetched without the access
// token, is answered 401; it returns the client it used, which does not
// follow redirects.
func unauthorized(t *testing.T, urls ...string) *http.Client {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, u := range urls {
		res, err := noRedirect.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without token: %s, want 401", u, res.Status)
		}
	}
	return noRedirect
}

func TestAccessToken(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef-secret"
	r := start(t, setup{token: token})
	ctx := testCtx(t)
	noRedirect := unauthorized(t, r.URL(), r.URL()+"?token=wrong", r.URL()+"static/app.js", r.URL()+"ws")
	res, err := noRedirect.Get(r.URL() + "?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Errorf("GET ?token=: %s to %q, want 303 to /", res.Status, res.Header.Get("Location"))
	}
	if sc := res.Header.Get("Set-Cookie"); strings.Contains(sc, token) || !strings.Contains(sc, webchat.TokenCookie) || !strings.Contains(sc, "HttpOnly") {
		t.Errorf("token cookie %q", sc)
	}

	// A browser that came with the token works; one without cannot open the socket.
	c, _ := connect(t, ctx, r.URL()+"?token="+token)
	if err := c.Send(ctx, "c", "hi"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.inbox.Next(ctx); err != nil {
		t.Fatal(err)
	}
	ws := strings.Replace(r.URL(), "http", "ws", 1) + "ws"
	if _, res, err := websocket.Dial(ctx, ws, nil); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("socket without token: err=%v res=%v, want 401", err, res)
	}
	// The right cookies but a foreign Origin: refused.
	_, res, err = websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: c.HTTP, HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("socket from foreign origin: err=%v res=%v, want 403", err, res)
	}
}

func TestLoopbackRefusesForeignHost(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	req, _ := http.NewRequest(http.MethodGet, r.Link(), nil)
	req.Host = "rebind.evil.example:8790"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %s, want 403", res.Status)
	}
	res, err = bearerGet(r, r.URL())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	csp := res.Header.Get("Content-Security-Policy")
	if res.StatusCode != http.StatusOK || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page: %s csp %q", res.Status, csp)
	}
	ctx := testCtx(t)
	c, _ := connect(t, ctx, r.Link())
	ws := strings.Replace(r.URL(), "http", "ws", 1) + "ws"
	_, res, err = websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPClient: c.HTTP, HTTPHeader: http.Header{"Origin": {"http://evil.example"}}})
	if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("socket from foreign origin: err=%v res=%v, want 403", err, res)
	}
}

// bearerGet fetches u with the adapter's token in the Authorization
// header, as a program would.
func bearerGet(r *running, u string) (*http.Response, error) {
	link, err := url.Parse(r.Link())
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+link.Query().Get("token"))
	return http.DefaultClient.Do(req)
}

// TestTokenWithoutConfig: without access_token the page still needs a
// token — on loopback too: one made at the first start, kept 0600 in the
// data directory, the same after a restart, and reported to the host as
// the link to open.
func TestTokenWithoutConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := start(t, setup{dataDir: dir})
	ctx := testCtx(t)
	noRedirect := unauthorized(t, r.URL(), r.URL()+"static/app.js", r.URL()+"ws")
	if res, err := noRedirect.Get(r.URL() + "healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("healthz: %v %v, want 200 without the token", res, err)
	}
	path := filepath.Join(dir, webchat.TokenFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", fi, err)
	}
	b, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(b))
	if len(token) != 64 || r.Link() != r.URL()+"?token="+token {
		t.Fatalf("link %q, token file %q", r.Link(), token)
	}
	c, _ := connect(t, ctx, r.Link())
	if err := c.Send(ctx, "c", "hi"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.inbox.Next(ctx); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(r.URL(), "http://"), "/")
	r.stop()

	// The next start keeps the token; it reports the link while ready.
	var rep sdktest.Statuses
	a := webchat.New(webchat.Options{})
	t.Cleanup(func() { a.Close() })
	if err := a.Configure(ctx, schema.Config{Instance: "web", DataDir: dir, JSON: []byte(`{"listen":"` + addr + `"}`), Status: &rep}); err != nil {
		t.Fatal(err)
	}
	if a.Link() != r.Link() {
		t.Errorf("link after a restart %q, want %q", a.Link(), r.Link())
	}
	if got := rep.Last(); got.State != status.Ready || got.Attention == nil || got.Attention.Kind != status.Link || got.Attention.Data != a.Link() {
		t.Errorf("status %+v, want ready with the link", got)
	}

	// A token file other accounts can read is refused.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	b2 := webchat.New(webchat.Options{})
	t.Cleanup(func() { b2.Close() })
	if err := b2.Configure(ctx, schema.Config{Instance: "web", DataDir: dir, JSON: []byte(`{"listen":"127.0.0.1:0"}`)}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable token file: %v", err)
	}
}

func TestConfigureDiagnostics(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	tests := []struct {
		name, json, attr, summary string
	}{
		{"all interfaces without TLS", `{"listen":":8790"}`, "listen", "not loopback and no TLS certificate"},
		{"lan address with a token but no TLS", `{"listen":"192.0.2.10:8790","access_token":"0123456789abcdef-secret"}`, "listen", "not loopback and no TLS certificate"},
		{"certificate without key", `{"listen":"127.0.0.1:0","tls_cert":"c.pem"}`, "tls_cert", "tls_key is not"},
		{"no port", `{"listen":"127.0.0.1"}`, "listen", "invalid listen address"},
		{"short token", `{"listen":"127.0.0.1:0","access_token":"short"}`, "access_token", "too short"},
		{"fractional history", `{"listen":"127.0.0.1:0","history_limit":2.5}`, "history_limit", "whole number"},
		{"port in use", `{"listen":"` + busy.Addr().String() + `"}`, "listen", "already in use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := webchat.New(webchat.Options{})
			t.Cleanup(func() { a.Close() })
			err := a.Configure(context.Background(), schema.Config{Instance: "web", JSON: []byte(tt.json)})
			// Validate holds the same checks but binds nothing: it cannot
			// know that a port is in use.
			verr := webchat.Validate(context.Background(), schema.Config{Instance: "web", JSON: []byte(tt.json)})
			if tt.summary == "already in use" {
				if verr != nil {
					t.Errorf("Validate of a busy port: %v, want nothing (it binds nothing)", verr)
				}
			} else if fmt.Sprint(verr) != fmt.Sprint(err) {
				t.Errorf("Validate says %v, Configure %v", verr, err)
			}
			if strings.Contains(fmt.Sprint(err), `"short"`) {
				t.Errorf("a diagnostic shows the access token: %v", err)
			}
			var diags schema.Diagnostics
			if !errors.As(err, &diags) || len(diags) != 1 {
				t.Fatalf("got %v, want one diagnostic", err)
			}
			if diags[0].Attribute != tt.attr || !strings.Contains(diags[0].Summary, tt.summary) {
				t.Errorf("got %+v, want %s: %q", diags[0], tt.attr, tt.summary)
			}
		})
	}
	// Defaults (null attributes) configure fine.
	a := webchat.New(webchat.Options{})
	err = a.Configure(context.Background(), schema.Config{Instance: "web", JSON: []byte(`{"listen":"127.0.0.1:0","access_token":null,"history_limit":null,"title":null}`)})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
}

func TestCommandMenu(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	c, hello := connect(t, ctx, r.Link())
	if got := hello.Commands; len(got) != 3 || got[0].Text != "/new" || got[1].Text != "/status" || got[2].Text != "/stop" {
		t.Errorf("default commands %+v", got)
	}
	if err := r.SetCommands(ctx, []channel.MenuEntry{{Name: "new", Description: "fresh"}, {Name: "/help"}}); err != nil {
		t.Fatal(err)
	}
	ev := nextOf(t, ctx, c, webchat.EventCommands)
	if len(ev.Commands) != 2 || ev.Commands[0].Text != "/new" || ev.Commands[1].Text != "/help" {
		t.Errorf("commands %+v", ev.Commands)
	}
}

func TestCorruptHistoryIsMovedAside(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "history.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, setup{dataDir: dir})
	if _, err := os.Stat(filepath.Join(dir, "history.json.bad")); err != nil {
		t.Errorf("corrupt history not moved aside: %v", err)
	}
}

// The web chat renders markdown to sanitised HTML (markup.HTML), not in
// the markup it declares (markdown, which the host renders for it): the
// host's rendering (SendRequest.Rendered) is ignored and the page gets the
// same HTML with it as without.
func TestSendIgnoresTheHostsRendering(t *testing.T) {
	t.Parallel()
	r := start(t, setup{})
	ctx := testCtx(t)
	tab, _ := connect(t, ctx, r.Link())
	const md = "**done**: see [the docs](https://e.com)\n\n| a | bb |\n|---|---|\n| 1 | 2 |"
	send := func(pre *channel.Rendered) string {
		t.Helper()
		if _, err := r.Send(ctx, channel.SendRequest{ChatID: tab.SenderID(), Text: md, Format: channel.FormatMarkdown, Rendered: pre}); err != nil {
			t.Fatal(err)
		}
		return nextOf(t, ctx, tab, webchat.EventMessage).Message.HTML
	}
	own := send(nil)
	for _, m := range []channel.Markup{channel.MarkupMarkdown, channel.MarkupHTMLSubset} {
		if got := send(&channel.Rendered{Markup: m, Text: "from the host", Visible: "from the host"}); got != own {
			t.Errorf("with a rendering for %s the page got %q, without %q", m, got, own)
		}
	}
}
