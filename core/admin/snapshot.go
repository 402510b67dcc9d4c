package admin

import (
	"context"
	"errors"
	"time"
)

// Source provides the host's state.
type Source interface {
	// Snapshot returns the current state. It is called once per request to
	// /, /status.json and /healthz, from the request's goroutine and
	// possibly concurrently with itself; it should return quickly and give
	// up when ctx is done. A Snapshot not returned within the server's
	// snapshot timeout counts as "the source did not answer".
	Snapshot(ctx context.Context) Snapshot
}

// Pause is claude's usage-limit pause.
type Pause struct {
	// Until is when the turns run again by themselves.
	Until time.Time `json:"until"`
	// Reason is the limit: "usage_limit" (with claude's reset time) or
	// "rate_limited" (a backoff).
	Reason string `json:"reason"`
}

// Snapshot is the host's state at one moment.
type Snapshot struct {
	// Version is clawhost's version string.
	Version string `json:"version"`
	// Sandbox is the sandbox claude runs in: "bubblewrap", "bubblewrap (recycled)"
	// or "bubblewrap (per start: why)" (the sandbox helper on or failed; in the first
	// moments after the start "bubblewrap (recycled: its sandbox helper is starting)"),
	// "off", or "unavailable (why)" (runner.Runner.SandboxState); "" when unknown.
	Sandbox string `json:"sandbox,omitempty"`
	// Paused, when set, is claude's usage-limit pause: no turn starts
	// until it ends (core/usagelimit).
	Paused *Pause `json:"paused,omitempty"`
	// StartedAt is when the host started.
	StartedAt time.Time `json:"started_at"`
	// Plugins lists every enabled plugin instance.
	Plugins []Plugin `json:"plugins"`
	// Doctor is the last run of doctor's checks in the host; nil when
	// the source cannot run them.
	Doctor *Doctor `json:"doctor,omitempty"`
	// Disabled lists the plugin blocks of the configuration that are not
	// enabled, with why.
	Disabled []DisabledPlugin `json:"disabled_plugins,omitempty"`
	// Sessions lists the most recently active sessions first. The source
	// caps the list (for example at 200); SessionCount is the total.
	Sessions []Session `json:"sessions"`
	// SessionCount is the number of sessions known to the host.
	SessionCount int `json:"session_count"`
	// QueueDepth is the number of messages waiting across all sessions.
	QueueDepth int `json:"queue_depth"`
	// Warm lists the runner's warm claude processes.
	Warm []Warm `json:"warm"`
	// WarmPool is how the runner keeps claude processes warm: its limits,
	// what the warm processes hold and the time to first answer of a
	// returning chat, warm and cold; nil when the source has no runner.
	WarmPool *WarmPool `json:"warm_pool,omitempty"`
	// Agents lists the configured agents, the default first.
	Agents []Agent `json:"agents,omitempty"`
	// Host is the host process's own memory.
	Host Process `json:"host"`
	// Errors lists recent errors, newest first (see [ErrorRing]).
	Errors []ErrorEntry `json:"errors"`
	// LastReload is the outcome of the last reload (SIGHUP); nil when the
	// configuration was never reloaded.
	LastReload *Reload `json:"last_reload,omitempty"`
	// Attached are the chats a terminal claude is attached to.
	Attached []Attached `json:"attached,omitempty"`
	// UnlistedGroups are group chats that wrote while access.groups does
	// not list them (they get no answer), the most recent first.
	UnlistedGroups []UnlistedGroup `json:"unlisted_groups,omitempty"`
	// Approvals are the tool-use questions waiting for a person in a chat
	// (a turn waits on each), oldest first, and the last decisions.
	Approvals []Approval `json:"approvals,omitempty"`
	Decisions []Decision `json:"approval_decisions,omitempty"`
	// Cluster is the hosts sharing this host's database and the leases
	// they hold; nil when the host runs alone (SQLite).
	Cluster *Cluster `json:"cluster,omitempty"`
	// Usage is the usage ledger's sums; Audit the latest rows of the
	// audit trail, newest first.
	Usage *Usage       `json:"usage,omitempty"`
	Audit []AuditEntry `json:"audit,omitempty"`
	// Agent and Store are the health of the claude CLI and of the store;
	// nil when the source does not know (not ready when set and not ok).
	Agent *AgentHealth `json:"agent,omitempty"`
	Store *StoreHealth `json:"store,omitempty"`
	// Channels says whether an enabled plugin is a channel ([ChannelsOf]);
	// nil when the source does not know (not healthy when set and not ok).
	Channels *ChannelHealth `json:"channels,omitempty"`
	// PendingPairings are the senders waiting for an owner's approval;
	// ApprovedSenders those approved through pairing.
	PendingPairings []PairingCode    `json:"pending_pairings,omitempty"`
	ApprovedSenders []ApprovedSender `json:"approved_senders,omitempty"`
}

