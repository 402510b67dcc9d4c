package admin

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// TestAttachNeedsTheHeader: the attach endpoint hands the owner's chat to
// a terminal, so the cookie a browser sends on its own does not open it:
// a websocket opened by another origin's page (the cookie, a foreign
// Origin) or a bare cookie is refused; the Authorization header, or the
// cookie from the status page itself, reaches it.
func TestAttachNeedsTheHeader(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	s := start(t, Options{Source: &fakeSource{}, Attach: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		w.WriteHeader(http.StatusTeapot)
	})})
	cookie := map[string]string{"Authorization": "", "Cookie": CookieName + "=" + newAuthenticator(testToken, "").cookie}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range cookie {
			h[a] = b
		}
		h[k] = v
		return h
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		code int
	}{
		{"no token", map[string]string{"Authorization": ""}, 401},
		{"cookie from another origin", with("Origin", "https://evil.example"), 403},
		{"cookie alone", cookie, 403},
		{"cookie from the page", with("Sec-Fetch-Site", "same-origin"), 418},
		{"header", nil, 418},
	} {
		if code, body, _ := do(t, s, request{path: "/attach?chat=tg:1", header: c.hdr}); code != c.code {
			t.Errorf("%s: %d %q, want %d", c.name, code, body, c.code)
		}
	}
	if n := reached.Load(); n != 2 {
		t.Errorf("the endpoint was reached %d times, want 2", n)
	}
}
