package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// AddSchedule implements [store.Schedules].
func (d *DB) AddSchedule(ctx context.Context, s store.Schedule) (store.Schedule, error) {
	if s.Name == "" {
		return store.Schedule{}, errors.New("add schedule: a name is required")
	}
	err := d.w.durable(ctx, func(t *wtx) error {
		s.Added = d.now()
		n, err := t.execN(`INSERT INTO schedules(name, cron, at, chat, is_group, prompt, sender, added_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO NOTHING`,
			s.Name, s.Cron, store.UnixNano(s.At), s.Chat, s.Group, s.Prompt, s.Sender, s.Added.UnixNano())
		if err == nil && n == 0 {
			err = store.ErrScheduleExists
		}
		return err
	})
	if err != nil {
		return store.Schedule{}, fmt.Errorf("add schedule %s: %w", s.Name, err)
	}
	return s, nil
}

// RemoveSchedules implements [store.Schedules].
func (d *DB) RemoveSchedules(ctx context.Context, names ...string) (int, error) {
	if len(names) == 0 {
		return 0, nil
	}
	var removed int
	err := d.w.durable(ctx, func(t *wtx) error {
		removed = 0
		for _, name := range names {
			n, err := t.execN(`DELETE FROM schedules WHERE name = ?`, name)
			if err != nil {
				return err
			}
			if n > 0 {
				removed++
				if _, err := t.exec(`DELETE FROM schedule_runs WHERE job = ?`, name); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("remove schedules: %w", err)
	}
	return removed, nil
}

// ListSchedules implements [store.Schedules].
func (d *DB) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	rows, err := d.query(ctx, `SELECT name, cron, at, chat, is_group, prompt, sender, added_at FROM schedules ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	defer rows.Close()
	var out []store.Schedule
	for rows.Next() {
		var s store.Schedule
		var at, added int64
		if err := rows.Scan(&s.Name, &s.Cron, &at, &s.Chat, &s.Group, &s.Prompt, &s.Sender, &added); err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		s.At, s.Added = store.FromUnixNano(at), store.FromUnixNano(added)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return out, nil
}

// RecordScheduleRun implements [store.Schedules].
func (d *DB) RecordScheduleRun(ctx context.Context, job string, at time.Time) error {
	if job == "" {
		return errors.New("record schedule run: a job is required")
	}
	err := d.w.do(ctx, func(t *wtx) error {
		_, err := t.exec(`INSERT INTO schedule_runs(job, last_at) VALUES (?1, ?2)
			ON CONFLICT(job) DO UPDATE SET last_at = max(last_at, excluded.last_at)`, job, store.UnixNano(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("record the run of schedule %s: %w", job, err)
	}
	return nil
}

// ScheduleRuns implements [store.Schedules].
func (d *DB) ScheduleRuns(ctx context.Context) (map[string]time.Time, error) {
	rows, err := d.query(ctx, `SELECT job, last_at FROM schedule_runs`)
	if err != nil {
		return nil, fmt.Errorf("read schedule runs: %w", err)
	}
	defer rows.Close()
	var out map[string]time.Time
	for rows.Next() {
		var job string
		var at int64
		if err := rows.Scan(&job, &at); err != nil {
			return nil, fmt.Errorf("read schedule runs: %w", err)
		}
		if out == nil {
			out = map[string]time.Time{}
		}
		out[job] = store.FromUnixNano(at)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schedule runs: %w", err)
	}
	return out, nil
}
