package admin

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const xss = `<script>alert(1)</script>`
const xssEscaped = `&lt;script&gt;alert(1)&lt;/script&gt;`

var t0 = time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)

// fakeSource returns a fixed snapshot; with block set it waits for ctx to
// end before answering, like a source stuck on a lock.
type fakeSource struct {
	mu    sync.Mutex
	snap  Snapshot
	block bool
	calls int
}

func (f *fakeSource) Snapshot(ctx context.Context) Snapshot {
	f.mu.Lock()
	f.calls++
	snap, block := f.snap, f.block
	f.mu.Unlock()
	if block {
		<-ctx.Done()
	}
	return snap
}

// fakePairing records approvals; codes maps a code to its entry or error.
type fakePairing struct {
	mu       sync.Mutex
	pending  []PairingCode
	codes    map[string]string
	expired  map[string]bool
	approved []string
	revoked  []string
}

func (f *fakePairing) PendingPairings(context.Context) ([]PairingCode, error) {
	return f.pending, nil
}

func (f *fakePairing) ApprovePairing(_ context.Context, code string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.approved = append(f.approved, code)
	if f.expired[code] {
		return "", fmt.Errorf("approve %s: %w", code, ErrExpired)
	}
	if code == "LOCKED00" {
		return "", fmt.Errorf("approve %s: %w", code, ErrTooManyAttempts)
	}
	entry, ok := f.codes[code]
	if !ok {
		return "", fmt.Errorf("approve %s: %w", code, ErrNotFound)
	}
	return entry, nil
}

func (f *fakePairing) ApprovedSenders(context.Context) ([]ApprovedSender, error) {
	return []ApprovedSender{{Entry: "tg:1001", ApprovedAt: t0, ApprovedBy: "tg:9", Honoured: true}}, nil
}

func (f *fakePairing) RevokeSender(_ context.Context, entry string) (Revocation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, entry)
	if !strings.Contains(entry, ":") {
		return Revocation{}, fmt.Errorf("revoke %q: %w", entry, ErrBadEntry)
	}
	return Revocation{Entry: entry, Found: entry == "tg:1001", Schedules: 1}, nil
}

func (f *fakePairing) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.approved...)
}

func sampleSnapshot() Snapshot {
	return Snapshot{
		UnlistedGroups: []UnlistedGroup{{ID: "tg:-100777", Title: "Team " + xss, Messages: 3, LastSeen: t0.Add(-2 * time.Minute)}},
		Approvals:      []Approval{{Session: "tg:direct:1001", Tool: "Bash", Summary: "$ rm " + xss, Asker: "Ann", Since: t0.Add(-40 * time.Second)}},
		Decisions:      []Decision{{Session: "tg:direct:1001", Tool: "WebFetch", Summary: "example.org/x", Outcome: "denied", By: "Ann", At: t0.Add(-time.Minute)}},
		Version:        "1.2.3",
		StartedAt:      t0.Add(-26 * time.Hour),
		Plugins: []Plugin{
			{Instance: "tg", Source: "telegram", State: "running", Restarts: 2, PID: 4242, RSS: 19 << 20, Private: 4 << 20,
				Since: t0.Add(-3 * time.Minute), Ready: true, Kinds: []string{"channel"}},
			{Instance: "dc", Source: "discord", State: "backoff", Restarts: 7,
				LastError: "dial: " + xss, Since: t0.Add(-42 * time.Second), Kinds: []string{"channel", "command"}},
		},
		Sessions: []Session{
			{Key: "tg:dm:1001", SessionID: "0d6c1a2e-1111-2222-3333-444455556666", Model: "claude-sonnet",
				LastActivity: t0.Add(-90 * time.Second), Turns: 12, InputTokens: 34567, OutputTokens: 8910,
				CostUSD: 0.12345, Queued: 3, Running: true, LastTurn: "waited 1.2 s for a free slot (4 of 4 running), warm claude process"},
			{Key: "dc:" + xss, LastActivity: t0.Add(-2 * time.Hour)},
		},
		SessionCount: 250,
		QueueDepth:   5,
		Usage: &Usage{Days: []UsageRow{{Key: "2026-11-25", Turns: 3, CostUSD: 1.05, EstimatedUSD: 0.21, InputTokens: 250000, OutputTokens: 2001}},
			People: []UsageRow{{Key: "tg:1001", Turns: 2, CostUSD: 0.84}}},
		Warm: []Warm{{Key: "tg:dm:1001", PID: 31337, RSS: 210 << 20, Private: 150 << 20}},
		Host: Process{PID: 4000, RSS: 30<<20 + 1<<19, Private: 7 << 20, Heap: 5 << 20},
		Errors: []ErrorEntry{
			{At: t0.Add(-time.Minute), Level: "error", Source: "pluginhost.dc", Message: "crashed " + xss},
		},
	}
}

