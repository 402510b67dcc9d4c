package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json from Meta (only for a deliberate change of the stored format)")

// TestGoldenJSON decodes the metadata as core/turn's chatMeta wrote it
// before this package (testdata/*.json, written by that code) and checks
// that encoding it again gives the same bytes: stored rows need no
// migration.
func TestGoldenJSON(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("golden files: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := NewCache(0).Decode("k", bytes.TrimSpace(want))
			if !ok {
				t.Fatalf("%s does not decode", f)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			if *update {
				if err := os.WriteFile(f, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("re-encoded:\n%s\nstored:\n%s", got, want)
			}
		})
	}
}

func TestParsers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     string
		queue  QueueMode
		effort Effort
		qErr   bool
		effErr bool
	}{
		{in: "", queue: "", effort: ""},
		{in: " Collect ", queue: QueueCollect, effErr: true},
		{in: "steer", queue: QueueSteer, effErr: true},
		{in: "MAX", qErr: true, effort: EffortMax},
		{in: "low", qErr: true, effort: EffortLow},
		{in: "default", qErr: true, effErr: true},
		{in: "sideways", qErr: true, effErr: true},
		// OpenClaw's aliases (openclaw-behaviour.md §1.10) and thinking
		// levels.
		{in: "queue", queue: QueueSteer, effErr: true},
		{in: "Steer-Backlog", queue: QueueFollowup, effErr: true},
		{in: "steer+backlog", queue: QueueFollowup, effErr: true},
		{in: "coalesce", queue: QueueCollect, effErr: true},
		{in: "abort", queue: QueueInterrupt, effErr: true},
		{in: "followups", queue: QueueFollowup, effErr: true},
		{in: "off", qErr: true, effort: EffortLow},
		{in: "minimal", qErr: true, effort: EffortLow},
		{in: "xhigh", qErr: true, effort: EffortMax},
	} {
		q, err := ParseQueueMode(c.in)
		if q != c.queue || (err != nil) != c.qErr {
			t.Errorf("ParseQueueMode(%q) = %q, %v", c.in, q, err)
		}
		e, err := ParseEffort(c.in)
		if e != c.effort || (err != nil) != c.effErr {
			t.Errorf("ParseEffort(%q) = %q, %v", c.in, e, err)
		}
	}
	_, err := ParseQueueMode("Sideways")
	if err == nil || err.Error() != `unknown queue mode "Sideways" (followup, collect, interrupt, steer)` {
		t.Errorf("error: %v", err)
	}
	if got := Join(Efforts, "|"); got != "low|medium|high|max" {
		t.Errorf("Join(Efforts) = %q", got)
	}
}

// TestSet: every setting has its name, a bad effort or queue mode changes
// nothing, and an unknown name is an error (it was a silent no-op).
func TestSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  Setting
		value string
		want  Overrides
		err   bool
	}{
		{SettingModel, "opus", Overrides{Model: "opus", Effort: EffortLow}, false},
		{SettingEffort, "High", Overrides{Effort: EffortHigh}, false},
		{SettingEffort, "", Overrides{}, false},
		{SettingEffort, "extreme", Overrides{Effort: EffortLow}, true},
		{SettingMode, "plan", Overrides{Mode: "plan", Effort: EffortLow}, false},
		{SettingQueue, "interrupt", Overrides{Queue: QueueInterrupt, Effort: EffortLow}, false},
		{SettingQueue, "sideways", Overrides{Effort: EffortLow}, true},
		{"verbose", "on", Overrides{Effort: EffortLow}, true},
	} {
		o := Overrides{Effort: EffortLow}
		err := o.Set(c.name, c.value)
		if o != c.want || (err != nil) != c.err {
			t.Errorf("Set(%q, %q) = %+v, %v; want %+v, error %v", c.name, c.value, o, err, c.want, c.err)
		}
	}
}

