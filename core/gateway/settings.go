package gateway

import (
	"cmp"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/admission"
	"github.com/clawhost/clawhost/core/agents"
	"github.com/clawhost/clawhost/core/approval"
	"github.com/clawhost/clawhost/core/budget"
	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/received"
	"github.com/clawhost/clawhost/core/replyroute"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/turn"
)

// Settings are the pipeline's configurable behaviour; SetSettings replaces
// them on reload. The composer (core) maps the HCL blocks onto them.
type Settings struct {
	Access access.Policy
	// Sources maps each enabled instance to its plugin source ("telegram"),
	// the envelope's channel label.
	Sources map[string]string
	// DMScope decides which direct messages share a session.
	DMScope sessionkey.DMScope
	// IdentityLinks make one person's direct chats on several instances
	// one session (session.identity_links; with dm_scope "per-peer").
	IdentityLinks map[string][]string
	// Agents decide which agent serves a chat (the agents' chats
	// bindings); nil: the default agent serves every chat. Switchable are
	// the agents every chat may switch to with /agent besides the one it
	// is bound to (agent.switchable), in file order.
	Agents     AgentRouter
	Switchable []string
	// MenuChats are the chats bound to agents (agent.chats, topics and
	// threads left out; ChatID "" for "<instance>:*"): each is offered
	// its agent's command menu where that is not the default menu
	// (menuChats).
	MenuChats []MenuChat
	Debounce  debounce.Settings
	// Received are the message_received hooks, in config order, and
	// their timeout.
	Received received.Settings
	// Replies are the hooks a turn's reply passes on its way out
	// (message_sending, agent_end; core/replyroute).
	Replies  replyroute.Settings
	Queue    queue.Policy
	Turn     turn.Settings
	Delivery delivery.Settings
	// Approval is how tool-use questions are asked (agent.approval_timeout,
	// agent.approvers); Turn.Approvals, or "ask" in Turn.PermissionModes
	// and a chat's /mode ask, turns them on.
	Approval approval.Config
	// SeenReaction is the reaction a message gets when it arrives while its
	// chat's turn runs (messages.seen_reaction; "" none); QueuedNotice
	// tells it in text where there is no reaction (messages.queued_notice).
	SeenReaction string
	QueuedNotice bool
	// Rate is each sender's flood limit (access.rate); Budgets the
	// budgets turns are held to (budget {}, agents' budget blocks).
	Rate    Rate
	Budgets budget.Rules
	// AuditKeep is how long the audit trail keeps its rows (audit.keep);
	// 0: for ever.
	AuditKeep time.Duration
	// TranscriptDirs are claude's config directories, where /export looks
	// for a session's transcript (projects/*/<id>.jsonl).
	TranscriptDirs []string
	// OwnerClaudeDirs are, by agent id, where the owner's own claude keeps
	// its sessions (agent.owner_claude_dir): /continue, /desktop.
	OwnerClaudeDirs map[string]string
}

// SetSettings replaces the pipeline settings (on reload). Sessions, queues
// and running turns are untouched; pending debounce windows are flushed.
func (g *Gateway) SetSettings(s Settings) {
	g.queue.SetPolicy(s.Queue)
	g.turns.SetSettings(turnSettings(s))
	g.budgets.SetPrices(s.Budgets)
	g.delivery.SetSettings(s.Delivery)
	g.approvals.SetConfig(approvalConfig(s))
	g.admission.Forget(g.ctx, s.Access)
	g.mu.Lock()
	menusChanged := !slices.Equal(g.set.MenuChats, s.MenuChats)
	g.set = s
	old := g.debouncers
	g.debouncers = map[time.Duration]*debounce.Debouncer[arrival]{}
	g.mu.Unlock()
	for _, d := range old {
		d.Close()
	}
	if menusChanged && g.handler != nil {
		g.background(func() { g.handler.PublishMenus(g.ctx) })
	}
}

// turnSettings are the turn stage's settings with what they take from
// the other stages': the access policy's mention rule and the delivery's
// default file limit (for a channel that declares none), which the
// messaging section tells claude.
func turnSettings(s Settings) turn.Settings {
	t := s.Turn
	pol := s.Access
	t.RequireMention = pol.RequiresMention
	t.MaxFileBytes = cmp.Or(s.Delivery.MaxMediaBytes, delivery.DefaultMaxMediaBytes)
	return t
}

func (g *Gateway) settings() Settings {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.set
}

// AgentRouter resolves the agent that serves a chat (config.Bindings).
type AgentRouter = agents.Bindings

// routing are the agent routing's settings.
func (s Settings) routing() agents.Settings {
	return agents.Settings{DMScope: s.DMScope, IdentityLinks: s.IdentityLinks, Bindings: s.Agents, Switchable: s.Switchable}
}

// admission are the admission stage's settings.
func (s Settings) admission() admission.Settings {
	return admission.Settings{Access: s.Access, Rate: s.Rate, Received: s.Received}
}
