package admin

import (
	"context"
	"net/http"
	"slices"
	"time"
)

// Reports reads the usage ledger and the audit trail for `clawhost usage`
// and `clawhost audit` while the host runs (SQLite's database is the
// running host's alone).
type Reports interface {
	// Usage returns the ledger's rows since then, oldest first.
	Usage(ctx context.Context, since time.Time) ([]UsageRecord, error)
	// Audit returns the trail's rows since then (zero: all), newest
	// first; kind "" is every kind.
	Audit(ctx context.Context, since time.Time, kind string) ([]AuditEntry, error)
	// Sessions returns the stored sessions (`clawhost sessions`), the
	// most recently used first.
	Sessions(ctx context.Context) ([]SessionRow, error)
}

// SessionRow is one chat's stored session (store.Session), the parts
// `clawhost sessions` shows.
type SessionRow struct {
	Key             string    `json:"key"`
	ClaudeSessionID string    `json:"claude_session"`
	Turns           int64     `json:"turns"`
	Last            time.Time `json:"last"`
	// Name is the session's /name ("" none).
	Name string `json:"name,omitempty"`
}

// UsageRecord is one row of the usage ledger (store.TurnUsage).
type UsageRecord struct {
	At                  time.Time `json:"at"`
	Agent               string    `json:"agent"`
	Instance            string    `json:"instance"`
	ChatID              string    `json:"chat_id"`
	Sender              string    `json:"sender"`
	Model               string    `json:"model,omitempty"`
	InputTokens         int64     `json:"input_tokens"`
	OutputTokens        int64     `json:"output_tokens"`
	CacheReadTokens     int64     `json:"cache_read_tokens"`
	CacheCreationTokens int64     `json:"cache_creation_tokens"`
	CostUSD             float64   `json:"cost_usd"`
	// Estimate: CostUSD is an estimate (store.TurnUsage.Estimate).
	Estimate   bool   `json:"estimate,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
}

// since reads the since query parameter (RFC 3339; absent: zero).
func since(r *http.Request) (time.Time, bool) {
	s := r.URL.Query().Get("since")
	if s == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// reportsSince reads a report's ?since for r; false when it answered
// instead: 404 (unavailable) without the reports, 400 when since is not a
// time.
func (h *handler) reportsSince(w http.ResponseWriter, r *http.Request, unavailable string) (time.Time, bool) {
	from, ok := since(r)
	switch {
	case h.reports == nil:
		writeJSON(w, http.StatusNotFound, errorBody{unavailable})
		return time.Time{}, false
	case !ok:
		writeJSON(w, http.StatusBadRequest, errorBody{"since is not an RFC 3339 time"})
		return time.Time{}, false
	}
	return from, true
}

// usageJSON serves GET /usage.json?since=RFC3339: the ledger's rows.
func (h *handler) usageJSON(w http.ResponseWriter, r *http.Request) {
	from, ok := h.reportsSince(w, r, "usage is not available")
	if !ok {
		return
	}
	rows, err := h.reports.Usage(r.Context(), from)
	writeRows(h, w, rows, err, "read the usage ledger", "reading the usage ledger failed")
}

// auditJSON serves GET /audit.json?since=RFC3339&kind=K: the trail.
func (h *handler) auditJSON(w http.ResponseWriter, r *http.Request) {
	from, ok := h.reportsSince(w, r, "the audit trail is not available")
	if !ok {
		return
	}
	rows, err := h.reports.Audit(r.Context(), from, r.URL.Query().Get("kind"))
	writeRows(h, w, rows, err, "read the audit trail", "reading the audit trail failed")
}

// sessionsJSON serves GET /sessions.json: the stored sessions.
func (h *handler) sessionsJSON(w http.ResponseWriter, r *http.Request) {
	if h.reports == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"sessions are not available"})
		return
	}
	rows, err := h.reports.Sessions(r.Context())
	writeRows(h, w, rows, err, "read the sessions", "reading the sessions failed")
}

// Usage is the usage ledger as the status page shows it: what turns cost
// per day (the last 7) and, over the last 30 days, per person and per
// agent.
type Usage struct {
	Days   []UsageRow `json:"days"`
	People []UsageRow `json:"people"`
	Agents []UsageRow `json:"agents"`
}

// UsageRow is one group's sum: a day ("2026-11-25"), a person ("tg:5",
// "schedule:daily", "heartbeat") or an agent.
type UsageRow struct {
	Key          string  `json:"key"`
	Turns        int     `json:"turns"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	// EstimatedUSD is the part of CostUSD that is an estimate (stopped
	// turns priced from their tokens, migrated rows).
	EstimatedUSD float64 `json:"estimated_usd,omitempty"`
}