func TestPastAndKept(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var m Meta
	m.PushPast(store.Session{ClaudeSessionID: "none"}) // no turn: not kept
	if len(m.Past) != 0 {
		t.Fatalf("a session without turns was kept: %+v", m.Past)
	}
	for i := range MaxPast + 2 {
		m.PushPast(store.Session{ClaudeSessionID: string(rune('a' + i)), CreatedAt: t0, LastMessageAt: t0.Add(time.Hour), Turns: int64(i + 1)})
	}
	m.PushPast(store.Session{ClaudeSessionID: "l", Turns: 20}) // again: moves to the front, not doubled
	if len(m.Past) != MaxPast || m.Past[0].ID != "l" || m.Past[0].Turns != 20 || m.Past[1].ID != "k" {
		t.Fatalf("past: %+v", m.Past)
	}
	m.DropPast("k")
	if len(m.Past) != MaxPast-1 || m.Past[1].ID != "j" {
		t.Fatalf("after DropPast: %+v", m.Past)
	}
	m.Model, m.Queue, m.PromptTokens, m.Always, m.Compactions = "opus", QueueCollect, 9, []string{"Read"}, 3
	kept, ok := m.Kept()
	want := Meta{Model: "opus", Queue: QueueCollect, Past: m.Past}
	if !ok || !reflect.DeepEqual(kept, want) {
		t.Fatalf("Kept = %+v, %v", kept, ok)
	}
	if _, ok := (Meta{PromptTokens: 5, Always: []string{"Read"}}).Kept(); ok {
		t.Fatal("nothing to keep, yet Kept is ok")
	}
}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	return sqlitetest.Open(t, t.TempDir(), sqlite.Options{})
}

// TestUpdate: the metadata changes in the row, other fields stay, a new
// session is created under its key, an error of fn (ErrUnchanged too)
// writes nothing.
func TestUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openStore(t)
	c := NewCache(0)
	if _, err := c.Update(ctx, db, "tg:direct:5", func(m *Meta) error { m.Model = "opus"; return nil }); err != nil {
		t.Fatal(err)
	}
	s, err := db.Session(ctx, "tg:direct:5")
	if err != nil || s.Key != "tg:direct:5" || c.Of(s).Model != "opus" {
		t.Fatalf("created: %+v, %v", s, err)
	}
	if _, err := db.UpdateSession(ctx, "tg:direct:5", func(s *store.Session, _ bool) error { s.Turns = 3; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, db, "tg:direct:5", func(m *Meta) error { m.Always = append(m.Always, "Read"); return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	for _, e := range []error{boom, ErrUnchanged} {
		if _, err := c.Update(ctx, db, "tg:direct:5", func(m *Meta) error { m.Model = "haiku"; return e }); !errors.Is(err, e) {
			t.Fatalf("Update returned %v, want %v", err, e)
		}
	}
	s, _ = db.Session(ctx, "tg:direct:5")
	if m := c.Of(s); m.Model != "opus" || len(m.Always) != 1 || s.Turns != 3 {
		t.Fatalf("stored: %+v, turns %d", m, s.Turns)
	}
	// An uncached reader agrees with the cached one.
	if m, _ := (*Cache)(nil).Decode(s.Key, s.Chat); m.Model != "opus" || len(m.Always) != 1 {
		t.Fatalf("uncached: %+v", m)
	}
}

// TestSplitDirective: a directive with text splits into the directive, its
// argument and the message; a directive alone, other commands and a
// /verbose without on|off do not.
func TestSplitDirective(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, name, arg, rest string
		ok                  bool
	}{
		{"/model opus explain this", "model", "opus", "explain this", true},
		{"  /think high why is the sky blue?\nand more", "think", "high", "why is the sky blue?\nand more", true},
		{"/T: low go", "t", "low", "go", true},
		{"/queue steer-backlog then this", "queue", "steer-backlog", "then this", true},
		{"/verbose on show me", "verbose", "on", "show me", true},
		{"/verbose please", "", "", "", false},
		{"/verbose explain this", "", "", "", false},
		{"/model opus", "", "", "", false},
		{"/model opus   ", "", "", "", false},
		{"/model", "", "", "", false},
		{"/status now please", "", "", "", false},
		{"explain /model opus", "", "", "", false},
	} {
		name, arg, rest, ok := SplitDirective(c.in)
		if name != c.name || arg != c.arg || rest != c.rest || ok != c.ok {
			t.Errorf("SplitDirective(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", c.in, name, arg, rest, ok, c.name, c.arg, c.rest, c.ok)
		}
	}
}

// TestPushPastTakesTheName: the name (and the terminal session it was
// continued from) goes with the session that becomes an earlier one; the
// new current one has none.
func TestPushPastTakesTheName(t *testing.T) {
	t.Parallel()
	m := Meta{Name: "deploy", ContinuedFrom: "x", Takeover: true}
	m.PushPast(store.Session{ClaudeSessionID: "c1", Turns: 2})
	if m.Name != "" || m.ContinuedFrom != "" || m.Takeover || len(m.Past) != 1 || m.Past[0].Name != "deploy" {
		t.Fatalf("%+v", m)
	}
}
