// Command clawhost-loopback is the smallest useful channel plugin: a
// "platform" made of two HTTP endpoints on loopback. Tests and demos post
// inbound messages to it and read what the host sent back.
//
//	POST /inbound  {"chat_id","chat_type","thread_id","sender_id","sender_name","sender_username","text","message_id","mentioned",
//	                "command_text","chat_title","edited","reply_to":{"message_id","text","to_bot"},
//	                "media":[{"kind","ref","mime","filename"}]}
//	               → 200 {"message_id"} once the host has stored the message;
//	                 503 with Retry-After at once when the host cannot store it
//	                 (send it again, with the same message_id)
//	POST /fail     {"op":"send"|"edit","code","count","retry_after_ms"}
//	               → the next count sends (edits) fail with that channel error code
//	GET  /sent?after=N&wait=5s
//	               → [{"seq","op","chat_id","thread_id","message_id","text","reply_to","on"}] (long poll)
//	POST /status   {"state":"ready"|"needs_attention"|"degraded","message",
//	                "attention":{"kind":"qr"|"code"|"link","data","expires_at","retry"}}
//	               → the plugin reports that status to the host
//	POST /panic    {"message"}
//	               → the plugin panics with message (a crash whose text the host
//	                 shows: tests of redaction)
//
// The host's Retry (the status page's button, `clawhost retry`) is recorded
// as op "retry" in /sent and, when the current status has an attention,
// rotates it: the data gets the suffix "#<n>" (the n-th retry) and the
// expiry moves a minute on, as a real plugin showing a new QR code would.
//
// It writes its address to addr_file when one is configured. Every chat
// exists on this platform except those whose id starts with "missing-":
// Send and Edit to one fail with chat_not_found, as a real platform's do
// for a chat the bot is not in. Texts are counted in UTF-16 code units, the
// unit it declares.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// Record is one thing the host did through the channel.
type Record struct {
	Seq       int            `json:"seq"`
	Op        string         `json:"op"` // send | edit | typing
	ChatID    string         `json:"chat_id"`
	ThreadID  string         `json:"thread_id,omitempty"`
	MessageID string         `json:"message_id,omitempty"`
	Text      string         `json:"text,omitempty"`
	Format    channel.Format `json:"format,omitempty"`
	ReplyTo   string         `json:"reply_to,omitempty"`
	On        bool           `json:"on,omitempty"`
	// Media are the paths of files sent with the message.
	Media []string `json:"media,omitempty"`
	// Buttons are the buttons sent under the message (config buttons).
	Buttons [][]channel.Button `json:"buttons,omitempty"`
}

// Inbound is the body of POST /inbound.
type Inbound struct {
	ChatID     string `json:"chat_id"`
	ChatType   string `json:"chat_type"`
	ThreadID   string `json:"thread_id"`
	SenderID   string `json:"sender_id"`
	SenderName string `json:"sender_name"`
	SenderUser string `json:"sender_username"`
	Text       string `json:"text"`
	MessageID  string `json:"message_id"`
	Mentioned  bool   `json:"mentioned"`
	// CommandText, ChatTitle, Edited and ReplyTo map to the
	// channel.InboundMessage fields of the same names.
	CommandText string `json:"command_text"`
	ChatTitle   string `json:"chat_title"`
	Edited      bool   `json:"edited"`
	ReplyTo     *struct {
		MessageID string `json:"message_id"`
		Text      string `json:"text"`
		ToBot     bool   `json:"to_bot"`
	} `json:"reply_to"`
	// Media refs of the form "data:<text>" download as <text>.
	Media []struct {
		Kind     string `json:"kind"`
		Ref      string `json:"ref"`
		MIME     string `json:"mime"`
		Filename string `json:"filename"`
	} `json:"media"`
	// Action makes the message a press of the button ButtonID under the
	// sent message MessageID (config buttons).
	Action *channel.Action `json:"action"`
}

// Fail is the body of POST /fail.
type Fail struct {
	Op           string `json:"op"`
	Code         string `json:"code"`
	Count        int    `json:"count"`
	RetryAfterMS int    `json:"retry_after_ms"`
}

