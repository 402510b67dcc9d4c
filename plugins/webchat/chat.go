package webchat

import (
	"context"
	"sort"
	"sync"
	"time"
)

// chat is one conversation: its history, typing state and open pages. All
// fields are guarded by Adapter.mu.
type chat struct {
	id         string
	seq        uint64
	msgs       []*record
	typing     bool
	typingGen  uint64
	typingStop func() bool
	socks      map[*socket]struct{}
	lastActive time.Time
}

func (c *chat) find(id string) *record {
	for i := len(c.msgs) - 1; i >= 0; i-- {
		if c.msgs[i].ID == id {
			return c.msgs[i]
		}
	}
	return nil
}

// socket is the plugin's side of one open page. Events are queued to out
// and written by the socket's writer goroutine, so a slow page never blocks
// the adapter; a page that falls behind by a full queue is disconnected and
// resyncs when it reconnects.
type socket struct {
	out    chan []byte
	done   chan struct{}
	once   sync.Once
	reason string
}

// socketQueue is the number of events a page may fall behind.
const socketQueue = 256

func newSocket() *socket {
	return &socket{out: make(chan []byte, socketQueue), done: make(chan struct{})}
}

// enqueue queues b without blocking; a full queue closes the socket.
func (s *socket) enqueue(b []byte) {
	select {
	case <-s.done:
	case s.out <- b:
	default:
		s.close("too far behind; reconnecting")
	}
}

// close asks the writer to close the connection with reason.
func (s *socket) close(reason string) {
	s.once.Do(func() {
		s.reason = reason
		close(s.done)
	})
}

// restore installs chats loaded from the history file.
func (a *Adapter) restore(stored map[string]*storedChat) {
	a.mu.Lock()
	defer a.mu.Unlock()
	limit := int(a.cfg.HistoryLimit)
	for id, sc := range stored {
		if sc == nil {
			continue
		}
		c := &chat{id: id, seq: sc.Seq, socks: map[*socket]struct{}{}, lastActive: sc.LastActive}
		msgs := sc.Messages
		if len(msgs) > limit {
			msgs = msgs[len(msgs)-limit:]
		}
		for i := range msgs {
			r := msgs[i]
			if r.Role == RoleUser {
				r.html = plainHTML(r.Text)
				if r.Status == StatusSending {
					// The previous process ended before the host
					// confirmed it.
					r.Status = StatusFailed
				}
			} else {
				r.html = a.render.render(r.Text, r.Format)
			}
			if r.Seq > c.seq {
				c.seq = r.Seq
			}
			c.msgs = append(c.msgs, &r)
		}
		a.chats[id] = c
	}
	a.evictLocked()
}

// chatLocked returns the chat id, creating it.
func (a *Adapter) chatLocked(id string) *chat {
	c := a.chats[id]
	if c == nil {
		c = &chat{id: id, socks: map[*socket]struct{}{}, lastActive: a.now().UTC()}
		a.chats[id] = c
		a.evictLocked()
	}
	return c
}

// evictLocked drops the least recently active chats without open pages
// while there are more than maxChats.
func (a *Adapter) evictLocked() {
	if len(a.chats) <= maxChats {
		return
	}
	idle := make([]*chat, 0, len(a.chats))
	for _, c := range a.chats {
		if len(c.socks) == 0 {
			idle = append(idle, c)
		}
	}
	sort.Slice(idle, func(i, j int) bool { return idle[i].lastActive.Before(idle[j].lastActive) })
	for _, c := range idle {
		if len(a.chats) <= maxChats {
			break
		}
		if c.typingStop != nil {
			c.typingStop()
		}
		a.removeFiles(c.msgs)
		delete(a.chats, c.id)
	}
	a.markDirty()
}

