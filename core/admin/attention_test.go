package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/qrcode/qrcodetest"
)

// attentionSnapshot has one plugin per attention kind, and a ready one.
func attentionSnapshot(qr string) Snapshot {
	return Snapshot{Plugins: []Plugin{
		{Instance: "wa", Source: "whatsapp", State: "needs_attention", Message: "scan the QR code with WhatsApp", Action: "scan the QR code with WhatsApp",
			Attention: &Attention{Kind: "qr", Data: qr, ExpiresAt: t0.Add(45 * time.Second), Retry: "Show a new QR code"}},
		{Instance: "tg", Source: "telegram", State: "needs_attention", Message: "the bot token was rejected", Action: "the bot token was rejected",
			Attention: &Attention{Kind: "link", Data: "https://t.me/BotFather"}},
		{Instance: "sig", Source: "signal", State: "needs_attention", Action: "type the code",
			Attention: &Attention{Kind: "code", Data: "ABCD-1234", ExpiresAt: t0.Add(-3 * time.Second)}},
		{Instance: "evil", Source: "x", State: "needs_attention", Attention: &Attention{Kind: "link", Data: "javascript:alert(1)"}},
		{Instance: "ok", Source: "loopback", State: "ready", Ready: true},
	}}
}

// imgData returns the PNG of the page's first QR image and its instance.
func imgData(t *testing.T, body string) ([]byte, string) {
	t.Helper()
	raw, inst := qrcodetest.PageImage(t, body)
	if raw == nil {
		t.Fatalf("no QR image in:\n%s", body)
	}
	return raw, inst
}

// TestStatusPageAttention: a QR attention is an inline image that decodes
// to the plugin's payload, with its expiry and a retry button; a code is
// text, a link a link (only http(s)), and the page allows exactly that
// (img-src data:, form-action 'self').
func TestStatusPageAttention(t *testing.T) {
	t.Parallel()
	src := &fakeSource{snap: attentionSnapshot("2@first,payload==")}
	s := start(t, Options{Source: src})
	body, hdr := get(t, s, "/")
	raw, inst := imgData(t, body)
	if inst != "wa" {
		t.Fatalf("QR image for %s", inst)
	}
	if got := qrcodetest.DecodePNG(t, raw); got != "2@first,payload==" {
		t.Fatalf("QR decodes to %q", got)
	}
	for _, want := range []string{
		"(45s left)",
		`<form method="post" action="/plugins/wa/retry"><button type="submit">Show a new QR code</button></form>`,
		`<a href="https://t.me/BotFather"`,
		`<code class="code">ABCD-1234</code>`,
		"(expired 3s ago)",
		"<b>What to do:</b> scan the QR code with WhatsApp",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, `href="javascript:`) {
		t.Error("a javascript: link reached the page")
	}
	if n := strings.Count(body, `<form method="post"`); n != 1 {
		t.Errorf("%d retry forms, want 1 (only wa offers a retry)", n)
	}
	csp := hdr.Get("Content-Security-Policy")
	if !strings.Contains(csp, "img-src data:") || !strings.Contains(csp, "form-action 'self'") {
		t.Errorf("Content-Security-Policy %q does not allow the QR image and the retry form", csp)
	}

	// The plugin rotates its code: the next load shows the new one.
	src.mu.Lock()
	src.snap = attentionSnapshot("2@second,payload==")
	src.mu.Unlock()
	_, body, _ = do(t, s, request{path: "/"})
	raw, _ = imgData(t, body)
	if got := qrcodetest.DecodePNG(t, raw); got != "2@second,payload==" {
		t.Fatalf("after rotation the QR decodes to %q", got)
	}
}

// TestAttentionInJSON: /status.json and /healthz carry what the plugin
// reported.
func TestAttentionInJSON(t *testing.T) {
	t.Parallel()
	snap := attentionSnapshot("2@x")
	s := start(t, Options{Source: &fakeSource{snap: snap}})
	_, body, _ := do(t, s, request{path: "/status.json"})
	var got Snapshot
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if a := got.Plugins[0].Attention; a == nil || *a != *snap.Plugins[0].Attention || got.Plugins[0].Message != snap.Plugins[0].Message {
		t.Fatalf("status.json plugin: %+v", got.Plugins[0])
	}
	if strings.Contains(body, `"expires_at": "0001`) {
		t.Error("a zero expiry is in the JSON")
	}
	code, body, _ := do(t, s, request{path: "/healthz"})
	var h Health
	if err := json.Unmarshal([]byte(body), &h); err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("healthz %d %v: %s", code, err, body)
	}
	if len(h.NotReady) != 4 || h.NotReady[1].Instance != "tg" || h.NotReady[1].State != "needs_attention" || h.NotReady[1].Message != "the bot token was rejected" {
		t.Fatalf("healthz not_ready: %+v", h.NotReady)
	}
}

