package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// AddSchedule implements [store.Schedules].
func (d *DB) AddSchedule(ctx context.Context, s store.Schedule) (store.Schedule, error) {
	if s.Name == "" {
		return store.Schedule{}, errors.New("add schedule: a name is required")
	}
	err := d.w.durable(ctx, func(t *wtx) (err error) {
		s.Added = d.now()
		return tables.AddSchedule(tablesTx{t}, s)
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
	err := d.w.durable(ctx, func(t *wtx) (err error) {
		removed, err = tables.RemoveSchedules(tablesTx{t}, names)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("remove schedules: %w", err)
	}
	return removed, nil
}

// ListSchedules implements [store.Schedules].
func (d *DB) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	out, err := tables.ListSchedules(d.reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return out, nil
}

// RecordScheduleRun implements [store.Schedules].
func (d *DB) RecordScheduleRun(ctx context.Context, job string, at time.Time) error {
	if job == "" {
		return errors.New("record schedule run: a job is required")
	}
	err := d.w.do(ctx, func(t *wtx) (err error) {
		return tables.RecordScheduleRun(tablesTx{t}, job, at)
	})
	if err != nil {
		return fmt.Errorf("record the run of schedule %s: %w", job, err)
	}
	return nil
}

// ScheduleRuns implements [store.Schedules].
func (d *DB) ScheduleRuns(ctx context.Context) (map[string]time.Time, error) {
	out, err := tables.ScheduleRuns(d.reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("read schedule runs: %w", err)
	}
	return out, nil
}
