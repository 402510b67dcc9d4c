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
//	GET  /                 the operator's page: usage charts, the audit
//	                       search, and the live status (refreshed in place
//	                       every 5 s; without JavaScript the page reloads)
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
//	GET  /sessions.json                   the stored sessions (clawhost sessions)
//	                       the audit trail, newest first (404 without Reports)
//	GET  /usage/daily.json?by=person|chat|agent&days=N&person=&chat=&agent=
//	GET  /usage/daily.csv  the usage charts' numbers: cost and turns per day
//	                       and group, the budgets, who is near one
//	GET  /audit/search.json?q=&who=&chat=&kind=&since=&until=&page=&per=
//	                       one page of the audit rows a search selects
//	GET  /assets/{name}    the page's embedded script, styles and uPlot
//	GET  /sessions/export?session=KEY
//	                       the session's export (/export's Markdown) as a
//	                       download (404 without Exporter)
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
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// DefaultListen is the address used when [Options.Listen] is empty.
const DefaultListen = "127.0.0.1:8791"

// DefaultSnapshotTimeout bounds how long a request waits for the
// [Source] when [Options.SnapshotTimeout] is zero.
const DefaultSnapshotTimeout = 3 * time.Second

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
	// Reports serves /usage.json, /audit.json and /sessions.json; nil
	// answers 404.
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
	// Location is where the usage charts' days begin (messages.timezone);
	// nil means time.Local.
	Location *time.Location
	// Budgets returns the budgets in force (a reload changes them), drawn
	// on the usage charts; nil: none.
	Budgets func() []Budget
	// Exporter serves GET /sessions/export; nil answers 404.
	Exporter Exporter
	// RuntimeDir, when set, gets [RuntimeFile] naming the bound address
	// before the first request is served: a client that reached the
	// endpoint can always find it again from data_dir.
	RuntimeDir string
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
		loc:      cmp.Or(opts.Location, time.Local),
		budgets:  opts.Budgets,
		exporter: opts.Exporter,
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
	s.recordRuntime(opts.RuntimeDir, opts.TLSCert)
	go func() {
		defer close(s.served)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin endpoint stopped", "error", err)
		}
	}()
	log.Info("admin endpoint listening", "address", s.Addr())
	return s, nil
}

// recordRuntime writes [RuntimeFile] to dir ("" none) before the first
// request is served.
func (s *Server) recordRuntime(dir, tlsCert string) {
	if dir == "" {
		return
	}
	if err := WriteRuntime(dir, Runtime{Listen: s.Addr(), TLSCert: tlsCert, PID: os.Getpid()}); err != nil {
		s.log.Warn("writing "+RuntimeFile+" failed: clawhost status cannot find this host while the file on disk does not load", "error", err)
	}
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
