// Package agents decides which agent a chat talks to, and where that
// agent works for the chat.
//
// A chat talks to the agent it is bound to (Settings.Bindings) unless it
// switched with /agent to another it may use: the bound agent, and every
// agent of Settings.Switchable. The switch is kept in the metadata of the
// bound agent's session of the chat (session.Meta.Agent), so it outlives
// restarts and /new; each agent keeps its own session of the chat, so
// switching back resumes that agent's conversation.
//
// An agent with worktrees gives each chat its own git worktree of the
// agent's workspace (core/worktree); /worktree reset makes it anew.
package agents

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/worktree"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Bindings resolve the agent that serves a chat (config.Bindings).
type Bindings interface {
	Resolve(instance, chat, thread string) (agent string, bound bool)
}

// Settings are the routing in force; the composer maps them from HCL.
type Settings struct {
	// DMScope decides which direct messages share a session.
	DMScope sessionkey.DMScope
	// IdentityLinks make one person's direct chats on several instances
	// one session (session.identity_links; with dm_scope "per-peer").
	IdentityLinks map[string][]string
	// Bindings decide which agent serves a chat; nil: the default agent
	// serves every chat.
	Bindings Bindings
	// Switchable are the agents every chat may switch to with /agent
	// besides the one it is bound to, in file order.
	Switchable []string
}

// Workspace is where an agent works: its workspace, and whether each chat
// gets a worktree of it.
type Workspace struct {
	Dir       string
	Worktrees bool
}

// Store is the part of the store the agents read and write.
type Store interface {
	session.Store
	Session(ctx context.Context, key string) (store.Session, error)
}

// Options are the Agents' ports.
type Options struct {
	Logger hclog.Logger
	Store  Store
	// Meta is the decode cache of the sessions' metadata.
	Meta *session.Cache
	Now  func() time.Time
	// Settings are the routing in force (they change on reload).
	Settings func() Settings
	// Workspace is where agent works (turn.Turns.Profile).
	Workspace func(agent string) Workspace
	// Running reports whether a turn of session key runs; Stop ends its
	// warm claude process.
	Running func(key sessionkey.Key) bool
	Stop    func(key sessionkey.Key)
}

// Agents routes chats to agents.
type Agents struct{ opts Options }

// New returns the Agents over their ports.
func New(opts Options) *Agents {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Agents{opts: opts}
}

// Errors of /agent and /worktree.
var (
	// ErrNoSuchAgent: /agent named an agent the chat may not use.
	ErrNoSuchAgent = errors.New("no such agent for this chat")
	// ErrTurnRunning: /worktree reset while the chat's reply runs in it.
	ErrTurnRunning = errors.New("a reply is running in the worktree")
	// ErrNoWorktree: /worktree in a chat whose agent has no worktrees.
	ErrNoWorktree = errors.New("this chat's agent works without worktrees")
	// ErrDirty: /worktree reset of a worktree with changes not committed
	// (worktree.ErrDirty).
	ErrDirty = worktree.ErrDirty
)

// bound is the agent that m's chat is bound to.
func (s Settings) bound(m *message.Message) string {
	if s.Bindings == nil {
		return sessionkey.DefaultAgent
	}
	a, _ := s.Bindings.Resolve(m.Instance, m.ChatID, m.ThreadID)
	return a
}

// BoundKey derives the session key of m under set: the conversation's key,
// scoped to the agent its chat is bound to (a chat's /agent switch aside:
// see Agents.Key).
func BoundKey(set Settings, m *message.Message) sessionkey.Key {
	return sessionkey.Key{Agent: set.bound(m), Chat: conversationKey(set.DMScope, set.IdentityLinks, m)}
}

// conversationKey derives the conversation's session key.
func conversationKey(scope sessionkey.DMScope, links map[string][]string, m *message.Message) string {
	kind := sessionkey.Direct
	peer := m.Sender.ID
	switch m.ChatType {
	case channel.ChatGroup:
		kind, peer = sessionkey.Group, m.ChatID
	case channel.ChatChannel:
		kind, peer = sessionkey.Channel, m.ChatID
	}
	if peer == "" {
		peer = m.ChatID
	}
	return sessionkey.WithThread(sessionkey.Build(sessionkey.Params{Instance: m.Instance, Source: m.Channel, Kind: kind, PeerID: peer, DMScope: scope, IdentityLinks: links}), m.ThreadID)
}

// Key is the key m's conversation runs under with the routing set:
// BoundKey's, or the agent the chat switched to.
func (a *Agents) Key(ctx context.Context, set Settings, m *message.Message) sessionkey.Key {
	key := BoundKey(set, m)
	if len(set.Switchable) == 0 {
		return key
	}
	if to := a.switchedTo(ctx, key); to != "" && slices.Contains(set.Switchable, to) {
		key.Agent = to
	}
	return key
}

