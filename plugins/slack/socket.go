package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// runSocket keeps a Socket Mode connection until ctx ends. slack-go's
// socketmode client opens the connection (apps.connections.open with the
// app-level token), reconnects with backoff when it drops, and follows
// Slack's disconnect requests (refresh_requested, warning, link_disabled
// included) by opening a new one; it returns only for an error no retry
// fixes, which becomes needs_attention here, or for an error after which
// this loop starts it again with its own backoff.
func (a *Adapter) runSocket(ctx context.Context, inbox channel.Inbox) error {
	backoff := backoffMin
	for ctx.Err() == nil {
		err := a.socketSession(ctx, inbox)
		if ctx.Err() != nil {
			return nil
		}
		if msg := fatal(err); msg != "" {
			if !a.attention(ctx, msg) {
				return nil
			}
			backoff = backoffMin
			continue
		}
		var rl *slack.RateLimitedError
		d := backoff + rand.N(backoff/4+1)
		if errors.As(err, &rl) && rl.RetryAfter > d {
			d = rl.RetryAfter
		}
		a.status.Report(status.Status{State: status.Degraded, Message: "cannot connect to Slack; retrying: " + errText(err)})
		a.log.Warn("slack connection failed; retrying", "error", errText(err), "in", d)
		if a.sleep(ctx, d) != nil {
			return nil
		}
		backoff = min(backoff*2, backoffMax)
	}
	return nil
}

// socketSession learns who the bot is (auth.test), then runs the
// socketmode client until it gives up or ctx ends, handling its events.
func (a *Adapter) socketSession(ctx context.Context, inbox channel.Inbox) error {
	if _, err := a.whoami(ctx); err != nil {
		return fmt.Errorf("auth.test: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	smc := socketmode.New(a.api, socketmode.OptionLog(logOutput{a.log}))
	var wg sync.WaitGroup
	wg.Go(func() { a.socketEvents(ctx, cancel, smc, inbox) })
	err := smc.RunContext(ctx)
	var fe fatalErr
	if errors.As(context.Cause(ctx), &fe) {
		err = fe.err
	}
	cancel(nil)
	wg.Wait()
	return err
}

// fatalErr ends a session on an error the socketmode client would retry
// forever (missing_scope of the app token, a token of the wrong type).
type fatalErr struct{ err error }

func (f fatalErr) Error() string { return f.err.Error() }

// socketEvents handles the socketmode client's events until ctx ends, one
// at a time, in the order Slack sent them. An envelope is acknowledged
// once the host stored what it carries: an envelope the plugin did not
// acknowledge (it died meanwhile) is sent again by Slack.
func (a *Adapter) socketEvents(ctx context.Context, end context.CancelCauseFunc, smc *socketmode.Client, inbox channel.Inbox) {
	for {
		var evt socketmode.Event
		select {
		case <-ctx.Done():
			return
		case evt = <-smc.Events:
		}
		ack := func(payload any) {
			if evt.Request == nil {
				return
			}
			if err := smc.AckCtx(ctx, evt.Request.EnvelopeID, payload); err != nil && ctx.Err() == nil {
				a.log.Warn("could not acknowledge a socket mode envelope", "error", err)
			}
		}
		switch evt.Type {
		case socketmode.EventTypeConnecting:
			a.log.Debug("connecting to slack")
		case socketmode.EventTypeConnectionError:
			if ce, ok := evt.Data.(*slack.ConnectionErrorEvent); ok {
				if fatal(ce.ErrorObj) != "" {
					end(fatalErr{ce.ErrorObj})
					return
				}
				a.log.Warn("slack connection attempt failed", "attempt", ce.Attempt, "error", errText(ce.ErrorObj), "retry_in", ce.Backoff)
				if ce.Attempt >= 3 {
					a.status.Report(status.Status{State: status.Degraded, Message: "cannot connect to Slack; retrying: " + errText(ce.ErrorObj)})
				}
			}
		case socketmode.EventTypeHello:
			me := a.me.Load()
			a.log.Info("connected to slack", "bot", me.Name, "bot_id", me.UserID, "team", me.Team)
			a.status.Report(status.Status{State: status.Ready})
		case socketmode.EventTypeEventsAPI:
			if evt.Request == nil {
				continue
			}
			if err := a.onEventCallback(ctx, inbox, evt.Request.Payload); err != nil {
				if ctx.Err() == nil {
					a.log.Warn("host did not take a message; slack sends it again", "error", err)
				}
				continue
			}
			ack(nil)
		case socketmode.EventTypeInteractive:
			cb, ok := evt.Data.(slack.InteractionCallback)
			if !ok {
				ack(nil)
				continue
			}
			a.onInteraction(ctx, inbox, cb, func() { ack(nil) })
		case socketmode.EventTypeSlashCommand:
			cmd, ok := evt.Data.(slack.SlashCommand)
			if !ok {
				ack(nil)
				continue
			}
			a.onSlashCommand(ctx, inbox, cmd, func() { ack(nil) })
		case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage, socketmode.EventTypeErrorWriteFailed:
			a.log.Warn("socket mode error", "event", string(evt.Type))
		}
	}
}

// logOutput turns the socketmode client's log lines into debug lines of
// the plugin's logger (they never hold a token: slack-go redacts them).
type logOutput struct{ log *slog.Logger }

func (l logOutput) Output(_ int, s string) error {
	l.log.Debug(strings.TrimSpace(s), "from", "socketmode")
	return nil
}

// errText is an error's text for a log or a status line.
func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