// testToken is the admin token of the test servers; do sends it unless
// the request sets its own Authorization header ("" sends none).
const testToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// start runs a server on a free loopback port, closed at the end of the test.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.Token == "" {
		opts.Token = testToken
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0 }
	}
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

type request struct {
	method, path, host, body string
	header                   map[string]string
}

// do sends req to s and returns the status, body and header.
func do(t *testing.T, s *Server, req request) (int, string, http.Header) {
	t.Helper()
	return doWith(t, s, req, http.DefaultClient)
}

// doNoRedirect is do without following redirects.
func doNoRedirect(t *testing.T, s *Server, req request) (int, string, http.Header) {
	t.Helper()
	return doWith(t, s, req, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }})
}

// doWith sends req to s with client.
func doWith(t *testing.T, s *Server, req request, client *http.Client) (int, string, http.Header) {
	t.Helper()
	if req.method == "" {
		req.method = http.MethodGet
	}
	r, err := http.NewRequest(req.method, "http://"+s.Addr()+req.path, strings.NewReader(req.body))
	if err != nil {
		t.Fatal(err)
	}
	if req.host != "" {
		r.Host = req.host
	}
	setHeaders(r, req.header)
	resp, err := client.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", req.method, req.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp.Header
}

// get fetches path from s and fails the test unless the answer is 200 OK;
// it returns the body and header.
func get(t *testing.T, s *Server, path string) (string, http.Header) {
	t.Helper()
	code, body, hdr := do(t, s, request{path: path})
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d, body:\n%s", path, code, body)
	}
	return body, hdr
}

