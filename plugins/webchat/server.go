package webchat

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Cookie names.
const (
	// IdentityCookie holds a browser's random identity (32 hex digits).
	IdentityCookie = "clawhost_webchat"
	// TokenCookie holds proof of the access token (an HMAC of it, never
	// the token itself).
	TokenCookie = "clawhost_webchat_token"
)

//go:embed static
var staticFiles embed.FS

// contentSecurityPolicy allows the page's own script, style and socket and
// nothing else: no inline script, no external images, audio or frames.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// handler is the page's HTTP handler.
func (a *Adapter) handler() http.Handler {
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		panic("webchat: embedded static files: " + err.Error())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", a.serveIndex)
	mux.Handle("GET /static/", http.StripPrefix("/static/", noCache(http.FileServerFS(static))))
	mux.HandleFunc("GET /ws", a.serveSocket)
	mux.HandleFunc("POST /upload", a.upload)
	mux.HandleFunc("GET /files/{id}", a.serveFile)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	return a.guard(mux)
}

func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// guard sets the security headers and lets through only requests that
// carry the access token (cookie, ?token= or "Authorization: Bearer"),
// and, on a loopback address, only those whose Host is a loopback name
// (DNS rebinding). /healthz answers "ok" to anyone and says nothing else.
func (a *Adapter) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")

		if a.loopback && !isLoopbackHost(hostOnly(r.Host)) {
			http.Error(w, "forbidden: this webchat answers only on a loopback address (open it as localhost or 127.0.0.1)", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query(); q.Has("token") {
			if !a.tokenOK(q.Get("token")) {
				deny(w)
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: TokenCookie, Value: a.tokenMAC, Path: "/", MaxAge: 30 * 24 * 3600,
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
			if r.URL.Path == "/" {
				// Drop the token from the address bar and history.
				q.Del("token")
				u := *r.URL
				u.RawQuery = q.Encode()
				http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(TokenCookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(a.tokenMAC)) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && a.tokenOK(auth) {
			next.ServeHTTP(w, r)
			return
		}
		deny(w)
	})
}

func deny(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><title>clawhost webchat</title>`+
		`<p>This chat needs its access token. Open the link clawhost printed at start (<code>clawhost status</code> shows it too), `+
		`or the page once as <code>/?token=&lt;token&gt;</code> with the plugin's access_token or the token in its data directory's `+TokenFile+`.</p>`)
}

func (a *Adapter) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(a.token)) == 1
}

// tokenMAC is the value of the token cookie: it proves knowledge of the
// token without storing it in the browser.
func tokenMAC(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("clawhost webchat token cookie v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// hostOnly is the host part of a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// serveIndex serves the page and gives a new browser its identity cookie.
func (a *Adapter) serveIndex(w http.ResponseWriter, r *http.Request) {
	if _, ok := identity(r); !ok {
		var b [16]byte
		_, _ = rand.Read(b[:])
		http.SetCookie(w, &http.Cookie{
			Name: IdentityCookie, Value: hex.EncodeToString(b[:]), Path: "/", MaxAge: 400 * 24 * 3600,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		})
	}
	page, err := staticFiles.ReadFile("static/index.html")
	if err != nil {
		http.Error(w, "page missing from the binary", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(page)
}

// identity returns the sender id of the browser that made r: a hash of its
// identity cookie, so the cookie's secret never reaches logs or config.
func identity(r *http.Request) (string, bool) {
	c, err := r.Cookie(IdentityCookie)
	if err != nil || len(c.Value) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(c.Value); err != nil {
		return "", false
	}
	return SenderID(c.Value), true
}

// SenderID is the channel.Sender.ID (and ChatID) of the browser whose
// identity cookie has value cookie.
func SenderID(cookie string) string {
	sum := sha256.Sum256([]byte("clawhost webchat sender v1:" + strings.ToLower(cookie)))
	return "web-" + hex.EncodeToString(sum[:8])
}

// validSenderID reports whether id has the form SenderID returns: "web-"
// and 16 lowercase hex digits.
func validSenderID(id string) bool {
	h, ok := strings.CutPrefix(id, "web-")
	if !ok || len(h) != 16 {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// serveSocket runs one page's WebSocket: it sends the hello and then the
// chat's events, and reads the user's messages.
func (a *Adapter) serveSocket(w http.ResponseWriter, r *http.Request) {
	id, ok := identity(r)
	if !ok {
		http.Error(w, "no webchat identity cookie: load the page first", http.StatusUnauthorized)
		return
	}
	// Accept refuses an Origin whose host differs from the request's Host.
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		a.log.Debug("websocket refused", "error", err)
		return
	}
	conn.SetReadLimit(maxFrameBytes)

	a.mu.Lock()
	runCtx := a.runCtx
	a.mu.Unlock()
	ctx, cancel := context.WithCancel(runCtx)
	defer cancel()

	s := newSocket()
	a.attach(id, s)
	defer a.detach(id, s)
	log := a.log.With("chat", id)
	log.Debug("page connected")

	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		a.writeLoop(ctx, conn, s)
	}()
	go pingLoop(ctx, conn)
	a.readLoop(ctx, conn, id, s)
	s.close("")
	<-writerDone
	log.Debug("page disconnected")
}

// writeLoop writes queued events until the socket is closed or ctx ends.
func (a *Adapter) writeLoop(ctx context.Context, conn *websocket.Conn, s *socket) {
	for {
		select {
		case <-ctx.Done():
			_ = conn.Close(websocket.StatusGoingAway, "plugin stopping")
			return
		case <-s.done:
			if s.reason == "" {
				_ = conn.CloseNow()
			} else {
				_ = conn.Close(websocket.StatusTryAgainLater, s.reason)
			}
			return
		case b := <-s.out:
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				_ = conn.CloseNow()
				return
			}
		}
	}
}

// pingLoop detects dead pages: a page that does not answer a ping within
// 20s is disconnected.
func pingLoop(ctx context.Context, conn *websocket.Conn) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := conn.Ping(pctx)
		cancel()
		if err != nil {
			_ = conn.CloseNow()
			return
		}
	}
}

// readLoop reads the page's frames until the connection ends.
func (a *Adapter) readLoop(ctx context.Context, conn *websocket.Conn, id string, s *socket) {
	for {
		typ, b, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var f ClientFrame
		if typ != websocket.MessageText || json.Unmarshal(b, &f) != nil {
			s.enqueue(marshalEvent(Event{Type: EventError, Error: "malformed frame: expected a JSON text frame"}))
			continue
		}
		switch f.Type {
		case FrameSend:
			a.receive(ctx, id, s, f)
		case FramePress:
			a.press(ctx, id, s, f)
		default:
			s.enqueue(marshalEvent(Event{Type: EventError, ClientID: f.ClientID, Error: fmt.Sprintf("unknown frame type %q", f.Type)}))
		}
	}
}

// press hands the host a press of a button under one of the chat's bot
// messages: the button must be there (not removed by an edit, not pressed
// already), so a page cannot press what the host did not offer. Once the
// host stored the press, the message's buttons show disabled.
func (a *Adapter) press(ctx context.Context, id string, s *socket, f ClientFrame) {
	fail := func(msg string) {
		s.enqueue(marshalEvent(Event{Type: EventError, ClientID: f.ClientID, Error: msg}))
	}
	a.mu.Lock()
	c := a.chats[id]
	var r *record
	if c != nil {
		r = c.find(f.MessageID)
	}
	label := ""
	if r != nil && r.Role == RoleBot && r.Pressed == "" {
		for _, row := range r.Buttons {
			for _, b := range row {
				if b.ID == f.ButtonID {
					label = b.Label
				}
			}
		}
	}
	inbox := a.inbox
	a.mu.Unlock()
	if label == "" {
		fail("that button is no longer there")
		return
	}
	now := a.now().UTC()
	err := inbox.Deliver(ctx, channel.InboundMessage{
		ChatType:     channel.ChatDirect,
		ChatID:       id,
		MessageID:    newID("p"),
		Sender:       channel.Sender{ID: id, Name: "Web user"},
		Text:         label,
		WasMentioned: true,
		Timestamp:    now,
		Action:       &channel.Action{ButtonID: f.ButtonID, MessageID: f.MessageID},
	})
	if err != nil {
		a.log.Warn("press not delivered to the host", "chat", id, "error", err)
		if !errors.Is(err, context.Canceled) {
			fail("not delivered: clawhost did not take the press; try again")
		}
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.chats[id]; c != nil {
		if r := c.find(f.MessageID); r != nil && len(r.Buttons) > 0 && r.Pressed == "" {
			r.Pressed = f.ButtonID
			a.updateLocked(c, r)
		}
	}
}

// receive turns one user message into an InboundMessage and hands it to the
// host. It blocks until the host stored it, so one page's messages reach the
// host in order.
func (a *Adapter) receive(ctx context.Context, id string, s *socket, f ClientFrame) {
	fail := func(msg string) {
		s.enqueue(marshalEvent(Event{Type: EventError, ClientID: f.ClientID, Error: msg}))
	}
	if n := len(f.Text); n > MaxInboundBytes {
		fail(fmt.Sprintf("message too long: %d bytes; the limit is %s", n, humanBytes(MaxInboundBytes)))
		return
	}
	text := strings.ToValidUTF8(f.Text, "\uFFFD")
	if strings.TrimSpace(text) == "" {
		fail("empty message")
		return
	}
	if _, err := a.deliver(ctx, id, text, f.ClientID, nil); err != nil && !errors.Is(err, context.Canceled) {
		s.enqueue(marshalEvent(Event{Type: EventError, ClientID: f.ClientID, Error: "not delivered: clawhost did not take the message; try again"}))
	}
}

// deliver adds the user's message (its text and files) to chat id, hands
// it to the host and marks it sent or failed. It blocks until the host
// stored it, so one page's messages reach the host in order.
func (a *Adapter) deliver(ctx context.Context, id, text, clientID string, files []File) (string, error) {
	r := &record{ID: newID("u"), Role: RoleUser, Text: text, Status: StatusSending, Time: a.now().UTC(), clientID: clientID, Files: files}
	r.html = plainHTML(text)

	a.mu.Lock()
	c := a.chatLocked(id)
	a.appendLocked(c, r)
	inbox := a.inbox
	a.mu.Unlock()

	in := channel.InboundMessage{
		ChatType:  channel.ChatDirect,
		ChatID:    id,
		MessageID: r.ID,
		Sender:    channel.Sender{ID: id, Name: "Web user"},
		Text:      text,
		Timestamp: r.Time,
	}
	for _, f := range files {
		in.Media = append(in.Media, channel.Media{Kind: channel.MediaKindOf(f.MIME), Ref: f.ID, MIME: f.MIME, Size: f.Size, Filename: f.Name})
	}
	err := inbox.Deliver(ctx, in)

	a.mu.Lock()
	defer a.mu.Unlock()
	r.clientID = ""
	if err != nil {
		a.log.Warn("message not delivered to the host", "chat", id, "error", err)
		r.Status = StatusFailed
	} else {
		r.Status = StatusSent
	}
	if c.find(r.ID) != nil {
		a.updateLocked(c, r)
	}
	return r.ID, err
}
