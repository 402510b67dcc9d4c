package schedules

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/config/configtest"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
)

// openTestStore opens a SQLite store in dir, closed at the end.
func openTestStore(t *testing.T, dir string) store.Store {
	t.Helper()
	return sqlitetest.Open(t, dir, sqlite.Options{})
}

const schedulesConfig = "data_dir = \"./data\"\nplugin \"tg\" {\n  source = \"telegram\"\n  enabled = false\n}\nschedule \"file\" {\n  cron = \"0 9 * * *\"\n  chat = \"tg:1\"\n  prompt = \"p\"\n}\n"

func noFire(context.Context, gateway.ScheduledRun) error { return nil }

// Schedules added from chat are checked, kept in the store (no file in
// data_dir) across a restart, listed with the file's, and removable; the
// file's are not.
func TestChatSchedules(t *testing.T) {
	t.Parallel()
	cfg := configtest.LoadWithDataDir(t, schedulesConfig)
	db := openTestStore(t, cfg.DataDir)
	newSched := func() *Scheduler {
		s := New(db, hclog.NewNullLogger(), noFire, 0)
		s.Start(cfg)
		t.Cleanup(s.Stop)
		return s
	}
	ctx := context.Background()
	s := newSched()
	add := command.ScheduleEntry{Name: "standup", Cron: "0 9 * * 1-5", Chat: "tg:42", Prompt: "summarize", Sender: "tg:42"}
	if err := s.Add(ctx, add); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []command.ScheduleEntry{
		{Name: "standup", Cron: "0 9 * * *", Chat: "tg:42", Prompt: "x"},   // taken
		{Name: "file", Cron: "0 9 * * *", Chat: "tg:42", Prompt: "x"},      // the file's
		{Name: "heartbeat", Cron: "0 9 * * *", Chat: "tg:42", Prompt: "x"}, // reserved
		{Name: "bad cron", Cron: "0 9 * *", Chat: "tg:42", Prompt: "x"},
		{Name: "late", Cron: "0 25 * * *", Chat: "tg:42", Prompt: "x"},
	} {
		if err := s.Add(ctx, bad); err == nil {
			t.Errorf("added %+v", bad)
		}
	}
	stored, err := db.ListSchedules(ctx)
	if err != nil || len(stored) != 1 || stored[0].Name != "standup" || stored[0].Sender != "tg:42" || stored[0].Cron != add.Cron {
		t.Fatalf("stored schedules %+v, %v", stored, err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, legacySchedulesFile)); !os.IsNotExist(err) {
		t.Errorf("a schedules file was written in data_dir: %v", err)
	}
	s.Stop()
	s = newSched() // a restart
	list := s.List(ctx)
	if len(list) != 2 || list[0].Name != "file" || !list[0].FromFile || list[1].Name != "standup" || list[1].FromFile || list[1].Next.IsZero() || list[1].Sender != "tg:42" {
		t.Fatalf("list %+v", list)
	}
	if ok, _ := s.Remove(ctx, "file"); ok {
		t.Error("removed the file's schedule from chat")
	}
	if ok, err := s.Remove(ctx, "standup"); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if list := s.List(ctx); len(list) != 1 {
		t.Errorf("after remove %+v", list)
	}
}

