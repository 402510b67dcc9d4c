package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// turn runs one turn to its Result: it waits in the scheduler (sched.go) for the key's
// earlier turns and a slot, then runs attempts; leaving the scheduler at the end hands
// the slot on. Config.Timeout counts from here.
func (r *Runner) turn(ctx context.Context, t *Turn, req TurnRequest, tk *ticket) Result {
	timeout := r.profile(req.Agent).Timeout
	timer, fired := r.clock.NewTimer(timeout)
	defer timer.Stop()
	deadline := r.clock.Now().Add(timeout)
	st := stopper{ctx: ctx, t: t, timer: fired, tm: timer, clock: r.clock, deadline: &deadline}
	defer r.leave(tk)
	w, res, ok := r.waitTurn(st, tk)
	if !ok {
		return res
	}
	return r.attempts(st, t, req, w)
}

// stopper gathers the ways a turn ends early: Abort (or Close), the caller's context, and
// Config.Timeout.
type stopper struct {
	ctx   context.Context
	t     *Turn
	timer <-chan time.Time
	// tm and deadline move the timeout when a permission question kept the
	// turn waiting for a person.
	tm       tstime.Timer
	clock    tstime.Clock
	deadline *time.Time
}

// extend moves the timeout by d (the time the turn waited for an answer).
func (s stopper) extend(d time.Duration) {
	if d <= 0 || s.tm == nil {
		return
	}
	*s.deadline = s.deadline.Add(d)
	s.tm.Reset(s.deadline.Sub(s.clock.Now()))
}

// reason reports why the turn must stop, or "" to continue.
func (s stopper) reason() ErrorKind {
	select {
	case <-s.t.abortCh:
		return s.t.abortKind
	case <-s.ctx.Done():
		return KindAborted
	case <-s.timer:
		s.t.abort(KindTimeout)
		return s.t.abortKind
	default:
		return ""
	}
}

// wait blocks on ch or an early end.
func (s stopper) wait(ch <-chan struct{}) ErrorKind {
	select {
	case <-ch:
		return ""
	case <-s.t.abortCh:
		return s.t.abortKind
	case <-s.ctx.Done():
		return KindAborted
	case <-s.timer:
		s.t.abort(KindTimeout)
		return s.t.abortKind
	}
}

func stoppedResult(kind ErrorKind, detail string) Result {
	return Result{Err: newError(kind, detail)}
}

// attempts runs the turn on a process from the pool, up to three times: again when the
// session must be started the other way (see launchPlan.retry) or a warm process died
// before the turn.
func (r *Runner) attempts(st stopper, t *Turn, req TurnRequest, w Wait) Result {
	req.SessionID = r.sessionOf(req.Key, req.SessionID)
	log := r.log.With("key", req.Key, "session", req.SessionID)
	plan := launchPlan{resume: !req.NewSession}
	var spare *spareID
	if r.sparesOn(req) {
		id := r.spareIDOf(req)
		spare = &id
		defer func() { r.afterNewSession(t, req, id, plan.adopted) }()
	}
	for attempt := 0; ; attempt++ {
		if plan.resume || !req.AdoptSpare {
			spare = nil
		}
		p, serr := r.acquire(req, plan.resume, spare, &w)
		plan.adopted = plan.adopted || w.Start == StartSpare
		if serr != nil {
			log.Error("start claude", "error", serr.Detail)
			return Result{Err: serr, SessionReset: plan.sessionReset, Wait: w}
		}
		reused := w.Start == StartWarm
		res, sawOutput := r.exchange(st, t, p, req.Prompt, req.Images)
		p.cfg.loginHint(res.Err, os.Environ())
		res.NewProcess = !reused
		res.PID = p.pid
		if !reused && w.Start != StartSpare { // a spare started before the turn came
			w.Startup = time.Duration(p.startup.Load())
		}
		res.Wait = w
		if res.SessionID == "" {
			res.SessionID = p.sessionID // the one asked for, or the adopted spare's
		}
		res.SessionReset = res.SessionReset || plan.sessionReset
		r.release(p, res.Err == nil || isResultError(res.Err))
		if w.Start == StartSpare && res.Err != nil && res.Err.Kind == KindCrash && !sawOutput && attempt < 2 {
			// The spare died before answering: the session it would have been is
			// dropped, and the next attempt starts the one asked for.
			log.Warn("the adopted spare claude died before the turn; starting claude", "detail", res.Err.Detail)
			r.sessionOf(req.Key, "")
			req.AdoptSpare = false
			continue
		}
		if attempt >= 2 || res.Err == nil || !plan.retry(log, res.Err, reused, sawOutput) {
			return res
		}
	}
}

