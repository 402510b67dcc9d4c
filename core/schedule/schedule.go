// Package schedule runs turns nobody typed: cron schedules and the
// heartbeat. It decides when; what a run does is the caller's Fire (the
// gateway turns it into a message of the target chat, through the journal,
// so a run is answered once even across a crash).
//
// Missed runs: the last run of each job (or when it was first seen) is
// kept in the State (the store's, in clawhost: shared by the hosts of a
// cluster). At start, a job whose latest due time passed unrun
// while clawhost was down is run once if that time is less than
// MissedWithin ago; an older one is skipped and logged, as is a run that
// comes due more than MissedWithin late (a suspended machine). Only the
// latest missed run is made up, never a burst. A run whose Fire fails is
// tried again RetryAfter (a minute) later with the same due time (so the
// same message id: the journal answers it once).
package schedule

import (
	"context"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/cron"
)

// MissedWithin is how late a missed run is still made up.
const MissedWithin = time.Hour

// DefaultRetryAfter is the pause before a failed Fire is tried again,
// unless Options.RetryAfter says otherwise.
const DefaultRetryAfter = time.Minute

// Job is one schedule.
type Job struct {
	// Name identifies the job (its state and its messages' ids).
	Name string
	// Cron, when set, is when it runs; else Every; else once, At.
	Cron  *cron.Cron
	Every time.Duration
	At    time.Time
	// Location is the Cron's time zone.
	Location *time.Location
	// Quiet, when set, reports times at which the job does not run (the
	// heartbeat's quiet hours); a due time inside is skipped.
	Quiet func(time.Time) bool
	// Target and Prompt are handed to Fire.
	Target string
	Prompt string
	// Since, when set, is when the job was created: without a recorded
	// run, a run due after it counts as missed (made up if under
	// MissedWithin late). Zero: the job's runs count from when a
	// scheduler first sees it.
	Since time.Time
}

// next is the job's first due time after t.
func (j Job) next(t time.Time) time.Time {
	if j.Cron != nil {
		return j.Cron.Next(t, j.Location)
	}
	if j.Every <= 0 {
		if j.At.After(t) {
			return j.At
		}
		return time.Time{}
	}
	return t.Truncate(j.Every).Add(j.Every)
}

// prev is the job's latest due time at or before t (zero if none within a
// week; only used for missed runs).
func (j Job) prev(t time.Time) time.Time {
	if j.Cron == nil {
		if j.Every <= 0 {
			if !j.At.IsZero() && !j.At.After(t) {
				return j.At
			}
			return time.Time{}
		}
		return t.Truncate(j.Every)
	}
	var last time.Time
	for at := j.Cron.Next(t.Add(-MissedWithin-time.Minute), j.Location); !at.IsZero() && !at.After(t); at = j.Cron.Next(at, j.Location) {
		last = at
	}
	return last
}

// Run is one run of a job.
type Run struct {
	Job string
	// At is the due time (not when it ran): with the job's name it names
	// the run, so a run fired twice is one message.
	At     time.Time
	Target string
	Prompt string
}

// State keeps the due time of each job's last run.
type State interface {
	// Runs returns the last run of every job that has one.
	Runs(ctx context.Context) (map[string]time.Time, error)
	// Record keeps at as job's last run (a later one kept stays).
	Record(ctx context.Context, job string, at time.Time) error
}

// Options configure a Scheduler.
type Options struct {
	Jobs []Job
	// Fire starts a run; an error makes it tried again after RetryAfter.
	Fire func(ctx context.Context, r Run) error
	// RetryAfter is the pause before a failed Fire is tried again with
	// the same due time; zero means DefaultRetryAfter.
	RetryAfter time.Duration
	// State keeps each job's last run; nil: none is kept (missed runs are
	// not made up).
	State  State
	Clock  tstime.Clock
	Logger hclog.Logger
}

