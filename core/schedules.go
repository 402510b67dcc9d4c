package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/atomicfile"
	"github.com/clawhost/clawhost/core/internal/cron"
	"github.com/clawhost/clawhost/core/schedule"
	"github.com/clawhost/clawhost/core/turn"
)

// heartbeatJob is the heartbeat's job name (its state and message ids).
const heartbeatJob = turn.HeartbeatJob

// jobsOf maps the schedule blocks and the heartbeat onto scheduler jobs,
// with the chat each one runs in (by job name).
func jobsOf(cfg *config.Config) ([]schedule.Job, map[string]bool) {
	loc := func(name string) *time.Location { return zoneOf(cfg, name) }
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

// zoneOf is a schedule's time zone: its own, else messages.timezone (a
// zone that does not load was refused at load).
func zoneOf(cfg *config.Config, name string) *time.Location {
	if name != "" {
		if l, err := time.LoadLocation(name); err == nil {
			return l
		}
	}
	return cfg.Messages.Location()
}

// scheduler runs the configured schedules and those added from chat
// (/schedule, kept in data_dir/schedules.json); Reload and /schedule
// restart it.
type scheduler struct {
	h      *Host
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	cfg    *config.Config
	chat   []command.ScheduleEntry // nil until loaded
	loaded bool
}

func (s *scheduler) chatFile(cfg *config.Config) string {
	return filepath.Join(cfg.DataDir, "schedules.json")
}

// loadChat reads the schedules added from chat (once).
func (s *scheduler) loadChat(cfg *config.Config) {
	if s.loaded {
		return
	}
	s.loaded = true
	b, err := os.ReadFile(s.chatFile(cfg))
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		err = json.Unmarshal(b, &s.chat)
	}
	if err != nil {
		s.h.log.Error("the schedules added from chat could not be read; they do not run", "file", s.chatFile(cfg), "error", err)
	}
}

// start runs the jobs of cfg and those added from chat (stopping those
// running before).
func (s *scheduler) start(cfg *config.Config) {
	s.stop()
	s.mu.Lock()
	s.cfg = cfg
	s.loadChat(cfg)
	chat := slices.Clone(s.chat)
	s.mu.Unlock()
	jobs, groups := jobsOf(cfg)
	once := map[string]bool{}
	for _, e := range chat {
		if !e.At.IsZero() {
			jobs = append(jobs, schedule.Job{Name: e.Name, At: e.At, Target: e.Chat, Prompt: e.Prompt})
			groups[e.Name], once[e.Name] = e.Group, true
			continue
		}
		c, err := cron.Parse(e.Cron)
		if err != nil {
			continue
		}
		jobs = append(jobs, schedule.Job{Name: e.Name, Cron: &c, Location: cfg.Messages.Location(), Target: e.Chat, Prompt: e.Prompt})
		groups[e.Name] = e.Group
	}
	if len(jobs) == 0 {
		return
	}
	sch := schedule.New(schedule.Options{
		Jobs: jobs, StateFile: filepath.Join(cfg.DataDir, "schedule.json"), Logger: s.h.log.Named("schedule"),
		Fire: func(ctx context.Context, r schedule.Run) error {
			err := s.h.gw.Scheduled(ctx, gateway.ScheduledRun{Job: r.Job, At: r.At, Chat: r.Target, Group: groups[r.Job], Prompt: r.Prompt})
			if err == nil && once[r.Job] {
				// Done: a one-shot entry leaves the file (in the
				// background: removing restarts the scheduler this runs in).
				go func() { _, _ = s.Remove(context.Background(), r.Job) }()
			}
			return err
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

// Add adds a schedule from chat: a new name, a valid expression, a known
// instance; it is saved and runs at once.
func (s *scheduler) Add(_ context.Context, e command.ScheduleEntry) error {
	if !nameRe.MatchString(e.Name) {
		return fmt.Errorf("%q is not a schedule name (letters, digits, - and _)", e.Name)
	}
	if e.At.IsZero() {
		if _, err := cron.Parse(e.Cron); err != nil {
			return err
		}
	}
	s.mu.Lock()
	cfg := s.cfg
	s.loadChat(cfg)
	taken := slices.ContainsFunc(s.chat, func(x command.ScheduleEntry) bool { return x.Name == e.Name }) ||
		slices.ContainsFunc(cfg.Schedules, func(x *config.Schedule) bool { return x.Name == e.Name }) || e.Name == heartbeatJob
	if taken {
		s.mu.Unlock()
		return fmt.Errorf("a schedule %q exists", e.Name)
	}
	next := append(slices.Clone(s.chat), e)
	if err := saveChat(s.chatFile(cfg), next); err != nil {
		s.mu.Unlock()
		return err
	}
	s.chat = next
	s.mu.Unlock()
	s.h.log.Info("schedule added from chat", "name", e.Name, "cron", e.Cron, "chat", e.Chat)
	s.start(cfg)
	return nil
}

// Remove removes a schedule added from chat.
func (s *scheduler) Remove(_ context.Context, name string) (bool, error) {
	s.mu.Lock()
	cfg := s.cfg
	s.loadChat(cfg)
	i := slices.IndexFunc(s.chat, func(x command.ScheduleEntry) bool { return x.Name == name })
	if i < 0 {
		s.mu.Unlock()
		return false, nil
	}
	next := slices.Delete(slices.Clone(s.chat), i, i+1)
	if err := saveChat(s.chatFile(cfg), next); err != nil {
		s.mu.Unlock()
		return false, err
	}
	s.chat = next
	s.mu.Unlock()
	s.h.log.Info("schedule removed from chat", "name", name)
	s.start(cfg)
	return true, nil
}

// DropSender removes the schedules added from chat (and by the agent) that
// run in sender's direct chat ([SenderSchedules]); the scheduler restarts
// without them.
func (s *scheduler) DropSender(_ context.Context, sender string) (int, error) {
	s.mu.Lock()
	cfg := s.cfg
	if cfg == nil {
		s.mu.Unlock()
		return 0, nil
	}
	s.loadChat(cfg)
	next, n := dropSender(s.chat, sender)
	if n == 0 {
		s.mu.Unlock()
		return 0, nil
	}
	if err := saveChat(s.chatFile(cfg), next); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	s.chat = next
	s.mu.Unlock()
	s.h.log.Info("schedules of a revoked sender removed", "sender", sender, "count", n)
	s.start(cfg)
	return n, nil
}

// List lists the schedules of the file and of chat, with their next runs.
func (s *scheduler) List(context.Context) []command.ScheduleEntry {
	s.mu.Lock()
	cfg := s.cfg
	chat := slices.Clone(s.chat)
	s.mu.Unlock()
	if cfg == nil {
		return nil
	}
	now := time.Now()
	var out []command.ScheduleEntry
	for _, sc := range cfg.Schedules {
		e := command.ScheduleEntry{Name: sc.Name, Cron: sc.Cron, Chat: sc.Chat, Group: sc.Group, Prompt: sc.Prompt, FromFile: true}
		if c, err := cron.Parse(sc.Cron); err == nil {
			e.Next = c.Next(now, zoneOf(cfg, sc.Timezone))
		}
		out = append(out, e)
	}
	for _, e := range chat {
		if c, err := cron.Parse(e.Cron); err == nil {
			e.Next = c.Next(now, cfg.Messages.Location())
		}
		out = append(out, e)
	}
	return out
}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// saveChat writes the schedules added from chat (0600, replaced
// atomically).
func saveChat(path string, list []command.ScheduleEntry) error {
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b)
}
