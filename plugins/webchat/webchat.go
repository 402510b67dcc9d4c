// Package webchat is clawhost's web chat channel: the default channel that
// works with no platform account. It serves a small chat page (HTML, CSS
// and JavaScript embedded in the binary, no external assets) on a local
// address and talks to it over a WebSocket.
//
// Identity: the first visit sets a random HttpOnly, SameSite=Strict cookie
// (clawhost_webchat). The sender id is derived from it (a hash, so logs and
// access lists never hold the cookie's secret), and a browser keeps its
// conversation across reloads. Every browser is its own direct chat: ChatID
// equals Sender.ID.
//
// Inbound: text typed in the page becomes a channel.InboundMessage handed to
// the host; the page shows "sent" once Inbox.Deliver returned, i.e. the host
// stored it. Text is limited to MaxInboundBytes; invalid UTF-8 is replaced.
//
// Outbound: Send renders markdown on the server (markup.HTML, then
// sanitize, see renderer) and pushes it to every open tab of
// the chat. Edit replaces a message in place (streaming drafts), SetTyping
// shows an indicator that clears on On=false or after TypingTTL. Events of a
// chat carry sequence numbers, so the page applies them in order and
// resyncs on a gap. Each chat keeps its last history_limit messages in
// memory and in <data_dir>/history.json (0600), so a reload, even after the
// plugin was restarted, shows the conversation; the page reconnects by
// itself with backoff.
//
// Security: the page, its static files and its WebSocket always require
// the access token — on loopback too, since every local account can
// connect there. When access_token is not set, Configure makes one at the
// first start and keeps it in TokenFile (0600) in the instance's data
// directory. A browser proves it holds the token with ?token= once (the
// answer sets an HttpOnly, SameSite=Strict cookie holding an HMAC of it
// and redirects to the address without it), then the cookie; a program
// may send "Authorization: Bearer <token>". The plugin reports the link
// with the token to the host as a status.Link attention while ready: the
// host prints it on the terminal at start, and the status page and
// `clawhost status` show it. A listen address beyond loopback needs
// tls_cert and tls_key (HTTPS); on loopback, requests whose Host is not a
// loopback name are refused too (DNS rebinding). The WebSocket accepts
// only same-host Origins. The page sends a strict Content-Security-Policy.
//
// The package is a library: cmd/clawhost-webchat is its plugin binary, and
// webchattest drives it from tests (a Go WebSocket client and headless
// Chromium helpers).
package webchat

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// Version is the plugin's version.
const Version = "0.1.0"

// Limits.
const (
	// MaxTextLength is the longest text Send and Edit accept, in UTF-16
	// code units (Capabilities().MaxTextLength).
	MaxTextLength = 16000
	// MaxInboundBytes is the longest message a user may send, in UTF-8
	// bytes. Longer ones are refused with an error shown in the page.
	MaxInboundBytes = 64 << 10
	// TypingTTL is how long a typing indicator stays without a refresh.
	TypingTTL = 2 * time.Minute
	// maxFrameBytes bounds one WebSocket frame from the page: room for
	// MaxInboundBytes of text escaped in JSON. A larger frame closes the
	// connection; the page checks the size before sending.
	maxFrameBytes = 8 * MaxInboundBytes
	// maxChats bounds the conversations kept; the least recently active
	// one without an open page is dropped first.
	maxChats = 1000
	// flushDelay coalesces history writes (a streamed draft edits often).
	flushDelay = 250 * time.Millisecond
)

// DefaultCommands are the command buttons shown until the host sends its
// command menu (channel.CommandMenu).
var DefaultCommands = []Command{
	{Text: "/new", Description: "start a new conversation"},
	{Text: "/status", Description: "show the session status"},
	{Text: "/stop", Description: "stop the current run"},
}

// Compile-time checks of the optional interfaces.
var (
	_ channel.Channel         = (*Adapter)(nil)
	_ channel.Typer           = (*Adapter)(nil)
	_ channel.Editor          = (*Adapter)(nil)
	_ channel.CommandMenu     = (*Adapter)(nil)
	_ channel.MediaDownloader = (*Adapter)(nil)
)

// Options inject the adapter's clock. The zero value uses real time.
type Options struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// AfterFunc calls f once after d unless stop is called first; nil
	// means time.AfterFunc. Used for the typing indicator's TTL.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// Adapter is the web chat channel. Create it with New, then Configure and
