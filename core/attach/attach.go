// Package attach lets a running terminal claude take an owner's chat over
// (issue 77): `clawhost channel`, the stdio channel server the terminal
// claude starts, connects to the host's attach endpoint (Handler) and
// attaches to one chat; while it is attached, that chat's turns are not
// run by a clawhost-run claude but put to the terminal as channel events
// ([Hub.Run]): the message stays in the journal, the terminal's reply tool
// ends the turn and its text goes to the chat through the outbox, its
// permission prompts become the chat's approval buttons, and the turn card
// and Stop work as for any turn. When the terminal goes away (its stdin
// closed, the connection dropped) the chat falls back to a clawhost-run
// claude that resumes the terminal's session; /detach gives the chat its
// own session back.
package attach

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/runner"
)

// Agent runs the turns of the chats nobody attached to (core/gateway's
// Agent; *runner.Runner implements it).
type Agent interface {
	Run(ctx context.Context, req runner.TurnRequest) (*runner.Turn, error)
	Steer(key, text string) (bool, error)
	CanSteer() bool
	Stop(key string)
	Abort(key string) bool
}

// Terminal is the host's side of one attached `clawhost channel`: Send
// writes a frame to it (an error: it is gone) and Close ends the
// connection.
type Terminal interface {
	Send(f Frame) error
	Close(reason string)
}

// Link is one attached terminal as the host knows it.
type Link struct {
	// Key is the session key of the chat it is attached to; Chat the chat
	// as the terminal named it ("telegram:123").
	Key, Chat string
	// SessionID is the terminal claude's session (CLAUDE_CODE_SESSION_ID),
	// Transcript its transcript file; both "" when the terminal did not
	// say.
	SessionID, Transcript string
	// Since is when it attached; Turns how many chat messages it answered.
	Since time.Time
	Turns int
	// Waiting: attached when the host last stopped, not back yet.
	Waiting bool `json:"-"`
}

// Ending is how an attachment ended.
type Ending int

const (
	// Gone: the terminal exited or its connection dropped; the chat falls
	// back to a clawhost-run claude resuming the terminal's session.
	Gone Ending = iota
	// Detached: the chat's /detach; it returns to its own session.
	Detached
)

// Options configure a Hub.
type Options struct {
	// Inner runs every turn of a chat nobody is attached to, and the
	// fallback turn of a chat whose terminal went away.
	Inner Agent
	// Fallback, when set, is called at the first turn req of a chat whose
	// terminal went away (Gone) having named its session: it makes that
	// session the chat's (the transcript copied where req's claude finds
	// it, the session row pointed at it) and returns the session id the
	// chat's turns resume from then on ("" keeps the chat's own).
	Fallback func(l Link, req runner.TurnRequest) (string, error)
	// Audit records an attachment's start and end in the audit trail.
	Audit func(kind string, l Link, detail string)
	// StateFile, when set, keeps the attachments across a restart (0600):
	// after a crash the chat's turns wait up to Grace for its terminal to
	// reattach (`clawhost channel` reconnects), then fall back as when it
	// went away.
	StateFile string
	Grace     time.Duration
	// Clock is the clock; nil: the real one.
	Clock tstime.Clock
}

// Hub routes each chat's turns to its attached terminal, or to Inner.
type Hub struct {
	opts  Options
	mu    sync.Mutex
	links map[string]*link // by session key
	// gone: the terminals that went away, whose session the chat's next
	// turn takes over (Options.Fallback); resume: the session a chat's
	// turns resume from since.
	gone   map[string]Link
	resume map[string]string
	// awaited: the terminals attached when the host last stopped, until
	// they reattach or their grace ends (closed then).
	awaited map[string]*awaiting
}

// awaiting is a terminal expected back after a restart.
type awaiting struct {
	link Link
	back chan struct{} // closed when it reattached or its grace ended
	once sync.Once
}

// link is an attached terminal and its running turn.
type link struct {
	Link
	term Terminal
	turn *pending
}

// pending is a turn put to a terminal and not yet answered.
type pending struct {
	id     string
	ctx    context.Context
	req    runner.TurnRequest
	emit   func(runner.Event)
	finish func(runner.Result)
	once   sync.Once
}

// New returns a Hub over opts.Inner.
func New(opts Options) *Hub {
	opts.Clock = tstime.Or(opts.Clock)
	h := &Hub{opts: opts, links: map[string]*link{}, gone: map[string]Link{}, resume: map[string]string{}, awaited: map[string]*awaiting{}}
	for _, l := range h.load() {
		a := &awaiting{link: l, back: make(chan struct{})}
		h.awaited[l.Key] = a
		h.opts.Clock.AfterFunc(opts.Grace, func() { h.expire(a) })
	}
	return h
}

// expire ends a's grace: the terminal did not come back, and the chat
// falls back as when it went away.
func (h *Hub) expire(a *awaiting) {
	h.mu.Lock()
	if h.awaited[a.link.Key] == a {
		delete(h.awaited, a.link.Key)
		if a.link.SessionID != "" && h.opts.Fallback != nil {
			h.gone[a.link.Key] = a.link
		}
		h.save()
	}
	h.mu.Unlock()
	a.once.Do(func() { close(a.back) })
}

