// Package admin serves clawhost's local admin HTTP endpoint: a status page
// for humans, the same status as JSON, a health check, the Prometheus
// metrics and the approval of pending pairing codes.
//
// It is configured by
//
//	admin {
//	  listen = "127.0.0.1:8791"
//	}
//
// and listens on loopback by default.
//
// Authentication: every route needs the admin token — loopback included,
// since every local account can connect to loopback. The host generates
// it at its first start (32 random bytes, hex) into <data_dir>/admin.token
// (0600, see [LoadOrCreateToken]) and reuses it; `clawhost status`,
// `pairing` and `retry` read that file. A request proves it holds the
// token by one of:
//
//   - "Authorization: Bearer <token>" (the CLI, scripts);
//   - "?token=<token>" on any URL (the link printed at start): the answer
//     sets an HttpOnly, SameSite=Strict cookie holding an HMAC of the
//     token and redirects to the same URL without the query, so the token
//     leaves the address bar and the history;
//   - that cookie (the browser afterwards).
//
// Comparisons are constant-time; anything else is answered 401 with a
// short text. A POST (approve, retry) authenticated by the cookie alone
// must also come from the status page itself (Sec-Fetch-Site:
// same-origin, or an Origin naming this host): the browser sends the
// cookie on its own, so the cookie cannot tell the operator's click from
// another site's form. The CLI sends the header and is not concerned.
//
// /healthz is the one route open without the token: it answers 200 "ok"
// or 503 "unavailable" and nothing else. With the token it also lists the
// instances not ready, their errors and what to do, and says when no
// enabled plugin is a channel.
//
// Binding beyond loopback without TLS is refused ([Start] fails; `clawhost
// validate` reports it at admin.listen): the token would cross the
// network in clear. With Options.TLSCert and TLSKey the endpoint serves
// HTTPS on any address.
//
// Endpoints:
//
//	GET  /                 HTML status page, refreshes itself every 5 s
//	GET  /status.json      the [Snapshot] as JSON
//	GET  /healthz          200 "ok" when every plugin is ready and one is a
//	                       channel, else 503
//	GET  /metrics          the Prometheus handler (404 when none)
//	GET  /pairing          pending pairing codes as JSON (404 without Pairing)
//	POST /pairing/approve  approve a code: form or JSON {"code": "..."}
//	POST /plugins/{instance}/retry
//	                       call the plugin's Retry (the button of a plugin
//	                       that needs attention; 404 without Retrier)
//	POST /approvals/{id}/allow|deny, /sessions/stop, /plugins/{instance}/restart,
//	POST /pairing/deny     the status page's actions (404 without Actions)
//	POST /doctor           run clawhost doctor's checks in the background
//	                       (the page's "Run checks"; 404 without a DoctorRunner)
//	POST /reload           reload the configuration file as SIGHUP does;
//	                       the outcome as JSON (404 without Reloader)
//	GET  /usage.json?since=RFC3339
//	                       the usage ledger's rows (404 without Reports)
//	GET  /audit.json?since=RFC3339&kind=K
//	                       the audit trail, newest first (404 without Reports)
//
// A plugin that needs attention is shown with what it reported: its message
// as what to do, a QR payload as an inline PNG image (a data: URI, so the
// page's refresh every 5 s follows a rotated code), a pairing code as text,
// a link as a link, the expiry, and a button when it offers a retry.
//
// Two browser guards protect the loopback endpoint from web pages the
// operator visits: a request whose Host header is a DNS name other than
// "localhost" or the configured listen host is refused (DNS rebinding), and
// a cross-origin POST is refused (Sec-Fetch-Site / Origin, see
// [net/http.CrossOriginProtection]). Host headers that are IP literals are
// accepted: a browser only sends one when the page itself was loaded from
// that address, so they cannot carry a rebinding attack, and they let an
// operator who deliberately bound the endpoint to 0.0.0.0 reach it by IP.
//
// When hosts share one database (storage { engine = "postgres" }) each
// serves its own endpoint, and its page also lists every host with how its
// lease stands (an expired one as expired: the others take its work over)
// and the other leases by holder; see [Cluster].
//
// The package also provides [ErrorRing], an hclog sink keeping the recent
// warnings and errors that the status page shows.
package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultListen is the address used when [Options.Listen] is empty.
const DefaultListen = "127.0.0.1:8791"

// DefaultSnapshotTimeout bounds how long a request waits for the
// [Source] when [Options.SnapshotTimeout] is zero.
const DefaultSnapshotTimeout = 3 * time.Second

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

