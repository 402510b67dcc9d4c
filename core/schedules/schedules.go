// Package schedules runs the configured schedules, the heartbeat and the
// schedules added from chat (Scheduler), keeps the latter in the store
// (moving the data_dir files of earlier versions into it), and edits them
// while clawhost is not running (Stored).
package schedules

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/cron"
	"github.com/clawhost/clawhost/core/schedule"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/core/workspace"
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

// jobAgent is the agent a configured job names ("" for the chat's own,
// and for the schedules added from a chat).
func jobAgent(cfg *config.Config, job string) string {
	if job == heartbeatJob && cfg.Heartbeat != nil {
		return cfg.Heartbeat.Agent
	}
	for _, s := range cfg.Schedules {
		if s.Name == job {
			return s.Agent
		}
	}
	return ""
}

// jobModel is the model a configured job runs on ("" for the session's):
// heartbeat { model }.
func jobModel(cfg *config.Config, job string) string {
	if job == heartbeatJob && cfg.Heartbeat != nil {
		return cfg.Heartbeat.Model
	}
	return ""
}

// heartbeatWorkspace is the workspace of the agent the heartbeat runs on:
// its agent attribute, else the agent its chat is bound to.
func heartbeatWorkspace(cfg *config.Config) string {
	hb := cfg.Heartbeat
	if hb == nil {
		return ""
	}
	id := hb.Agent
	if id == "" {
		instance, chat, _ := strings.Cut(hb.Chat, ":")
		id, _ = cfg.Bindings().Resolve(instance, chat, "")
	}
	if a := cfg.AgentByID(id); a != nil {
		return a.Workspace
	}
	return cfg.Agent.Workspace
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

// Scheduler runs the configured schedules and those added from chat
// (/schedule, and the agent's one-shot entries), which the store keeps
// with every job's last run. Reload and /schedule restart it. On a shared
// store every host runs every schedule: the other hosts' additions and
// removals are read every poll; a run fired by several hosts is one
// message (its id is the job and the due time, which the journal's dedupe
// key catches), so it is answered once, and a schedule added through a
// host that died runs from the others.
type Scheduler struct {
	db  store.Schedules
	log hclog.Logger
	// fire starts a run (the gateway's Scheduled).
	fire func(context.Context, gateway.ScheduledRun) error
	// poll, when positive, is how often the store's schedules are read
	// again (a store shared with other hosts).
	poll time.Duration

	runMu  sync.Mutex // serializes restarts of the jobs
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	cfg    *config.Config
	chat   []store.Schedule // as last read from the store
	// migrated: the data_dir files of earlier versions were moved into
	// the store (tried once per run, at the first start).
	migrated   bool
	pollCancel context.CancelFunc
	pollDone   chan struct{}
	// stopped: stop was called; nothing starts again (a one-shot entry's
	// removal in the background restarts no job after a shutdown).
	stopped bool
}

// New returns the scheduler of the schedules in db; fire starts
// their runs; poll > 0 reads db again that often (a shared store).
func New(db store.Schedules, log hclog.Logger, fire func(context.Context, gateway.ScheduledRun) error, poll time.Duration) *Scheduler {
	return &Scheduler{db: db, log: log, fire: fire, poll: poll}
}

// start (re)starts the jobs of cfg and those of the store; the first
// start moves the files of earlier versions into the store.
func (s *Scheduler) Start(cfg *config.Config) {
	s.mu.Lock()
	s.cfg = cfg
	s.stopped = false
	first := !s.migrated
	s.migrated = true
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if first {
		if err := migrateScheduleFiles(ctx, cfg.DataDir, s.db, s.log); err != nil {
			s.log.Error("moving the schedules of data_dir into the store failed; they do not run (the next start tries again)", "error", err)
		}
	}
	s.read(ctx)
	cancel()
	s.restart()
	s.mu.Lock()
	poll := s.poll > 0 && s.pollCancel == nil
	if poll {
		pctx, pcancel := context.WithCancel(context.Background())
		s.pollCancel, s.pollDone = pcancel, make(chan struct{})
		go s.watch(pctx, s.pollDone)
	}
	s.mu.Unlock()
}

// read reads the schedules of the store; it reports whether they changed.
// An error keeps those read before.
func (s *Scheduler) read(ctx context.Context) bool {
	list, err := s.db.ListSchedules(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("the schedules added from chat could not be read; those read before run", "error", err)
		}
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := !slices.EqualFunc(s.chat, list, sameSchedule)
	s.chat = list
	return changed
}

func sameSchedule(a, b store.Schedule) bool {
	return a.Name == b.Name && a.Cron == b.Cron && a.At.Equal(b.At) && a.Chat == b.Chat && a.Group == b.Group && a.Prompt == b.Prompt
}

// watch reads the store every poll and restarts the jobs when another
// host added or removed a schedule.
func (s *Scheduler) watch(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(s.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, s.poll+10*time.Second)
		changed := s.read(rctx)
		cancel()
		if changed && ctx.Err() == nil {
			s.log.Debug("the schedules changed on another host")
			s.restart()
		}
	}
}

