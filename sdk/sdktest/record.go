package sdktest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/status"
)

// Log is an io.Writer that keeps what is written, safe for the code under
// test to write while the test reads: a plugin's log output, a process's
// stderr. The zero value is ready.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Logger returns a text logger of every level (debug and below included)
// that writes to l: a plugin's schema.Config.Logger in a test.
func (l *Log) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug - 4}))
}

// Statuses is a status.Reporter that keeps every report, for a plugin's
// schema.Config.Status in a test. The zero value is ready.
type Statuses struct {
	mu      sync.Mutex
	all     []status.Status
	changed changes
}

var _ status.Reporter = (*Statuses)(nil)

// Report keeps st and wakes Wait.
func (s *Statuses) Report(st status.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, st)
	s.changed.notify()
}

// All returns the reports so far, oldest first.
func (s *Statuses) All() []status.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]status.Status(nil), s.all...)
}

// Last returns the latest report; the zero Status before the first.
func (s *Statuses) Last() status.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return status.Status{}
	}
	return s.all[len(s.all)-1]
}

// Wait waits for the first report at or after index from (0: the first
// report) that match accepts, and returns it with the index after it (the
// from of the next Wait). It wakes on each report, bounded as WaitFor is;
// on the bound it fails t with what and the reports it saw.
func (s *Statuses) Wait(t testing.TB, from int, what string, match func(status.Status) bool) (status.Status, int) {
	t.Helper()
	timer := time.NewTimer(time.Until(WaitDeadline(t)))
	defer timer.Stop()
	for {
		s.mu.Lock()
		for i := from; i < len(s.all); i++ {
			if match(s.all[i]) {
				st := s.all[i]
				s.mu.Unlock()
				return st, i + 1
			}
		}
		ch := s.changed.next()
		s.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			all := s.All()
			t.Fatalf("timed out waiting for %s: the reports from %d: %+v", what, from, all[min(from, len(all)):])
			return status.Status{}, from
		}
	}
}

// changes wakes the waits of a recorder on each change. Its owner's mutex
// guards it; the zero value is ready.
type changes struct{ ch chan struct{} }

// notify wakes every wait taken with next.
func (c *changes) notify() {
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// next is closed at the next notify.
func (c *changes) next() <-chan struct{} {
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// ConfigJSON is the JSON of a config {} block for schema.Config.JSON: the
// test's base attributes with extra's on top (an extra value replaces the
// base one). A value that cannot be marshalled fails t.
func ConfigJSON(t testing.TB, base, extra map[string]any) []byte {
	t.Helper()
	cfg := make(map[string]any, len(base)+len(extra))
	maps.Copy(cfg, base)
	maps.Copy(cfg, extra)
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return b
}
