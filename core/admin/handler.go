package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// maxApproveBody bounds the body of POST /pairing/approve.
const maxApproveBody = 4 << 10

// handler serves the endpoints of one [Server].
type handler struct {
	source   Source
	metrics  http.Handler
	pairing  Pairing
	reports  Reports
	reloader Reloader
	actions  Actions
	retrier  Retrier
	attach   http.Handler
	pprof    bool
	log      hclog.Logger
	timeout  time.Duration
	now      func() time.Time
	// hosts are the DNS names accepted in the Host header (lower case);
	// IP literals are always accepted.
	hosts map[string]bool
	auth  *authenticator
	// loc is where the usage charts' days begin; budgets are drawn on
	// them.
	loc      *time.Location
	budgets  func() []Budget
	exporter Exporter
}

// routes returns the complete handler: host guard, cross-origin guard,
// security headers, the token check and the routes.
func (h *handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /status.json", h.statusJSON)
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /metrics", h.serveMetrics)
	mux.HandleFunc("GET /pairing", h.pendingPairings)
	mux.HandleFunc("POST /pairing/approve", h.approvePairing)
	mux.HandleFunc("GET /pairing/approved", h.approvedSenders)
	mux.HandleFunc("POST /pairing/revoke", h.revokeSender)
	mux.HandleFunc("POST /plugins/{instance}/retry", h.retry)
	mux.HandleFunc("GET /usage.json", h.usageJSON)
	mux.HandleFunc("GET /audit.json", h.auditJSON)
	mux.HandleFunc("GET /usage/daily.json", h.usageDaily)
	mux.HandleFunc("GET /usage/daily.csv", h.usageDaily)
	mux.HandleFunc("GET /audit/search.json", h.auditSearch)
	mux.HandleFunc("GET /assets/{name}", serveAsset)
	mux.HandleFunc("GET /sessions/export", h.exportSession)
	mux.HandleFunc("GET /sessions.json", h.sessionsJSON)
	mux.HandleFunc("POST /reload", h.reload)
	mux.HandleFunc("POST /approvals/{id}/{verb}", h.decideApproval)
	mux.HandleFunc("POST /sessions/stop", h.stopSession)
	mux.HandleFunc("POST /plugins/{instance}/restart", h.restartPlugin)
	mux.HandleFunc("POST /pairing/deny", h.denyPairing)
	mux.HandleFunc("POST /doctor", h.runDoctor)
	mux.HandleFunc("GET /attach", h.serveAttach)
	if h.pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.log.Warn("refused cross-origin request", "method", r.Method, "path", r.URL.Path,
			"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	return h.guardHost(cop.Handler(securityHeaders(h.auth.wrap(mux))))
}

// allowedHosts returns the DNS names accepted in Host headers: localhost
// and the host of the listen address when it is a name.
func allowedHosts(listenHost string) map[string]bool {
	hosts := map[string]bool{"localhost": true}
	if name := normalizeHost(listenHost); name != "" {
		if _, err := netip.ParseAddr(name); err != nil {
			hosts[name] = true
		}
	}
	return hosts
}

// normalizeHost lower-cases a host name, drops a trailing dot and IPv6
// brackets.
func normalizeHost(host string) string {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// hostAllowed reports whether a Host header value (with or without port)
// names this server: an IP literal, localhost or the listen host.
func (h *handler) hostAllowed(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = normalizeHost(host)
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return h.hosts[host]
}

// guardHost refuses requests whose Host header is a foreign DNS name, the
// signature of a DNS-rebinding attack from a web page.
func (h *handler) guardHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.hostAllowed(r.Host) {
			h.log.Warn("refused request with foreign Host header", "host", r.Host, "path", r.URL.Path)
			http.Error(w, "host not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// securityHeaders keeps browsers from framing, sniffing or caching the
// responses, and the page from loading anything external: scripts, styles
// and fetches only from this server (the embedded assets, the page's JSON),
// images only as data: URIs (a plugin's QR code), forms only to this
// server (the retry button).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		hd.Set("Content-Security-Policy",
			"default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		next.ServeHTTP(w, r)
	})
}

// snapshot asks the source for the state, waiting at most h.timeout. ok is
// false when the source did not answer in time (or panicked).
func (h *handler) snapshot(ctx context.Context) (snap Snapshot, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	type result struct {
		snap Snapshot
		ok   bool
	}
	ch := make(chan result, 1) // buffered: a late answer must not block the goroutine
	go func() {
		defer func() {
			if p := recover(); p != nil {
				h.log.Error("status source panicked", "panic", fmt.Sprint(p))
				ch <- result{}
			}
		}()
		ch <- result{snap: h.source.Snapshot(ctx), ok: true}
	}()
	select {
	case res := <-ch:
		return res.snap, res.ok && ctx.Err() == nil
	case <-ctx.Done():
		h.log.Warn("status source did not answer", "timeout", h.timeout)
		return Snapshot{}, false
	}
}

// statusJSON serves GET /status.json.
func (h *handler) statusJSON(w http.ResponseWriter, r *http.Request) {
	snap, ok := h.snapshot(r.Context())
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, errorBody{"status source did not answer"})
		return
	}
	writeJSON(w, http.StatusOK, withEmptySlices(snap))
}