// ErrAttached: another terminal is attached to the chat.
var ErrAttached = errors.New("another terminal is attached to this chat: exit it first, or send /detach in the chat")

// Attach makes t the chat's terminal. l.Key names the chat's session.
func (h *Hub) Attach(l Link, t Terminal) error {
	h.mu.Lock()
	if old, ok := h.links[l.Key]; ok && old.term != t {
		h.mu.Unlock()
		return ErrAttached
	}
	l.Since = h.opts.Clock.Now()
	h.links[l.Key] = &link{Link: l, term: t}
	delete(h.gone, l.Key)
	delete(h.resume, l.Key)
	a := h.awaited[l.Key]
	delete(h.awaited, l.Key)
	h.save()
	h.mu.Unlock()
	if a != nil {
		a.once.Do(func() { close(a.back) })
	}
	h.audit("attach", l, "a terminal claude attached (session "+orNone(l.SessionID)+")")
	return nil
}

// Gone ends t's attachment, if t is still the chat's terminal (a replaced
// terminal's late close changes nothing).
func (h *Hub) Gone(key string, t Terminal) { h.detach(key, t, Gone) }

// detach ends the attachment of the chat of key (how says why; t, when
// set, must be its terminal) and reports whether there was one. A turn the
// terminal has not answered goes on: on Gone the clawhost-run claude
// answers it, resuming the terminal's session; on Detached, in the chat's
// own session.
func (h *Hub) detach(key string, t Terminal, how Ending) bool {
	h.mu.Lock()
	l, ok := h.links[key]
	if !ok || (t != nil && l.term != t) {
		h.mu.Unlock()
		return false
	}
	delete(h.links, key)
	p := l.turn
	l.turn = nil
	if how == Gone && l.SessionID != "" && h.opts.Fallback != nil {
		h.gone[key] = l.Link
	}
	h.save()
	h.mu.Unlock()
	detail := "the terminal went away: the chat's claude resumes its session"
	if how == Detached {
		detail = "/detach: the chat returns to its own session"
		l.term.Close("the chat was detached from this terminal (/detach)")
	}
	h.audit("detach", l.Link, detail)
	if p != nil {
		go h.fallback(p)
	}
	return true
}

// Attached returns the attached terminals, and those awaited after a
// restart (Waiting).
func (h *Hub) Attached() []Link {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Link, 0, len(h.links)+len(h.awaited))
	for _, l := range h.links {
		out = append(out, l.Link)
	}
	for _, a := range h.awaited {
		l := a.link
		l.Waiting = true
		out = append(out, l)
	}
	return out
}