// setHeaders sets hdr on r, and the test token unless hdr has an
// Authorization entry (an empty one sends none).
func setHeaders(r *http.Request, hdr map[string]string) {
	if _, ok := hdr["Authorization"]; !ok {
		r.Header.Set("Authorization", "Bearer "+testToken)
	}
	for k, v := range hdr {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
}

func TestStatusPage(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Source: &fakeSource{snap: sampleSnapshot()}})
	body, hdr := get(t, s, "/")
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q", ct)
	}
	for _, want := range []string{
		`<noscript><meta http-equiv="refresh" content="5"></noscript>`, `<div id="live">`,
		"version 1.2.3", "up 1d02h",
		"plugins ready: <b class=\"bad\">1/2</b>",
		"sessions: <b>250</b>", "queued messages: <b>5</b>", "warm processes: <b>1</b>",
		// plugins: instance, source, kinds, state, time in state, restarts, pid
		"<td>tg</td><td>telegram</td><td>channel</td><td>running</td>",
		`<td class="n">3m00s</td><td class="n">2</td><td class="n">4242</td><td class="n">19.0 MB (4.0 MB private)</td>`,
		// memory: the host's, each plugin's (above), each warm process's
		"host memory: <b>30.5 MB</b> resident, 7.0 MB of it private, Go heap 5.0 MB (pid 4000)",
		`<td class="n">31337</td><td class="n">210.0 MB (150.0 MB private)</td>`,
		"<td>dc</td><td>discord</td><td>channel, command</td><td>backoff</td>",
		`<td class="n">42s</td><td class="n">7</td>`,
		// sessions
		"showing 2 of 250",
		"<td>tg:dm:1001</td>", ">0d6c1a2e<", "claude-sonnet", "1m30s ago",
		`<td class="n">12</td><td class="n">34567</td><td class="n">8910</td><td class="n">$0.1235</td><td class="n">3</td>`,
		"running</span>", "<td>waited 1.2 s for a free slot (4 of 4 running), warm claude process</td>", "2h00m ago",
		// warm and errors
		`<td class="n">31337</td>`, "pluginhost.dc",
		// groups not allowed: the entry to add
		"Groups not allowed", `<code>"tg:-100777"</code>`, "Team " + xssEscaped, "2m00s ago",
		// tool approvals: the waiting turn and the last decision
		"Tool approvals", "<td><code>tg:direct:1001</code></td><td>Bash</td><td><code>$ rm " + xssEscaped + "</code></td><td>Ann or an owner</td><td class=\"n\">40s</td>",
		"<td>WebFetch</td><td><code>example.org/x</code></td><td>denied</td><td>Ann</td>",
		// usage: an estimated part says so
		`<td>2026-11-25</td><td class="n">3</td><td class="n">$1.0500 <span class="meta">(~$0.2100 estimated)</span></td>`,
		`<td><code>tg:1001</code></td><td class="n">2</td><td class="n">$0.8400</td>`,
		// escaping
		"dial: " + xssEscaped, "dc:" + xssEscaped, "crashed " + xssEscaped,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	assertOwnScripts(t, body)
	if strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Count(body, "src=") != strings.Count(body, `src="/assets/`) {
		t.Error("page references external assets")
	}
	if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

func TestStatusPageEmpty(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Source: &fakeSource{}})
	body, _ := get(t, s, "/")
	for _, want := range []string{"No plugin enabled.", "No sessions.", "No warm process.", "No recent errors.", "version unknown"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if code, _, _ := do(t, s, request{path: "/nope"}); code != http.StatusNotFound {
		t.Errorf("GET /nope: status %d, want 404", code)
	}
}

// TestChannelsOf: no enabled plugin, or only plugins that described
// themselves as something else than a channel, is "none" with what to do;
// a channel, or a plugin not described yet (it may be one), is ok.
func TestChannelsOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		plugins []Plugin
		want    string
	}{
		{"no plugin", nil, ChannelsNone},
		{"tools only", []Plugin{{Kinds: []string{"tool"}}, {Kinds: []string{"command", "hook"}}}, ChannelsNone},
		{"a channel among tools", []Plugin{{Kinds: []string{"tool"}}, {Kinds: []string{"channel", "command"}}}, ChannelsOK},
		{"not described yet", []Plugin{{Kinds: []string{"tool"}}, {State: "missing"}}, ChannelsOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := ChannelsOf(c.plugins)
			if got.State != c.want {
				t.Fatalf("state %q, want %q", got.State, c.want)
			}
			if said := got.LastError != "" && got.Action == NoChannelAction; said != (c.want == ChannelsNone) {
				t.Errorf("%+v", got)
			}
		})
	}
}

