package admin

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuth: every route asks for the token — the header, the cookie, or
// ?token= that sets the cookie and redirects without it; /healthz alone
// answers without it, and then says only ok or unavailable.
func TestAuth(t *testing.T) {
	t.Parallel()
	pairing := &fakePairing{codes: map[string]string{"GOODCODE": "tg:42"}}
	retrier := &fakeRetrier{}
	s := start(t, Options{Source: &fakeSource{snap: Snapshot{Plugins: []Plugin{{Instance: "tg", State: "backoff", LastError: "secret detail"}}}},
		Pairing: pairing, Retrier: retrier, Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("m 1\n")) })})
	cookie := newAuthenticator(testToken, "").cookie
	none := map[string]string{"Authorization": ""}
	withCookie := func(extra map[string]string) map[string]string {
		h := map[string]string{"Authorization": "", "Cookie": CookieName + "=" + cookie}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	cases := []struct {
		name     string
		req      request
		code     int
		location string
		cookie   bool // the answer sets the cookie
	}{
		{"page without token", request{path: "/", header: none}, 401, "", false},
		{"json without token", request{path: "/status.json", header: none}, 401, "", false},
		{"metrics without token", request{path: "/metrics", header: none}, 401, "", false},
		{"pairing without token", request{path: "/pairing", header: none}, 401, "", false},
		{"approve without token", request{method: "POST", path: "/pairing/approve", body: `{"code":"GOODCODE"}`,
			header: map[string]string{"Authorization": "", "Content-Type": "application/json"}}, 401, "", false},
		{"retry without token", request{method: "POST", path: "/plugins/tg/retry", header: none}, 401, "", false},
		{"wrong token", request{path: "/status.json", header: map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 64)}}, 401, "", false},
		{"token as Basic", request{path: "/status.json", header: map[string]string{"Authorization": "Basic " + testToken}}, 401, "", false},
		{"wrong cookie", request{path: "/status.json", header: map[string]string{"Authorization": "", "Cookie": CookieName + "=" + testToken}}, 401, "", false},
		{"wrong ?token=", request{path: "/?token=nope", header: none}, 401, "", false},
		{"page with header", request{path: "/"}, 200, "", false},
		{"json with header", request{path: "/status.json"}, 200, "", false},
		{"metrics with header", request{path: "/metrics"}, 200, "", false},
		{"pairing with header", request{path: "/pairing"}, 200, "", false},
		{"approve with header", request{method: "POST", path: "/pairing/approve", body: `{"code":"GOODCODE"}`,
			header: map[string]string{"Content-Type": "application/json"}}, 200, "", false},
		{"?token= sets the cookie", request{path: "/?token=" + testToken, header: none}, 303, "/", true},
		{"?token= keeps the other query", request{path: "/status.json?token=" + testToken + "&x=1", header: none}, 303, "/status.json?x=1", true},
		{"page with cookie", request{path: "/", header: withCookie(nil)}, 200, "", false},
		{"json with cookie", request{path: "/status.json", header: withCookie(nil)}, 200, "", false},
		{"retry with cookie from the page", request{method: "POST", path: "/plugins/tg/retry",
			header: withCookie(map[string]string{"Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"})}, 303, "/", false},
		{"retry with cookie, Origin of the page", request{method: "POST", path: "/plugins/tg/retry",
			header: withCookie(map[string]string{"Origin": "http://" + s.Addr()})}, 303, "/", false},
		{"retry with cookie alone", request{method: "POST", path: "/plugins/tg/retry", header: withCookie(nil)}, 403, "", false},
		{"approve with cookie alone", request{method: "POST", path: "/pairing/approve", body: `{"code":"GOODCODE"}`,
			header: withCookie(map[string]string{"Content-Type": "application/json"})}, 403, "", false},
		{"healthz without token", request{path: "/healthz", header: none}, 503, "", false},
	}
	for _, c := range cases {
		code, body, hdr := doNoRedirect(t, s, c.req)
		if code != c.code {
			t.Errorf("%s: %d %q, want %d", c.name, code, body, c.code)
		}
		if loc := hdr.Get("Location"); loc != c.location {
			t.Errorf("%s: Location %q, want %q", c.name, loc, c.location)
		}
		sc := hdr.Get("Set-Cookie")
		if got := strings.HasPrefix(sc, CookieName+"="+cookie); got != c.cookie {
			t.Errorf("%s: Set-Cookie %q, want the cookie: %v", c.name, sc, c.cookie)
		}
		if c.cookie && (!strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict")) {
			t.Errorf("%s: cookie %q is not HttpOnly and SameSite=Strict", c.name, sc)
		}
		if strings.Contains(sc, testToken) || strings.Contains(body, testToken) {
			t.Errorf("%s: the answer holds the token itself", c.name)
		}
		if code == 401 && !strings.Contains(body, "token") {
			t.Errorf("%s: 401 body %q does not say what is missing", c.name, body)
		}
		if c.name == "healthz without token" && (strings.Contains(body, "secret detail") || strings.Contains(body, "tg")) {
			t.Errorf("healthz without token tells more than unavailable: %q", body)
		}
	}
	if got := pairing.calls(); len(got) != 1 {
		t.Errorf("approvals reaching the pairing: %v, want exactly the one with the header", got)
	}
	if got := retrier.count(); got != 2 {
		t.Errorf("retries reaching the plugin: %d, want the 2 from the page", got)
	}
}

// TestTokenFile: the token is made once, 0600 in a 0700 directory, and
// read back as it was; a file other accounts can read is refused.
func TestTokenFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	path := TokenPath(dir)
	if _, err := ReadToken(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadToken before the first start: %v, want not exist", err)
	}
	tok, err := LoadOrCreateToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok) != 64 {
		t.Errorf("token %d characters, want 64 hex digits", len(tok))
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	again, err := LoadOrCreateToken(path)
	if err != nil || again != tok {
		t.Errorf("second start: %q, %v; want the same token", again, err)
	}
	if read, err := ReadToken(path); err != nil || read != tok {
		t.Errorf("ReadToken: %q, %v", read, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable token file: %v, want a refusal saying chmod 600", err)
	}
}