// Run it (sdk.Serve does both through Plugin).
type Adapter struct {
	now       func() time.Time
	afterFunc func(time.Duration, func()) func() bool
	render    *renderer

	// Set by Configure, read-only afterwards.
	cfg       Config
	log       *slog.Logger
	store     store
	ln        net.Listener
	srv       *http.Server
	token     string
	tokenMAC  string
	tokenFile string // where the made token is kept; "" when configured
	url       string
	loopback  bool

	mu       sync.Mutex
	chats    map[string]*chat
	commands []Command
	inbox    channel.Inbox
	runCtx   context.Context
	ran      bool
	dirty    bool // history changed since the last write
	kick     chan struct{}
	// flushMu makes one write of the history at a time, from its
	// snapshot to its rename: a flush that finds nothing dirty behind
	// another knows that one's write is done.
	flushMu sync.Mutex
}

// New returns an unconfigured adapter.
func New(opts Options) *Adapter {
	a := &Adapter{
		now:       opts.Now,
		afterFunc: opts.AfterFunc,
		render:    newRenderer(),
		chats:     map[string]*chat{},
		commands:  DefaultCommands,
		kick:      make(chan struct{}, 1),
		log:       slog.New(slog.DiscardHandler),
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.afterFunc == nil {
		a.afterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	return a
}

// Plugin returns the plugin description for sdk.Serve: a fresh adapter
// with real time.
func Plugin() sdk.Plugin {
	a := New(Options{})
	return sdk.Plugin{
		Name:      "webchat",
		Version:   Version,
		Schema:    Schema,
		Validate:  Validate,
		Configure: a.Configure,
		Probe:     Probe,
		Channel:   a,
	}
}

// Configure decodes and checks the config block (the checks of Validate),
// loads the history from cfg.DataDir and binds the listen address.
// Problems come back as schema.Diagnostics, all at once; an address in use
// is one of them (Validate cannot know it: it binds nothing).
// Nothing is served until Run.
func (a *Adapter) Configure(ctx context.Context, cfg schema.Config) error {
	a.log = cfg.Log()
	c, err := decodeConfig(cfg)
	if err != nil {
		return err
	}
	a.cfg = c
	a.store = store{dir: cfg.DataDir}
	chats, err := a.store.load()
	if err != nil {
		a.log.Warn("history not loaded", "error", err)
	}
	a.restore(chats)
	tokenFile := ""
	a.token = c.AccessToken
	if a.token == "" {
		if cfg.DataDir == "" {
			a.token = newToken() // no data directory (tests): this process only
		} else {
			tokenFile = filepath.Join(cfg.DataDir, TokenFile)
			if a.token, err = loadOrCreateToken(tokenFile); err != nil {
				return schema.Diagnostics{{Attribute: "access_token", Summary: "no access token", Detail: err.Error()}}
			}
		}
	}
	a.tokenMAC = tokenMAC(a.token)
	a.loopback, _ = isLoopbackListen(c.Listen)
	var tlsConfig *tls.Config
	if c.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(inDir(cfg.DataDir, c.TLSCert), inDir(cfg.DataDir, c.TLSKey))
		if err != nil {
			return schema.Diagnostics{{Attribute: "tls_cert", Summary: "cannot load the TLS certificate", Detail: err.Error()}}
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", c.Listen)
	if err != nil {
		d := schema.Diagnostic{Attribute: "listen", Summary: fmt.Sprintf("cannot listen on %s", c.Listen), Detail: err.Error()}
		if errors.Is(err, syscall.EADDRINUSE) {
			d.Summary = fmt.Sprintf("cannot listen on %s: the address is already in use", c.Listen)
			d.Detail = "another program (or another webchat instance) uses this port; stop it or choose another listen address"
		}
		return schema.Diagnostics{d}
	}
	a.url = pageURL(ln.Addr(), tlsConfig != nil)
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	a.tokenFile = tokenFile
	if cfg.Status != nil {
		// The host prints the link on the terminal and shows it on its
		// (authenticated) status page; it never logs it.
		cfg.Status.Report(status.Status{State: status.Ready, Attention: &status.Attention{Kind: status.Link, Data: a.Link()}})
	}
	a.ln = ln
	a.srv = &http.Server{
		Handler:           a.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// URL is the address of the page, e.g. "http://127.0.0.1:8790/" (without
// the access token); empty before Configure.
func (a *Adapter) URL() string { return a.url }

// Link is the page's address with the access token, the link to open
// once: "http://127.0.0.1:8790/?token=..."; empty before Configure.
func (a *Adapter) Link() string {
	if a.url == "" {
		return ""
	}
	return a.url + "?token=" + url.QueryEscape(a.token)
}

// inDir resolves a relative path against dir.
func inDir(dir, p string) string {
	if p == "" || filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// Close releases the listener of an adapter that was configured but never
// run. After Run started, cancel Run's context instead.
func (a *Adapter) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ran || a.ln == nil {
		return nil
	}
	return a.ln.Close()
}

// pageURL is the URL to open for a listener address; an unspecified
// address (all interfaces) is shown as localhost.
func pageURL(addr net.Addr, https bool) string {
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + net.JoinHostPort(host, port) + "/"
}

// Capabilities implements channel.Channel.
func (a *Adapter) Capabilities() channel.Capabilities {
	return channel.Capabilities{
		MaxTextLength:  MaxTextLength,
		LengthUnit:     channel.LengthUTF16,
		Markup:         channel.MarkupMarkdown,
		Groups:         false,
		Buttons:        true,
		MaxFileBytes:   MaxFileBytes,
		TypingLifetime: TypingTTL,
		MediaIn:        []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio, channel.MediaVideo},
		MediaOut:       []channel.MediaKind{channel.MediaImage, channel.MediaDocument, channel.MediaAudio, channel.MediaVideo},
		// A browser's conversation is its id. Its ids are the page's
		// own: no IDForms, they are kept as written.
		DirectToSender: true,
	}
}

// Run serves the page until ctx ends, then closes every open page's
// socket (the pages reconnect to the next process) and writes the history.
// It returns nil when ctx ended and an error when serving failed.
func (a *Adapter) Run(ctx context.Context, inbox channel.Inbox) error {
	a.mu.Lock()
	if a.ln == nil || a.ran {
		a.mu.Unlock()
		return errors.New("webchat: run before configure or run twice")
	}
	a.ran, a.inbox, a.runCtx = true, inbox, ctx
	a.mu.Unlock()

	flushDone := make(chan struct{})
	flushCtx, stopFlush := context.WithCancel(context.Background())
	go func() {
		defer close(flushDone)
		a.flushLoop(flushCtx)
	}()

	served := make(chan error, 1)
	go func() { served <- a.srv.Serve(a.ln) }()
	if a.tokenFile != "" {
		a.log.Info("webchat listening", "url", a.url, "token_file", a.tokenFile, "open", a.url+"?token=<the token in token_file>")
	} else {
		a.log.Info("webchat listening", "url", a.url, "open", a.url+"?token=<access_token>")
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		err = fmt.Errorf("webchat: serve: %w", err)
	}
	a.closeSockets()
	shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if serr := a.srv.Shutdown(shutCtx); serr != nil {
		a.log.Warn("http shutdown", "error", serr)
	}
	stopFlush()
	<-flushDone
	return err
}

// Send implements channel.Channel: it adds a bot message to the chat and
// pushes it to the chat's open pages. The chat must be known (a page of it
// was opened, or it is in the history) or its id must have the form of a
// sender id (SenderID), so a reply that arrives after a restart lost the
// newest history is kept for the page to show when it reconnects.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	if req.Text == "" && len(req.Media) == 0 {
		return channel.SendResponse{}, channel.Errorf(channel.CodeInvalidRequest, "empty text")
	}
	if n := channel.TextLen(req.Text, channel.LengthUTF16); n > MaxTextLength {
		return channel.SendResponse{}, channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units, the limit is %d", n, MaxTextLength)
	}
	text := strings.ToValidUTF8(req.Text, "\uFFFD")
	if !validSenderID(req.ChatID) {
		a.mu.Lock()
		known := a.chats[req.ChatID] != nil
		a.mu.Unlock()
		if !known {
			return channel.SendResponse{}, channel.Errorf(channel.CodeChatNotFound, "no webchat conversation %q", req.ChatID)
		}
	}
	r := &record{ID: newID("b"), Role: RoleBot, Text: text, Format: req.Format, Time: a.now().UTC()}
	r.html = a.render.render(text, req.Format)
	buttons, err := pageButtons(req.Buttons)
	if err != nil {
		return channel.SendResponse{}, err
	}
	r.Buttons = buttons
	files, err := a.sendFiles(req.Media)
	if err != nil {
		return channel.SendResponse{}, err
	}
	r.Files = files

	a.mu.Lock()
	c := a.chats[req.ChatID]
	if c == nil {
		if !validSenderID(req.ChatID) {
			a.mu.Unlock()
			return channel.SendResponse{}, channel.Errorf(channel.CodeChatNotFound, "no webchat conversation %q", req.ChatID)
		}
		// A well-formed id whose chat this process does not know: the
		// plugin was restarted (kill -9) before the history holding it
		// was written, and the page has not reconnected yet. Keep the
		// reply; the page shows it when it reconnects.
		c = a.chatLocked(req.ChatID)
	}
	a.appendLocked(c, r)
	a.mu.Unlock()
	a.flush()
	return channel.SendResponse{MessageIDs: []string{r.ID}}, nil
}

// pageButtons checks the host's buttons and makes them the page's.
func pageButtons(rows [][]channel.Button) ([][]Button, error) {
	var all [][]Button
	for _, row := range rows {
		var out []Button
		for _, b := range row {
			if b.ID == "" || len(b.ID) > channel.MaxButtonID || strings.TrimSpace(b.Label) == "" {
				return nil, channel.Errorf(channel.CodeInvalidRequest, "button %q: an id of 1 to %d bytes and a label are needed", b.Label, channel.MaxButtonID)
			}
			out = append(out, Button{ID: b.ID, Label: strings.ToValidUTF8(b.Label, "\uFFFD")})
		}
		if len(out) > 0 {
			all = append(all, out)
		}
	}
	return all, nil
}

// Edit implements channel.Editor: it replaces the text of a bot message
// and its buttons (none: the message keeps none) and pushes the new
// version to the chat's open pages.
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	if req.Text == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "empty text")
	}
	if n := channel.TextLen(req.Text, channel.LengthUTF16); n > MaxTextLength {
		return channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units, the limit is %d", n, MaxTextLength)
	}
	text := strings.ToValidUTF8(req.Text, "\uFFFD")
	html := a.render.render(text, req.Format)
	buttons, err := pageButtons(req.Buttons)
	if err != nil {
		return err
	}

	defer a.flush() // after the unlock below: the edit written before it returns (flush)
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.chats[req.ChatID]
	if c == nil {
		return channel.Errorf(channel.CodeChatNotFound, "no webchat conversation %q", req.ChatID)
	}
	r := c.find(req.MessageID)
	if r == nil {
		return channel.Errorf(channel.CodeInvalidRequest, "no message %q in this conversation (edited messages must be recent: history keeps %d)", req.MessageID, int(a.cfg.HistoryLimit))
	}
	if r.Role != RoleBot {
		return channel.Errorf(channel.CodeForbidden, "message %q was written by the user", req.MessageID)
	}
	if r.Text == text && r.Format == req.Format && reflect.DeepEqual(r.Buttons, buttons) {
		return nil
	}
	// The edit's buttons replace the message's: none when the question is
	// answered, a turn card's Stop button while it runs (a press of it
	// stays possible: Pressed is cleared only when the buttons change).
	if !reflect.DeepEqual(r.Buttons, buttons) {
		r.Pressed = ""
	}
	r.Text, r.Format, r.html, r.Edited, r.Buttons = text, req.Format, html, true, buttons
	a.updateLocked(c, r)
	return nil
}