// TestHealthz: 200 only when the source answered, every plugin is ready
// and the snapshot does not say that no plugin is a channel.
func TestHealthz(t *testing.T) {
	t.Parallel()
	ready := Plugin{Instance: "tg", State: "running", Ready: true}
	cases := []struct {
		name     string
		src      *fakeSource
		code     int
		contains []string
		lacks    []string
	}{
		{"all ready", &fakeSource{snap: Snapshot{Plugins: []Plugin{ready, {Instance: "dc", Ready: true}}}},
			200, []string{"ok"}, nil},
		{"no plugins", &fakeSource{}, 200, []string{"ok"}, nil},
		{"a channel in standby", &fakeSource{snap: Snapshot{Plugins: []Plugin{ready, {Instance: "dc", State: "standby"}}}}, 200, []string{"ok"}, nil},
		{"one not ready", &fakeSource{snap: Snapshot{Plugins: []Plugin{ready, {Instance: "dc", State: "backoff"}, {Instance: "wa", State: "starting"}}}},
			503, []string{`"status":"unavailable"`, `"instance":"dc","source":"","state":"backoff"`, `"instance":"wa"`}, []string{`"tg"`, `"ok"`}},
		{"source silent", &fakeSource{block: true, snap: Snapshot{Plugins: []Plugin{ready}}},
			503, []string{"did not answer"}, []string{`"ok"`}},
		{"no channel", &fakeSource{snap: Snapshot{Plugins: []Plugin{{Instance: "git", Ready: true, Kinds: []string{"tool"}}}, Channels: ChannelsOf([]Plugin{{Kinds: []string{"tool"}}})}},
			503, []string{`"status":"unavailable"`, `"channels":{"state":"none"`, "no channel is configured", "enable a channel plugin in config.hcl"}, []string{`"ok"`}},
		{"a channel", &fakeSource{snap: Snapshot{Plugins: []Plugin{ready}, Channels: ChannelsOf([]Plugin{{Kinds: []string{"channel"}}})}},
			200, []string{`"status":"ok"`}, []string{"channels"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := start(t, Options{Source: c.src, SnapshotTimeout: 50 * time.Millisecond})
			code, body, hdr := do(t, s, request{path: "/healthz"})
			if code != c.code {
				t.Errorf("status %d, want %d; body %q", code, c.code, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			for _, w := range c.contains {
				if !strings.Contains(body, w) {
					t.Errorf("body %q lacks %q", body, w)
				}
			}
			for _, w := range c.lacks {
				if strings.Contains(body, w) {
					t.Errorf("body %q contains %q", body, w)
				}
			}
		})
	}
}

func TestStatusJSON(t *testing.T) {
	t.Parallel()
	want := sampleSnapshot()
	s := start(t, Options{Source: &fakeSource{snap: want}})
	body, hdr := get(t, s, "/status.json")
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	var got Snapshot
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded snapshot differs:\n got %+v\nwant %+v", got, want)
	}
	if !strings.Contains(body, `"session_count": 250`) || !strings.Contains(body, `"last_error": "dial: \u003cscript\u003e`) {
		t.Errorf("unexpected JSON field names or escaping:\n%s", body)
	}

	empty := start(t, Options{Source: &fakeSource{}})
	_, body, _ = do(t, empty, request{path: "/status.json"})
	for _, f := range []string{`"plugins": []`, `"sessions": []`, `"warm": []`, `"errors": []`} {
		if !strings.Contains(body, f) {
			t.Errorf("empty snapshot JSON lacks %s:\n%s", f, body)
		}
	}

	silent := start(t, Options{Source: &fakeSource{block: true}, SnapshotTimeout: 20 * time.Millisecond})
	if code, _, _ := do(t, silent, request{path: "/status.json"}); code != http.StatusServiceUnavailable {
		t.Errorf("silent source: status %d, want 503", code)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	none := start(t, Options{Source: &fakeSource{}})
	if code, _, _ := do(t, none, request{path: "/metrics"}); code != http.StatusNotFound {
		t.Errorf("without metrics: status %d, want 404", code)
	}
	m := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "clawhost_up 1") })
	s := start(t, Options{Source: &fakeSource{}, Metrics: m})
	if code, body, _ := do(t, s, request{path: "/metrics"}); code != 200 || body != "clawhost_up 1\n" {
		t.Errorf("metrics: status %d body %q", code, body)
	}
}