// Options configures [Start].
type Options struct {
	// Listen is the TCP address to listen on; empty means DefaultListen.
	// Port 0 picks a free port (see [Server.Addr]). An address beyond
	// loopback needs TLSCert and TLSKey.
	Listen string
	// Token is the secret every route but /healthz requires (see the
	// package doc); required.
	Token string
	// TokenHint says where the token is kept, for the 401 answer and the
	// log (e.g. "the token is in /srv/clawhost/data/admin.token").
	TokenHint string
	// TLSCert and TLSKey are PEM files; when both are set the endpoint
	// serves HTTPS. When neither file exists, Start makes a self-signed
	// pair there (0600) and logs its SHA-256 fingerprint.
	TLSCert, TLSKey string
	// Source provides the state; required.
	Source Source
	// Metrics serves /metrics; nil answers 404.
	Metrics http.Handler
	// Pairing serves /pairing and /pairing/approve; nil answers 404.
	Pairing Pairing
	// Reports serves /usage.json and /audit.json; nil answers 404.
	Reports Reports
	// Reloader serves POST /reload; nil answers 404.
	Reloader Reloader
	// Actions serve the page's buttons (approvals, stop, restart, deny a
	// pairing); nil answers 404.
	Actions Actions
	// Retrier serves POST /plugins/{instance}/retry; nil answers 404.
	Retrier Retrier
	// Attach serves GET /attach, the websocket `clawhost channel` attaches
	// a terminal claude through (core/attach); nil answers 404. It needs
	// the token in the Authorization header (or, from a browser, the
	// cookie and the same origin).
	Attach http.Handler
	// Pprof serves net/http/pprof's profiles under /debug/pprof/; off:
	// 404.
	Pprof bool
	// Logger receives the server's logs; nil discards them.
	Logger hclog.Logger
	// SnapshotTimeout bounds each call to Source.Snapshot; zero means
	// DefaultSnapshotTimeout.
	SnapshotTimeout time.Duration
	// Now is the clock used for ages and uptimes on the status page; nil
	// means time.Now.
	Now func() time.Time
}

// Server is a running admin endpoint.
type Server struct {
	ln        net.Listener
	tls       bool
	srv       *http.Server
	log       hclog.Logger
	served    chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Start listens on opts.Listen and serves the admin endpoint in the
// background until [Server.Close]. It fails when the address cannot be
// bound (the error names it, e.g. when the port is in use).
func Start(opts Options) (*Server, error) {
	if opts.Source == nil {
		return nil, errors.New("start admin: no status source")
	}
	if len(opts.Token) < 16 {
		return nil, errors.New("start admin: no token")
	}
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return nil, errors.New("start admin: TLS needs both a certificate and a key")
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	var tlsConfig *tls.Config
	if opts.TLSCert != "" {
		made, err := ensureCertificate(opts.TLSCert, opts.TLSKey, time.Now())
		if err != nil {
			return nil, fmt.Errorf("start admin: %w", err)
		}
		if made != "" {
			opts.Logger.Info("made a self-signed certificate for the admin endpoint", "cert", opts.TLSCert, "sha256", made)
		}
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("start admin: TLS: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if opts.Listen == "" {
		opts.Listen = DefaultListen
	}
	if opts.SnapshotTimeout <= 0 {
		opts.SnapshotTimeout = DefaultSnapshotTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	configuredHost, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("start admin: listen address %q: %w", opts.Listen, err)
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("start admin: listen on %s: %w", opts.Listen, err)
	}
	log := opts.Logger
	if !isLoopbackListener(ln) && tlsConfig == nil {
		_ = ln.Close()
		return nil, fmt.Errorf("start admin: %s is not a loopback address and no TLS certificate is set: the token would cross the network in clear (set admin.tls_cert and admin.tls_key, or listen on 127.0.0.1)", opts.Listen)
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	h := &handler{
		source:   opts.Source,
		metrics:  opts.Metrics,
		pairing:  opts.Pairing,
		reports:  opts.Reports,
		reloader: opts.Reloader,
		actions:  opts.Actions,
		retrier:  opts.Retrier,
		attach:   opts.Attach,
		pprof:    opts.Pprof,
		log:      log,
		timeout:  opts.SnapshotTimeout,
		now:      opts.Now,
		hosts:    allowedHosts(configuredHost),
		auth:     newAuthenticator(opts.Token, opts.TokenHint),
	}
	s := &Server{
		ln:  ln,
		tls: tlsConfig != nil,
		log: log,
		srv: &http.Server{
			Handler:           h.routes(),
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
		},
		served: make(chan struct{}),
	}
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin endpoint stopped", "error", err)
		}
	}()
	log.Info("admin endpoint listening", "address", s.Addr())
	return s, nil
}

// URL is the status page's address, without the token, e.g.
// "http://127.0.0.1:8791/"; an unspecified listen host is shown as
// localhost.
func (s *Server) URL() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(s.Addr())
	if err != nil {
		return scheme + "://" + s.Addr() + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/"
}

// Addr returns the address the server listens on, with the actual port
// when Listen asked for port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting connections and waits for the requests in flight
// until ctx is done; then it closes the remaining connections and returns
// ctx's error. Calling Close again returns the first result.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		err := s.srv.Shutdown(ctx)
		if err != nil {
			_ = s.srv.Close()
			err = fmt.Errorf("close admin endpoint: %w", err)
		}
		<-s.served
		s.closeErr = err
	})
	return s.closeErr
}

// isLoopbackListener reports whether ln accepts only loopback connections.
func isLoopbackListener(ln net.Listener) bool {
	addr, ok := ln.Addr().(*net.TCPAddr)
	return ok && addr.IP.IsLoopback()
}
