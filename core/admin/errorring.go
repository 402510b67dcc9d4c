package admin

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// DefaultErrorRingSize is the capacity of an [ErrorRing] created with a
// size below 1.
const DefaultErrorRingSize = 100

// maxMessageLen bounds one recorded message, in bytes.
const maxMessageLen = 2048

// redacted replaces the value of a sensitive log argument.
const redacted = "[redacted]"

// sensitiveKeys are the substrings of an argument key (lower-cased, with
// '-' and '_' removed) whose value is never recorded.
var sensitiveKeys = []string{"token", "secret", "password", "apikey", "authorization", "cookie"}

// ErrorRing keeps the most recent warnings and errors logged through an
// hclog InterceptLogger, for the status page. Register it with
//
//	logger := hclog.NewInterceptLogger(opts)
//	ring := admin.NewErrorRing(100)
//	logger.RegisterSink(ring)
//
// and return ring.List() in [Snapshot.Errors]. Entries at level Warn and
// Error are kept, lower levels ignored. The value of an argument whose key
// contains "token", "secret", "password", "apikey"/"api_key",
// "authorization" or "cookie" (case-insensitively) is replaced by
// "[redacted]". A message is cut at 2 KiB.
//
// An ErrorRing is safe for concurrent use.
type ErrorRing struct {
	now func() time.Time

	mu      sync.Mutex
	entries []ErrorEntry // ring storage, len == capacity once full
	next    int          // index of the slot the next entry goes to
	full    bool
}

var _ hclog.SinkAdapter = (*ErrorRing)(nil)

// NewErrorRing returns a ring keeping the last n entries; n < 1 means
// DefaultErrorRingSize.
func NewErrorRing(n int) *ErrorRing {
	if n < 1 {
		n = DefaultErrorRingSize
	}
	return &ErrorRing{now: time.Now, entries: make([]ErrorEntry, n)}
}

// Accept implements hclog.SinkAdapter: it records msg and args when level
// is Warn or Error. name, the logger's name, becomes the entry's Source.
func (r *ErrorRing) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	if level < hclog.Warn || level > hclog.Error {
		return
	}
	e := ErrorEntry{
		At:      r.now(),
		Level:   level.String(),
		Source:  name,
		Message: formatMessage(msg, args),
	}
	r.mu.Lock()
	r.entries[r.next] = e
	r.next = (r.next + 1) % len(r.entries)
	if r.next == 0 {
		r.full = true
	}
	r.mu.Unlock()
}

// List returns the recorded entries, newest first.
func (r *ErrorRing) List() []ErrorEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.entries)
	}
	out := make([]ErrorEntry, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.entries[(r.next-i+len(r.entries))%len(r.entries)])
	}
	return out
}

// formatMessage renders msg followed by the arguments as key=value pairs,
// redacting sensitive values. A trailing key without value is rendered the
// way hclog does, as EXTRA_VALUE_AT_END=value.
func formatMessage(msg string, args []interface{}) string {
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i < len(args); i += 2 {
		var key string
		var val interface{}
		if i+1 < len(args) {
			key, val = fmt.Sprint(args[i]), args[i+1]
		} else {
			key, val = hclog.MissingKey, args[i]
		}
		b.WriteByte(' ')
		b.WriteString(key)
		b.WriteByte('=')
		if sensitive(key) {
			b.WriteString(redacted)
		} else {
			b.WriteString(formatValue(val))
		}
		if b.Len() > maxMessageLen {
			break
		}
	}
	return truncate(b.String(), maxMessageLen)
}

// sensitive reports whether the value of key must not be recorded.
func sensitive(key string) bool {
	k := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(key))
	for _, s := range sensitiveKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// formatValue renders one argument value; strings are quoted when they
// would otherwise be ambiguous.
func formatValue(v interface{}) string {
	var s string
	switch v := v.(type) {
	case hclog.Format:
		if len(v) > 0 {
			s = fmt.Sprintf(fmt.Sprint(v[0]), v[1:]...)
		}
	case hclog.Hex:
		s = "0x" + strconv.FormatInt(int64(v), 16)
	case hclog.Octal:
		s = "0" + strconv.FormatInt(int64(v), 8)
	case hclog.Binary:
		s = "0b" + strconv.FormatInt(int64(v), 2)
	default: // errors and Stringers too; fmt survives their panics
		s = fmt.Sprint(v)
	}
	if s == "" || strings.ContainsAny(s, " =\"\t\r\n") {
		return strconv.Quote(s)
	}
	return s
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
