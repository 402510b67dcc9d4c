package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Send sends text that is not recorded in the outbox (streamed blocks,
// progress lines, notices), chunked and in session order; it returns the
// platform ids of what was sent.
func (d *Dispatcher) Send(key string, tgt message.Target, text, format string) []string {
	unlock := d.serialize(key)
	defer unlock()
	var all []string
	parts, format := d.prepare(d.ctx, tgt.Instance, text, format)
	for _, part := range parts {
		ids, err := d.sendOne(tgt, channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: part, Format: format})
		if err != nil {
			if d.ctx.Err() == nil {
				d.log.Error("send failed", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
			}
			return all
		}
		all = append(all, ids...)
	}
	return all
}

// Notify tells a chat something in plain text outside any reply.
func (d *Dispatcher) Notify(key string, tgt message.Target, text string) {
	d.Send(key, tgt, text, channel.FormatPlain)
}

// sendOne sends one message, waiting for the instance to be ready (it may
// be restarting) and retrying retryable failures with backoff, honouring
// the platform's retry_after. A formatting_rejected error is retried at
// once as plain text.
func (d *Dispatcher) sendOne(tgt message.Target, req channel.SendRequest) ([]string, error) {
	wait := firstRetry
	var err error
	for attempt := 0; attempt < sendAttempts; attempt++ {
		var resp channel.SendResponse
		ctx, cancel := context.WithTimeout(d.ctx, readyWait)
		resp, err = d.ch.Send(ctx, tgt.Instance, req)
		cancel()
		if err == nil {
			d.obs.MessageOut(tgt.Instance)
			return resp.MessageIDs, nil
		}
		if d.ctx.Err() != nil {
			return nil, d.ctx.Err()
		}
		code := channel.CodeOf(err)
		d.obs.SendError(tgt.Instance, string(code))
		var ce *channel.Error
		switch {
		case code == channel.CodeFormattingRejected && req.Format != channel.FormatPlain:
			d.log.Debug("channel rejected the formatting; sending as plain text", "instance", tgt.Instance)
			req.Format = channel.FormatPlain
			continue
		case errors.As(err, &ce) && !code.Retryable():
			return nil, err
		}
		delay := wait
		if ce != nil && ce.RetryAfter > 0 {
			delay = min(ce.RetryAfter, maxRetryAfter)
		}
		d.log.Warn("send failed; retrying", "instance", tgt.Instance, "chat", tgt.ChatID, "attempt", attempt+1, "in", delay, "error", err)
		if !d.sleep(delay) {
			return nil, d.ctx.Err()
		}
		wait = min(wait*2, maxRetryWait)
	}
	return nil, err
}

// sleep waits d on the clock; false when the dispatcher closed first.
func (d *Dispatcher) sleep(delay time.Duration) bool {
	select {
	case <-d.ctx.Done():
		return false
	case <-d.clock.After(delay):
		return true
	}
}

// edit edits a sent message, retrying once as plain text when the channel
// rejects the formatting.
func (d *Dispatcher) edit(tgt message.Target, id, text, format string) error {
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	req := channel.EditRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, MessageID: id, Text: text, Format: format}
	err := d.ch.Edit(ctx, tgt.Instance, req)
	if channel.CodeOf(err) == channel.CodeFormattingRejected && format != channel.FormatPlain {
		req.Format = channel.FormatPlain
		err = d.ch.Edit(ctx, tgt.Instance, req)
	}
	return err
}