// Run runs a turn: put to the chat's terminal when one is attached, else
// by Inner.
func (h *Hub) Run(ctx context.Context, req runner.TurnRequest) (*runner.Turn, error) {
	h.mu.Lock()
	a := h.awaited[req.Key]
	h.mu.Unlock()
	if a != nil { // attached before a restart: wait for it to come back
		select {
		case <-a.back:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	h.mu.Lock()
	l, ok := h.links[req.Key]
	if !ok || l.turn != nil {
		h.mu.Unlock()
		return h.opts.Inner.Run(ctx, h.resumed(req))
	}
	t, emit, finish := runner.StreamedTurn()
	p := &pending{id: uuid.NewString(), ctx: ctx, req: req, emit: emit, finish: finish}
	l.turn = p
	term, chat := l.term, l.Chat
	h.mu.Unlock()
	err := term.Send(Frame{Type: FrameMessage, ID: p.id, Content: req.Prompt, Meta: map[string]string{"chat_id": chat, "message_id": p.id, "user": "chat"}})
	if err != nil {
		h.Gone(req.Key, term) // the turn falls back
		return t, nil
	}
	go func() {
		select {
		case <-ctx.Done():
			h.end(req.Key, p, runner.Result{Err: &runner.Error{Kind: runner.KindAborted, Detail: "the turn was stopped"}, SessionID: req.SessionID})
		case <-t.Done():
		}
	}()
	return t, nil
}

// resumed is req with the session the chat resumes after its terminal
// went away.
func (h *Hub) resumed(req runner.TurnRequest) runner.TurnRequest {
	h.mu.Lock()
	l, gone := h.gone[req.Key]
	delete(h.gone, req.Key)
	h.mu.Unlock()
	if gone {
		id, err := h.opts.Fallback(l, req)
		if err != nil {
			h.audit("fallback", l, "the terminal's session could not be carried over ("+err.Error()+"): the chat goes on in its own session")
		} else if id != "" {
			h.mu.Lock()
			h.resume[req.Key] = id
			h.mu.Unlock()
		}
	}
	h.mu.Lock()
	id, ok := h.resume[req.Key]
	h.mu.Unlock()
	if ok {
		req.SessionID, req.NewSession = id, false
	}
	return req
}

// fallback answers p, which a terminal left unanswered, with Inner.
func (h *Hub) fallback(p *pending) {
	if p.ctx.Err() != nil {
		h.finishOnce(p, runner.Result{Err: &runner.Error{Kind: runner.KindAborted, Detail: "the turn was stopped"}, SessionID: p.req.SessionID})
		return
	}
	t, err := h.opts.Inner.Run(p.ctx, h.resumed(p.req))
	if err != nil {
		h.finishOnce(p, runner.Result{Err: &runner.Error{Kind: runner.KindCrash, Detail: err.Error()}, SessionID: p.req.SessionID})
		return
	}
	var res runner.Result
	for e := range t.Events() {
		if e.Kind == runner.EventResult {
			res = *e.Result
			continue
		}
		p.emit(e)
	}
	h.finishOnce(p, res)
}

// end finishes p when it is still its chat's running turn.
func (h *Hub) end(key string, p *pending, res runner.Result) bool {
	h.mu.Lock()
	l, ok := h.links[key]
	if !ok || l.turn != p {
		h.mu.Unlock()
		return false
	}
	l.turn = nil
	if res.Err == nil {
		l.Turns++
	}
	term := l.term
	h.mu.Unlock()
	if res.Err != nil && res.Err.Kind == runner.KindAborted {
		_ = term.Send(Frame{Type: FrameStopped, ID: p.id})
	}
	h.finishOnce(p, res)
	return true
}

func (h *Hub) finishOnce(p *pending, res runner.Result) {
	p.once.Do(func() { p.finish(res) })
}

// Reply is the terminal t's reply tool: it answers the chat's running
// turn; an error says why it was not taken (the terminal's claude sees it).
func (h *Hub) Reply(key string, t Terminal, text string, files []string) error {
	h.mu.Lock()
	l, ok := h.links[key]
	if !ok || l.term != t {
		h.mu.Unlock()
		return errors.New("this terminal is no longer attached to the chat")
	}
	p := l.turn
	h.mu.Unlock()
	if p == nil {
		return errors.New("no chat message is waiting for an answer: answer a <channel> message when one arrives")
	}
	for _, f := range files {
		text = strings.TrimRight(text, "\n") + "\nMEDIA:" + f
	}
	if !h.end(key, p, runner.Result{Text: text, Streamed: text, SessionID: p.req.SessionID}) {
		return errors.New("the chat's message was already answered or stopped")
	}
	return nil
}

// Permission is the terminal t's permission prompt (Claude Code's
// permission relay): while a chat turn runs, it becomes the chat's
// approval question and its answer goes back to the terminal as a
// FramePermission. Outside a chat turn it is not the chat's to answer and
// is left to the terminal's own dialog.
func (h *Hub) Permission(key string, t Terminal, f Frame) {
	h.mu.Lock()
	l, ok := h.links[key]
	if !ok || l.term != t || l.turn == nil {
		h.mu.Unlock()
		return
	}
	p := l.turn
	h.mu.Unlock()
	req, decided := runner.NewPermissionRequest(f.RequestID, f.ToolName, previewInput(f))
	req.Description = f.Description
	p.emit(runner.Event{Kind: runner.EventPermission, Permission: req})
	go func() {
		select {
		case d := <-decided:
			behavior := "deny"
			if d.Allow {
				behavior = "allow"
			}
			_ = t.Send(Frame{Type: FramePermission, RequestID: f.RequestID, Behavior: behavior})
		case <-p.ctx.Done():
		}
	}()
}

// previewInput is the tool input a permission prompt shows: the
// terminal's input_preview when it is a JSON object, else the preview and
// description as fields.
func previewInput(f Frame) json.RawMessage {
	var obj map[string]any
	if json.Unmarshal([]byte(f.InputPreview), &obj) == nil && obj != nil {
		return json.RawMessage(f.InputPreview)
	}
	b, _ := json.Marshal(map[string]string{"description": f.Description, "input_preview": f.InputPreview})
	return b
}

// Steer: an attached chat's messages are not injected into the terminal's
// running turn; they queue for the next one.
func (h *Hub) Steer(key, text string) (bool, error) {
	if h.attached(key) {
		return false, nil
	}
	return h.opts.Inner.Steer(key, text)
}

// CanSteer is Inner's.
func (h *Hub) CanSteer() bool { return h.opts.Inner.CanSteer() }

// Stop ends a session's warm process; an attached terminal is not the
// host's to end.
func (h *Hub) Stop(key string) {
	if !h.attached(key) {
		h.opts.Inner.Stop(key)
	}
}

// Abort ends the chat's running turn (Stop, /stop): an attached
// terminal's turn ends at once and the terminal is told.
func (h *Hub) Abort(key string) bool {
	h.mu.Lock()
	l, ok := h.links[key]
	var p *pending
	if ok {
		p = l.turn
	}
	h.mu.Unlock()
	if p != nil {
		return h.end(key, p, runner.Result{Err: &runner.Error{Kind: runner.KindAborted, Detail: "the turn was stopped"}, SessionID: p.req.SessionID})
	}
	return h.opts.Inner.Abort(key)
}

func (h *Hub) attached(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.links[key]
	return ok
}

func (h *Hub) audit(kind string, l Link, detail string) {
	if h.opts.Audit != nil {
		h.opts.Audit(kind, l, detail)
	}
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