// SetTyping implements channel.Typer. The indicator clears on On=false or
// TypingTTL after the last On.
func (a *Adapter) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.chats[req.ChatID]
	if c == nil {
		return channel.Errorf(channel.CodeChatNotFound, "no webchat conversation %q", req.ChatID)
	}
	if c.typingStop != nil {
		c.typingStop()
		c.typingStop = nil
	}
	c.typingGen++
	if req.On {
		gen := c.typingGen
		c.typingStop = a.afterFunc(TypingTTL, func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if c.typingGen == gen {
				c.typingStop = nil
				a.setTypingLocked(c, false)
			}
		})
	}
	a.setTypingLocked(c, req.On)
	return nil
}

// SetCommands implements channel.CommandMenu: the page's command buttons
// become the host's commands.
func (a *Adapter) SetCommands(ctx context.Context, cmds []channel.MenuEntry) error {
	out := make([]Command, 0, len(cmds))
	for _, m := range cmds {
		name := strings.TrimPrefix(strings.TrimSpace(m.Name), "/")
		if name == "" {
			continue
		}
		out = append(out, Command{Text: "/" + name, Description: m.Description})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.commands = out
	b := marshalEvent(Event{Type: EventCommands, Commands: out})
	for _, c := range a.chats {
		for s := range c.socks {
			s.enqueue(b)
		}
	}
	return nil
}

// newID returns a random message id with a prefix ("u" user, "b" bot).
func newID(prefix string) string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

func marshalEvent(ev Event) []byte {
	b, err := json.Marshal(ev)
	if err != nil {
		// Event holds only strings, numbers and times: cannot fail.
		panic("webchat: marshal event: " + err.Error())
	}
	return b
}

// humanBytes formats a byte count for messages shown to the user.
func humanBytes(n int) string {
	if n >= 1<<10 && n%(1<<10) == 0 {
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
