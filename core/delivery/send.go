package delivery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// Send sends text that is not recorded in the outbox (streamed blocks,
// progress lines, notices), chunked and in session order; it returns the
// platform ids of what was sent.
func (d *Dispatcher) Send(key sessionkey.Key, tgt message.Target, text string, format channel.Format) []string {
	return d.SendButtons(key, tgt, text, format, nil)
}

// SendButtons is Send with buttons under the last message, where the
// channel shows buttons (HasButtons); elsewhere they are left out and the
// text must say how to answer.
func (d *Dispatcher) SendButtons(key sessionkey.Key, tgt message.Target, text string, format channel.Format, buttons [][]channel.Button) []string {
	return d.SendMessage(key, tgt, Message{Text: text, Format: format, Buttons: buttons})
}

// Message is one message sent out of the outbox: a command's reply.
type Message struct {
	// Text is shaped as a reply's is: rendered for the channel per Format
	// (channel.FormatMarkdown or channel.FormatPlain) and chunked.
	Text   string
	Format channel.Format
	// Media go with the last chunk (alone when Text is empty). Each is a
	// regular file of at most MaxFileBytes; one that is not is left out
	// and the text says so.
	Media []channel.OutboundMedia
	// Buttons go under the last chunk where the channel shows buttons.
	Buttons [][]channel.Button
}

// SendMessage sends m, in session order, and returns the platform ids of
// what was sent.
func (d *Dispatcher) SendMessage(key sessionkey.Key, tgt message.Target, m Message) []string {
	ids, _ := d.sendMessage(key, tgt, m)
	return ids
}

// sendMessage is SendMessage with the error that ended it, if one did
// (wrapping errUncertain when the last send's outcome is unknown).
func (d *Dispatcher) sendMessage(key sessionkey.Key, tgt message.Target, m Message) ([]string, error) {
	unlock := d.serialize(key)
	defer unlock()
	media, notes := d.checkFiles(tgt.Instance, m.Media)
	text := withNotes(m.Text, notes)
	parts, rendered, format := d.prepareRendered(d.ctx, tgt.Instance, text, m.Format)
	if len(parts) == 0 && len(media) > 0 {
		parts = []string{""}
	}
	buttons := m.Buttons
	if !d.HasButtons(tgt.Instance) {
		buttons = nil
	}
	var all []string
	for i, part := range parts {
		req := channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: part, Format: format}
		if i < len(rendered) {
			req.Rendered = rendered[i]
		}
		if i == len(parts)-1 {
			req.Buttons, req.Media = buttons, media
		}
		ids, err := d.sendOne(tgt, req)
		if err != nil {
			if !d.halted() {
				d.log.Error("send failed", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
			}
			return all, err
		}
		all = append(all, ids...)
	}
	return all, nil
}

// Notify tells a chat something in plain text outside any reply.
func (d *Dispatcher) Notify(key sessionkey.Key, tgt message.Target, text string) {
	d.Send(key, tgt, text, channel.FormatPlain)
}

// errUncertain marks a send whose outcome is unknown: see uncertain.
var errUncertain = errors.New("the send may have reached the chat; not repeated")

// uncertain reports whether a failed Send may nonetheless have reached the
// platform, so sending it again could post it twice: the plugin says so
// (channel.CodeUncertain: the request was written but its answer lost), the
// call outlived its deadline, or the plugin died during the call. A
// business error from the plugin (any other *channel.Error) is a definite
// failure, an instance that never became ready was never asked, and a call
// that could not reach the plugin at all (pluginclient.ErrNotSent: it died just
// before, while still counted ready) is retried once it is back.
func uncertain(err error) bool {
	var ce *channel.Error
	if errors.As(err, &ce) {
		return ce.Code == channel.CodeUncertain
	}
	if errors.Is(err, pluginclient.ErrNotSent) {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pluginclient.ErrPluginExited)
}

// sendOne sends one message, waiting for the instance to be ready (it may
// be restarting) and retrying failures that certainly did not deliver it,
// with backoff, honouring the platform's retry_after. A
// formatting_rejected error is retried at once as plain text. A send whose
// outcome is unknown (see uncertain) is never retried: it returns an error
// wrapping errUncertain. Once the dispatcher drains, no new attempt starts.
func (d *Dispatcher) sendOne(tgt message.Target, req channel.SendRequest) ([]string, error) {
	return d.sendOneAfter(tgt, req, false, nil)
}

// sendOneAfter is sendOne calling before, when not nil, each time just
// before the request is handed to the plugin (after the instance is
// ready); an error from before ends the send with that error. The outbox
// marks a chunk attempted there, so a chunk still waiting for its plugin
// when the host stops was certainly not sent and goes out after the
// restart instead of being taken as possibly delivered. committed: the
// chunk's attempt is recorded already (with its reply, when the channel
// was ready), so its first attempt starts even once the dispatcher drains.
func (d *Dispatcher) sendOneAfter(tgt message.Target, req channel.SendRequest, committed bool, before func() error) ([]string, error) {
	wait := firstRetry
	var err error
	for attempt := 0; attempt < sendAttempts; attempt++ {
		if d.halted() && (!committed || attempt > 0) {
			return nil, errHalted
		}
		wctx, wcancel := context.WithTimeout(d.ctx, readyWait)
		var desc pluginclient.Description
		desc, err = d.ch.WaitReady(wctx, tgt.Instance)
		wcancel()
		if err == nil {
			// The bundled plugins link no markdown parser: every markdown
			// text they get comes rendered for them.
			markup.RenderSend(&req, desc.Capabilities.Markup)
		}
		if err == nil && before != nil {
			if berr := before(); berr != nil {
				return nil, berr
			}
		}
		if err == nil {
			var resp channel.SendResponse
			ctx, cancel := context.WithTimeout(d.ctx, sendTimeout)
			resp, err = d.ch.Send(ctx, tgt.Instance, req)
			cancel()
			if err == nil {
				d.obs.MessageOut(tgt.Instance)
				return resp.MessageIDs, nil
			}
			if d.ctx.Err() == nil && uncertain(err) {
				d.obs.SendError(tgt.Instance, string(channel.CodeUncertain))
				return nil, fmt.Errorf("%w: %w", errUncertain, err)
			}
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
			req.Format, req.Rendered = channel.FormatPlain, nil
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
			return nil, errHalted
		}
		wait = min(wait*2, maxRetryWait)
	}
	return nil, err
}