func newFakePairing() *fakePairing {
	return &fakePairing{
		pending: []PairingCode{{Instance: "tg", SenderID: "1001", Code: "ABCD1234",
			CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}},
		codes:   map[string]string{"ABCD1234": "tg:1001"},
		expired: map[string]bool{"OLD00000": true},
	}
}

func TestPairing(t *testing.T) {
	t.Parallel()
	p := newFakePairing()
	s := start(t, Options{Source: &fakeSource{}, Pairing: p})

	code, body, _ := do(t, s, request{path: "/pairing"})
	var pending []PairingCode
	if err := json.Unmarshal([]byte(body), &pending); code != 200 || err != nil {
		t.Fatalf("GET /pairing: %d %v %s", code, err, body)
	}
	if !reflect.DeepEqual(pending, p.pending) {
		t.Errorf("pending = %+v, want %+v", pending, p.pending)
	}

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	jsonCT := map[string]string{"Content-Type": "application/json"}
	cases := []struct {
		name   string
		req    request
		code   int
		body   string
		called bool
	}{
		{"form", request{body: "code=ABCD1234", header: form}, 200, `"approved": "tg:1001"`, true},
		{"json", request{body: `{"code":" ABCD1234 "}`, header: jsonCT}, 200, `"approved": "tg:1001"`, true},
		{"unknown", request{body: "code=NOPE", header: form}, 404, "not found", true},
		{"expired", request{body: `{"code":"OLD00000"}`, header: jsonCT}, 410, "expired", true},
		{"guessing locked out", request{body: "code=LOCKED00", header: form}, 429, "too many wrong", true},
		{"missing form", request{body: "other=1", header: form}, 400, "missing code", false},
		{"missing json", request{body: `{}`, header: jsonCT}, 400, "missing code", false},
		{"malformed json", request{body: `{"code":`, header: jsonCT}, 400, "malformed", false},
		{"query only", request{path: "/pairing/approve?code=ABCD1234", header: form}, 400, "missing code", false},
		{"cross-site fetch", request{body: "code=ABCD1234", header: map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}}, 403, "cross-origin", false},
		{"foreign origin", request{body: "code=ABCD1234", header: map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}}, 403, "cross-origin", false},
		{"same origin", request{body: "code=ABCD1234", header: map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://" + s.Addr(), "Sec-Fetch-Site": "same-origin"}}, 200, "tg:1001", true},
		{"the page's Approve button", request{body: "code=ABCD1234&from=page", header: map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://" + s.Addr(), "Sec-Fetch-Site": "same-origin"}}, 200, "<h1>clawhost</h1>", true}, // redirected back to the page
	}
	for _, c := range cases {
		before := len(p.calls())
		c.req.method = http.MethodPost
		if c.req.path == "" {
			c.req.path = "/pairing/approve"
		}
		code, body, _ := do(t, s, c.req)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d containing %q", c.name, code, body, c.code, c.body)
		}
		if called := len(p.calls()) > before; called != c.called {
			t.Errorf("%s: ApprovePairing called = %v, want %v", c.name, called, c.called)
		}
	}

	if code, _, hdr := do(t, s, request{path: "/pairing/approve"}); code != http.StatusMethodNotAllowed || hdr.Get("Allow") != "POST" {
		t.Errorf("GET /pairing/approve: %d Allow=%q, want 405 POST", code, hdr.Get("Allow"))
	}
	if got := p.calls(); len(got) == 0 || got[0] != "ABCD1234" {
		t.Errorf("approved codes %q: the JSON code was not trimmed or the form code not passed", got)
	}
}

// TestApprovedAndRevoke: GET /pairing/approved lists the approvals; POST
// /pairing/revoke takes the sender as a form field or JSON, under the same
// cross-origin guard as approve.
func TestApprovedAndRevoke(t *testing.T) {
	t.Parallel()
	p := newFakePairing()
	s := start(t, Options{Source: &fakeSource{}, Pairing: p})
	code, body, _ := do(t, s, request{path: "/pairing/approved"})
	var list []ApprovedSender
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list) != 1 || list[0].ApprovedBy != "tg:9" || !list[0].ApprovedAt.Equal(t0) {
		t.Fatalf("GET /pairing/approved: %d %v %s", code, err, body)
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	jsonCT := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		name string
		req  request
		code int
		body string
	}{
		{"form", request{body: "sender=tg:1001", header: form}, 200, `"found": true`},
		{"json", request{body: `{"sender":" tg:5 "}`, header: jsonCT}, 200, `"found": false`},
		{"bad entry", request{body: `{"sender":"5"}`, header: jsonCT}, 400, "not a sender entry"},
		{"missing", request{body: `{}`, header: jsonCT}, 400, "missing sender"},
		{"cross-site", request{body: "sender=tg:1001", header: map[string]string{
			"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}}, 403, "cross-origin"},
	} {
		c.req.method, c.req.path = http.MethodPost, "/pairing/revoke"
		code, body, _ := do(t, s, c.req)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d containing %q", c.name, code, body, c.code, c.body)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Join(p.revoked, ",") != "tg:1001,tg:5,5" {
		t.Errorf("revoked %q", p.revoked)
	}
}

func TestPairingDisabled(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Source: &fakeSource{}})
	if code, _, _ := do(t, s, request{path: "/pairing"}); code != 404 {
		t.Errorf("GET /pairing: %d, want 404", code)
	}
	code, _, _ := do(t, s, request{method: http.MethodPost, path: "/pairing/approve", body: "code=X",
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if code != 404 {
		t.Errorf("POST /pairing/approve: %d, want 404", code)
	}
}

func TestHostGuard(t *testing.T) {
	t.Parallel()
	src := &fakeSource{snap: Snapshot{Plugins: []Plugin{{Instance: "tg", Ready: true}}}}
	s := start(t, Options{Source: src})
	_, port, _ := net.SplitHostPort(s.Addr())
	cases := []struct {
		host string
		code int
	}{
		{"", 200}, // the client sends the dialled address
		{"localhost:" + port, 200},
		{"LOCALHOST.", 200},
		{"127.0.0.1:" + port, 200},
		{"[::1]:" + port, 200},
		{"192.168.1.5:" + port, 200},
		{"evil.example:" + port, 403},
		{"evil.example", 403},
		{"localhost.evil.example", 403},
		{"admin.internal:" + port, 403},
	}
	for _, c := range cases {
		if code, body, _ := do(t, s, request{path: "/healthz", host: c.host}); code != c.code {
			t.Errorf("Host %q: status %d (%q), want %d", c.host, code, body, c.code)
		}
	}
	src.mu.Lock()
	calls := src.calls
	src.mu.Unlock()
	if want := 6; calls != want {
		t.Errorf("source called %d times, want %d: refused requests must not reach it", calls, want)
	}
}

func TestHostGuardListenName(t *testing.T) {
	t.Parallel()
	h := &handler{hosts: allowedHosts("admin.internal")}
	for host, want := range map[string]bool{
		"admin.internal:8791": true,
		"Admin.Internal":      true,
		"localhost":           true,
		"other.internal":      false,
		"":                    false,
	} {
		if got := h.hostAllowed(host); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	if _, err := Start(Options{Listen: "127.0.0.1:0", Token: testToken}); err == nil {
		t.Error("Start without a source succeeded")
	}
	if _, err := Start(Options{Listen: "127.0.0.1:0", Source: &fakeSource{}}); err == nil {
		t.Error("Start without a token succeeded")
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = Start(Options{Listen: busy.Addr().String(), Source: &fakeSource{}, Token: testToken})
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Errorf("Start on a busy port: err = %v, want one naming %s", err, busy.Addr())
	}
	if _, err := Start(Options{Listen: "no-port", Source: &fakeSource{}, Token: testToken}); err == nil || !strings.Contains(err.Error(), "no-port") {
		t.Errorf("Start with a bad address: err = %v", err)
	}
}

// TestNonLoopbackRefused: beyond loopback the endpoint needs TLS; with
// it, it serves HTTPS and still asks for the token.
func TestNonLoopbackRefused(t *testing.T) {
	t.Parallel()
	if _, err := Start(Options{Listen: "0.0.0.0:0", Source: &fakeSource{}, Token: testToken}); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("0.0.0.0 without TLS: err = %v, want a refusal", err)
	}
	cert, key := selfSigned(t)
	s := start(t, Options{Listen: "0.0.0.0:0", Source: &fakeSource{}, TLSCert: cert, TLSKey: key})
	if !strings.HasPrefix(s.URL(), "https://localhost:") {
		t.Errorf("URL %q, want https://localhost:<port>/", s.URL())
	}
	_, port, _ := net.SplitHostPort(s.Addr())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own certificate
	for _, c := range []struct {
		auth string
		code int
	}{{"", 401}, {"Bearer " + testToken, 200}} {
		r, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:"+port+"/status.json", nil)
		if c.auth != "" {
			r.Header.Set("Authorization", c.auth)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("HTTPS with %q: %d, want %d", c.auth, resp.StatusCode, c.code)
		}
	}
}

// selfSigned writes a self-signed certificate for localhost and returns
// the paths of its PEM files.
func selfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func TestClose(t *testing.T) {
	t.Parallel()
	s, err := Start(Options{Listen: "127.0.0.1:0", Source: &fakeSource{}, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestSourcePanicIsContained(t *testing.T) {
	t.Parallel()
	s := start(t, Options{Source: panicSource{}, SnapshotTimeout: time.Second})
	code, _, _ := do(t, s, request{path: "/healthz"})
	if code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", code)
	}
}

type panicSource struct{}

func (panicSource) Snapshot(context.Context) Snapshot { panic("boom") }

// TestPprof: the profiles are served only when asked for (admin.pprof).
func TestPprof(t *testing.T) {
	t.Parallel()
	off := start(t, Options{Source: &fakeSource{}})
	for _, p := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
		if code, _, _ := do(t, off, request{path: p}); code != http.StatusNotFound {
			t.Errorf("pprof off: %s answered %d, want 404", p, code)
		}
	}
	on := start(t, Options{Source: &fakeSource{}, Pprof: true})
	if code, body, _ := do(t, on, request{path: "/debug/pprof/"}); code != 200 || !strings.Contains(body, "goroutine") {
		t.Errorf("pprof index: %d %.200q", code, body)
	}
	if code, body, _ := do(t, on, request{path: "/debug/pprof/goroutine?debug=1"}); code != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("goroutine profile: %d %.200q", code, body)
	}
	if code, body, _ := do(t, on, request{path: "/debug/pprof/heap"}); code != 200 || len(body) == 0 {
		t.Errorf("heap profile: %d, %d bytes", code, len(body))
	}
}

// TestStatusPageAgents: with several agents the page lists them, and each
// session and warm process names its agent.
func TestStatusPageAgents(t *testing.T) {
	t.Parallel()
	snap := sampleSnapshot()
	snap.Agents = []Agent{{ID: "main", Workspace: "/srv/ws"}, {ID: "ops", Workspace: "/srv/ops", Chats: []string{"tg:-100"}, Switchable: true, Warm: 1}}
	snap.Sessions[0].Agent = "ops"
	s := start(t, Options{Source: &fakeSource{snap: snap}})
	_, body, _ := do(t, s, request{path: "/"})
	for _, want := range []string{
		"<h2>Agents</h2>",
		"<td>main</td><td><code>/srv/ws</code></td><td>every chat no agent binds</td><td>no</td>",
		"<td>ops</td><td><code>/srv/ops</code></td><td><code>tg:-100</code></td><td>yes</td><td class=\"n\">1</td>",
		"<tr><td>ops</td><td></td><td>tg:dm:1001</td>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	snap.Agents = snap.Agents[:1]
	s = start(t, Options{Source: &fakeSource{snap: snap}})
	if _, body, _ := do(t, s, request{path: "/"}); strings.Contains(body, "<h2>Agents</h2>") {
		t.Error("one agent gets an Agents table")
	}
}

// The warm pool: what the warm processes hold against warm_memory, and the
// time to first answer of a returning chat, warm and cold, on the page and
// in status.json.
func TestStatusPageWarmPool(t *testing.T) {
	t.Parallel()
	snap := sampleSnapshot()
	snap.WarmPool = &WarmPool{WarmMemory: 2 << 30, Memory: 630 << 20, Warm: 3, Measured: 2,
		FirstAnswerWarm: FirstAnswer{Turns: 40, P50: 420 * time.Millisecond, P90: 900 * time.Millisecond},
		FirstAnswerCold: FirstAnswer{Turns: 3, P50: 2100 * time.Millisecond, P90: 3 * time.Second}}
	s := start(t, Options{Source: &fakeSource{snap: snap}})
	_, body, _ := do(t, s, request{path: "/"})
	want := "3 warm holding <b>630.0 MB</b> (2 measured) · limit 2048.0 MB (warm_memory) · time to first answer of a returning chat: warm <b>0.4 s median, 0.9 s p90 (40 turns)</b>, cold <b>2.1 s median, 3.0 s p90 (3 turns)</b>"
	if !strings.Contains(body, want) {
		t.Errorf("page lacks %q", want)
	}
	_, js, _ := do(t, s, request{path: "/status.json"})
	var got struct {
		WarmPool *WarmPool `json:"warm_pool"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || got.WarmPool == nil || *got.WarmPool != *snap.WarmPool {
		t.Errorf("status.json's warm_pool %+v (%v), want %+v", got.WarmPool, err, snap.WarmPool)
	}
	for _, want := range []string{`"warm_memory_bytes": 2147483648`, `"p50_ns": 2100000000`} {
		if !strings.Contains(js, want) {
			t.Errorf("status.json lacks %s:\n%s", want, js)
		}
	}
	if strings.Contains(body, "spare claude:") {
		t.Error("the page shows a spare failure without one")
	}
	snap.WarmPool.SpareError = "agent main: could not start: bwrap failed"
	s = start(t, Options{Source: &fakeSource{snap: snap}})
	if _, body, _ := do(t, s, request{path: "/"}); !strings.Contains(body, `<p class="bad">spare claude: agent main: could not start: bwrap failed — new sessions start their own claude meanwhile`) {
		t.Errorf("the page does not show the spare's failure:\n%s", body)
	}
	if got := (WarmPool{MaxWarm: 4}).Limits(); got != "at most 4 (max_warm)" {
		t.Errorf("Limits %q", got)
	}
	if got := (FirstAnswer{}).String(); got != "none yet" {
		t.Errorf("no turns: %q", got)
	}
}

func TestProcsText(t *testing.T) {
	for _, c := range []struct {
		p    Process
		want string
	}{
		{Process{}, ""},
		{Process{Procs: 4}, "4"},
		{Process{Procs: 1, BusyProcs: 4}, "1 (all 4 while busy)"},
		{Process{Procs: 4, BusyProcs: 4}, "4 (all 4 while busy)"},
	} {
		if got := c.p.ProcsText(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

// assertOwnScripts: the page's only scripts are its two embedded assets
// (no text of the snapshot became a script).
func assertOwnScripts(t *testing.T, body string) {
	t.Helper()
	if n, own := strings.Count(body, "<script"), strings.Count(body, `<script src="/assets/`); n != 2 || own != 2 {
		t.Errorf("page has %d <script> tags, %d of them its own assets; want its 2 own", n, own)
	}
}