// fakeRetrier records retries; errs maps an instance to its error.
type fakeRetrier struct {
	mu    sync.Mutex
	calls []string
	errs  map[string]error
}

func (f *fakeRetrier) Retry(_ context.Context, instance string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, instance)
	return f.errs[instance]
}

func (f *fakeRetrier) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func TestRetry(t *testing.T) {
	t.Parallel()
	r := &fakeRetrier{errs: map[string]error{
		"nope": fmt.Errorf("retry plugin nope: %w", ErrUnknownInstance),
		"tg":   fmt.Errorf("retry plugin tg: %w (state ready)", ErrNoRetry),
		"bad":  fmt.Errorf("retry plugin bad: unsupported: the plugin cannot"),
	}}
	s := start(t, Options{Source: &fakeSource{}, Retrier: r})
	js := map[string]string{"Accept": "application/json"}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	cases := []struct {
		name     string
		req      request
		code     int
		body     string
		location string
		called   bool
	}{
		{"json", request{path: "/plugins/wa/retry", header: js}, 200, `"retried": "wa"`, "", true},
		{"browser form", request{path: "/plugins/wa/retry", header: form}, 303, "", "/", true},
		{"unknown", request{path: "/plugins/nope/retry", header: js}, 404, "no such plugin instance", "", true},
		{"no retry offered", request{path: "/plugins/tg/retry", header: js}, 409, "offers no retry", "", true},
		{"plugin refuses", request{path: "/plugins/bad/retry", header: form}, 502, "the plugin cannot", "", true},
		{"GET", request{method: http.MethodGet, path: "/plugins/wa/retry"}, 405, "", "", false},
		{"cross-site", request{path: "/plugins/wa/retry", header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403, "cross-origin", "", false},
		{"foreign origin", request{path: "/plugins/wa/retry", header: map[string]string{"Origin": "http://evil.example"}}, 403, "cross-origin", "", false},
		{"rebinding", request{path: "/plugins/wa/retry", host: "evil.example", header: js}, 403, "host not allowed", "", false},
	}
	for _, c := range cases {
		before := r.count()
		if c.req.method == "" {
			c.req.method = http.MethodPost
		}
		// The client must not follow the redirect: do uses
		// http.DefaultClient, so ask for the raw answer here.
		code, body, hdr := doNoRedirect(t, s, c.req)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, code, body, c.code, c.body)
		}
		if c.location != "" && hdr.Get("Location") != c.location {
			t.Errorf("%s: Location %q, want %q", c.name, hdr.Get("Location"), c.location)
		}
		if called := r.count() > before; called != c.called {
			t.Errorf("%s: retrier called = %v, want %v", c.name, called, c.called)
		}
	}

	none := start(t, Options{Source: &fakeSource{}})
	if code, _, _ := doNoRedirect(t, none, request{method: http.MethodPost, path: "/plugins/wa/retry"}); code != http.StatusNotFound {
		t.Errorf("without a Retrier: %d, want 404", code)
	}
}

// TestPausedOnThePage: while claude's limit pauses the turns, the status
// page says until when and why, and /status.json carries the same.
func TestPausedOnThePage(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 11, 25, 14, 5, 0, 0, time.Local)
	for _, c := range []struct{ reason, want string }{
		{"usage_limit", "claude's usage limit was reached."},
		{"rate_limited", "claude's rate limit (rate_limited) was reached."},
	} {
		s := start(t, Options{Source: &fakeSource{snap: Snapshot{Paused: &Pause{Until: until, Reason: c.reason}}}})
		_, body, _ := do(t, s, request{path: "/"})
		if want := "Turns are paused until 2026-11-25 14:05:00: " + c.want; !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
		_, body, _ = do(t, s, request{path: "/status.json"})
		var got struct{ Paused *Pause }
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if got.Paused == nil || !got.Paused.Until.Equal(until) || got.Paused.Reason != c.reason {
			t.Errorf("status.json paused %+v", got.Paused)
		}
	}
	s := start(t, Options{Source: &fakeSource{snap: Snapshot{}}})
	if _, body, _ := do(t, s, request{path: "/"}); strings.Contains(body, "paused until") {
		t.Error("the page says paused while nothing is")
	}
}