// A host of a cluster sees the schedules another host added or removed in
// the shared store at its next poll, and runs them: here a one-shot entry
// added by "another host" (straight into the store, ten minutes ago) that
// died before the entry's time came (five minutes ago) is made up once,
// then removed.
func TestSchedulesAddedByAnotherHostRun(t *testing.T) {
	t.Parallel()
	cfg := configtest.LoadWithDataDir(t, schedulesConfig)
	ago := func() time.Time { return time.Now().Add(-10 * time.Minute) } // the other host's add
	db := sqlitetest.Open(t, cfg.DataDir, sqlite.Options{Now: ago})
	fired := make(chan gateway.ScheduledRun, 4)
	s := New(db, hclog.NewNullLogger(), func(_ context.Context, r gateway.ScheduledRun) error { fired <- r; return nil }, 10*time.Millisecond)
	s.Start(cfg)
	t.Cleanup(s.Stop)
	ctx := context.Background()
	at := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	if _, err := db.AddSchedule(ctx, store.Schedule{Name: "agent-1", At: at, Chat: "tg:42", Prompt: "remind me", Sender: "tg:42"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-fired:
		if r.Job != "agent-1" || !r.At.Equal(at) || r.Chat != "tg:42" || r.Prompt != "remind me" {
			t.Fatalf("run %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the schedule another host added did not run")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := db.ListSchedules(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the one-shot entry stayed after its run: %+v", list)
		}
		time.Sleep(10 * time.Millisecond) // waits on the background removal
	}
	select {
	case r := <-fired:
		t.Fatalf("ran again: %+v", r)
	default:
	}
}

// The files of earlier versions (data_dir/schedules.json and
// schedule.json, in their format) move into the store at the first start
// and are renamed *.migrated, never deleted; a second start (or one that
// died before the rename) changes nothing; the moved schedules run and are
// listed with their senders and last runs.
func TestScheduleFilesMigrate(t *testing.T) {
	t.Parallel()
	cfg := configtest.LoadWithDataDir(t, schedulesConfig)
	at := time.Date(2031, 5, 1, 8, 0, 0, 0, time.UTC)
	// Written as the version before this one wrote them.
	files := map[string]string{
		legacySchedulesFile: `[
  {
    "Name": "standup",
    "Cron": "0 9 * * 1-5",
    "Chat": "tg:42",
    "Prompt": "summarize",
    "Group": false,
    "FromFile": false,
    "Sender": "tg:42",
    "Next": "0001-01-01T00:00:00Z"
  },
  {
    "Name": "agent-1",
    "Cron": "",
    "Chat": "dc:dm-7",
    "Prompt": "remind",
    "Group": false,
    "At": "2031-05-01T08:00:00Z",
    "FromFile": false,
    "Sender": "dc:5",
    "Next": "0001-01-01T00:00:00Z"
  },
  {
    "Name": "team",
    "Cron": "0 * * * *",
    "Chat": "tg:-100",
    "Prompt": "hourly",
    "Group": true,
    "FromFile": false,
    "Next": "0001-01-01T00:00:00Z"
  }
]`,
		legacyRunsFile: `{"file":"2026-11-20T09:00:00Z","heartbeat":"2026-11-20T10:30:00Z","standup":"2026-11-20T09:00:00Z"}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(cfg.DataDir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	db := openTestStore(t, cfg.DataDir)
	ctx := context.Background()
	var logs strings.Builder
	check := func() {
		t.Helper()
		list, err := db.ListSchedules(ctx)
		if err != nil || len(list) != 3 {
			t.Fatalf("stored %+v, %v", list, err)
		}
		want := []store.Schedule{
			{Name: "standup", Cron: "0 9 * * 1-5", Chat: "tg:42", Prompt: "summarize", Sender: "tg:42"},
			{Name: "agent-1", At: at, Chat: "dc:dm-7", Prompt: "remind", Sender: "dc:5"},
			{Name: "team", Cron: "0 * * * *", Chat: "tg:-100", Group: true, Prompt: "hourly"},
		}
		for i, w := range want {
			if !sameSchedule(list[i], w) || list[i].Sender != w.Sender || list[i].Added.IsZero() {
				t.Errorf("schedule %d: %+v; want %+v", i, list[i], w)
			}
		}
		runs, err := db.ScheduleRuns(ctx)
		if err != nil || !runs["heartbeat"].Equal(time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)) || !runs["file"].Equal(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)) {
			t.Errorf("runs %v, %v", runs, err)
		}
		for name, content := range files {
			if _, err := os.Stat(filepath.Join(cfg.DataDir, name)); !os.IsNotExist(err) {
				t.Errorf("%s still in place: %v", name, err)
			}
			b, err := os.ReadFile(filepath.Join(cfg.DataDir, name+migratedSuffix))
			if err != nil || string(b) != content {
				t.Errorf("%s%s: %v, %q", name, migratedSuffix, err, b)
			}
		}
	}
	s := New(db, hclog.New(&hclog.LoggerOptions{Output: &logs}), noFire, 0)
	s.Start(cfg)
	check()
	if list := s.List(ctx); len(list) != 4 || list[2].Name != "agent-1" || !list[2].At.Equal(at) {
		t.Errorf("list %+v", list)
	}
	s.Stop()

	// A start that died after the store took the content and before the
	// rename: the files are back; moving them again changes nothing and
	// renames them beside the first copies.
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(cfg.DataDir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(cfg.DataDir, legacyRunsFile+migratedSuffix)); err != nil {
		t.Fatal(err)
	}
	s = New(db, hclog.New(&hclog.LoggerOptions{Output: &logs}), noFire, 0)
	s.Start(cfg)
	s.Stop()
	check()
	if _, err := os.Stat(filepath.Join(cfg.DataDir, legacySchedulesFile+migratedSuffix+".2")); err != nil {
		t.Errorf("the second copy was not kept beside the first: %v", err)
	}
	if strings.Contains(logs.String(), "[WARN]") || strings.Contains(logs.String(), "[ERROR]") {
		t.Errorf("the migration warned:\n%s", logs.String())
	}

	// An unreadable file stays in place, reported; nothing is lost.
	if err := os.WriteFile(filepath.Join(cfg.DataDir, legacySchedulesFile), []byte("[{"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := migrateScheduleFiles(ctx, cfg.DataDir, db, hclog.NewNullLogger())
	if err == nil || !strings.Contains(err.Error(), legacySchedulesFile) {
		t.Errorf("unreadable file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, legacySchedulesFile)); err != nil {
		t.Errorf("the unreadable file was moved: %v", err)
	}
	if list, _ := db.ListSchedules(ctx); len(list) != 3 {
		t.Errorf("after an unreadable file: %+v", list)
	}
	var seen []string
	entries, _ := os.ReadDir(cfg.DataDir)
	for _, e := range entries {
		seen = append(seen, e.Name())
	}
	if !slices.Contains(seen, legacyRunsFile+migratedSuffix) {
		t.Errorf("data_dir %v", seen)
	}
}
