// Package health is the host's health items for the agent and the store,
// as the status page, /status.json, /healthz and clawhost status show
// them: the agent's claude CLI (found, its version, logged in, the last
// turn's failure that stops every turn) and the store (degraded from a
// failed write until the next write succeeds). The root package composes
// them: Recording wraps the store the pipeline writes through, Observer
// the pipeline's observer.
package health

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/doctor"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
)

// Agent is the agent item of the host's health: every agent's
// claude CLI found, the version of the default agent's, and the last turn
// failure that says the agent cannot work at all (the CLI missing or not
// logged in) until a turn gets through again.
type Agent struct {
	mu      sync.Mutex
	path    string
	missing string // why a command is not found; "" all are
	version string
	lastErr string // the kind of the last disabling failure ("" none)
	since   time.Time
	// authSaid: lastErr "auth" comes from `claude auth status`, not a
	// turn; method is how it is logged in; probeErr why the probe failed.
	authSaid bool
	method   string
	probeErr string
	// stopProbe ends the probe and waits for it (its `claude auth status`
	// writes into claude's config directory: it must not outlive the host).
	stopProbe func()
	// log says what the probe found that stops every turn.
	log hclog.Logger
}

// Stop ends the background probe, if one runs, and waits for it.
func (a *Agent) Stop() {
	if a != nil && a.stopProbe != nil {
		a.stopProbe()
	}
}

// NewAgent resolves every agent's command (as the runner will) and
// asks the default one, in the background (a node start, about a second:
// never on the start's path), its version and whether it is logged in
// (runner.Config.Probe: `claude auth status`, no turn spent).
func NewAgent(cfg *config.Config, rc runner.Config, log hclog.Logger) *Agent {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	a := &Agent{log: log}
	for _, ag := range cfg.AllAgents() {
		f, err := installpath.FindCommand(ag.Command)
		if err != nil {
			if a.missing == "" {
				a.missing = "agent " + ag.ID + ": " + ag.Command + " not found (" + err.Error() + ")"
			}
			continue
		}
		if ag.ID == cfg.Agent.ID {
			a.path = f.Path
		}
	}
	if a.path != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		done := make(chan struct{})
		a.stopProbe = func() { cancel(); <-done }
		go func() {
			defer close(done)
			defer cancel()
			a.probe(ctx, rc)
		}()
	}
	return a
}

// probe records what the CLI says of itself: a CLI that says it is not
// logged in makes the agent not ready, until a turn gets through.
func (a *Agent) probe(ctx context.Context, rc runner.Config) {
	v, auth, err := rc.Probe(ctx, runner.BackgroundNice)
	a.mu.Lock()
	defer a.mu.Unlock()
	if v == "" {
		v = "unknown"
	}
	a.version = v
	switch {
	case err != nil:
		a.probeErr = err.Error()
	case !auth.LoggedIn && a.lastErr == "":
		a.lastErr, a.since = "auth", time.Now()
		a.authSaid = true
		// Said at the start, not only on the status page: every turn
		// would fail until claude is logged in.
		a.log.Warn("claude says it is not logged in: every turn fails until it is; "+notLoggedInAction, "path", a.path)
	default:
		a.method = auth.AuthMethod
	}
}

// notLoggedInAction is what to do when claude auth status says claude is
// not logged in.
const notLoggedInAction = "log claude in as the user it runs as, with CLAUDE_CONFIG_DIR=<data_dir>/claude (claude /login, or claude setup-token), or give it ANTHROPIC_API_KEY in agent.env"

// Turn records a finished turn's outcome: a missing CLI or refused
// credentials make the agent not ready until a turn succeeds.
func (a *Agent) Turn(outcome string, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch outcome {
	case "cli_not_found", "auth":
		if a.lastErr != outcome {
			a.lastErr, a.since = outcome, now
		}
	case "ok":
		a.lastErr, a.authSaid = "", false
	}
}

// View is the agent item as the status page, /status.json, /healthz and
// clawhost status show it.
func (a *Agent) View() *admin.AgentHealth {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := &admin.AgentHealth{Ready: true, Path: a.path, Version: a.version, Tested: doctor.TestedClaudeVersion, Since: a.since}
	switch {
	case a.missing != "":
		v.Ready, v.State, v.LastError = false, "missing", a.missing
		v.Action = "install the claude CLI (npm install -g @anthropic-ai/claude-code, or make claude-cli) or set agent.command to its path, then restart"
	case a.lastErr == "cli_not_found":
		v.Ready, v.State, v.LastError = false, "missing", "the last turn could not start claude"
		v.Action = "install the claude CLI or fix agent.command, then restart"
	case a.lastErr == "auth" && a.authSaid:
		v.Ready, v.State, v.LastError = false, "not_logged_in", "claude auth status says it is not logged in"
		v.Action = notLoggedInAction + "; the next turn that gets through clears this"
	case a.lastErr == "auth":
		v.Ready, v.State, v.LastError = false, "not_logged_in", "claude refused its credentials (not logged in, or an invalid key) on the last turn"
		v.Action = "log claude in as the user it runs as (claude /login, or ANTHROPIC_API_KEY in agent.env); the next turn that gets through clears this"
	default:
		v.State = "ready"
		if a.method != "" {
			v.Auth = a.method
		}
		if a.probeErr != "" {
			v.Action = "could not ask claude about itself: " + a.probeErr
		} else if a.version != "" && !strings.HasPrefix(a.version, "unknown") && a.version != doctor.TestedClaudeVersion {
			v.Action = "claude " + a.version + " is not the version clawhost is tested with (" + doctor.TestedClaudeVersion + "); it usually works — report what does not"
		}
	}
	return v
}

