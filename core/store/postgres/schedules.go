package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
)

// AddSchedule implements [store.Schedules].
func (d *DB) AddSchedule(ctx context.Context, s store.Schedule) (store.Schedule, error) {
	if s.Name == "" {
		return store.Schedule{}, errors.New("add schedule: a name is required")
	}
	s.Added = d.now()
	tag, err := d.exec(ctx, `INSERT INTO schedules(name, cron, at, chat, is_group, prompt, sender, added_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name) DO NOTHING`,
		s.Name, s.Cron, store.UnixNano(s.At), s.Chat, s.Group, s.Prompt, s.Sender, s.Added.UnixNano())
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrScheduleExists
	}
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
	err := d.write(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM schedules WHERE name = ANY($1) RETURNING name`, names)
		if err != nil {
			return err
		}
		gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		removed = len(gone)
		if removed == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `DELETE FROM schedule_runs WHERE job = ANY($1)`, gone)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("remove schedules: %w", err)
	}
	return removed, nil
}

// ListSchedules implements [store.Schedules].
func (d *DB) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	rows, err := d.pool.Query(ctx, `SELECT name, cron, at, chat, is_group, prompt, sender, added_at FROM schedules ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", d.closed(err))
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
	_, err := d.exec(ctx, `INSERT INTO schedule_runs(job, last_at) VALUES ($1, $2)
		ON CONFLICT (job) DO UPDATE SET last_at = GREATEST(schedule_runs.last_at, excluded.last_at)`, job, store.UnixNano(at))
	if err != nil {
		return fmt.Errorf("record the run of schedule %s: %w", job, err)
	}
	return nil
}

// ScheduleRuns implements [store.Schedules].
func (d *DB) ScheduleRuns(ctx context.Context) (map[string]time.Time, error) {
	rows, err := d.pool.Query(ctx, `SELECT job, last_at FROM schedule_runs`)
	if err != nil {
		return nil, fmt.Errorf("read schedule runs: %w", d.closed(err))
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