// errHalted: the dispatcher drains or closed before the send.
var errHalted = errors.New("delivery is shutting down")

// sleep waits d on the clock; false when the dispatcher drains or closes
// first.
func (d *Dispatcher) sleep(delay time.Duration) bool {
	select {
	case <-d.ctx.Done():
		return false
	case <-d.draining:
		return false
	case <-d.clock.After(delay):
		return true
	}
}

// editDraft edits a recovered draft to text, waiting for the instance and
// retrying what may succeed like sendOne (an edit is idempotent, so an
// unknown outcome is retried too).
func (d *Dispatcher) editDraft(tgt message.Target, id, text string, format channel.Format) error {
	wait := firstRetry
	var err error
	for attempt := 0; attempt < sendAttempts; attempt++ {
		if d.halted() {
			return errHalted
		}
		wctx, wcancel := context.WithTimeout(d.ctx, readyWait)
		_, err = d.ch.WaitReady(wctx, tgt.Instance)
		wcancel()
		if err == nil {
			if err = d.edit(tgt, id, text, format, nil); err == nil {
				return nil
			}
		}
		var ce *channel.Error
		if errors.As(err, &ce) && !ce.Code.Retryable() && ce.Code != channel.CodeUncertain {
			return err
		}
		delay := wait
		if ce != nil && ce.RetryAfter > 0 {
			delay = min(ce.RetryAfter, maxRetryAfter)
		}
		if !d.sleep(delay) {
			return errHalted
		}
		wait = min(wait*2, maxRetryWait)
	}
	return err
}

// EditText replaces the text of a message sent earlier (its buttons go),
// in plain text; false when the channel does not edit or the edit failed.
func (d *Dispatcher) EditText(tgt message.Target, id, text string) bool {
	if id == "" || !d.CanEdit(tgt.Instance) {
		return false
	}
	if err := d.edit(tgt, id, text, channel.FormatPlain, nil); err != nil {
		d.log.Warn("edit failed", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
		return false
	}
	return true
}

// EditButtons replaces a sent message's text (plain) and its buttons
// (approval.Output: a multi-select question's toggles).
func (d *Dispatcher) EditButtons(tgt message.Target, id, text string, buttons [][]channel.Button) bool {
	if id == "" || !d.CanEdit(tgt.Instance) {
		return false
	}
	if err := d.edit(tgt, id, text, channel.FormatPlain, buttons); err != nil {
		d.log.Warn("edit failed", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
		return false
	}
	return true
}

// edit edits a sent message to text with buttons (none: the message has
// none after), retrying once as plain text when the channel rejects the
// formatting.
func (d *Dispatcher) edit(tgt message.Target, id, text string, format channel.Format, buttons [][]channel.Button) error {
	ctx, cancel := context.WithTimeout(d.ctx, 10*time.Second)
	defer cancel()
	sh := d.shapeOf(d.ctx, tgt.Instance)
	if format == "" {
		format = sh.format()
	}
	req := channel.EditRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, MessageID: id, Text: text, Format: format, Buttons: buttons}
	markup.RenderEdit(&req, sh.markup) // the plugins link no markdown parser
	err := d.ch.Edit(ctx, tgt.Instance, req)
	if channel.CodeOf(err) == channel.CodeFormattingRejected && format != channel.FormatPlain {
		req.Format, req.Rendered = channel.FormatPlain, nil
		err = d.ch.Edit(ctx, tgt.Instance, req)
	}
	return err
}

// SendFile sends data as a text document called name, with caption, in
// session order (outside the outbox, like Send): the host writes it to a
// private temporary file (0600, in a 0700 directory) that the plugin
// uploads, and removes it after the send. False when the channel sends no
// documents (its capabilities list no MediaDocument) or the send failed;
// the caller then says it in text.
func (d *Dispatcher) SendFile(key sessionkey.Key, tgt message.Target, name string, data []byte, caption string) bool {
	desc, ok := d.describe(d.ctx, tgt.Instance)
	if !ok || !slices.Contains(desc.Capabilities.MediaOut, channel.MediaDocument) {
		return false
	}
	dir, err := os.MkdirTemp("", "clawhost-file-")
	if err != nil {
		d.log.Warn("a file to send could not be written", "error", err)
		return false
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, filepath.Base(name))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		d.log.Warn("a file to send could not be written", "error", err)
		return false
	}
	unlock := d.serialize(key)
	defer unlock()
	req := channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: caption, Format: channel.FormatPlain,
		Media: []channel.OutboundMedia{{Path: path, Kind: channel.MediaDocument, MIME: "text/plain"}}}
	if _, err := d.sendOne(tgt, req); err != nil {
		if !d.halted() {
			d.log.Warn("a file could not be sent", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
		}
		return false
	}
	return true
}