// Store is the store item of the host's health: degraded from a
// failed write until the next write succeeds.
type Store struct {
	mu      sync.Mutex
	errors  int
	lastErr string
	since   time.Time
	failing bool
	count   func(op string) // clawhost_store_errors_total
}

// NewStore is a store item that also counts each failed write by its
// operation (count: clawhost_store_errors_total; nil counts nothing).
func NewStore(count func(op string)) *Store { return &Store{count: count} }

// Recording is db with every write's outcome recorded in s: the store the
// pipeline writes through.
func Recording(db store.Store, s *Store) store.Store { return recording{db, s} }

// Record notes the outcome of the write op: a storage failure makes the
// store degraded, a success ends that.
func (s *Store) Record(op string, err error) {
	if err == nil {
		s.mu.Lock()
		s.failing = false
		s.mu.Unlock()
		return
	}
	if !storageFailure(err) {
		return
	}
	s.mu.Lock()
	s.errors++
	s.lastErr = op + ": " + err.Error()
	if !s.failing {
		s.failing, s.since = true, time.Now()
	}
	s.mu.Unlock()
	if s.count != nil {
		s.count(op)
	}
}

// storageFailure tells a failing store (a full disk, a lost database)
// from the answers of the state machine and a shutdown.
func storageFailure(err error) bool {
	for _, e := range []error{context.Canceled, context.DeadlineExceeded, store.ErrClosed, store.ErrBadTransition, store.ErrNotFound,
		store.ErrExpired, store.ErrTooManyAttempts, store.ErrTooManyPending} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

// View is the store item as the status page shows it.
func (s *Store) View() *admin.StoreHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &admin.StoreHealth{State: "ok", Errors: s.errors, LastError: s.lastErr}
	if s.failing {
		v.State, v.Since = "degraded", s.since
		v.Action = "writes to the store fail: messages are not taken in or not finished until they work again. Check the disk (df) and the database; the error says why"
	}
	return v
}

// recording is the store the pipeline writes through: every write's
// outcome goes to the store item of the health.
type recording struct {
	store.Store
	h *Store
}

func (s recording) Accept(ctx context.Context, in store.Inbound) (store.AcceptResult, error) {
	r, err := s.Store.Accept(ctx, in)
	s.h.Record("accept", err)
	return r, err
}

func (s recording) AcceptEarly(ctx context.Context, in store.Inbound) (store.AcceptResult, func() error, error) {
	r, synced, err := store.AcceptEarly(ctx, s.Store, in)
	if err != nil {
		s.h.Record("accept", err)
		return r, synced, err
	}
	return r, func() error {
		err := synced()
		s.h.Record("accept", err)
		return err
	}, nil
}

func (s recording) Enqueue(ctx context.Context, id int64, key string) error {
	err := s.Store.Enqueue(ctx, id, key)
	s.h.Record("enqueue", err)
	return err
}

func (s recording) Begin(ctx context.Context, key string, ids ...int64) error {
	err := s.Store.Begin(ctx, key, ids...)
	s.h.Record("begin", err)
	return err
}

func (s recording) MarkBegan(ctx context.Context, ids ...int64) error {
	err := s.Store.MarkBegan(ctx, ids...)
	s.h.Record("began", err)
	return err
}

func (s recording) Start(ctx context.Context, ids ...int64) error {
	err := s.Store.Start(ctx, ids...)
	s.h.Record("start", err)
	return err
}

func (s recording) Finish(ctx context.Context, req store.FinishRequest) error {
	err := s.Store.Finish(ctx, req)
	s.h.Record("finish", err)
	return err
}

func (s recording) RecordReply(ctx context.Context, r store.Reply) error {
	err := s.Store.RecordReply(ctx, r)
	s.h.Record("record_reply", err)
	return err
}

func (s recording) MarkSent(ctx context.Context, c store.ChunkSent) (store.MarkSentResult, error) {
	r, err := s.Store.MarkSent(ctx, c)
	s.h.Record("mark_sent", err)
	return r, err
}

func (s recording) UpdateSession(ctx context.Context, key string, fn func(*store.Session, bool) error) (store.Session, error) {
	var fnErr error
	r, err := s.Store.UpdateSession(ctx, key, func(x *store.Session, found bool) error {
		fnErr = fn(x, found)
		return fnErr
	})
	if fnErr == nil { // an error of fn is the caller's, not the store's
		s.h.Record("update_session", err)
	}
	return r, err
}

// Observer is the pipeline's observer: the metrics, and the agent's
// health from each turn's outcome.
type Observer struct {
	*metrics.Metrics
	Agent *Agent
}

// Turn implements the pipeline's observer: the turn's metrics, and its
// outcome for the agent item.
func (o Observer) Turn(agent string, d time.Duration, outcome string) {
	o.Metrics.Turn(agent, d, outcome)
	o.Agent.Turn(outcome, time.Now())
}
