package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// Relayed channel calls. A session runs on the host it is placed on; its
// channel instance may be held by another host (one poller per Telegram
// token). Then the session's host does not call its own plugin (it is in
// standby) but stores the call in the shared relay table; the holder
// claims it (once), makes it and stores the outcome, which the session's
// host takes. The outbox semantics stay the session host's: it marks a
// chunk attempted before relaying it, and a call whose outcome is lost
// (the holder died after claiming it) is uncertain, never repeated.

// relayPoll is how often relayed calls and outcomes are looked for when
// no wake-up came (a lost NOTIFY, a reconnect).
const relayPoll = time.Second

// maxRelayedMedia bounds the bytes of one relayed file (outbound media,
// a download).
const maxRelayedMedia = 50 << 20

// relay holds both sides: the calls this host waits for and the ones it
// makes for the others.
type relay struct {
	clock tstime.Clock
	db    store.Cluster
	gate  *gate
	local gateway.Ports
	log   hclog.Logger
	id    string
	// alive reports whether a host's lease is live (the last read).
	alive func(host string) bool

	mu      sync.Mutex
	waiters map[chan struct{}]struct{}
	claim   chan struct{}
	wg      sync.WaitGroup
	// calls is the context of the calls this host makes for the others:
	// not the serving loop's, so a graceful stop lets them finish (see
	// drain); kill ends them (a hard stop).
	calls context.Context
	kill  context.CancelFunc
	// stopClaims, closed by drain, ends the claiming; served is closed
	// once serve returned (every call it claimed finished); serving:
	// serve was started.
	stopClaims chan struct{}
	stopOnce   sync.Once
	served     chan struct{}
	serving    atomic.Bool
}

func newRelay(clock tstime.Clock, db store.Cluster, g *gate, local gateway.Ports, log hclog.Logger, id string, alive func(string) bool) *relay {
	calls, kill := context.WithCancel(context.Background())
	return &relay{clock: tstime.Or(clock), db: db, gate: g, local: local, log: log.Named("relay"), id: id, alive: alive,
		waiters: map[chan struct{}]struct{}{}, claim: make(chan struct{}, 1), calls: calls, kill: kill,
		stopClaims: make(chan struct{}), served: make(chan struct{})}
}

// errHolderLost: the host that claimed a call died before its outcome
// was stored.
var errHolderLost = errors.New("the host serving the channel stopped during the call")

// call relays one call and waits for its outcome, decoding a success into
// out. Until a holder claims it the call can be withdrawn: ctx ending then
// is pluginclient.ErrNotSent (certainly not made, safe to ask again). Once
// claimed, an outcome that does not come (ctx ends, the claimer's lease
// expires) is channel.CodeUncertain: it may have reached the chat.
func (r *relay) call(ctx context.Context, instance, op string, req, out any) error {
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	wake := make(chan struct{}, 1)
	r.mu.Lock()
	r.waiters[wake] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiters, wake)
		r.mu.Unlock()
	}()
	id, err := r.db.Relay(ctx, store.RelayCall{Instance: instance, Op: op, Request: b})
	if err != nil {
		return fmt.Errorf("%w: %w", pluginclient.ErrNotSent, err)
	}
	t, tick := r.clock.NewTicker(relayPoll)
	defer t.Stop()
	for {
		select {
		case <-wake:
		case <-tick:
		case <-ctx.Done():
		}
		// The outcome is read on a context of its own: a call whose
		// caller gave up is still withdrawn or taken.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		st, err := r.db.TakeRelay(rctx, id)
		if err == nil && st.State == store.RelayNew && ctx.Err() != nil {
			var withdrawn bool
			if withdrawn, err = r.db.CancelRelay(rctx, id); err == nil && withdrawn {
				cancel()
				return fmt.Errorf("%w: no host took the call in time (%w)", pluginclient.ErrNotSent, ctx.Err())
			}
			if err == nil {
				st, err = r.db.TakeRelay(rctx, id) // claimed meanwhile
			}
		}
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			return &channel.Error{Code: channel.CodeUncertain, Message: fmt.Sprintf("relayed %s: %v", op, err)}
		case err != nil:
			continue // the database: look again
		case st.State == store.RelayDone:
			return decodeOutcome(st.Result, out)
		case st.State == store.RelayClaimed && (ctx.Err() != nil || !r.alive(st.ClaimedBy)):
			cause := ctx.Err()
			if cause == nil {
				cause = errHolderLost
			}
			return &channel.Error{Code: channel.CodeUncertain, Message: fmt.Sprintf("relayed %s to %s: %v", op, st.ClaimedBy, cause)}
		}
	}
}

func decodeOutcome(res store.RelayResult, out any) error {
	switch {
	case res.NotSent:
		return fmt.Errorf("%w: %s", pluginclient.ErrNotSent, res.Error)
	case res.Code != "":
		return &channel.Error{Code: channel.Code(res.Code), Message: res.Error, RetryAfter: res.RetryAfter}
	case res.Error != "":
		return errors.New(res.Error)
	case out != nil && len(res.Response) > 0:
		return json.Unmarshal(res.Response, out)
	}
	return nil
}