// restart stops the running jobs and runs those of the configuration and
// of the store as last read.
func (s *Scheduler) restart() {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.stopJobs()
	s.mu.Lock()
	cfg, stopped := s.cfg, s.stopped
	chat := slices.Clone(s.chat)
	s.mu.Unlock()
	if cfg == nil || stopped {
		return
	}
	jobs, groups := jobsOf(cfg)
	once, senders := map[string]bool{}, map[string]string{}
	for _, e := range chat {
		senders[e.Name] = e.Sender
		if !e.At.IsZero() {
			jobs = append(jobs, schedule.Job{Name: e.Name, At: e.At, Since: e.Added, Target: e.Chat, Prompt: e.Prompt})
			groups[e.Name], once[e.Name] = e.Group, true
			continue
		}
		c, err := cron.Parse(e.Cron)
		if err != nil {
			continue
		}
		jobs = append(jobs, schedule.Job{Name: e.Name, Cron: &c, Location: cfg.Messages.Location(), Since: e.Added, Target: e.Chat, Prompt: e.Prompt})
		groups[e.Name] = e.Group
	}
	if len(jobs) == 0 {
		return
	}
	sch := schedule.New(schedule.Options{
		Jobs: jobs, State: runState{s.db}, Logger: s.log,
		Fire: func(ctx context.Context, r schedule.Run) error {
			if r.Job == heartbeatJob && workspace.HeartbeatEmpty(heartbeatWorkspace(cfg)) {
				// Nothing to check: no claude turn (OpenClaw's rule).
				s.log.Debug("heartbeat skipped: HEARTBEAT.md asks for nothing", "workspace", heartbeatWorkspace(cfg))
				return nil
			}
			err := s.fire(ctx, gateway.ScheduledRun{Job: r.Job, At: r.At, Chat: r.Target, Group: groups[r.Job], Prompt: r.Prompt, Agent: jobAgent(cfg, r.Job), Model: jobModel(cfg, r.Job), Sender: senders[r.Job]})
			if err == nil && once[r.Job] {
				// Done: a one-shot entry leaves the store (in the
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
	s.log.Info("schedules running", "jobs", len(jobs))
}

// runState is the scheduler's state in the store.
type runState struct{ db store.Schedules }

func (r runState) Runs(ctx context.Context) (map[string]time.Time, error) {
	return r.db.ScheduleRuns(ctx)
}

func (r runState) Record(ctx context.Context, job string, at time.Time) error {
	return r.db.RecordScheduleRun(ctx, job, at)
}

// stopJobs ends the running jobs and waits for them.
func (s *Scheduler) stopJobs() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// stop ends the polling and the running jobs, and waits for them.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	cancel, done := s.pollCancel, s.pollDone
	s.pollCancel, s.pollDone = nil, nil
	s.stopped = true
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.stopJobs()
}

// Add adds a schedule from chat: a new name, a valid expression, a known
// instance; it is stored and runs at once.
func (s *Scheduler) Add(ctx context.Context, e command.ScheduleEntry) error {
	if !nameRe().MatchString(e.Name) {
		return fmt.Errorf("%q is not a schedule name (letters, digits, - and _)", e.Name)
	}
	if e.At.IsZero() {
		if _, err := cron.Parse(e.Cron); err != nil {
			return err
		}
	}
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	if cfg != nil && slices.ContainsFunc(cfg.Schedules, func(x *config.Schedule) bool { return x.Name == e.Name }) || e.Name == heartbeatJob {
		return fmt.Errorf("a schedule %q exists", e.Name)
	}
	_, err := s.db.AddSchedule(ctx, store.Schedule{Name: e.Name, Cron: e.Cron, At: e.At, Chat: e.Chat, Group: e.Group, Prompt: e.Prompt, Sender: e.Sender})
	if errors.Is(err, store.ErrScheduleExists) {
		return fmt.Errorf("a schedule %q exists", e.Name)
	}
	if err != nil {
		return err
	}
	s.log.Info("schedule added from chat", "name", e.Name, "cron", e.Cron, "chat", e.Chat)
	s.changed(ctx)
	return nil
}

// changed reads the store again and restarts the jobs.
func (s *Scheduler) changed(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	s.read(rctx)
	cancel()
	s.restart()
}

// Remove removes a schedule added from chat.
func (s *Scheduler) Remove(ctx context.Context, name string) (bool, error) {
	n, err := s.db.RemoveSchedules(ctx, name)
	if err != nil || n == 0 {
		return false, err
	}
	s.log.Info("schedule removed from chat", "name", name)
	s.changed(ctx)
	return true, nil
}

// DropSender removes the schedules added from chat (and by the agent) that
// run in sender's direct chat ([SenderSchedules]); the scheduler restarts
// without them.
func (s *Scheduler) DropSender(ctx context.Context, sender string) (int, error) {
	n, err := dropSender(ctx, s.db, sender)
	if err != nil || n == 0 {
		return n, err
	}
	s.log.Info("schedules of a revoked sender removed", "sender", sender, "count", n)
	s.changed(ctx)
	return n, nil
}

// List lists the schedules of the file and of the store, with their next
// runs.
func (s *Scheduler) List(ctx context.Context) []command.ScheduleEntry {
	s.read(ctx)
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
	for _, sc := range chat {
		e := entryOf(sc)
		if c, err := cron.Parse(e.Cron); err == nil {
			e.Next = c.Next(now, cfg.Messages.Location())
		}
		out = append(out, e)
	}
	return out
}

// entryOf is a stored schedule as /schedule shows it.
func entryOf(s store.Schedule) command.ScheduleEntry {
	return command.ScheduleEntry{Name: s.Name, Cron: s.Cron, At: s.At, Chat: s.Chat, Group: s.Group, Prompt: s.Prompt, Sender: s.Sender}
}

var nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`) })

// Poll is how often a host reads the schedules of a shared store
// again (those other hosts added or removed): a third of the lease TTL,
// as the leases are renewed. Zero for SQLite: one host, which made every
// change itself.
func Poll(cfg *config.Config) time.Duration {
	if cfg.Storage.Engine != config.EnginePostgres {
		return 0
	}
	return cfg.Storage.LeaseTTL.Duration() / 3
}

// ownsSchedule reports whether chat-added entry e belongs to sender
// ("<instance>:<sender id>"): it runs in that sender's direct chat.
// Entries stored before the sender was recorded fall back to the chat,
// which is the sender on Telegram and WhatsApp.
func ownsSchedule(e store.Schedule, sender string) bool {
	if e.Group {
		return false
	}
	if e.Sender != "" {
		return e.Sender == sender
	}
	return e.Chat == sender
}

// dropSender removes sender's schedules from db and returns how many.
func dropSender(ctx context.Context, db store.Schedules, sender string) (int, error) {
	list, err := db.ListSchedules(ctx)
	if err != nil {
		return 0, err
	}
	var names []string
	for _, e := range list {
		if ownsSchedule(e, sender) {
			names = append(names, e.Name)
		}
	}
	return db.RemoveSchedules(ctx, names...)
}

// StoredSchedules are the schedules added from chat as the store keeps
// them, for when clawhost is not running (the pairing subcommand).
type StoredSchedules struct {
	dataDir string
	db      store.Schedules
}

// Stored returns the schedules added from chat in db, to be edited
// while clawhost is not running; the files of data_dir that earlier
// versions kept them in are moved into db first (as a start does), so a
// revocation reaches them too.
func Stored(cfg *config.Config, db store.Schedules) StoredSchedules {
	return StoredSchedules{dataDir: cfg.DataDir, db: db}
}

// DropSender removes sender's schedules from the store (pairing.SenderSchedules).
func (s StoredSchedules) DropSender(ctx context.Context, sender string) (int, error) {
	if err := migrateScheduleFiles(ctx, s.dataDir, s.db, hclog.NewNullLogger()); err != nil {
		return 0, err
	}
	return dropSender(ctx, s.db, sender)
}
