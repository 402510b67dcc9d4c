// Package schedule runs turns nobody typed: cron schedules and the
// heartbeat. It decides when; what a run does is the caller's Fire (the
// gateway turns it into a message of the target chat, through the journal,
// so a run is answered once even across a crash).
//
// Missed runs: the last run of each job (or when it was first seen) is
// kept in a state file. At start, a job whose latest due time passed unrun
// while clawhost was down is run once if that time is less than
// MissedWithin ago; an older one is skipped and logged, as is a run that
// comes due more than MissedWithin late (a suspended machine). Only the
// latest missed run is made up, never a burst. A run whose Fire fails is
// tried again a minute later with the same due time (so the same message
// id: the journal answers it once).
package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
	"github.com/clawhost/clawhost/core/internal/cron"
)

// MissedWithin is how late a missed run is still made up.
const MissedWithin = time.Hour

// retryAfter is the pause before a failed Fire is tried again.
const retryAfter = time.Minute

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

// Clock is the scheduler's time: real, or injected in tests.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options configure a Scheduler.
type Options struct {
	Jobs []Job
	// Fire starts a run; an error makes it tried again after a minute.
	Fire func(ctx context.Context, r Run) error
	// StateFile keeps each job's last run (0600, replaced atomically).
	StateFile string
	Clock     Clock
	Logger    hclog.Logger
}

// Scheduler runs jobs when they are due.
type Scheduler struct {
	o    Options
	mu   sync.Mutex
	last map[string]time.Time // job → due time of its last run
}

// New returns a scheduler; its state is read from StateFile (a missing file
// is an empty state; an unreadable one is logged and ignored).
func New(o Options) *Scheduler {
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	s := &Scheduler{o: o, last: map[string]time.Time{}}
	if o.StateFile != "" {
		b, err := os.ReadFile(o.StateFile)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			o.Logger.Warn("reading the schedule state failed; missed runs are not made up", "file", o.StateFile, "error", err)
		default:
			if err := json.Unmarshal(b, &s.last); err != nil {
				o.Logger.Warn("the schedule state is unreadable; missed runs are not made up", "file", o.StateFile, "error", err)
			}
		}
	}
	return s
}

// Last is the due time of job's last run (zero if never).
func (s *Scheduler) Last(job string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[job]
}

// Run runs the jobs until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
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
	switch last, due := s.Last(j.Name), j.prev(now); {
	case last.IsZero():
		// A new job: from now on its runs count (one due before it
		// existed is not made up).
		s.record(log, j.Name, now)
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

// fire runs j for due time at, retrying a failure every minute until it
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
		log.Warn("starting a scheduled run failed; trying again in a minute", "due", at, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-s.o.Clock.After(retryAfter):
		}
	}
	s.record(log, j.Name, at)
}

// record stores at as job's last run.
func (s *Scheduler) record(log hclog.Logger, job string, at time.Time) {
	s.mu.Lock()
	s.last[job] = at
	snapshot := make(map[string]time.Time, len(s.last))
	for k, v := range s.last {
		snapshot[k] = v
	}
	s.mu.Unlock()
	if err := s.save(snapshot); err != nil {
		log.Warn("saving the schedule state failed (a run missed during a later outage may not be made up)", "error", err)
	}
}

func (s *Scheduler) save(last map[string]time.Time) error {
	if s.o.StateFile == "" {
		return nil
	}
	b, err := json.Marshal(last)
	if err != nil {
		return err
	}
	return atomicfile.Write(s.o.StateFile, b)
}