// woke wakes the calls waiting for an outcome.
func (r *relay) woke() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for w := range r.waiters {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// wakeClaims makes serve look for calls now.
func (r *relay) wakeClaims() {
	select {
	case r.claim <- struct{}{}:
	default:
	}
}

// serve claims and makes the calls relayed to the instances this host
// holds until ctx ends or drain is called, then waits for the calls it
// claimed to finish: ending ctx does not cut them (kill does).
func (r *relay) serve(ctx context.Context) {
	r.serving.Store(true)
	defer close(r.served)
	defer r.wg.Wait()
	t, tick := r.clock.NewTicker(relayPoll)
	defer t.Stop()
	for {
		select {
		case <-r.stopClaims:
			return
		default:
		}
		// Only the instances ready here: a call waiting for a plugin that
		// restarts stays unclaimed, so its origin can still withdraw it
		// as certainly not sent.
		held := slices.DeleteFunc(r.gate.heldInstances(), func(inst string) bool { _, ok := r.local.Ready(inst); return !ok })
		if len(held) > 0 {
			calls, err := r.claimSome(ctx, held)
			if err != nil && ctx.Err() == nil {
				r.log.Error("claiming relayed channel calls failed", "error", err)
			}
			for _, c := range calls {
				r.wg.Add(1)
				go func() {
					defer r.wg.Done()
					r.place(r.calls, c)
				}()
			}
			if len(calls) == 64 {
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.stopClaims:
			return
		case <-tick:
		case <-r.claim:
		}
	}
}

// claimSome claims up to 64 calls for held. The claim is not cut by the
// end of ctx: a claim committed whose answer was lost would leave calls
// claimed that nobody makes, uncertain to their senders once this host
// left (a graceful stop sent false "may be missing" notes, issue 85).
func (r *relay) claimSome(ctx context.Context, held []string) ([]store.RelayCall, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return r.db.ClaimRelays(cctx, held, 64)
}

// drain is a graceful stop's first step, before the plugins stop: no more
// calls are claimed, and those claimed finish through the plugins and
// store their outcomes, so their senders learn what became of them (a
// send that arrived is not reported "may be missing"). Calls not claimed
// yet wait for the channel's next holder. When ctx ends first the calls
// still running are cut (their senders take them as uncertain).
func (r *relay) drain(ctx context.Context) {
	r.stopOnce.Do(func() { close(r.stopClaims) })
	if !r.serving.Load() {
		return
	}
	select {
	case <-r.served:
	case <-ctx.Done():
		r.log.Warn("relayed calls still running at the end of the stop's grace period are cut; their hosts take them as uncertain")
		r.kill()
		<-r.served
	}
}

// relayCallTimeout bounds one relayed call on the holder (its plugin may
// be restarting: the call waits for it as a local one would).
const relayCallTimeout = 60 * time.Second

// place places one claimed call through this host's plugin and stores the
// outcome.
func (r *relay) place(ctx context.Context, c store.RelayCall) {
	cctx, cancel := context.WithTimeout(ctx, relayCallTimeout)
	defer cancel()
	var resp any
	var err error
	switch c.Op {
	case "send":
		var call sendCall
		if err = json.Unmarshal(c.Request, &call); err == nil {
			var cleanup func()
			if cleanup, err = r.files(&call); err != nil {
				r.log.Error("relayed send refused", "instance", c.Instance, "origin", c.Origin, "error", err)
			} else {
				var sr channel.SendResponse
				sr, err = r.local.Send(cctx, c.Instance, call.Request)
				resp = sr
				cleanup()
			}
		}
	case "edit":
		var req channel.EditRequest
		if err = json.Unmarshal(c.Request, &req); err == nil {
			err = r.local.Edit(cctx, c.Instance, req)
		}
	case "typing":
		var req channel.TypingRequest
		if err = json.Unmarshal(c.Request, &req); err == nil {
			err = r.local.SetTyping(cctx, c.Instance, req)
		}
	case "react":
		var req channel.ReactRequest
		if err = json.Unmarshal(c.Request, &req); err == nil {
			err = r.local.React(cctx, c.Instance, req)
		}
	case "hook":
		var req hookCall
		if err = json.Unmarshal(c.Request, &req); err == nil {
			var hr hook.Response
			hr, _, err = r.local.BeforeAgentStart(cctx, c.Instance, req.Request, req.Timeout)
			resp = hr
		}
	case "download":
		var req downloadCall
		if err = json.Unmarshal(c.Request, &req); err == nil {
			err = r.checkDownload(cctx, c.Instance, req)
			if err != nil {
				r.log.Error("relayed download refused", "instance", c.Instance, "origin", c.Origin, "entry", req.Entry, "error", err)
			}
		}
		if err == nil {
			var buf bytes.Buffer
			var info channel.MediaInfo
			info, err = r.local.Download(cctx, c.Instance, req.Entry, req.Ref, req.MaxBytes, &buf)
			resp = downloaded{Info: info, Data: buf.Bytes()}
		}
	default:
		err = fmt.Errorf("unknown relayed call %q (a newer host?)", c.Op)
	}
	res := outcome(err)
	if err == nil && resp != nil {
		res.Response, _ = json.Marshal(resp)
	}
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer fcancel()
	if ferr := r.db.FinishRelay(fctx, c.ID, res); ferr != nil {
		r.log.Error("storing a relayed call's outcome failed; its host will take it as uncertain", "op", c.Op, "instance", c.Instance, "error", ferr)
	}
}

// files writes a relayed send's media to temporary files for the
// plugin; cleanup removes them. Every file travels in the call: the
// origin checked it (core/delivery's MEDIA: rule) and read it, so a path
// in the request names nothing on this host. A call naming a file it does
// not carry — only a forged row does — is refused whole, so no local file
// of the holder (its database, another chat's attachment, /etc/passwd)
// can be uploaded by writing to the shared database.
func (r *relay) files(call *sendCall) (func(), error) {
	if len(call.Files) != len(call.Request.Media) {
		return nil, &channel.Error{Code: channel.CodeInvalidRequest,
			Message: fmt.Sprintf("relayed send names %d files and carries %d: a file must travel in the call", len(call.Request.Media), len(call.Files))}
	}
	for _, b := range call.Files {
		if len(b) > maxRelayedMedia {
			return nil, &channel.Error{Code: channel.CodeInvalidRequest, Message: fmt.Sprintf("relayed file of %d bytes: larger than the %d a relayed file may have", len(b), maxRelayedMedia)}
		}
	}
	var paths []string
	cleanup := func() {
		for _, p := range paths {
			os.Remove(p)
		}
	}
	for i := range call.Request.Media {
		f, err := os.CreateTemp("", "clawhost-relay-*"+relayExt(call.Request.Media[i].Path))
		if err != nil {
			cleanup()
			return nil, err
		}
		paths = append(paths, f.Name())
		_, err = f.Write(call.Files[i])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			cleanup()
			return nil, err
		}
		call.Request.Media[i].Path = f.Name()
	}
	return cleanup, nil
}

// relayExt is the file name extension of a relayed file (the channel
// may pick the upload's kind by it): short and alphanumeric, else none.
func relayExt(path string) string {
	ext := filepath.Ext(path)
	if len(ext) > 8 {
		return ""
	}
	for _, c := range ext[min(1, len(ext)):] {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return ""
		}
	}
	return ext
}

