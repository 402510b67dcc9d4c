package tables

import (
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// AddSchedule is [store.Schedules]' AddSchedule inside t, s.Added set by
// the caller: store.ErrScheduleExists when the name is taken.
func AddSchedule(t Tx, s store.Schedule) error {
	n, err := t.Exec(`INSERT INTO schedules(name, cron, at, chat, is_group, prompt, sender, added_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`,
		s.Name, s.Cron, store.UnixNano(s.At), s.Chat, s.Group, s.Prompt, s.Sender, s.Added.UnixNano())
	if err == nil && n == 0 {
		err = store.ErrScheduleExists
	}
	return err
}

// RemoveSchedules is [store.Schedules]' RemoveSchedules inside t: how
// many of names there were; a removed job's runs go with it.
func RemoveSchedules(t Tx, names []string) (int, error) {
	removed := 0
	for _, name := range names {
		n, err := t.Exec(`DELETE FROM schedules WHERE name = ?`, name)
		if err != nil {
			return 0, err
		}
		if n > 0 {
			removed++
			if _, err := t.Exec(`DELETE FROM schedule_runs WHERE job = ?`, name); err != nil {
				return 0, err
			}
		}
	}
	return removed, nil
}

// ListSchedules is [store.Schedules]' ListSchedules, in the order added.
func ListSchedules(r Reader) ([]store.Schedule, error) {
	rows, err := r.Query(`SELECT name, cron, at, chat, is_group, prompt, sender, added_at FROM schedules ORDER BY id`)
	return collect(rows, err, func(rows Rows) (store.Schedule, error) {
		var s store.Schedule
		var at, added int64
		err := rows.Scan(&s.Name, &s.Cron, &at, &s.Chat, &s.Group, &s.Prompt, &s.Sender, &added)
		s.At, s.Added = store.FromUnixNano(at), store.FromUnixNano(added)
		return s, err
	})
}

// RecordScheduleRun is [store.Schedules]' RecordScheduleRun inside t: a
// job's last run only moves forward.
func RecordScheduleRun(t Tx, job string, at time.Time) error {
	_, err := t.Exec(`INSERT INTO schedule_runs(job, last_at) VALUES (?, ?)
		ON CONFLICT(job) DO UPDATE SET last_at = CASE WHEN excluded.last_at > schedule_runs.last_at THEN excluded.last_at ELSE schedule_runs.last_at END`,
		job, store.UnixNano(at))
	return err
}

// ScheduleRuns is [store.Schedules]' ScheduleRuns: nil when no job ran.
func ScheduleRuns(r Reader) (map[string]time.Time, error) {
	type run struct {
		job string
		at  int64
	}
	rows, err := r.Query(`SELECT job, last_at FROM schedule_runs`)
	runs, err := collect(rows, err, func(rows Rows) (run, error) {
		var x run
		return x, rows.Scan(&x.job, &x.at)
	})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	out := make(map[string]time.Time, len(runs))
	for _, x := range runs {
		out[x.job] = store.FromUnixNano(x.at)
	}
	return out, nil
}
