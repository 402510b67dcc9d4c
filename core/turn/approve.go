package turn

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
)

// errUnchanged ends a session update that changes nothing.
var errUnchanged = errors.New("unchanged")

// ModeAsk is the /mode that turns tool approvals on for a session
// (agent.approvals = "chat" does it for every session). It counts only
// while agent.permission_modes lists it: a session that stored it keeps
// the configured mode once the file no longer offers it.
const ModeAsk = "ask"

// asks reports whether the session's turns ask about tool use.
func (t *Turns) asks(set Settings, o Overrides) bool {
	return t.opts.Approvals != nil && (set.Approvals || o.Mode == ModeAsk && slices.Contains(set.PermissionModes, ModeAsk))
}

// permission answers one of claude's permission questions: at once when
// the session allowed the tool "always", else by asking the chat (typing
// paused meanwhile). An "always" answer is stored with the session, so a
// restarted claude process of the same session does not ask again; /new
// forgets it.
func (s *streamer) permission(ctx context.Context, p *runner.PermissionRequest) {
	a := s.t.opts.Approvals
	// The session's "always" as it was when the turn started: an answer
	// given during the turn is also a rule of claude's process, which then
	// does not ask again.
	if p.Tool != runner.AskUserQuestion && slices.Contains(s.always, p.Tool) {
		a.Auto(s.key, p)
		p.Answer(runner.Decision{Allow: true, Always: true})
		return
	}
	s.typing.pause()
	defer s.typing.resume()
	d := a.Ask(ctx, s.key, s.tgt, s.asker, s.askerName, p)
	if d.Allow && d.Always {
		s.t.allowAlways(ctx, s.key, p.Tool)
	}
	p.Answer(d)
}

// alwaysOf is the tools the session allowed for good.
func alwaysOf(sess store.Session) []string {
	meta, _ := metaOf(sess.Key, sess.Chat)
	return meta.Always
}

// allowAlways stores tool as allowed for the rest of the session.
func (t *Turns) allowAlways(ctx context.Context, key, tool string) {
	_, err := t.opts.Store.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		meta, _ := metaOf(key, s.Chat)
		if slices.Contains(meta.Always, tool) {
			return errUnchanged
		}
		meta.Always = append(meta.Always, tool)
		b, err := encodeMeta(key, meta)
		if err != nil {
			return err
		}
		if !found {
			s.Key = key
		}
		s.Chat = b
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		t.log.Warn("storing an always-allowed tool failed; the next process of this session asks again", "session", key, "tool", tool, "error", err)
	}
}

// typing is a turn's typing indicator, paused while a question waits for
// a person (the agent is not working then).
type typing struct {
	mu     sync.Mutex
	start  func() (seal func())
	seal   func()
	paused int
	ended  bool
}

func newTyping(start func() (seal func())) *typing {
	return &typing{start: start, seal: start()}
}

func (ty *typing) pause() {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	ty.paused++
	if ty.paused == 1 && ty.seal != nil {
		ty.seal()
		ty.seal = nil
	}
}

func (ty *typing) resume() {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	ty.paused--
	if ty.paused == 0 && !ty.ended {
		ty.seal = ty.start()
	}
}

// end switches the indicator off for good.
func (ty *typing) end() {
	ty.mu.Lock()
	defer ty.mu.Unlock()
	ty.ended = true
	if ty.seal != nil {
		ty.seal()
		ty.seal = nil
	}
}