// StatusBody is the body of POST /status.
type StatusBody struct {
	State     string `json:"state"`
	Message   string `json:"message"`
	Attention *struct {
		Kind      string    `json:"kind"`
		Data      string    `json:"data"`
		ExpiresAt time.Time `json:"expires_at"`
		Retry     string    `json:"retry"`
	} `json:"attention"`
}

type loopback struct {
	limit       int
	markup      channel.Markup
	maxLines    int
	displayName string
	buttons     bool
	status      status.Reporter

	mu      sync.Mutex
	records []Record
	changed chan struct{} // closed and replaced on every record
	nextID  int
	ln      net.Listener
	fails   map[string]*Fail
	current status.Status // the last status reported
	retries int
}

func newLoopback() *loopback {
	return &loopback{changed: make(chan struct{}), fails: map[string]*Fail{}}
}

var (
	_ channel.Channel = (*loopback)(nil)
	_ channel.Typer   = (*loopback)(nil)
	_ channel.Editor  = (*loopback)(nil)

	_ channel.MediaDownloader = (*loopback)(nil)
)

func (l *loopback) configure(ctx context.Context, cfg schema.Config) error {
	var c struct {
		Listen    string  `json:"listen"`
		AddrFile  *string `json:"addr_file"`
		TextLimit float64 `json:"text_limit"`
		Markdown  *string `json:"markdown"`
		MaxLines  float64 `json:"max_lines"`
		Display   *string `json:"display_name"`
		Buttons   *bool   `json:"buttons"`
	}
	if err := cfg.Decode(&c); err != nil {
		return err
	}
	l.status = status.Discard
	if cfg.Status != nil {
		l.status = cfg.Status
	}
	l.limit, l.maxLines = int(c.TextLimit), int(c.MaxLines)
	// The host sends markdown as the agent wrote it unless the channel
	// declares "none"; the loopback records it as is by default.
	l.markup = channel.MarkupMarkdown
	if c.Markdown != nil && *c.Markdown != "" {
		l.markup = channel.ParseMarkup(*c.Markdown)
	}
	if c.Display != nil {
		l.displayName = *c.Display
	}
	l.buttons = c.Buttons != nil && *c.Buttons
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return schema.Diagnostics{{Attribute: "listen", Summary: "cannot listen", Detail: err.Error()}}
	}
	l.ln = ln
	if c.AddrFile != nil && *c.AddrFile != "" {
		if err := os.WriteFile(*c.AddrFile, []byte(ln.Addr().String()), 0o600); err != nil {
			return fmt.Errorf("write addr_file: %w", err)
		}
	}
	cfg.Logger.Info("loopback listening", "addr", ln.Addr().String())
	return nil
}

func (l *loopback) Capabilities() channel.Capabilities {
	return channel.Capabilities{MaxTextLength: l.limit, LengthUnit: channel.LengthUTF16, Markup: l.markup, Threads: true, Groups: true,
		MaxLines: l.maxLines, DisplayName: l.displayName, Buttons: l.buttons}
}

