package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is the name of the admin token's file in the data directory.
const TokenFile = "admin.token"

// CookieName is the cookie a browser keeps after opening the link with
// ?token=: an HMAC of the token, never the token itself.
const CookieName = "clawhost_admin"

// TokenPath is the admin token's file for a data directory.
func TokenPath(dataDir string) string { return filepath.Join(dataDir, TokenFile) }

// LoadOrCreateToken returns the token kept in path, creating it at the
// first start: 32 bytes from crypto/rand as 64 hex digits, written 0600
// (its directory 0700) and reused by every later start, so links and
// scripts keep working across restarts. A file that is group- or
// world-accessible is refused: whoever reads it can approve pairings.
func LoadOrCreateToken(path string) (string, error) {
	tok, err := ReadToken(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok = hex.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return ReadToken(path) // another process made it first
	}
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return "", fmt.Errorf("admin token: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("admin token: write %s: %w", path, err)
	}
	return tok, nil
}

// ReadToken reads the admin token from path, as `clawhost status`,
// `pairing` and `retry` do. The error wraps fs.ErrNotExist when the host
// never started with this data directory.
func ReadToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("admin token: %s is readable by other accounts (mode %v); chmod 600 it, or delete it to get a new token at the next start", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 {
		return "", fmt.Errorf("admin token: %s holds no token (delete it to get a new one at the next start)", path)
	}
	return tok, nil
}

// authenticator checks every request for the token: the Authorization
// header, the cookie, or ?token= (which sets the cookie and redirects to
// the same address without it, as Jupyter does).
type authenticator struct {
	token  string
	cookie string // the cookie's value: an HMAC of the token
	// hint says where the token is, for the 401 answer.
	hint string
}

func newAuthenticator(token, hint string) *authenticator {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("clawhost admin cookie v1"))
	return &authenticator{token: token, cookie: hex.EncodeToString(m.Sum(nil)), hint: hint}
}

func (a *authenticator) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(a.token)) == 1
}

// how a request proved it holds the token.
type proof int

const (
	noProof proof = iota
	byHeader
	byCookie
)

// check says how r carries the token, if it does.
func (a *authenticator) check(r *http.Request) proof {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && a.tokenOK(strings.TrimSpace(auth)) {
		return byHeader
	}
	if c, err := r.Cookie(CookieName); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(a.cookie)) == 1 {
		return byCookie
	}
	return noProof
}

// sameOrigin reports whether a browser says r comes from a page of this
// server: Sec-Fetch-Site same-origin, or else an Origin naming r's host.
// A request with neither header is not a browser's form post and is not
// same-origin either.
func sameOrigin(r *http.Request) bool {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" {
		return s == "same-origin"
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// wrap requires the token on every route but /healthz (which answers only
// ok or unavailable without it). A POST authenticated by the cookie alone
// must also be same-origin (the status page's own retry button): the
// cookie is sent by the browser on its own, so it alone cannot tell the
// operator's click from another page's form.
func (a *authenticator) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Has("token") {
			if !a.tokenOK(q.Get("token")) {
				a.deny(w)
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: CookieName, Value: a.cookie, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
			q.Del("token")
			u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		p := a.check(r)
		if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
			next.ServeHTTP(w, r.WithContext(withAuthorized(r.Context(), p != noProof)))
			return
		}
		switch {
		case p == noProof:
			a.deny(w)
		case p == byCookie && r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r):
			http.Error(w, "this action needs the Authorization header, or a click on the status page itself", http.StatusForbidden)
		default:
			next.ServeHTTP(w, r.WithContext(withAuthorized(r.Context(), true)))
		}
	})
}

func (a *authenticator) deny(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="clawhost admin"`)
	http.Error(w, "clawhost admin: this endpoint needs its token: open the link clawhost printed at start, or send Authorization: Bearer <token> ("+a.hint+")", http.StatusUnauthorized)
}

type authorizedKey struct{}

// withAuthorized records in ctx whether the request carried the token.
func withAuthorized(ctx context.Context, ok bool) context.Context {
	return context.WithValue(ctx, authorizedKey{}, ok)
}

// authorized reports whether the request of ctx carried the token.
func authorized(ctx context.Context) bool {
	ok, _ := ctx.Value(authorizedKey{}).(bool)
	return ok
}