// AuditEntry is one row of the audit trail (store.AuditEvent).
type AuditEntry struct {
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Actor    string    `json:"actor"`
	Instance string    `json:"instance,omitempty"`
	ChatID   string    `json:"chat_id,omitempty"`
	Chat     string    `json:"chat,omitempty"`
	Subject  string    `json:"subject"`
	Decision string    `json:"decision"`
	Detail   string    `json:"detail,omitempty"`
}

// teamSections are the status page's usage and audit sections.
const teamSections = `{{with .Snap.Usage}}<h2>Usage</h2>
<p class="meta">What turns cost, each its own (the usage ledger; <code>clawhost usage</code> and <code>/usage</code> read it too). Estimated: stopped turns priced from their tokens, and rows from before costs were per turn.</p>
<table>
<thead><tr><th>day</th><th>turns</th><th>cost</th><th>input</th><th>output</th></tr></thead>
<tbody>
{{range .Days}}<tr><td>{{.Key}}</td><td class="n">{{.Turns}}</td><td class="n">{{cost .CostUSD}}{{if .EstimatedUSD}} <span class="meta">(~{{cost .EstimatedUSD}} estimated)</span>{{end}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td></tr>
{{end}}</tbody>
</table>
{{if .People}}<table>
<thead><tr><th>person (30 days)</th><th>turns</th><th>cost</th><th>input</th><th>output</th></tr></thead>
<tbody>
{{range .People}}<tr><td><code>{{.Key}}</code></td><td class="n">{{.Turns}}</td><td class="n">{{cost .CostUSD}}{{if .EstimatedUSD}} <span class="meta">(~{{cost .EstimatedUSD}} estimated)</span>{{end}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Agents}}<table>
<thead><tr><th>agent (30 days)</th><th>turns</th><th>cost</th><th>input</th><th>output</th></tr></thead>
<tbody>
{{range .Agents}}<tr><td>{{.Key}}</td><td class="n">{{.Turns}}</td><td class="n">{{cost .CostUSD}}{{if .EstimatedUSD}} <span class="meta">(~{{cost .EstimatedUSD}} estimated)</span>{{end}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{end}}
{{if .Snap.Audit}}<h2>Latest in the audit trail</h2>
<p class="meta">The latest decisions about who may do what (<a href="#audit">search them all</a> below, or <code>clawhost audit</code>; kept for <code>audit { keep }</code>).</p>
<table>
<thead><tr><th>when</th><th>kind</th><th>by</th><th>chat</th><th>about</th><th>decision</th><th>detail</th></tr></thead>
<tbody>
{{range .Snap.Audit}}<tr><td class="n">{{$.Age .At}} ago</td><td>{{.Kind}}</td><td><code>{{.Actor}}</code></td><td><code>{{.Chat}}</code></td><td><code>{{.Subject}}</code></td><td>{{.Decision}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
`

// AgentHealth is the agent item of the health: the claude CLI found, its
// version, and whether it can work (not when it is missing or refused its
// credentials on the last turn).
type AgentHealth struct {
	Ready bool `json:"ready"`
	// State is "ready", "missing" or "not_logged_in".
	State   string `json:"state"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Tested  string `json:"tested_version,omitempty"`
	// Auth is how claude is logged in ("api_key", "oauth_token", …) as
	// `claude auth status` says.
	Auth      string    `json:"auth,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since,omitempty"`
	// Action is what to do (also a note when the version differs from the
	// tested one).
	Action string `json:"action,omitempty"`
}

// StoreHealth is the store item of the health: "degraded" from a failed
// write until the next one succeeds.
type StoreHealth struct {
	State     string    `json:"state"`
	Errors    int       `json:"errors"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since,omitempty"`
	Action    string    `json:"action,omitempty"`
}