// switchedTo is the agent the chat of the bound session key switched to,
// "" when none (or its session cannot be read).
func (a *Agents) switchedTo(ctx context.Context, bound sessionkey.Key) string {
	s, err := a.opts.Store.Session(ctx, bound.String())
	if err != nil {
		return ""
	}
	return a.opts.Meta.Of(s).Agent
}

// Choices are the agents m's chat may talk to (the one it is bound to
// first) and the one it talks to.
func (a *Agents) Choices(ctx context.Context, m *message.Message) (choices []string, active string) {
	set := a.opts.Settings()
	choices = []string{BoundKey(set, m).Agent}
	for _, s := range set.Switchable {
		if !slices.Contains(choices, s) {
			choices = append(choices, s)
		}
	}
	return choices, a.Key(ctx, set, m).Agent
}

// Switch makes agent serve m's chat from its next message on. It reports
// whether that agent already has a conversation in the chat (which then
// goes on); an agent the chat may not use is ErrNoSuchAgent.
func (a *Agents) Switch(ctx context.Context, m *message.Message, agent string) (resumed bool, err error) {
	choices, _ := a.Choices(ctx, m)
	if !slices.Contains(choices, agent) {
		return false, ErrNoSuchAgent
	}
	bound := BoundKey(a.opts.Settings(), m)
	boundAgent := bound.Agent
	next := sessionkey.Key{Agent: agent, Chat: bound.Chat}
	to := agent
	if agent == boundAgent {
		to = ""
	}
	from := boundAgent
	_, err = a.opts.Meta.Update(ctx, a.opts.Store, bound.String(), func(meta *session.Meta) error {
		if meta.Agent == to {
			return session.ErrUnchanged
		}
		from = cmp.Or(meta.Agent, boundAgent)
		meta.Agent = to
		return nil
	})
	switch {
	case errors.Is(err, session.ErrUnchanged):
	case err != nil:
		return false, fmt.Errorf("switch agent: %w", err)
	default:
		// The agent taking over is told, in its next prompt.
		text := fmt.Sprintf("This chat switched to you (agent %q) from agent %q with /agent; what it said to %q meanwhile is not in your conversation.", agent, from, from)
		if _, err := a.opts.Meta.Update(ctx, a.opts.Store, next.String(), func(meta *session.Meta) error {
			meta.AddEvent(text, a.opts.Now())
			return nil
		}); err != nil {
			a.opts.Logger.Warn("telling the agent of the switch failed", "agent", agent, "error", err)
		}
	}
	s, err := a.opts.Store.Session(ctx, next.String())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, fmt.Errorf("switch agent: %w", err)
	}
	return err == nil && s.ClaudeSessionID != "", nil
}

// Worktree is the worktree m's chat works in (with its session key), ok
// false when its agent has none.
func (a *Agents) Worktree(ctx context.Context, m *message.Message) (w worktree.Worktree, key sessionkey.Key, ok bool) {
	key = a.Key(ctx, a.opts.Settings(), m)
	ws := a.opts.Workspace(key.Agent)
	if !ws.Worktrees {
		return w, key, false
	}
	return worktree.Of(ws.Dir, key.Dir()), key, true
}

// Dir is the directory of session key's chat: its worktree (which may not
// exist yet) and branch when its agent has worktrees, else the agent's
// workspace.
func (a *Agents) Dir(key sessionkey.Key) (dir, branch string) {
	ws := a.opts.Workspace(key.Agent)
	if !ws.Worktrees {
		return ws.Dir, ""
	}
	w := worktree.Of(ws.Dir, key.Dir())
	return w.Path, w.Branch
}

// ResetWorktree makes m's chat's worktree anew (worktree.Reset): not while
// a reply runs in it (ErrTurnRunning); the chat's warm claude process,
// whose directory goes, is stopped. kept names where a dirty worktree's
// changes were kept (worktree.ErrDirty).
func (a *Agents) ResetWorktree(ctx context.Context, m *message.Message) (w worktree.Worktree, kept string, err error) {
	w, key, ok := a.Worktree(ctx, m)
	if !ok {
		return w, "", ErrNoWorktree
	}
	if a.opts.Running(key) {
		return w, "", ErrTurnRunning
	}
	w, kept, err = worktree.Reset(ctx, a.opts.Workspace(key.Agent).Dir, key.Dir(), a.opts.Now())
	if err == nil {
		a.opts.Stop(key)
	}
	return w, kept, err
}
