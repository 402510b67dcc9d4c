package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// testSchedules: schedules are added under unique names, stamped, listed
// in the order they were added with every field (the sender too), kept
// across a restart, removed with their last runs; a job's last run only
// moves forward.
func testSchedules(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	if list, err := d.ListSchedules(ctx); list != nil || err != nil {
		t.Fatalf("ListSchedules of an empty store = %v, %v; want nil, nil", list, err)
	}
	if runs, err := d.ScheduleRuns(ctx); runs != nil || err != nil {
		t.Fatalf("ScheduleRuns of an empty store = %v, %v; want nil, nil", runs, err)
	}
	at := h.clk.Now().Add(90 * time.Minute)
	want := []store.Schedule{
		{Name: "standup", Cron: "0 9 * * 1-5", Chat: "tg:42", Prompt: "summarize", Sender: "tg:42"},
		{Name: "agent-1", At: at, Chat: "dc:dm-7", Prompt: "remind me", Sender: "dc:5"},
		{Name: "team", Cron: "0 * * * *", Chat: "tg:-100", Group: true, Prompt: "hourly"},
	}
	for i := range want {
		h.clk.Advance(time.Second)
		got, err := d.AddSchedule(ctx, want[i])
		want[i].Added = h.clk.Now()
		if err != nil || !sameSchedule(got, want[i]) {
			t.Fatalf("AddSchedule(%s) = %+v, %v; want %+v", want[i].Name, got, err, want[i])
		}
	}
	dup := store.Schedule{Name: "standup", Cron: "* * * * *", Chat: "tg:1", Prompt: "other"}
	if _, err := d.AddSchedule(ctx, dup); !errors.Is(err, store.ErrScheduleExists) {
		t.Fatalf("AddSchedule of a stored name: %v; want ErrScheduleExists", err)
	}
	if _, err := d.AddSchedule(ctx, store.Schedule{Cron: "* * * * *", Chat: "tg:1", Prompt: "p"}); err == nil {
		t.Error("AddSchedule without a name succeeded")
	}
	checkSchedules(t, ctx, d, want)

	// Runs: any job, stored or not; never backwards.
	t0 := h.clk.Now().Truncate(time.Minute)
	for _, r := range []struct {
		job string
		at  time.Time
	}{
		{"standup", t0},
		{"heartbeat", t0.Add(time.Minute)},
		{"standup", t0.Add(2 * time.Minute)},
		{"standup", t0.Add(time.Minute)}, // late, older: kept out
	} {
		if err := d.RecordScheduleRun(ctx, r.job, r.at); err != nil {
			t.Fatalf("RecordScheduleRun(%s): %v", r.job, err)
		}
	}
	if err := d.RecordScheduleRun(ctx, "", t0); err == nil {
		t.Error("RecordScheduleRun without a job succeeded")
	}
	runs, err := d.ScheduleRuns(ctx)
	if err != nil || len(runs) != 2 || !runs["standup"].Equal(t0.Add(2*time.Minute)) || !runs["heartbeat"].Equal(t0.Add(time.Minute)) {
		t.Fatalf("ScheduleRuns = %v, %v", runs, err)
	}

	// A restart keeps everything.
	d.Close()
	d = h.open()
	checkSchedules(t, ctx, d, want)
	if runs, err := d.ScheduleRuns(ctx); err != nil || len(runs) != 2 || !runs["standup"].Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("ScheduleRuns after a restart = %v, %v", runs, err)
	}

	// Removing: the stored ones of the names, with their runs; the
	// heartbeat's run (no stored schedule) stays.
	n, err := d.RemoveSchedules(ctx, "standup", "nothing", "team")
	if err != nil || n != 2 {
		t.Fatalf("RemoveSchedules = %d, %v; want 2", n, err)
	}
	checkSchedules(t, ctx, d, want[1:2])
	if runs, err := d.ScheduleRuns(ctx); err != nil || len(runs) != 1 || runs["standup"] != (time.Time{}) {
		t.Fatalf("ScheduleRuns after removing = %v, %v; want only the heartbeat's", runs, err)
	}
	if n, err := d.RemoveSchedules(ctx, "standup"); err != nil || n != 0 {
		t.Fatalf("RemoveSchedules again = %d, %v", n, err)
	}
	if n, err := d.RemoveSchedules(ctx); err != nil || n != 0 {
		t.Fatalf("RemoveSchedules of no names = %d, %v", n, err)
	}
	// A removed name may be added again and starts afresh.
	h.clk.Advance(time.Second)
	again := store.Schedule{Name: "standup", Cron: "30 8 * * *", Chat: "tg:42", Prompt: "new"}
	if _, err := d.AddSchedule(ctx, again); err != nil {
		t.Fatalf("AddSchedule of a removed name: %v", err)
	}
	again.Added = h.clk.Now()
	checkSchedules(t, ctx, d, []store.Schedule{want[1], again})

	// A cancelled context changes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.AddSchedule(cctx, store.Schedule{Name: "late", Cron: "* * * * *", Chat: "tg:1", Prompt: "p"}); err == nil {
		t.Error("AddSchedule with a cancelled context succeeded")
	}
	if _, err := d.RemoveSchedules(cctx, "standup"); err == nil {
		t.Error("RemoveSchedules with a cancelled context succeeded")
	}
	checkSchedules(t, ctx, d, []store.Schedule{want[1], again})
}

// testSchedulesConcurrent: of hosts adding one name at once exactly one
// succeeds; runs recorded at once keep the latest.
func testSchedulesConcurrent(t *testing.T, h *env) {
	d := h.open()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	base := h.clk.Now().Truncate(time.Minute)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := d.AddSchedule(ctx, store.Schedule{Name: "same", Cron: "* * * * *", Chat: "tg:1", Prompt: fmt.Sprint(i)})
			errs <- err
			if err := d.RecordScheduleRun(ctx, "same", base.Add(time.Duration(i)*time.Minute)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrScheduleExists):
			t.Errorf("AddSchedule: %v", err)
		}
	}
	if list, err := d.ListSchedules(ctx); ok != 1 || err != nil || len(list) != 1 {
		t.Fatalf("%d adds succeeded, list %+v, %v; want one", ok, list, err)
	}
	if runs, err := d.ScheduleRuns(ctx); err != nil || !runs["same"].Equal(base.Add(7*time.Minute)) {
		t.Fatalf("ScheduleRuns = %v, %v; want the latest run", runs, err)
	}
}

// sameSchedule compares schedules, times by instant.
func sameSchedule(a, b store.Schedule) bool {
	return a.Name == b.Name && a.Cron == b.Cron && a.At.Equal(b.At) && a.Chat == b.Chat && a.Group == b.Group &&
		a.Prompt == b.Prompt && a.Sender == b.Sender && a.Added.Equal(b.Added)
}

// checkSchedules fails unless d lists the schedules want, in order.
func checkSchedules(t *testing.T, ctx context.Context, d store.Store, want []store.Schedule) {
	t.Helper()
	list, err := d.ListSchedules(ctx)
	if err != nil || len(list) != len(want) {
		t.Fatalf("ListSchedules = %+v, %v; want %d", list, err, len(want))
	}
	for i := range want {
		if !sameSchedule(list[i], want[i]) {
			t.Errorf("schedule %d = %+v; want %+v", i, list[i], want[i])
		}
	}
}
