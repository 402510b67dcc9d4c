package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// turn runs one turn to its Result.
func (r *Runner) turn(ctx context.Context, t *Turn, req TurnRequest, prev <-chan struct{}) Result {
	log := r.log.With("key", req.Key, "session", req.SessionID)
	timer := time.NewTimer(r.cfg.Timeout)
	defer timer.Stop()
	st := stopper{ctx: ctx, t: t, timer: timer.C}

	// One turn per key at a time, in Run order.
	if prev == nil {
		closed := make(chan struct{})
		close(closed)
		prev = closed
	}
	select {
	case <-prev:
	case <-t.abortCh:
		return stoppedResult(t.abortKind, "stopped while waiting for the previous turn")
	case <-ctx.Done():
		return stoppedResult(KindAborted, "stopped while waiting for the previous turn")
	case <-timer.C:
		return stoppedResult(KindTimeout, "timed out waiting for the previous turn of this conversation")
	}
	r.mu.Lock()
	r.active[req.Key] = t
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.active[req.Key] == t {
			delete(r.active, req.Key)
		}
		r.mu.Unlock()
	}()

	select {
	case r.sem <- struct{}{}:
	case <-t.abortCh:
		return stoppedResult(t.abortKind, "stopped while waiting for a free slot")
	case <-ctx.Done():
		return stoppedResult(KindAborted, "stopped while waiting for a free slot")
	case <-timer.C:
		return stoppedResult(KindTimeout, "timed out waiting for a free slot (agent.max_concurrent)")
	}
	defer func() { <-r.sem }()

	sessionReset := false
	resume := !req.NewSession
	for attempt := 0; ; attempt++ {
		p, reused, serr := r.acquire(req, resume)
		if serr != nil {
			log.Error("start claude", "error", serr.Detail)
			return Result{Err: serr, SessionReset: sessionReset}
		}
		res, sawOutput := r.exchange(st, t, p, req.Prompt)
		res.NewProcess = !reused
		res.PID = p.pid
		if res.SessionID == "" {
			res.SessionID = req.SessionID
		}
		res.SessionReset = res.SessionReset || sessionReset
		r.release(p, res.Err == nil || isResultError(res.Err))
		if attempt >= 2 || res.Err == nil {
			return res
		}
		switch {
		case res.Err.Kind == KindSessionMissing && resume:
			log.Warn("session transcript missing; starting a fresh session with the same id", "detail", res.Err.Detail)
			resume, sessionReset = false, true
		case res.Err.Kind == KindUsage && !resume && strings.Contains(res.Err.Detail, "already in use"):
			log.Info("session id already has a transcript; resuming it")
			resume = true
		case res.Err.Kind == KindCrash && reused && !sawOutput:
			log.Warn("warm process died before the turn; restarting with --resume", "detail", res.Err.Detail)
			resume = true
		default:
			if res.Err.Kind != KindAborted && res.Err.Kind != KindTimeout {
				log.Warn("turn failed", "kind", res.Err.Kind, "detail", res.Err.Detail)
			}
			return res
		}
	}
}