// Approval is a tool-use question waiting for an answer.
type Approval struct {
	// ID names the question for POST /approvals/{id}/allow|deny.
	ID      string    `json:"id,omitempty"`
	Session string    `json:"session"`
	Tool    string    `json:"tool"`
	Summary string    `json:"summary"`
	Asker   string    `json:"asker,omitempty"`
	Since   time.Time `json:"since"`
}

// Decision is how a tool-use question was decided.
type Decision struct {
	Session string    `json:"session"`
	Tool    string    `json:"tool"`
	Summary string    `json:"summary"`
	Outcome string    `json:"outcome"` // allowed | always allowed | denied
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// UnlistedGroup is a group chat refused because access.groups does not
// list it.
type UnlistedGroup struct {
	// ID is the entry to add to access.groups.
	ID string `json:"id"`
	// Title is the chat's title, when known.
	Title string `json:"title,omitempty"`
	// Messages counts its messages since the host started.
	Messages int `json:"messages"`
	// LastSeen is when the last one came.
	LastSeen time.Time `json:"last_seen"`
}

// Reload is the outcome of one reload of the configuration.
type Reload struct {
	// At is when the reload was asked for.
	At time.Time `json:"at"`
	// Refused reports that the file was refused: the running set was
	// kept as it was.
	Refused bool `json:"refused"`
	// Reason is why it was refused: the diagnostics at file:line:col, as
	// `clawhost validate` prints them (no sensitive value). Empty when it
	// was applied.
	Reason string `json:"reason,omitempty"`
	// Changed names every setting an applied reload changed (`agent.model`,
	// `access.owners`, `plugin "tg"`), those in NeedsRestart included.
	Changed []string `json:"changed,omitempty"`
	// NeedsRestart names the settings of an applied reload that changed
	// but take effect only when clawhost restarts (see docs/operations.md,
	// "Reloads and signals").
	NeedsRestart []string `json:"needs_restart,omitempty"`
}

// Agent is one configured agent (an agent block).
type Agent struct {
	// ID is the agent's id ("main" for the default).
	ID string `json:"id"`
	// Workspace is where its claude works.
	Workspace string `json:"workspace"`
	// Chats are what it is bound to (agent.chats); the default agent
	// serves every chat no agent binds.
	Chats []string `json:"chats,omitempty"`
	// Switchable: every chat may switch to it with /agent.
	Switchable bool `json:"switchable,omitempty"`
	// Warm counts its warm claude processes.
	Warm int `json:"warm"`
}

// Session is one conversation's session.
type Session struct {
	// Key is the session key; Name who it is with (a group's title, a
	// sender's name), "" unknown.
	Key  string `json:"key"`
	Name string `json:"name,omitempty"`
	// Agent is the agent the session is of (its key names it).
	Agent string `json:"agent,omitempty"`
	// SessionID is the claude session uuid; empty before the first turn.
	SessionID string `json:"session_id,omitempty"`
	// Model is the model of the last turn, if known.
	Model string `json:"model,omitempty"`
	// LastActivity is when the session last received or sent a message.
	LastActivity time.Time `json:"last_activity"`
	// Turns counts finished agent turns.
	Turns int64 `json:"turns"`
	// InputTokens and OutputTokens sum the turns' token usage.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CostUSD sums the turns' reported cost.
	CostUSD float64 `json:"cost_usd"`
	// Queued is the number of messages waiting for this session.
	Queued int `json:"queued"`
	// Running reports whether a turn is running now.
	Running bool `json:"running"`
	// Card is what the running turn's card says now, on one line; ""
	// when no turn runs with a card.
	Card string `json:"card,omitempty"`
	// Warm: a claude process is kept warm for it.
	Warm bool `json:"warm,omitempty"`
	// Command opens the session in a terminal (session.TerminalCommand);
	// "" before its first turn.
	Command string `json:"command,omitempty"`
	// LastTurn says how the last turn since the start got to claude: how
	// long it waited for a slot, whether claude was started and why; ""
	// when none ran.
	LastTurn string `json:"last_turn,omitempty"`
}

// Warm is one warm claude process of the runner.
type Warm struct {
	// Key is the session key the process serves.
	Key string `json:"key"`
	// Agent is the agent the process is of.
	Agent string `json:"agent,omitempty"`
	// PID is the process id.
	PID int `json:"pid"`
	// RSS is the process's resident set in bytes; 0 when unknown.
	RSS int64 `json:"rss_bytes,omitempty"`
	// Private is the part of RSS only this process holds; 0 when unknown.
	Private int64 `json:"private_bytes,omitempty"`
}

// ErrorEntry is one recent warning or error.
type ErrorEntry struct {
	// At is when it was logged.
	At time.Time `json:"at"`
	// Level is "warn" or "error".
	Level string `json:"level,omitempty"`
	// Source is the name of the logger that logged it, e.g. "pluginhost.tg".
	Source string `json:"source"`
	// Message is the log message followed by its key=value arguments,
	// secrets redacted.
	Message string `json:"message"`
}

// Pairing approves senders waiting for access under dm_policy = "pairing".
type Pairing interface {
	// PendingPairings returns the codes not yet approved nor expired.
	// It is called per GET /pairing; an empty result means none pending.
	PendingPairings(ctx context.Context) ([]PairingCode, error)
	// ApprovePairing approves code and returns the allow-list entry it
	// created, "<instance>:<sender id>". The error wraps [ErrNotFound] for
	// an unknown code, [ErrExpired] for an expired one and
	// [ErrTooManyAttempts] while guessing is locked out.
	ApprovePairing(ctx context.Context, code string) (entry string, err error)
	// ApprovedSenders returns the senders approved through pairing,
	// oldest approval first. It is called per GET /pairing/approved.
	ApprovedSenders(ctx context.Context) ([]ApprovedSender, error)
	// RevokeSender withdraws the approval of entry ("<instance>:<sender
	// id>") and drops the sender's schedules. It is called per POST
	// /pairing/revoke; a sender who was not approved is not an error
	// (Found false).
	RevokeSender(ctx context.Context, entry string) (Revocation, error)
}

// ApprovedSender is a sender an owner approved through pairing.
type ApprovedSender struct {
	// Entry is the sender, "<instance>:<sender id>".
	Entry string `json:"entry"`
	// ApprovedAt is when; ApprovedBy who ("<instance>:<id>" of an owner,
	// "cli" or "admin"), empty when not recorded.
	ApprovedAt time.Time `json:"approved_at"`
	ApprovedBy string    `json:"approved_by,omitempty"`
	// ExpiresAt is when the approval stops counting (access.pairing_ttl);
	// zero when it does not expire.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Honoured is false when the approval does not admit the sender now:
	// expired, or dm_policy is not "pairing".
	Honoured bool `json:"honoured"`
}

// Revocation is what POST /pairing/revoke did.
type Revocation struct {
	// Entry is the sender revoked.
	Entry string `json:"entry"`
	// Found: the sender had been approved through pairing.
	Found bool `json:"found"`
	// Schedules counts the sender's schedules dropped.
	Schedules int `json:"schedules"`
	// Listed names the configuration lists that still admit the sender
	// ("owners", "allow_from").
	Listed []string `json:"listed,omitempty"`
}

// PairingCode is one pending pairing request.
type PairingCode struct {
	// Instance is the plugin instance the sender wrote to.
	Instance string `json:"instance"`
	// SenderID is the sender's platform id.
	SenderID string `json:"sender_id"`
	// SenderName and SenderUsername are who the platform says asks
	// (display name, @username without the @); "" when it said nothing.
	SenderName     string `json:"sender_name,omitempty"`
	SenderUsername string `json:"sender_username,omitempty"`
	// Code is the code the sender was given.
	Code string `json:"code"`
	// CreatedAt and ExpiresAt bound the code's validity.
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Person is the sender's name as the platform gave it: "Dave Null
// (@dave)", "Dave Null", "@dave", or "" when it gave none.
func (c PairingCode) Person() string {
	switch {
	case c.SenderName != "" && c.SenderUsername != "":
		return c.SenderName + " (@" + c.SenderUsername + ")"
	case c.SenderUsername != "":
		return "@" + c.SenderUsername
	}
	return c.SenderName
}

// Who is the sender as a person reads it: "Dave Null (@dave) tg:42", or
// just "tg:42" when the platform gave no name.
func (c PairingCode) Who() string {
	if p := c.Person(); p != "" {
		return p + " " + c.Instance + ":" + c.SenderID
	}
	return c.Instance + ":" + c.SenderID
}

// Retrier performs the retry a plugin that needs attention offers.
type Retrier interface {
	// Retry calls the instance's plugin Retry. It is called per POST
	// /plugins/{instance}/retry with a bounded ctx. The error wraps
	// [ErrUnknownInstance] or [ErrNoRetry] to select 404 or 409; any other
	// error (the plugin's) is answered 502 with its text.
	Retry(ctx context.Context, instance string) error
}

// Errors a [Retrier] wraps to select the HTTP status of a retry.
var (
	ErrUnknownInstance = errors.New("no such plugin instance")
	ErrNoRetry         = errors.New("the plugin offers no retry now")
)

// Errors a [Pairing] wraps to select the HTTP status of /pairing/approve
// and /pairing/revoke.
var (
	// ErrBadEntry: not "<instance>:<sender id>" of a known instance (400).
	ErrBadEntry = errors.New("not a sender entry \"<instance>:<sender id>\"")
	ErrNotFound = errors.New("pairing code not found")
	ErrExpired  = errors.New("pairing code expired")
	// ErrTooManyAttempts: too many wrong codes were tried recently (429).
	ErrTooManyAttempts = errors.New("too many wrong pairing codes; try again later")
)