// withEmptySlices replaces nil lists by empty ones, so JSON clients see []
// rather than null.
func withEmptySlices(s Snapshot) Snapshot {
	if s.Plugins == nil {
		s.Plugins = []Plugin{}
	}
	for i := range s.Plugins {
		if s.Plugins[i].Kinds == nil {
			s.Plugins[i].Kinds = []string{}
		}
	}
	if s.Sessions == nil {
		s.Sessions = []Session{}
	}
	if s.Warm == nil {
		s.Warm = []Warm{}
	}
	if s.Errors == nil {
		s.Errors = []ErrorEntry{}
	}
	return s
}

// Health is the JSON body of GET /healthz.
type Health struct {
	// Status is "ok" when every enabled plugin is ready, else
	// "unavailable".
	Status string `json:"status"`
	// Error is set when the status source did not answer (with the
	// token only).
	Error string `json:"error,omitempty"`
	// NotReady lists the instances that are not ready, with their state,
	// last error and what to do (with the token only).
	NotReady []Plugin `json:"not_ready,omitempty"`
	// Agent and Store, with the token only, when either is not ok.
	Agent *AgentHealth `json:"agent,omitempty"`
	Store *StoreHealth `json:"store,omitempty"`
	// Channels, with the token only, when no enabled plugin is a channel:
	// what is wrong and what to do.
	Channels *ChannelHealth `json:"channels,omitempty"`
}

// healthz serves GET /healthz: 200 with {"status":"ok"} when the source
// answered, every plugin is ready, one of them is a channel (the
// snapshot's Channels item: a host with none takes no message in), the
// agent is ready and the store not degraded, else 503 with
// "unavailable". It is the one route open without the
// token, for supervisors and load balancers, and then says only that:
// the instances not ready, their errors and what to do are added only
// for a request that carries the token.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	snap, ok := h.snapshot(r.Context())
	body := Health{Status: "ok"}
	if !ok {
		body = Health{Status: "unavailable", Error: "status source did not answer"}
	}
	for _, p := range snap.Plugins {
		// A channel in standby is served by another host: as good as
		// ready, as on the page and in clawhost status.
		if !p.Ready && p.State != "standby" {
			body.Status = "unavailable"
			body.NotReady = append(body.NotReady, p)
		}
	}
	if a := snap.Agent; a != nil && !a.Ready {
		body.Status, body.Agent = "unavailable", a
	}
	if s := snap.Store; s != nil && s.State != "ok" {
		body.Status, body.Store = "unavailable", s
	}
	if c := snap.Channels; c != nil && c.State != ChannelsOK {
		body.Status, body.Channels = "unavailable", c
	}
	if !authorized(r.Context()) {
		body = Health{Status: body.Status}
	}
	if body.Status != "ok" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}

// serveMetrics serves GET /metrics.
func (h *handler) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if h.metrics == nil {
		http.NotFound(w, r)
		return
	}
	h.metrics.ServeHTTP(w, r)
}

// pendingPairings serves GET /pairing.
func (h *handler) pendingPairings(w http.ResponseWriter, r *http.Request) {
	if h.pairing == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"pairing is not available"})
		return
	}
	codes, err := h.pairing.PendingPairings(r.Context())
	writeRows(h, w, codes, err, "list pending pairings", "listing pending pairings failed")
}

// approvePairing serves POST /pairing/approve with the code in a form
// field or a JSON object {"code": "..."}.
func (h *handler) approvePairing(w http.ResponseWriter, r *http.Request) {
	if h.pairing == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"pairing is not available"})
		return
	}
	code, err := readCode(w, r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	entry, err := h.pairing.ApprovePairing(r.Context(), code)
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, errorBody{ErrNotFound.Error()})
	case errors.Is(err, ErrExpired):
		writeJSON(w, http.StatusGone, errorBody{ErrExpired.Error()})
	case errors.Is(err, ErrTooManyAttempts):
		writeJSON(w, http.StatusTooManyRequests, errorBody{ErrTooManyAttempts.Error()})
	case err != nil:
		h.log.Error("approve pairing", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{"approving the pairing failed"})
	case fromPage(r):
		// The status page's form: back to the page.
		h.log.Info("pairing approved", "entry", entry)
		http.Redirect(w, r, "/", http.StatusSeeOther)
	default:
		h.log.Info("pairing approved", "entry", entry)
		writeJSON(w, http.StatusOK, struct {
			Approved string `json:"approved"`
		}{entry})
	}
}