// stopper gathers the ways a turn ends early.
type stopper struct {
	ctx   context.Context
	t     *Turn
	timer <-chan time.Time
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
func (r *Runner) exchange(st stopper, t *Turn, p *proc, prompt string) (res Result, sawOutput bool) {
	// Discard anything left from an earlier turn.
	for drained := false; !drained; {
		select {
		case _, ok := <-p.msgs:
			if !ok {
				drained = true
			}
		default:
			drained = true
		}
	}
	var payload []byte
	if r.cfg.OneShot {
		payload = []byte(prompt)
	} else {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": prompt}})
		payload = append(b, '\n')
	}
	if !r.cfg.OneShot {
		t.steering.begin(p)
	}
	defer t.steering.end(true)
	// Results of turns that steered messages queued behind (usage summed into the last).
	var (
		accOut   int
		accCost  float64
		accTurns int
	)
	wrote := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(payload)
		if r.cfg.OneShot {
			p.closeStdin()
		}
		wrote <- err
	}()

	var (
		blocks  []string
		cur     strings.Builder
		inBlock bool
	)
	streamed := func() string {
		all := blocks
		if cur.Len() > 0 {
			all = append(append([]string(nil), blocks...), cur.String())
		}
		return strings.Join(all, "\n\n")
	}
	stop := func(kind ErrorKind) Result {
		r.kill(p)
		detail := "aborted"
		if kind == KindTimeout {
			detail = fmt.Sprintf("no result within agent.timeout (%s)", r.cfg.Timeout)
		}
		res.Err = newError(kind, detail)
		res.Streamed = streamed()
		return res
	}
	if k := st.reason(); k != "" {
		return stop(k), false
	}
	for {
		select {
		case err := <-wrote:
			if err != nil {
				r.log.Debug("write prompt", "pid", p.pid, "error", err)
			}
			wrote = nil
			continue
		case <-st.t.abortCh:
			return stop(st.t.abortKind), sawOutput
		case <-st.ctx.Done():
			return stop(KindAborted), sawOutput
		case <-st.timer:
			st.t.abort(KindTimeout)
			return stop(st.t.abortKind), sawOutput
		case ln, ok := <-p.msgs:
			if !ok {
				if k := st.wait(p.exited); k != "" {
					return stop(k), sawOutput
				}
				res.Err = classifyExit(p.exitCode, p.stdoutBytes == 0, p.stderr.String())
				res.Streamed = streamed()
				return res, sawOutput
			}
			sawOutput = true
			m := ln.msg
			switch m.Type {
			case "system":
				switch m.Subtype {
				case "init":
					res.SessionID = m.SessionID
				case "compact_boundary":
					res.Compacted = true
				}
			case "stream_event":
				if m.ParentToolUseID != nil {
					continue
				}
				var ev wireStreamEvent
				if json.Unmarshal(m.Event, &ev) != nil {
					continue
				}
				switch ev.Type {
				case "content_block_start":
					inBlock = ev.ContentBlock.Type == "text"
					cur.Reset()
				case "content_block_delta":
					if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
						cur.WriteString(ev.Delta.Text)
						t.emit(Event{Kind: EventTextDelta, Text: ev.Delta.Text, At: ln.at})
					}
				case "content_block_stop":
					if inBlock {
						t.emit(Event{Kind: EventBlockEnd, At: ln.at})
						inBlock = false
					}
				}
			case "assistant":
				if m.ParentToolUseID != nil || m.IsAPIError || (len(m.Error) > 0 && string(m.Error) != "null") {
					continue
				}
				var am wireAssistant
				if json.Unmarshal(m.Message, &am) != nil {
					continue
				}
				for _, c := range am.Content {
					switch c.Type {
					case "text":
						if c.Text == "" {
							continue
						}
						blocks = append(blocks, c.Text)
						cur.Reset()
						t.emit(Event{Kind: EventText, Text: c.Text, At: ln.at})
					case "tool_use":
						t.emit(Event{Kind: EventToolUse, Tool: &ToolUse{ID: c.ID, Name: c.Name, Summary: summarizeInput(c.Input)}, At: ln.at})
					}
				}
			case "command_lifecycle":
				var cl struct {
					CommandUUID string `json:"command_uuid"`
					State       string `json:"state"`
				}
				if json.Unmarshal(ln.raw, &cl) == nil && (cl.State == "started" || cl.State == "completed") {
					t.steering.started(cl.CommandUUID)
				}
			case "result":
				var wr wireResult
				if err := json.Unmarshal(ln.raw, &wr); err != nil {
					res.Err = newError(KindCrash, fmt.Sprintf("unreadable result line: %v", err))
					return res, sawOutput
				}
				if t.steering.end(false) {
					// A steered message was queued behind this result; its turn follows.
					var part Result
					wr.fill(&part)
					accOut += part.Usage.OutputTokens
					accCost += part.Usage.CostUSD
					accTurns += part.NumTurns
					continue
				}
				wr.fill(&res)
				// Input tokens stay the last request's: the prompt size memory flush needs.
				res.Usage.OutputTokens += accOut
				res.Usage.CostUSD += accCost
				res.NumTurns += accTurns
				res.Steered = t.steering.count()
				res.Err = classifyResult(&wr)
				res.Streamed = streamed()
				return res, sawOutput
			}
		}
	}
}