// launchPlan is how the next attempt starts claude.
type launchPlan struct {
	// resume: --resume the session, else --session-id (a new session).
	resume bool
	// sessionReset: the transcript was missing and the session started fresh.
	sessionReset bool
	// adopted: an attempt ran on the agent's spare (spare.go); after it failed the
	// next does not adopt one (TurnRequest.AdoptSpare cleared).
	adopted bool
}

// retry adjusts the plan after an attempt failed with e and reports whether to try again:
// a missing transcript starts fresh, an id already in use is resumed, and a reused warm
// process that died before writing anything is replaced by a resumed one.
func (lp *launchPlan) retry(log hclog.Logger, e *Error, reused, sawOutput bool) bool {
	switch {
	case e.Kind == KindSessionMissing && lp.resume:
		log.Warn("session transcript missing; starting a fresh session with the same id", "detail", e.Detail)
		lp.resume, lp.sessionReset = false, true
	case e.Kind == KindUsage && !lp.resume && strings.Contains(e.Detail, "already in use"):
		log.Info("session id already has a transcript; resuming it")
		lp.resume = true
	case e.Kind == KindCrash && reused && !sawOutput:
		log.Warn("warm process died before the turn; restarting with --resume", "detail", e.Detail)
		lp.resume = true
	default:
		if e.Kind != KindAborted && e.Kind != KindTimeout {
			log.Warn("turn failed", "kind", e.Kind, "detail", e.Detail)
		}
		return false
	}
	return true
}

// isResultError reports whether the failure came as a result object from a healthy process
// (e.g. an API error), which keeps the warm process usable.
func isResultError(e *Error) bool {
	switch e.Kind {
	case KindCrash, KindUsage, KindTimeout, KindAborted, KindCLINotFound, KindSessionMissing:
		return false
	}
	return true
}

// exchange sends the prompt to p and reads until the result, p's end, or an early stop.
// sawOutput reports whether p wrote anything during this turn.
func (r *Runner) exchange(st stopper, t *Turn, p *proc, prompt string, images []Image) (res Result, sawOutput bool) {
	p.discardUnread(r.log)
	if !r.cfg.OneShot {
		t.steering.begin(p)
	}
	defer t.steering.end(true)
	wrote := r.writePrompt(p, prompt, images)
	x := &reading{t: t, p: p, asking: newAsking()}
	defer x.asking.withdrawAll()
	if k := st.reason(); k != "" {
		return r.stopped(p, x, k), false
	}
	for {
		select {
		case err := <-wrote:
			if err != nil {
				r.log.Debug("write prompt", "pid", p.pid, "error", err)
			}
			wrote = nil
		case <-st.t.abortCh:
			return r.stopped(p, x, st.t.abortKind), x.sawOutput
		case <-st.ctx.Done():
			// Shutting down. claude may have written its result just as the
			// stop came (found by the chaos campaign: a result 0.3 ms after
			// SIGTERM, the turn run again after the restart): once claude is
			// gone every line it wrote has been read, and a result among them
			// is the turn's result in hand, recorded rather than produced a
			// second time.
			r.kill(p)
			for ln := range p.msgs { // closed once the reader ended, before p.exited
				x.sawOutput = true
				if x.read(ln) {
					return x.res, true
				}
			}
			x.res.Err = newError(KindAborted, "aborted")
			x.res.Streamed = x.text.streamed()
			return x.res, x.sawOutput
		case <-st.timer:
			if x.asking.waiting() {
				// A person is being asked; the wait does not count. The
				// answer (or its own timeout) re-arms the timer.
				continue
			}
			st.t.abort(KindTimeout)
			return r.stopped(p, x, st.t.abortKind), x.sawOutput
		case ans := <-x.asking.answers:
			st.extend(x.answer(p, ans, r.clock.Now()))
		case ln, ok := <-p.msgs:
			if !ok {
				return r.ended(st, p, x), x.sawOutput
			}
			if !x.sawOutput {
				t.began(ln.at)
			}
			x.sawOutput = true
			if x.read(ln) {
				return x.res, true
			}
			if x.resumed > 0 {
				st.extend(x.resumed)
				x.resumed = 0
			}
		}
	}
}

// writePrompt writes the prompt to p's stdin in the background — a stream-json user
// message, or with Config.OneShot the plain text and then EOF — and delivers the write's
// error on the returned channel. A blocked write never blocks the exchange.
func (r *Runner) writePrompt(p *proc, prompt string, images []Image) <-chan error {
	prompt = p.shown(prompt)
	var payload []byte
	if r.cfg.OneShot {
		payload = []byte(prompt) // images cannot go on plain-text stdin; their paths are in the prompt
	} else {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": userContent(prompt, images)}})
		payload = append(b, '\n')
	}
	wrote := make(chan error, 1)
	go func() {
		err := p.write(payload)
		if r.cfg.OneShot {
			p.closeStdin()
		}
		wrote <- err
	}()
	return wrote
}

