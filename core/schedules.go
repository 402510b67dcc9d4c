package core

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/cron"
	"github.com/clawhost/clawhost/core/schedule"
)

// heartbeatJob is the heartbeat's job name (its state and message ids).
const heartbeatJob = "heartbeat"

// jobsOf maps the schedule blocks and the heartbeat onto scheduler jobs,
// with the chat each one runs in (by job name).
func jobsOf(cfg *config.Config) ([]schedule.Job, map[string]bool) {
	defaultLoc := cfg.Messages.Location()
	if defaultLoc == nil {
		defaultLoc = time.Local
	}
	loc := func(name string) *time.Location {
		if name == "" {
			return defaultLoc
		}
		if l, err := time.LoadLocation(name); err == nil {
			return l
		}
		return defaultLoc // refused at load; not reached
	}
	var jobs []schedule.Job
	groups := map[string]bool{}
	for _, s := range cfg.Schedules {
		c, err := cron.Parse(s.Cron)
		if err != nil {
			continue // refused at load
		}
		jobs = append(jobs, schedule.Job{Name: s.Name, Cron: &c, Location: loc(s.Timezone), Target: s.Chat, Prompt: s.Prompt})
		groups[s.Name] = s.Group
	}
	if hb := cfg.Heartbeat; hb != nil {
		prompt := hb.Prompt
		if prompt == "" {
			prompt = config.DefaultHeartbeatPrompt
		}
		quiet, _ := config.QuietFunc(hb.QuietHours, loc(hb.Timezone))
		jobs = append(jobs, schedule.Job{Name: heartbeatJob, Every: hb.Every.Duration(), Quiet: quiet, Target: hb.Chat, Prompt: prompt})
		groups[heartbeatJob] = hb.Group
	}
	return jobs, groups
}

// scheduler runs the configured schedules; Reload replaces them.
type scheduler struct {
	h      *Host
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// start runs the jobs of cfg (stopping those running before).
func (s *scheduler) start(cfg *config.Config) {
	s.stop()
	jobs, groups := jobsOf(cfg)
	if len(jobs) == 0 {
		return
	}
	sch := schedule.New(schedule.Options{
		Jobs: jobs, StateFile: filepath.Join(cfg.DataDir, "schedule.json"), Logger: s.h.log.Named("schedule"),
		Fire: func(ctx context.Context, r schedule.Run) error {
			return s.h.gw.Scheduled(ctx, gateway.ScheduledRun{Job: r.Job, At: r.At, Chat: r.Target, Group: groups[r.Job], Prompt: r.Prompt})
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); sch.Run(ctx) }()
	s.mu.Lock()
	s.cancel, s.done = cancel, done
	s.mu.Unlock()
	s.h.log.Info("schedules running", "jobs", len(jobs))
}

// stop ends the running jobs and waits for them.
func (s *scheduler) stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
