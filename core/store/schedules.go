package store

import (
	"context"
	"errors"
	"time"
)

// ErrScheduleExists: a schedule of that name is stored.
var ErrScheduleExists = errors.New("a schedule of that name exists")

// Schedules keeps the schedules added at run time (from chat with
// /schedule add, and the agent's one-shot schedule_message entries) and
// the last run of every scheduled job, whether added at run time, written
// in the configuration or the heartbeat. On a shared storage every host
// sees the same schedules and the same runs: a schedule added through one
// host exists for all of them, also while that host is down.
//
// The store decides nothing about when a schedule runs or whether its
// expression is valid (the core checks both); it keeps what it is given.
type Schedules interface {
	// AddSchedule stores s, stamping Added with now. A schedule of the
	// same name that is stored fails it with ErrScheduleExists, and
	// nothing changes. Name is required.
	AddSchedule(ctx context.Context, s Schedule) (Schedule, error)
	// RemoveSchedules removes those of the named schedules that are
	// stored, with their last runs, all or none, and returns how many it
	// removed (names that are not stored are not an error).
	RemoveSchedules(ctx context.Context, names ...string) (int, error)
	// ListSchedules returns the stored schedules in the order they were
	// added. Nil when none.
	ListSchedules(ctx context.Context) ([]Schedule, error)
	// RecordScheduleRun keeps at as the due time of job's last run,
	// unless a later one is kept: a job's last run never goes back, so
	// hosts that record the same run, or an older one late, agree. Any job
	// name is accepted (a schedule of the configuration, the heartbeat),
	// stored or not. Job is required.
	RecordScheduleRun(ctx context.Context, job string, at time.Time) error
	// ScheduleRuns returns the last run of every job that has one. Nil
	// when none.
	ScheduleRuns(ctx context.Context) (map[string]time.Time, error)
}

// Schedule is a schedule added at run time.
type Schedule struct {
	// Name identifies the schedule (its runs and their messages' ids).
	Name string
	// Cron is when it runs (a cron expression), for a repeating schedule.
	Cron string
	// At is when it runs once, for a one-shot schedule (Cron empty).
	At time.Time
	// Chat is where it runs: "<instance>:<chat id>"; Group when that chat
	// is a group.
	Chat  string
	Group bool
	// Prompt is what the run says.
	Prompt string
	// Sender, for a schedule that runs in a direct chat, is the sender who
	// added it there ("<instance>:<sender id>"): revoking their approval
	// removes it. Empty for group chats and for schedules kept before the
	// sender was recorded.
	Sender string
	// Added is when it was stored (set by AddSchedule).
	Added time.Time
}
