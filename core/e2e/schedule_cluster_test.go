package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

// ownerU1 makes lo:u1 an owner (who may use /schedule).
func ownerU1(h *Host) { h.Access["owners"] = []string{"lo:u1"} }

// TestScheduleAddedOnAHostRunsAfterItsKill: two hosts on one PostgreSQL
// database. An owner adds a schedule (every minute) from chat through h1,
// which serves the channel; h1 is killed with -9 before the schedule
// first comes due. The schedule exists for the cluster (the store keeps
// it, not h1's data_dir): h2 takes the channel over and runs it at the
// next minute, and the run is answered once.
func TestScheduleAddedOnAHostRunsAfterItsKill(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	h1 := startHost(t, url, "h1", ownerU1)
	h1.waitServing()
	h2 := startHost(t, url, "h2", ownerU1)
	pluginPIDs(h1, 2)
	pluginPIDs(h2, 2)
	// h1 must die before the next minute starts (so it never runs the
	// schedule itself): add it early in a minute.
	if s := time.Now().Second(); s > 40 { // on purpose: the wall clock decides when cron runs
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	h1.post("u1", "/schedule add minutely * * * * * scheduled from h1")
	if got := h1.nextSend("chat-u1"); !strings.Contains(got, "Schedule minutely added") {
		t.Fatalf("/schedule add answered %q", got)
	}
	_ = h1.cmd.Process.Kill()
	_ = h1.cmd.Wait()
	killed := time.Now()
	if killed.Second() > 55 {
		t.Fatalf("h1 was killed at %s, too close to the minute it could have run the schedule at", killed.Format("15:04:05.000"))
	}
	due := killed.Truncate(time.Minute).Add(time.Minute)
	h2.waitServing()

	// h1 may die before it marked its answer to /schedule add as sent: h2
	// then says so (not the schedule's concern).
	notMissing := func(text string) bool { return !strings.Contains(text, "may be missing") }
	got := h2.sendsTo("chat-u1", due.Add(30*time.Second), notMissing, func() {
		t.Logf("h2 ran the schedule %s after h1's kill -9 (due %s)", time.Since(killed).Round(time.Millisecond), due.Format("15:04:05"))
	})
	if len(got) != 1 || !strings.Contains(got[0], "scheduled from h1") {
		t.Fatalf("h2's sends to the chat after h1 died: %q; want the scheduled run's reply once", got)
	}
	if log := h2.log.String(); !strings.Contains(log, "schedule=minutely") {
		t.Errorf("h2's log does not show the scheduled turn:\n%s", tail(log, 40))
	}
}
