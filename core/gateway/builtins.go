package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/export"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownersession"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// command answers a built-in or plugin command (core/command.Handler):
// each message of the answer (a plugin's reply) is a message of its own,
// rendered per its format as a reply is, with its files and buttons.
func (g *Gateway) command(a arrival, inv command.Invocation) {
	set := g.settings()
	who := command.Role{Owner: set.Access.IsOwner(&a.Message), Control: set.Access.MayControl(&a.Message), Member: set.Access.IsMember(&a.Message),
		// No channel lists a group's members (nil): groups are refused.
		NotOwnersChat: set.Access.OwnersOnlyChat(&a.Message, nil)}
	msgs := g.handler.Messages(g.ctx, a.key, &a.Message, inv, who)
	switch {
	case len(msgs) == 0:
		g.respond(a, "")
		return
	case len(msgs) == 1 && len(msgs[0].Media) == 0 && len(msgs[0].Buttons) == 0:
		// One message of text goes through the outbox, as a reply does.
		g.respondAs(a, msgs[0].Text, msgs[0].Format)
		return
	}
	// Several messages, files or buttons: one reply of several messages
	// in the outbox, each with its own format, files and buttons, recorded
	// before the first is sent and resumed after a restart.
	out := make([]delivery.Message, 0, len(msgs))
	for _, m := range msgs {
		if len(m.Buttons) > 0 && !g.delivery.HasButtons(a.Message.Instance) {
			m.Text, m.Buttons = command.ButtonsAsText(m.Text, m.Buttons), nil
		}
		out = append(out, delivery.Message{Text: m.Text, Format: m.Format, Media: m.Media, Buttons: m.Buttons})
	}
	g.delivery.DeliverAnswer(delivery.Answer{Key: a.key, ID: a.ID, Target: a.Message.Target(), Messages: out})
}

// RefreshCommands rebuilds the plugin commands and republishes the
// command menu; call it when an instance becomes ready or stops.
func (g *Gateway) RefreshCommands(ctx context.Context) { g.handler.Refresh(ctx) }

// sessions is the built-ins' view of the queue and turn stages.
type sessions struct{ g *Gateway }

func (s sessions) Reset(key sessionkey.Key, m *message.Message, reason string) {
	s.g.resetSession(key, m, reason)
}

// Stop clears the session's queue and aborts the running turn; the next
// turn's prompt says the previous one was aborted. The queue is cleared
// first: an aborted turn ends its lane's run at once, and the lane would
// start the next waiting message before a later Clear could drop it.
func (s sessions) Stop(key sessionkey.Key) (bool, int) {
	dropped := s.g.queue.Clear(key, "cleared by /stop")
	aborted := s.g.queue.Abort(key, "stopped by /stop")
	if aborted || dropped > 0 {
		text := "The user used /stop: "
		switch {
		case aborted && dropped > 0:
			text += fmt.Sprintf("your answer in progress was stopped and %d waiting messages were dropped.", dropped)
		case aborted:
			text += "your answer in progress was stopped."
		default:
			text += fmt.Sprintf("%d waiting messages were dropped.", dropped)
		}
		if _, err := s.g.meta.Update(s.g.ctx, s.g.store, key.String(), func(m *session.Meta) error {
			m.AddEvent(text, s.g.opts.Now())
			return nil
		}); err != nil {
			s.g.log.Warn("recording /stop for the agent failed", "session", key.String(), "error", err)
		}
	}
	return aborted, dropped
}

func (s sessions) Running(key sessionkey.Key) bool { return s.g.queue.Running(key) }

// Overrides are the session's /model, /effort, /mode and /queue.
func (s sessions) Overrides(ctx context.Context, key sessionkey.Key) (session.Overrides, error) {
	sess, err := s.g.store.Session(ctx, key.String())
	if errors.Is(err, store.ErrNotFound) {
		return session.Overrides{}, nil
	}
	if err != nil {
		return session.Overrides{}, err
	}
	return s.g.meta.Of(sess).Overrides(), nil
}

// Past are the chat's earlier sessions.
func (s sessions) Past(ctx context.Context, key sessionkey.Key) ([]session.PastSession, error) {
	sess, err := s.g.store.Session(ctx, key.String())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	past := slices.Clone(s.g.meta.Of(sess).Past) // the cache's is shared
	for i := range past {
		past[i].Title = s.claudeTitle(past[i].ID)
	}
	return past, nil
}