// ChannelHealth is the channels item of the health: whether an enabled
// plugin serves a chat platform. A host with none takes no message in, so
// it is not healthy however well the rest runs.
type ChannelHealth struct {
	// State is "ok" when an enabled plugin is a channel, or may be one
	// (it has not described itself yet), and "none" when none is.
	State string `json:"state"`
	// LastError says what is wrong when State is "none".
	LastError string `json:"last_error,omitempty"`
	// Action is what to do when State is "none".
	Action string `json:"action,omitempty"`
}

// Channel states.
const (
	ChannelsOK   = "ok"
	ChannelsNone = "none"
)

// NoChannelAction is what to do when no enabled plugin is a channel.
const NoChannelAction = `enable a channel plugin in config.hcl: a plugin block with source = "telegram", "discord", "slack", "whatsapp" or "webchat" (or a third party's) whose enabled is true — clawhost init writes one, and the disabled ones are listed with why — then clawhost reload`

// ChannelsOf is the channels item of the enabled plugins: "none" when no
// plugin is enabled, or every one has described itself and none is a
// channel. A plugin that has not described itself yet (starting, its
// binary missing: no kinds) may be one; its own state says what is wrong.
func ChannelsOf(plugins []Plugin) *ChannelHealth {
	for _, p := range plugins {
		if len(p.Kinds) == 0 || slices.Contains(p.Kinds, "channel") {
			return &ChannelHealth{State: ChannelsOK}
		}
	}
	return &ChannelHealth{State: ChannelsNone, LastError: "no channel is configured: no enabled plugin serves a chat platform, so no message can reach the agent", Action: NoChannelAction}
}

// healthSections are the status page's channels, agent and store lines.
const healthSections = `{{with .Snap.Channels}}{{if eq .State "none"}}<div class="bad"><p><b>{{.LastError}}.</b> What to do: {{.Action}}.</p></div>
{{end}}{{end}}{{with .Snap.Agent}}{{if .Ready}}<p class="meta">claude CLI: <code>{{.Path}}</code>{{if .Version}}, version {{.Version}}{{end}}{{if .Action}} — {{.Action}}{{end}}</p>
{{else}}<div class="bad"><p><b>The agent cannot work: {{.LastError}}.</b> {{.Action}}.</p></div>
{{end}}{{end}}{{with .Snap.Store}}{{if eq .State "degraded"}}<div class="bad"><p><b>The store is degraded since {{$.Stamp .Since}}: {{.LastError}}.</b> {{.Action}}.</p></div>
{{end}}{{end}}`

// Reloader reloads the configuration file (POST /reload, `clawhost
// reload`): what SIGHUP does, answered with the outcome.
type Reloader interface {
	Reload() Reload
}

// reload serves POST /reload: the file reloaded as on SIGHUP, answered
// with the outcome (refused with its diagnostics, or applied with what
// waits for a restart).
func (h *handler) reload(w http.ResponseWriter, r *http.Request) {
	if h.reloader == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"reload is not available"})
		return
	}
	writeJSON(w, http.StatusOK, h.reloader.Reload())
}

// fromPage: the request is the status page's form (from=page), answered
// by going back to the page; programs get JSON.
func fromPage(r *http.Request) bool { return r.PostForm.Get("from") == "page" }

// pairingSection is the status page's pending and approved senders.
const pairingSection = `{{if .Snap.PendingPairings}}<h2 id="pairing">Waiting for an owner</h2>
<p class="meta">Unknown senders who asked to talk to the bot. Owners were asked in their own chats; approve here, with <code>/approve CODE</code>, or <code>clawhost pairing approve CODE</code>.</p>
<table>
<thead><tr><th>sender</th><th>code</th><th>expires</th><th></th></tr></thead>
<tbody>
{{range .Snap.PendingPairings}}<tr><td>{{with .SenderName}}{{.}} {{end}}{{with .SenderUsername}}@{{.}} {{end}}<code>{{.Instance}}:{{.SenderID}}</code></td><td><code>{{.Code}}</code></td><td class="n">{{$.Stamp .ExpiresAt}}</td><td><form method="post" action="/pairing/approve"><input type="hidden" name="code" value="{{.Code}}"><input type="hidden" name="from" value="page"><button type="submit">Approve</button></form><form method="post" action="/pairing/deny"><input type="hidden" name="code" value="{{.Code}}"><input type="hidden" name="from" value="page"><button type="submit">Deny</button></form></td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Snap.ApprovedSenders}}<h2>Approved senders</h2>
<table>
<thead><tr><th>sender</th><th>approved</th><th>by</th><th>admitted now</th></tr></thead>
<tbody>
{{range .Snap.ApprovedSenders}}<tr><td><code>{{.Entry}}</code></td><td class="n">{{$.Stamp .ApprovedAt}}</td><td>{{.ApprovedBy}}</td><td>{{if .Honoured}}yes{{else}}no{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
`