// checkDownload refuses a relayed download unless the journal entry it
// names was received on that instance and its message carries the ref:
// the holder fetches only what its channel itself produced, never a URL
// or file id a forged row names.
func (r *relay) checkDownload(ctx context.Context, instance string, req downloadCall) error {
	e, err := r.db.Entry(ctx, req.Entry)
	if err != nil {
		return &channel.Error{Code: channel.CodeInvalidRequest, Message: fmt.Sprintf("relayed download: journal entry %d: %v", req.Entry, err)}
	}
	if e.Instance != instance {
		return &channel.Error{Code: channel.CodeInvalidRequest, Message: fmt.Sprintf("relayed download: journal entry %d was received on %s, not %s", req.Entry, e.Instance, instance)}
	}
	m, err := message.Decode(e.Message)
	if err != nil {
		return &channel.Error{Code: channel.CodeInvalidRequest, Message: fmt.Sprintf("relayed download: journal entry %d: %v", req.Entry, err)}
	}
	for _, md := range m.Media {
		if md.Ref != "" && md.Ref == req.Ref {
			return nil
		}
	}
	return &channel.Error{Code: channel.CodeInvalidRequest, Message: fmt.Sprintf("relayed download: the ref is not an attachment of journal entry %d", req.Entry)}
}

// outcome maps the local call's error for the origin: a channel's own
// error keeps its code; a call that may have reached the platform is
// uncertain; one the plugin was never asked is not sent.
func outcome(err error) store.RelayResult {
	if err == nil {
		return store.RelayResult{}
	}
	var ce *channel.Error
	switch {
	case errors.As(err, &ce):
		return store.RelayResult{Error: ce.Message, Code: string(ce.Code), RetryAfter: ce.RetryAfter}
	case errors.Is(err, pluginclient.ErrNotSent):
		return store.RelayResult{Error: err.Error(), NotSent: true}
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, pluginclient.ErrPluginExited):
		// Cut during the call (a hard stop, the end of a graceful stop's
		// grace period): it may have reached the chat.
		return store.RelayResult{Error: err.Error(), Code: string(channel.CodeUncertain)}
	}
	// Not ready, stopped, unknown: the plugin was not asked.
	return store.RelayResult{Error: err.Error(), NotSent: true}
}