// approvedSenders serves GET /pairing/approved.
func (h *handler) approvedSenders(w http.ResponseWriter, r *http.Request) {
	if h.pairing == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"pairing is not available"})
		return
	}
	list, err := h.pairing.ApprovedSenders(r.Context())
	writeRows(h, w, list, err, "list approved senders", "listing approved senders failed")
}

// revokeSender serves POST /pairing/revoke with the sender in a form
// field or a JSON object {"sender": "<instance>:<sender id>"}.
func (h *handler) revokeSender(w http.ResponseWriter, r *http.Request) {
	if h.pairing == nil {
		writeJSON(w, http.StatusNotFound, errorBody{"pairing is not available"})
		return
	}
	entry, err := readField(w, r, "sender")
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	rev, err := h.pairing.RevokeSender(r.Context(), entry)
	switch {
	case errors.Is(err, ErrBadEntry):
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
	case err != nil:
		h.log.Error("revoke sender", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{"revoking failed"})
	default:
		writeJSON(w, http.StatusOK, rev)
	}
}

// retryTimeout bounds a plugin's Retry (it must return quickly; the
// outcome shows in its next status report).
const retryTimeout = 10 * time.Second

// retry serves POST /plugins/{instance}/retry. A JSON client (Accept:
// application/json, as `clawhost retry` sends) gets a JSON answer; a
// browser's form post is sent back to the status page on success and gets
// the error as text otherwise.
func (h *handler) retry(w http.ResponseWriter, r *http.Request) {
	instance := r.PathValue("instance")
	asJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	fail := func(status int, msg string) {
		if asJSON {
			writeJSON(w, status, errorBody{msg})
			return
		}
		http.Error(w, msg, status)
	}
	if h.retrier == nil {
		fail(http.StatusNotFound, "retry is not available")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), retryTimeout)
	defer cancel()
	err := h.retrier.Retry(ctx, instance)
	switch {
	case errors.Is(err, ErrUnknownInstance):
		fail(http.StatusNotFound, err.Error())
	case errors.Is(err, ErrNoRetry):
		fail(http.StatusConflict, err.Error())
	case err != nil:
		h.log.Error("plugin retry failed", "instance", instance, "error", err)
		fail(http.StatusBadGateway, err.Error())
	default:
		h.log.Info("plugin retry requested", "instance", instance)
		if !asJSON {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		writeJSON(w, http.StatusOK, struct {
			Retried string `json:"retried"`
		}{instance})
	}
}

// readCode reads the code of POST /pairing/approve.
func readCode(w http.ResponseWriter, r *http.Request) (string, error) { return readField(w, r, "code") }

// readField reads one field of a POST body, a form or a JSON object
// (bounded by maxApproveBody), trimmed; missing or empty is an error.
func readField(w http.ResponseWriter, r *http.Request, name string) (string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxApproveBody)
	var v string
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "application/json" {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return "", errors.New("malformed JSON body")
		}
		v, _ = body[name].(string)
	} else {
		if err := r.ParseForm(); err != nil {
			return "", errors.New("malformed form body")
		}
		v = r.PostForm.Get(name)
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return "", errors.New("missing " + name)
	}
	return v, nil
}

// errorBody is the JSON body of an error answer.
type errorBody struct {
	Error string `json:"error"`
}

// writeJSON writes v as indented JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to do
}

// writeRows answers a read of rows: 500 when it failed (logged as doing,
// told as failed), else the rows as JSON, [] for none.
func writeRows[T any](h *handler, w http.ResponseWriter, rows []T, err error, doing, failed string) {
	if err != nil {
		h.log.Error(doing, "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{failed})
		return
	}
	if rows == nil {
		rows = []T{}
	}
	writeJSON(w, http.StatusOK, rows)
}

// serveAttach hands an authenticated upgrade to the attach endpoint. The
// cookie alone does not do: a page of another origin could open a
// websocket with it, so a request without the header must be same-origin.
func (h *handler) serveAttach(w http.ResponseWriter, r *http.Request) {
	if h.attach == nil {
		http.NotFound(w, r)
		return
	}
	if h.auth.check(r) != byHeader && !sameOrigin(r) {
		http.Error(w, "attach needs the Authorization header", http.StatusForbidden)
		return
	}
	h.attach.ServeHTTP(w, r)
}