func (l *loopback) Run(ctx context.Context, inbox channel.Inbox) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /inbound", func(w http.ResponseWriter, r *http.Request) {
		var in Inbound
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if in.ChatType == "" {
			in.ChatType = string(channel.ChatDirect)
		}
		if in.MessageID == "" {
			in.MessageID = strconv.FormatInt(time.Now().UnixNano(), 36)
		}
		msg := channel.InboundMessage{
			ChatType: channel.ChatType(in.ChatType), ChatID: in.ChatID, ThreadID: in.ThreadID, MessageID: in.MessageID,
			Sender: channel.Sender{ID: in.SenderID, Name: in.SenderName, Username: in.SenderUser}, Text: in.Text, WasMentioned: in.Mentioned, Timestamp: time.Now(),
			CommandText: in.CommandText, ChatTitle: in.ChatTitle, Edited: in.Edited, Action: in.Action,
		}
		if in.ReplyTo != nil {
			msg.ReplyTo = &channel.ReplyTo{MessageID: in.ReplyTo.MessageID, Text: in.ReplyTo.Text, ToBot: in.ReplyTo.ToBot}
		}
		for _, m := range in.Media {
			msg.Media = append(msg.Media, channel.Media{Kind: channel.MediaKind(m.Kind), Ref: m.Ref, MIME: m.MIME, Filename: m.Filename, Size: int64(len(strings.TrimPrefix(m.Ref, "data:")))})
		}
		// A host that cannot store the message (a full disk) refuses it at
		// once: the poster gets a 503 with the host's delay and sends it
		// again, as a platform's webhook does. inboundWait bounds a host
		// that does not answer at all.
		ctx, cancel := context.WithTimeout(r.Context(), inboundWait)
		defer cancel()
		if err := channel.Offer(ctx, inbox, msg); err != nil {
			retry := 1
			var ce *channel.Error
			if errors.As(err, &ce) && ce.RetryAfter > time.Second {
				retry = int(ce.RetryAfter.Round(time.Second) / time.Second)
			}
			w.Header().Set("Retry-After", strconv.Itoa(retry))
			http.Error(w, "not stored, send it again: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"message_id": in.MessageID})
	})
	mux.HandleFunc("GET /sent", l.serveSent)
	mux.HandleFunc("POST /fail", func(w http.ResponseWriter, r *http.Request) {
		var f Fail
		if err := json.NewDecoder(r.Body).Decode(&f); err != nil || (f.Op != "send" && f.Op != "edit") {
			http.Error(w, "want {op: send|edit, code, count}", http.StatusBadRequest)
			return
		}
		l.mu.Lock()
		l.fails[f.Op] = &f
		l.mu.Unlock()
	})
	mux.HandleFunc("POST /status", func(w http.ResponseWriter, r *http.Request) {
		var b StatusBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		st := status.Status{State: status.State(b.State), Message: b.Message}
		if a := b.Attention; a != nil {
			st.Attention = &status.Attention{Kind: status.AttentionKind(a.Kind), Data: a.Data, ExpiresAt: a.ExpiresAt, Retry: a.Retry}
		}
		l.mu.Lock()
		l.current = st
		l.mu.Unlock()
		l.status.Report(st)
	})
	mux.HandleFunc("POST /panic", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Message string `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		// Outside the handler: net/http recovers a handler's panic.
		go func() { panic("loopback: " + b.Message) }()
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (l *loopback) serveSent(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.Atoi(r.URL.Query().Get("after"))
	wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
	deadline := time.After(wait)
	for {
		l.mu.Lock()
		var out []Record
		for _, rec := range l.records {
			if rec.Seq > after {
				out = append(out, rec)
			}
		}
		changed := l.changed
		l.mu.Unlock()
		if len(out) > 0 || wait <= 0 {
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		select {
		case <-changed:
		case <-deadline:
			wait = 0
		case <-r.Context().Done():
			return
		}
	}
}

func (l *loopback) record(r Record) Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.Seq = len(l.records) + 1
	l.records = append(l.records, r)
	close(l.changed)
	l.changed = make(chan struct{})
	return r
}

// injected returns the error POST /fail scheduled for op, if any.
func (l *loopback) injected(op string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.fails[op]
	if f == nil || f.Count <= 0 {
		return nil
	}
	f.Count--
	return &channel.Error{Code: channel.Code(f.Code), Message: "injected failure", RetryAfter: time.Duration(f.RetryAfterMS) * time.Millisecond}
}

// missingPrefix starts the ids of chats this platform does not have.
const missingPrefix = "missing-"

// inboundWait bounds how long POST /inbound waits for the host to store a
// message before it answers 503 (a platform's webhook waits about as
// long).
const inboundWait = time.Minute

// textLen is the length of text as the loopback shows it, in UTF-16
// code units: markdown is measured rendered in the declared markup, as
// the host splits it.
func (l *loopback) textLen(text string, format channel.Format) int {
	if format == channel.FormatMarkdown {
		return markup.Len(text, markup.For(l.markup), channel.LengthUTF16)
	}
	return channel.TextLen(text, channel.LengthUTF16)
}

func (l *loopback) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	if err := l.injected("send"); err != nil {
		l.record(Record{Op: "send_failed", ChatID: req.ChatID, ThreadID: req.ThreadID, Text: req.Text, Format: req.Format})
		return channel.SendResponse{}, err
	}
	if strings.HasPrefix(req.ChatID, missingPrefix) {
		return channel.SendResponse{}, channel.Errorf(channel.CodeChatNotFound, "no chat %q", req.ChatID)
	}
	if n := l.textLen(req.Text, req.Format); l.limit > 0 && n > l.limit {
		return channel.SendResponse{}, channel.Errorf(channel.CodeMessageTooLong, "text of %d UTF-16 units exceeds %d", n, l.limit)
	}
	l.mu.Lock()
	l.nextID++
	id := "m" + strconv.Itoa(l.nextID)
	l.mu.Unlock()
	rec := Record{Op: "send", ChatID: req.ChatID, ThreadID: req.ThreadID, MessageID: id, Text: req.Text, Format: req.Format, ReplyTo: req.ReplyToMessageID, Buttons: req.Buttons}
	for _, m := range req.Media {
		rec.Media = append(rec.Media, m.Path)
	}
	l.record(rec)
	return channel.SendResponse{MessageIDs: []string{id}}, nil
}

// DownloadMedia serves "data:<text>" refs.
func (l *loopback) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	data, ok := strings.CutPrefix(req.Ref, "data:")
	if !ok {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "unknown media ref")
	}
	if req.MaxBytes > 0 && int64(len(data)) > req.MaxBytes {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "media of %d bytes exceeds %d", len(data), req.MaxBytes)
	}
	return io.NopCloser(strings.NewReader(data)), channel.MediaInfo{MIME: "text/plain", Size: int64(len(data))}, nil
}

func (l *loopback) Edit(ctx context.Context, req channel.EditRequest) error {
	if err := l.injected("edit"); err != nil {
		return err
	}
	if strings.HasPrefix(req.ChatID, missingPrefix) {
		return channel.Errorf(channel.CodeChatNotFound, "no chat %q", req.ChatID)
	}
	l.record(Record{Op: "edit", ChatID: req.ChatID, ThreadID: req.ThreadID, MessageID: req.MessageID, Text: req.Text, Format: req.Format})
	return nil
}

func (l *loopback) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	l.record(Record{Op: "typing", ChatID: req.ChatID, ThreadID: req.ThreadID, On: req.On})
	return nil
}

// retry is the plugin's Retry: it records the call and rotates the
// attention's data.
func (l *loopback) retry(ctx context.Context) error {
	l.mu.Lock()
	l.retries++
	n := l.retries
	st := l.current
	if a := st.Attention; a != nil {
		c := *a
		if base, _, ok := strings.Cut(c.Data, "#"); ok {
			c.Data = base
		}
		c.Data += "#" + strconv.Itoa(n)
		c.ExpiresAt = time.Now().Add(time.Minute).UTC()
		st.Attention = &c
	}
	l.current = st
	l.mu.Unlock()
	l.record(Record{Op: "retry", Text: strconv.Itoa(n)})
	l.status.Report(st)
	return nil
}

func plugin() sdk.Plugin {
	l := newLoopback()
	return sdk.Plugin{
		Name:    "loopback",
		Version: "0.1.0",
		Schema: schema.Schema{
			{Name: "listen", Type: "string", Default: "127.0.0.1:0", Description: "address of the HTTP API (inbound messages and the sent log)"},
			{Name: "addr_file", Type: "string", Description: "file to write the listening address to"},
			{Name: "text_limit", Type: "number", Default: 4000, Description: "longest text one send may carry, in characters"},
			{Name: "markdown", Type: "string", Default: "markdown", Description: `markup declared to the host (channel.Markup: "markdown", "html-subset", "lightweight" or "none"; "none" makes the host send plain text)`},
			{Name: "max_lines", Type: "number", Default: 0, Description: "line limit per message declared to the host (0: none)"},
			{Name: "display_name", Type: "string", Description: "platform name declared to the host (the envelope label); empty means the plugin's name"},
			{Name: "buttons", Type: "bool", Description: "declare the buttons capability: sent buttons are recorded, POST /inbound takes action"},
		},
		Configure: l.configure,
		Channel:   l,
		Retry:     l.retry,
	}
}

func main() { os.Exit(sdk.Serve(plugin())) }