// Scheduler runs jobs when they are due.
type Scheduler struct {
	o    Options
	mu   sync.Mutex
	last map[string]time.Time // job → due time of its last run
	// known: the state was read (Run), so a job without a last run is new.
	known bool
}

// New returns a scheduler; Run reads its state.
func New(o Options) *Scheduler {
	o.Clock = tstime.Or(o.Clock)
	if o.RetryAfter <= 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	return &Scheduler{o: o, last: map[string]time.Time{}}
}

// Last is the due time of job's last run (zero if never).
func (s *Scheduler) Last(job string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[job]
}

// Run reads the state (one that cannot be read is logged: missed runs
// are not made up), then runs the jobs until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	s.known = true
	if s.o.State != nil {
		runs, err := s.o.State.Runs(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// Unknown: no run is made up, and none is taken as new (which
			// would record "first seen now" over the real last run).
			s.known = false
			s.o.Logger.Warn("reading the schedule state failed; missed runs are not made up", "error", err)
		}
		s.mu.Lock()
		for job, at := range runs {
			s.last[job] = at
		}
		s.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, j := range s.o.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.loop(ctx, j)
		}()
	}
	wg.Wait()
}

func (s *Scheduler) loop(ctx context.Context, j Job) {
	log := s.o.Logger.With("job", j.Name)
	now := s.o.Clock.Now()
	last := s.Last(j.Name)
	if last.IsZero() && !j.Since.IsZero() && j.Since.Before(now) {
		last = j.Since // created before this scheduler saw it
	}
	switch due := j.prev(now); {
	case last.IsZero() && !s.known:
	case last.IsZero():
		// A new job: from now on its runs count (one due before it
		// existed is not made up).
		s.record(ctx, log, j.Name, now)
	case !due.IsZero() && due.After(last) && now.Sub(due) <= MissedWithin:
		log.Info("running a scheduled run missed while clawhost was down", "due", due)
		s.fire(ctx, log, j, due)
	case !due.IsZero() && due.After(last):
		log.Warn("a scheduled run was missed more than an hour ago; skipped", "due", due)
	}
	for {
		due := j.next(s.o.Clock.Now())
		if due.IsZero() {
			if j.At.IsZero() {
				log.Warn("the schedule never comes due; not run")
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-s.o.Clock.After(due.Sub(s.o.Clock.Now())):
		}
		if late := s.o.Clock.Now().Sub(due); late > MissedWithin {
			log.Warn("a scheduled run came due while the machine was paused; skipped", "due", due, "late", late.Round(time.Second))
			continue
		}
		s.fire(ctx, log, j, due)
	}
}

// fire runs j for due time at, retrying a failure every RetryAfter until it
// succeeds or ctx ends, then records it.
func (s *Scheduler) fire(ctx context.Context, log hclog.Logger, j Job, at time.Time) {
	if j.Quiet != nil && j.Quiet(at) {
		log.Debug("quiet hours; not run", "due", at)
		return
	}
	for {
		err := s.o.Fire(ctx, Run{Job: j.Name, At: at, Target: j.Target, Prompt: j.Prompt})
		if err == nil {
			break
		}
		log.Warn("starting a scheduled run failed; trying again", "due", at, "in", s.o.RetryAfter, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-s.o.Clock.After(s.o.RetryAfter):
		}
	}
	s.record(ctx, log, j.Name, at)
}

// record keeps at as job's last run.
func (s *Scheduler) record(ctx context.Context, log hclog.Logger, job string, at time.Time) {
	s.mu.Lock()
	if at.After(s.last[job]) {
		s.last[job] = at
	}
	s.mu.Unlock()
	if s.o.State == nil {
		return
	}
	// A run that fired is recorded even when ctx just ended (a stop).
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.o.State.Record(rctx, job, at); err != nil {
		log.Warn("saving the schedule state failed (a run missed during a later outage may not be made up)", "error", err)
	}
}
