// Package redact replaces configured secrets by their value wherever text
// leaves the host: the log, the status page, /status.json and errors.
//
// Redaction by key (a log argument named "token") misses a secret that
// travels inside other text: a plugin's panic message, a URL in an error,
// a command an approval shows. A [Redactor] knows the values themselves —
// the composer adds every secret the configuration holds (plugin config
// attributes their schema marks sensitive, the storage url's password,
// environment values whose names say they are secret, the admin token) —
// and replaces each occurrence with [Mask].
//
// Values shorter than [MinLen] are not replaced: a three-letter password
// would turn every word that contains it into [redacted] and say what it
// is. They are still hidden where redaction by key applies.
package redact

import (
	"encoding/json"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "[redacted]"

// MinLen is the length below which a value is not redacted by value.
const MinLen = 6

// Redactor replaces known secret values in text. The zero value knows
// none; it is safe for concurrent use, and secrets may be added at any
// time (a plugin's, once its schema says which attributes are sensitive).
type Redactor struct {
	mu      sync.RWMutex
	secrets map[string]bool
	rep     *strings.Replacer // nil when there are no secrets
}

// New returns a Redactor knowing secrets.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes r redact secrets, and the forms they take in URLs and JSON.
// Values shorter than MinLen are ignored.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for _, s := range secrets {
		if len(s) < MinLen {
			continue
		}
		for _, form := range forms(s) {
			if !r.secrets[form] {
				if r.secrets == nil {
					r.secrets = map[string]bool{}
				}
				r.secrets[form] = true
				changed = true
			}
		}
	}
	if !changed {
		return
	}
	// Longest first: a secret that contains another is replaced whole.
	all := make([]string, 0, len(r.secrets))
	for s := range r.secrets {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, Mask)
	}
	r.rep = strings.NewReplacer(pairs...)
}

// forms are s as written, percent-encoded (in a URL) and JSON-escaped
// (in a JSON log line).
func forms(s string) []string {
	out := []string{s}
	for _, f := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		if f != s {
			out = append(out, f)
		}
	}
	if b, err := json.Marshal(s); err == nil {
		if f := string(b[1 : len(b)-1]); f != s {
			out = append(out, f)
		}
	}
	return out
}

// String returns s with every known secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.rep
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// Writer returns a writer that redacts each Write before passing it to w.
// A secret split across two writes is not seen; hclog writes a log entry
// in one.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	out := w.r.String(string(p))
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Error returns err with its text redacted; errors.Is and errors.As still
// see err. Nil stays nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := r.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Strings redacts, in place, every string reachable from v through
// pointers, exported struct fields, slices, arrays and map values: a
// status snapshot before it is served. v must be a pointer.
func (r *Redactor) Strings(v any) {
	if r == nil {
		return
	}
	r.mu.RLock()
	empty := r.rep == nil
	r.mu.RUnlock()
	if empty {
		return
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer {
		return
	}
	r.walk(rv)
}

func (r *Redactor) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface {
				// An interface's value cannot be set in place: copy,
				// redact, store back.
				if e.Kind() == reflect.String && v.CanSet() {
					v.Set(reflect.ValueOf(r.String(e.String())).Convert(e.Type()))
				}
				return
			}
			r.walk(e)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				r.walk(f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			r.walk(v.Index(i))
		}
	case reflect.Map:
		if v.Type().Elem().Kind() != reflect.String {
			// Map values are not addressable; only string values (the
			// attention data, lease info) are redacted.
			return
		}
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			v.SetMapIndex(k, reflect.ValueOf(r.String(e.String())).Convert(e.Type()))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(r.String(v.String()))
		}
	}
}

// secretNameRe matches environment variable names whose values are
// secrets: GITHUB_TOKEN, ANTHROPIC_API_KEY, DB_PASSWORD, AWS_SECRET_ACCESS_KEY.
var secretNameRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION_?KEY|_KEY$)`)
})

// SecretName reports whether an environment variable called name holds a
// secret, by its name.
func SecretName(name string) bool { return secretNameRe().MatchString(name) }

// URLPassword is the password of a PostgreSQL URL or key=value string.
func URLPassword(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
		if pw := u.Query().Get("password"); pw != "" {
			out = append(out, pw)
		}
		return out
	}
	for _, kv := range strings.Fields(s) {
		if pw, ok := strings.CutPrefix(kv, "password="); ok {
			out = append(out, strings.Trim(pw, "'"))
		}
	}
	return out
}