// Actions are what the status page can do (behind the admin token; a
// POST carrying only the cookie must come from the page itself).
type Actions interface {
	// DecideApproval allows or denies the waiting tool-use question id;
	// false when it is no longer waiting.
	DecideApproval(id string, allow bool) bool
	// StopSession stops the session's running turn and drops its waiting
	// messages (/stop); false when nothing ran or waited.
	StopSession(key string) bool
	// RestartPlugin restarts the instance's plugin process.
	RestartPlugin(instance string) error
	// DenyPairing drops the pending pairing request of code; false when
	// there is none.
	DenyPairing(ctx context.Context, code string) (bool, error)
}

// act answers a page action: back to the page (from=page), else JSON.
func (h *handler) act(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if fromPage(r) && status == http.StatusOK {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if status != http.StatusOK {
		writeJSON(w, status, errorBody{msg})
		return
	}
	writeJSON(w, status, struct {
		Done string `json:"done"`
	}{msg})
}

// decideApproval serves POST /approvals/{id}/allow and /deny.
func (h *handler) decideApproval(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if h.actions == nil {
		h.act(w, r, http.StatusNotFound, "actions are not available")
		return
	}
	id, verb := r.PathValue("id"), r.PathValue("verb")
	if verb != "allow" && verb != "deny" {
		h.act(w, r, http.StatusNotFound, "allow or deny")
		return
	}
	if !h.actions.DecideApproval(id, verb == "allow") {
		h.act(w, r, http.StatusNotFound, "that question is no longer waiting")
		return
	}
	h.log.Info("tool approval decided on the status page", "id", id, "decision", verb)
	h.act(w, r, http.StatusOK, verb)
}

// stopSession serves POST /sessions/stop (form or JSON field "session").
func (h *handler) stopSession(w http.ResponseWriter, r *http.Request) {
	if h.actions == nil {
		h.act(w, r, http.StatusNotFound, "actions are not available")
		return
	}
	key, err := readField(w, r, "session")
	if err != nil {
		h.act(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if !h.actions.StopSession(key) {
		h.act(w, r, http.StatusConflict, "nothing runs or waits in that session")
		return
	}
	h.log.Info("session stopped on the status page", "session", key)
	h.act(w, r, http.StatusOK, "stopped")
}

// restartPlugin serves POST /plugins/{instance}/restart.
func (h *handler) restartPlugin(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if h.actions == nil {
		h.act(w, r, http.StatusNotFound, "actions are not available")
		return
	}
	instance := r.PathValue("instance")
	if err := h.actions.RestartPlugin(instance); err != nil {
		h.act(w, r, http.StatusConflict, err.Error())
		return
	}
	h.log.Info("plugin restarted from the status page", "instance", instance)
	h.act(w, r, http.StatusOK, "restarting")
}

// denyPairing serves POST /pairing/deny (form or JSON field "code").
func (h *handler) denyPairing(w http.ResponseWriter, r *http.Request) {
	if h.actions == nil {
		h.act(w, r, http.StatusNotFound, "actions are not available")
		return
	}
	code, err := readField(w, r, "code")
	if err != nil {
		h.act(w, r, http.StatusBadRequest, err.Error())
		return
	}
	found, err := h.actions.DenyPairing(r.Context(), code)
	switch {
	case err != nil:
		h.log.Error("deny pairing", "error", err)
		h.act(w, r, http.StatusInternalServerError, "denying failed")
	case !found:
		h.act(w, r, http.StatusNotFound, ErrNotFound.Error())
	default:
		h.act(w, r, http.StatusOK, "denied")
	}
}