// stopped kills p after an abort or timeout and returns the turn's partial Result.
func (r *Runner) stopped(p *proc, x *reading, kind ErrorKind) Result {
	r.kill(p)
	detail := "aborted"
	if kind == KindTimeout {
		detail = fmt.Sprintf("no result within agent.timeout (%s)", p.cfg.Timeout)
	}
	x.res.Err = newError(kind, detail)
	x.res.Streamed = x.text.streamed()
	x.seen.cut(&x.res)
	return x.res
}

// ended returns the Result of a process whose output ended before a result line: it waits
// for the exit and classifies it (exit code, stderr).
func (r *Runner) ended(st stopper, p *proc, x *reading) Result {
	if k := st.wait(p.exited); k != "" {
		return r.stopped(p, x, k)
	}
	x.res.Err = classifyExit(p.exitCode, p.stdoutBytes == 0, p.stderr.String())
	x.res.Streamed = x.text.streamed()
	x.seen.cut(&x.res)
	return x.res
}

// reading is what one exchange has read from claude's stdout so far.
type reading struct {
	t *Turn
	p *proc
	// asking holds the open permission questions; resumed is how long the
	// last withdrawn one kept the turn waiting.
	asking  *asking
	resumed time.Duration
	// res collects the session id and compaction from system lines, then the result.
	res  Result
	text textStream
	// seen adds up the messages' usage, for a turn cut before its result.
	seen seenUsage
	// limit is the last rate_limit_event's info (a usage limit's reset).
	limit *wireRateLimit
	// sawOutput: claude wrote at least one line during this turn.
	sawOutput bool
	// Usage of results that steered messages queued behind, summed into the last result.
	steeredOut    int
	steeredCost   float64
	steeredTurns  int
	steeredModels map[string]ModelUsage
}

// read handles one stdout line; done reports that it was the turn's final result (or an
// unreadable one), and x.res is the turn's Result.
func (x *reading) read(ln line) (done bool) {
	m := ln.msg
	switch m.Type {
	case "system":
		switch m.Subtype {
		case "init":
			x.res.SessionID = m.SessionID
			var c Commands
			if json.Unmarshal(ln.raw, &c) == nil && (c.Slash != nil || c.Skills != nil) {
				x.res.Commands = &c
			}
		case "compact_boundary":
			x.res.Compacted = true
		}
	case "stream_event":
		x.seen.streamEvent(m)
		x.text.streamEvent(x.t, m, ln.at)
	case "assistant":
		x.seen.assistant(m)
		x.text.assistant(x.t, m, ln.at)
	case "command_lifecycle":
		var cl wireCommandLifecycle
		if json.Unmarshal(ln.raw, &cl) == nil && (cl.State == "started" || cl.State == "completed") {
			x.t.steering.started(cl.CommandUUID)
		}
	case "control_request":
		if x.p != nil {
			x.controlRequest(x.p, ln.raw, ln.at)
		}
	case "control_cancel_request":
		x.resumed += x.controlCancel(ln.raw, ln.at)
	case "rate_limit_event":
		var ev struct {
			Info wireRateLimit `json:"rate_limit_info"`
		}
		if json.Unmarshal(ln.raw, &ev) == nil {
			x.limit = &ev.Info
		}
	case "result":
		return x.result(ln)
	}
	return false
}

// result handles a result line. When a steered message is still queued behind it, its
// usage is kept for the final result and reading goes on (done false).
func (x *reading) result(ln line) (done bool) {
	var wr wireResult
	if ln.res != nil {
		wr = *ln.res
	} else if err := json.Unmarshal(ln.raw, &wr); err != nil {
		x.res.Err = newError(KindCrash, fmt.Sprintf("unreadable result line: %v", err))
		return true
	}
	if x.t.steering.end(false) {
		// A steered message was queued behind this result; its turn follows.
		var part Result
		wr.fill(&part)
		x.steeredOut += part.Usage.OutputTokens
		x.steeredCost += part.Usage.CostUSD
		x.steeredTurns += part.NumTurns
		x.steeredModels = addModels(x.steeredModels, part.Usage.Models)
		return false
	}
	wr.fill(&x.res)
	if x.steeredModels != nil {
		x.res.Usage.Models = addModels(x.steeredModels, x.res.Usage.Models)
	}
	// Input tokens stay the last request's: the prompt size memory flush needs.
	x.res.Usage.OutputTokens += x.steeredOut
	x.res.Usage.CostUSD += x.steeredCost
	x.res.NumTurns += x.steeredTurns
	x.res.Steered = x.t.steering.count()
	x.res.Err = classifyResult(&wr, x.limit)
	x.res.Streamed = x.text.streamed()
	return true
}