// Current is the chat's current session, with its name and claude's title.
func (s sessions) Current(ctx context.Context, key sessionkey.Key) (session.PastSession, bool, error) {
	sess, err := s.g.store.Session(ctx, key.String())
	if errors.Is(err, store.ErrNotFound) || err == nil && sess.ClaudeSessionID == "" {
		return session.PastSession{}, false, nil
	}
	if err != nil {
		return session.PastSession{}, false, err
	}
	return session.PastSession{ID: sess.ClaudeSessionID, Started: sess.CreatedAt, Last: sess.LastMessageAt, Turns: sess.Turns,
		Name: s.g.meta.Of(sess).Name, Title: s.claudeTitle(sess.ClaudeSessionID)}, true, nil
}

// Name names the current session (/name).
func (s sessions) Name(ctx context.Context, key sessionkey.Key, name string) error {
	_, err := s.g.meta.Update(ctx, s.g.store, key.String(), func(m *session.Meta) error {
		m.Name = name
		return nil
	})
	return err
}

// claudeTitle is claude's own title of session id (its transcript's custom
// or AI title, ownersession.Parse); "" when none or not found.
func (s sessions) claudeTitle(id string) string {
	path, err := export.FindTranscript(s.g.settings().TranscriptDirs, id)
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sum, _ := ownersession.Parse(f)
	return sum.Title
}

// Switch makes an earlier session current (a running turn is aborted).
func (s sessions) Switch(ctx context.Context, key sessionkey.Key, n int) (session.PastSession, error) {
	s.g.queue.Abort(key, "session switched")
	return s.g.turns.Switch(ctx, key, n)
}

// SetOverride stores one of the session's settings.
func (s sessions) SetOverride(ctx context.Context, k sessionkey.Key, name session.Setting, value string) error {
	key := k.String()
	o, err := s.g.turns.SetOverrides(ctx, k, func(o *session.Overrides) error { return o.Set(name, value) })
	if err == nil {
		s.g.log.Info("session setting changed", "session", key, "setting", string(name), "value", value)
		if name == session.SettingQueue {
			s.g.queue.SetSessionMode(k, o.Queue)
		}
	}
	return err
}

// queueMode is the queue's SessionMode: the session's /queue, read from
// the store (the queue keeps it; SetOverride updates it).
func (s sessions) queueMode(k sessionkey.Key) (queue.Mode, bool) {
	g := s.g
	sess, err := g.store.Session(g.ctx, k.String())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", true
	case err != nil:
		return "", false // read again next time
	}
	return g.meta.Of(sess).Queue, true
}

// SessionInfo is a session as the status page shows it.
type SessionInfo struct {
	store.Session
	// Name is who the session is with: the group's title, or the
	// sender's name in a direct chat ("" unknown).
	Name    string
	Queued  int
	Running bool
	// LastTurn says how the last turn since the start got to claude
	// (runner.Wait's sentence); "" when none ran.
	LastTurn string
	// Card is what the running turn's card says (turn.Turns.CardState);
	// "" when no turn runs with a card.
	Card string
}

// Sessions returns up to limit sessions, most recently active first, and
// the number of stored sessions.
func (g *Gateway) Sessions(ctx context.Context, limit int) ([]SessionInfo, int) {
	recent, err := g.store.RecentSessions(ctx, limit)
	if err != nil {
		g.log.Warn("listing sessions failed", "error", err)
	}
	total, err := g.store.CountSessions(ctx)
	if err != nil {
		total = len(recent)
	}
	queued, _ := g.store.PendingCounts(ctx)
	out := make([]SessionInfo, len(recent))
	for i, s := range recent {
		out[i] = SessionInfo{Session: s, Name: sessionName(s.Chat), Queued: queued[s.Key], Running: g.queue.Running(storedKey(g.log, s.Key)), LastTurn: g.turns.LastWait(s.Key).String(),
			Card: g.turns.CardState(s.Key)}
	}
	return out, total
}

// UnlistedGroups are the groups that wrote since the start while
// access.groups does not list them, the most recent first.
func (g *Gateway) UnlistedGroups() []access.UnlistedGroup { return g.admission.Unlisted() }

// QueueDepth is the number of messages waiting in session queues.
func (g *Gateway) QueueDepth() int { return g.queue.Depth() }

// sessionName is who a session is with, from its stored chat metadata:
// a group's title, else the sender's name.
func sessionName(chat []byte) string {
	var m struct {
		Title      string `json:"title"`
		SenderName string `json:"sender_name"`
	}
	if len(chat) == 0 || json.Unmarshal(chat, &m) != nil {
		return ""
	}
	return cmp.Or(m.Title, m.SenderName)
}
