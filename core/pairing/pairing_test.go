package pairing

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/clawhost/clawhost/core/config/configtest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/schedules"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
)

// TestRevokeDropsTheSendersSchedules: revoking a sender withdraws their
// approval and drops the schedules of their direct chat — those /schedule
// added there, the agent's one-shot ones, and older entries without a
// recorded sender whose chat is theirs — and nobody else's: from the store
// through the running host's scheduler, and while clawhost is not running
// (the pairing subcommand) from the store and from the schedules file an
// earlier version left in data_dir (moved into the store first).
func TestRevokeDropsTheSendersSchedules(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	list := []command.ScheduleEntry{
		{Name: "mine-cron", Cron: "0 9 * * *", Chat: "dc:dm-77", Sender: "dc:5", Prompt: "p"},
		{Name: "agent-1", At: at, Chat: "dc:dm-77", Sender: "dc:5", Prompt: "remind"},
		{Name: "old", Cron: "0 9 * * *", Chat: "dc:5", Prompt: "p"},
		{Name: "group", Cron: "0 9 * * *", Chat: "dc:5", Group: true, Prompt: "p"},
		{Name: "other", Cron: "0 9 * * *", Chat: "dc:6", Sender: "dc:6", Prompt: "p"},
		{Name: "other-instance", Cron: "0 9 * * *", Chat: "tg:5", Sender: "tg:5", Prompt: "p"},
	}
	for _, c := range []struct {
		name string
		// file: the entries are in data_dir/schedules.json (an earlier
		// version), else in the store.
		file    bool
		running bool // through the host's scheduler
	}{
		{"running host", false, true},
		{"not running, store", false, false},
		{"not running, file of an earlier version", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := configtest.LoadWithDataDir(t, schedulesConfig)
			db := openTestStore(t, cfg.DataDir)
			ctx := context.Background()
			r, _ := db.RequestPairing(ctx, store.PairingRequest{Instance: "dc", SenderID: "5"})
			if _, err := db.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code, By: "tg:9"}); err != nil {
				t.Fatal(err)
			}
			if c.file {
				b, _ := json.MarshalIndent(list, "", "  ")
				if err := os.WriteFile(filepath.Join(cfg.DataDir, legacySchedulesFile), b, 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, e := range list {
					if _, err := db.AddSchedule(ctx, store.Schedule{Name: e.Name, Cron: e.Cron, At: e.At, Chat: e.Chat, Group: e.Group, Prompt: e.Prompt, Sender: e.Sender}); err != nil {
						t.Fatal(err)
					}
				}
			}
			var logs strings.Builder
			api := API{DB: db, By: "cli", Schedules: schedules.Stored(cfg, db), Log: hclog.New(&hclog.LoggerOptions{Output: &logs}),
				Policy: func() access.Policy { return access.Policy{AllowFrom: []string{"dc:5"}} }}
			var s *schedules.Scheduler
			if c.running {
				s = schedules.New(db, hclog.NewNullLogger(), func(context.Context, gateway.ScheduledRun) error { return nil }, 0)
				s.Start(cfg)
				t.Cleanup(s.Stop)
				api.Schedules = s
			}
			got, err := api.RevokeSender(ctx, "dc:5")
			if err != nil || !got.Found || got.Schedules != 3 || !slices.Equal(got.Listed, []string{"allow_from"}) {
				t.Fatalf("RevokeSender = %+v, %v", got, err)
			}
			if ok, _ := db.IsApproved(ctx, "dc", "5", 0); ok {
				t.Error("still approved")
			}
			left, err := db.ListSchedules(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range left {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, []string{"group", "other", "other-instance"}) {
				t.Errorf("schedules left %v; want group, other, other-instance", names)
			}
			if s != nil {
				if l := s.List(ctx); len(l) != 4 { // with the file's
					t.Errorf("the scheduler lists %+v", l)
				}
			}
			if !strings.Contains(logs.String(), "sender=dc:5") || !strings.Contains(logs.String(), "by=cli") {
				t.Errorf("revocation not logged: %s", logs.String())
			}
			// Again: nothing left to do; a malformed entry is refused.
			if got, err := api.RevokeSender(ctx, "dc:5"); err != nil || got.Found || got.Schedules != 0 {
				t.Errorf("second revocation = %+v, %v", got, err)
			}
			if _, err := api.RevokeSender(ctx, "5"); !errors.Is(err, admin.ErrBadEntry) {
				t.Errorf("bad entry: %v", err)
			}
		})
	}
}

// TestApprovedSendersShowTTLAndPolicy: the listing says when an approval
// expires and whether it admits its sender now.
func TestApprovedSendersShowTTLAndPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := sqlitetest.Open(t, filepath.Join(dir, "db"), sqlite.Options{})
	ctx := context.Background()
	r, _ := db.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "5"})
	a, err := db.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code, By: "tg:9"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		pol      access.Policy
		honoured bool
		expires  time.Time
	}{
		{"pairing, no ttl", access.Policy{DMPolicy: access.PolicyPairing}, true, time.Time{}},
		{"pairing, ttl running", access.Policy{DMPolicy: access.PolicyPairing, PairingTTL: time.Hour}, true, a.ApprovedAt.Add(time.Hour)},
		{"pairing, ttl passed", access.Policy{DMPolicy: access.PolicyPairing, PairingTTL: time.Nanosecond}, false, a.ApprovedAt.Add(time.Nanosecond)},
		{"allowlist", access.Policy{DMPolicy: access.PolicyAllowlist}, false, time.Time{}},
	} {
		api := API{DB: db, Policy: func() access.Policy { return c.pol }}
		list, err := api.ApprovedSenders(ctx)
		if err != nil || len(list) != 1 || list[0].Entry != "tg:5" || list[0].ApprovedBy != "tg:9" || list[0].Honoured != c.honoured || !list[0].ExpiresAt.Equal(c.expires) {
			t.Errorf("%s: %+v, %v", c.name, list, err)
		}
	}
}
