package turn

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
)

// ModeAsk is the /mode that turns tool approvals on for a session
// (agent.approvals = "chat" does it for every session). It counts only
// while agent.permission_modes lists it: a session that stored it keeps
// the configured mode once the file no longer offers it.
const ModeAsk = "ask"

// asks reports whether the session's turns ask about tool use.
func (t *Turns) asks(set Settings, o session.Overrides) bool {
	return t.opts.Approvals != nil && (set.Approvals || o.Mode == ModeAsk && slices.Contains(set.PermissionModes, ModeAsk))
}

// permission answers one of claude's permission questions: at once when
// a rule the session stored from an earlier "always" covers the call
// (runner.Rule.Allows: exactly that command prefix, that file, that host),
// else by asking the approvers (typing paused meanwhile). The rules an
// "always" answer grants are stored with the session as rule strings
// ("Bash(git log:*)"), so a restarted claude process of the same session
// does not ask again about what they cover; /new forgets them. A bare tool
// name stored before rules were scoped ("Bash") covers no call of a tool
// that takes a scope.
func (s *streamer) permission(ctx context.Context, p *runner.PermissionRequest) {
	a := s.t.opts.Approvals
	// The session's rules: those it had when the turn started and those
	// granted since. claude's process has the latter too, but asks again
	// about a command it checks for a path outside the workspace whatever
	// Bash rule it holds (claude 2.1.330): the host answers that repeat.
	s.alwaysMu.Lock()
	rules := slices.Clone(s.always)
	s.alwaysMu.Unlock()
	if p.Tool == runner.ExitPlanMode {
		rules = nil // each plan is approved on its own: no rule covers one
	}
	for _, stored := range rules {
		if r := runner.ParseRule(stored); r.Allows(p) {
			a.Auto(s.skey, p, r)
			// claude's process gets the rule too, as it would have.
			p.Answer(runner.Decision{Allow: true, Always: []runner.Rule{r}})
			return
		}
	}
	s.typing.pause()
	defer s.typing.resume()
	var card QuestionCard
	if s.card != nil {
		s.card.asking(p.Tool)
		defer s.card.asking("")
		card = s.card
	}
	d, feedbackFrom := a.Ask(ctx, s.skey, s.tgt, s.asker, p, card)
	if p.Tool == runner.ExitPlanMode {
		d.Always = nil
	}
	if feedbackFrom != "" {
		s.t.keepPlanning(ctx, s.key, s.id, feedbackFrom)
	}
	if d.Allow && len(d.Always) > 0 {
		s.alwaysMu.Lock()
		for _, r := range d.Always {
			s.always = append(s.always, r.String())
		}
		s.alwaysMu.Unlock()
		s.t.allowAlways(ctx, s.key, d.Always)
	}
	p.Answer(d)
}

// allowAlways stores rules as allowed for the rest of the session.
func (t *Turns) allowAlways(ctx context.Context, key string, rules []runner.Rule) {
	_, err := t.meta().Update(ctx, t.opts.Store, key, func(m *session.Meta) error {
		changed := false
		for _, r := range rules {
			if !slices.Contains(m.Always, r.String()) {
				m.Always = append(m.Always, r.String())
				changed = true
			}
		}
		if !changed {
			return session.ErrUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, session.ErrUnchanged) {
		t.log.Warn("storing an always-allowed rule failed; the next process of this session asks again", "session", key, "error", err)
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