// appendLocked adds r to c as a new message and tells c's pages.
func (a *Adapter) appendLocked(c *chat, r *record) {
	c.seq++
	r.Seq = c.seq
	c.msgs = append(c.msgs, r)
	if limit := int(a.cfg.HistoryLimit); limit > 0 && len(c.msgs) > limit {
		a.removeFiles(c.msgs[:len(c.msgs)-limit])
		c.msgs = append(c.msgs[:0:0], c.msgs[len(c.msgs)-limit:]...)
	}
	c.lastActive = a.now().UTC()
	m := r.message()
	a.broadcastLocked(c, Event{Type: EventMessage, Seq: c.seq, Message: &m})
	a.markDirty()
}

// updateLocked tells c's pages that r changed.
func (a *Adapter) updateLocked(c *chat, r *record) {
	c.seq++
	c.lastActive = a.now().UTC()
	m := r.message()
	a.broadcastLocked(c, Event{Type: EventUpdate, Seq: c.seq, Message: &m})
	a.markDirty()
}

func (a *Adapter) setTypingLocked(c *chat, on bool) {
	if c.typing == on {
		return
	}
	c.typing = on
	c.seq++
	a.broadcastLocked(c, Event{Type: EventTyping, Seq: c.seq, Typing: on})
}

func (a *Adapter) broadcastLocked(c *chat, ev Event) {
	if len(c.socks) == 0 {
		return
	}
	b := marshalEvent(ev)
	for s := range c.socks {
		s.enqueue(b)
	}
}

// attach registers s as a page of chat id and queues its hello: the
// history and the sequence number the page continues from.
func (a *Adapter) attach(id string, s *socket) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.chatLocked(id)
	c.socks[s] = struct{}{}
	hist := make([]Message, len(c.msgs))
	for i, r := range c.msgs {
		hist[i] = r.message()
	}
	s.enqueue(marshalEvent(Event{
		Type: EventHello, Seq: c.seq, History: hist, Typing: c.typing,
		Commands: a.commands, Title: a.cfg.Title, MaxBytes: MaxInboundBytes,
	}))
}

func (a *Adapter) detach(id string, s *socket) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.chats[id]; c != nil {
		delete(c.socks, s)
	}
}

// closeSockets disconnects every page (the plugin is stopping).
func (a *Adapter) closeSockets() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.chats {
		for s := range c.socks {
			s.close("plugin stopping")
		}
	}
}

func (r *record) message() Message {
	return Message{ID: r.ID, Seq: r.Seq, Role: r.Role, HTML: r.html, Status: r.Status, Edited: r.Edited, ClientID: r.clientID, Time: r.Time,
		Buttons: r.Buttons, Pressed: r.Pressed, Files: r.Files}
}

// markDirty asks the flush loop to write the history soon. Called with
// a.mu held.
func (a *Adapter) markDirty() {
	a.dirty = true
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// flushLoop writes the history after changes, at most every flushDelay,
// and once more when ctx ends.
func (a *Adapter) flushLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			a.flush()
			return
		case <-a.kick:
		}
		a.flush()
		select {
		case <-ctx.Done():
			a.flush()
			return
		case <-time.After(flushDelay):
		}
	}
}

// flush writes a snapshot of every chat to the history file if anything
// changed since the last write, and returns once what changed before it
// was called is written. Send and Edit call it before they return: the
// host records a reply delivered when they do, and a host killed -9
// (which takes the plugin with it) within the flush loop's delay left a
// delivered reply out of the history a page shows after the restart.
// Written, not synced: a process's death loses nothing the kernel has.
func (a *Adapter) flush() {
	if a.store.dir == "" {
		return
	}
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	a.mu.Lock()
	if !a.dirty {
		a.mu.Unlock()
		return
	}
	a.dirty = false
	snap := make(map[string]*storedChat, len(a.chats))
	for id, c := range a.chats {
		if len(c.msgs) == 0 {
			continue
		}
		sc := &storedChat{Seq: c.seq, LastActive: c.lastActive, Messages: make([]record, len(c.msgs))}
		for i, r := range c.msgs {
			sc.Messages[i] = *r
		}
		snap[id] = sc
	}
	a.mu.Unlock()
	if err := a.store.save(snap); err != nil {
		a.log.Error("history not saved", "error", err)
		a.mu.Lock()
		a.dirty = true
		a.mu.Unlock()
	}
}
