package delivery

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/reply"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// Draft is a live draft: one message edited in place as a reply streams,
// at most once a second. When the platform refuses an edit the draft is
// abandoned and the reply is delivered as ordinary messages (an edit that
// may pass when tried again is tried again by the next one). The draft is
// recorded as the live output of its journal entry before its message is
// sent, with the message id once the channel answered, and its text after
// each edit: a turn run again after a restart continues the same message.
type Draft struct {
	d     *Dispatcher
	key   sessionkey.Key
	entry int64
	tgt   message.Target
	shape shape

	mu      sync.Mutex // also taken by the throttle goroutine
	id      string
	last    time.Time
	pending string
	shown   string
	// format is pending's format; buttons go under the message with the
	// next flush (a turn card's Stop button), shownButtons are those it
	// has.
	format       channel.Format
	buttons      [][]channel.Button
	shownButtons [][]channel.Button
	failed       bool
	// uncertain: the first send's outcome is unknown (its answer was
	// lost), so the draft may show in the chat with no id to edit it.
	uncertain bool
	taken     bool // the final reply's first chunk replaced the text
	overflow  bool
	waiting   bool
	stopped   chan struct{}
}

// NewDraft starts a draft for the reply to journal entry id, shown in tgt;
// nothing is sent until Update. A confirmed draft of an earlier run of the
// same entry (prev, from the store's LiveOutput) is continued: updates and
// the final reply edit that message instead of posting a new one.
func (d *Dispatcher) NewDraft(key sessionkey.Key, id int64, tgt message.Target, prev store.Live) *Draft {
	dr := &Draft{d: d, key: key, entry: id, tgt: tgt, shape: d.shapeOf(d.ctx, tgt.Instance), stopped: make(chan struct{})}
	if prev.Kind == store.LiveDraft && prev.Confirmed() {
		dr.id, dr.shown = prev.PlatformIDs[0], prev.Text
	}
	return dr
}

// record stores the draft as its entry's live output (ids nil: attempted,
// or an edit's text).
func (dr *Draft) record(text string, ids []string) error {
	return dr.d.store.RecordLive(dr.d.ctx, store.Live{JournalID: dr.entry, Seq: 0, Kind: store.LiveDraft, Text: text, PlatformIDs: ids})
}

// MessageID is the draft message's platform id; "" when there is none or
// the draft was abandoned.
func (dr *Draft) MessageID() string {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.failed {
		return ""
	}
	return dr.id
}

// Uncertain reports whether the draft's first send has an unknown
// outcome: a message may show its text (or a turn card's buttons) that
// cannot be edited into the reply, which then goes as new messages.
func (dr *Draft) Uncertain() bool {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	return dr.uncertain
}

// Update shows text (the whole streamed reply so far, markdown). A text
// that no longer fits one message (length or line limit) ends the updates.
func (dr *Draft) Update(text string) {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.failed || dr.overflow || reply.IsSilentReplyPrefixText(strings.TrimSpace(text), reply.SilentToken) {
		return
	}
	text, dr.format = dr.shape.render(text, channel.FormatMarkdown)
	if !dr.shape.fits(text) {
		dr.overflow = true
		return
	}
	dr.pending = text
	dr.schedule()
}

// Card shows text in format (plain, or markdown rendered for the
// channel: a plan on the card) with buttons under it: a turn card, before
// the reply streams. Updates that follow keep the buttons until the final
// reply (TakeFirst) or Final replaces the message without them.
func (dr *Draft) Card(text string, format channel.Format, buttons [][]channel.Button) {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	text, format = dr.shape.render(text, format)
	if dr.failed || strings.TrimSpace(text) == "" || !dr.shape.fitsAs(text, format) {
		return
	}
	if !dr.d.HasButtons(dr.tgt.Instance) {
		buttons = nil
	}
	dr.pending, dr.format, dr.buttons = text, format, buttons
	dr.schedule()
}

// Fits reports whether Card can show text in format: one message within
// the channel's limits (markdown counted as rendered), on a draft that has
// not failed.
func (dr *Draft) Fits(text string, format channel.Format) bool {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	text, format = dr.shape.render(text, format)
	return !dr.failed && dr.shape.fitsAs(text, format)
}

// schedule flushes the pending text now, or after draftInterval since
// the last flush (dr.mu held).
func (dr *Draft) schedule() {
	if wait := draftInterval - dr.d.clock.Now().Sub(dr.last); wait > 0 && !dr.last.IsZero() {
		if !dr.waiting {
			dr.waiting = true
			go dr.flushAfter(wait)
		}
		return
	}
	dr.flushLocked()
}

func (dr *Draft) flushAfter(wait time.Duration) {
	select {
	case <-dr.stopped:
		return
	case <-dr.d.clock.After(wait):
	}
	dr.mu.Lock()
	defer dr.mu.Unlock()
	dr.waiting = false
	select {
	case <-dr.stopped:
	default:
		dr.flushLocked()
	}
}

func (dr *Draft) flushLocked() {
	if dr.failed || dr.pending == "" || dr.pending == dr.shown && sameButtons(dr.buttons, dr.shownButtons) {
		return
	}
	text, format, buttons := dr.pending, cmp.Or(dr.format, dr.shape.format()), dr.buttons
	dr.last = dr.d.clock.Now()
	if dr.d.halted() {
		return
	}
	if dr.id == "" {
		// Recorded before it is sent: a restart in between knows a draft
		// may be showing.
		if err := dr.record(text, nil); err != nil {
			dr.d.log.Debug("recording the draft failed; no draft", "error", err)
			dr.failed = true
			return
		}
		ids, err := dr.d.sendMessage(dr.key, dr.tgt, Message{Text: text, Format: format, Buttons: buttons})
		if len(ids) == 0 {
			dr.failed = true
			dr.uncertain = errors.Is(err, errUncertain)
			return
		}
		dr.id, dr.shown, dr.shownButtons = ids[0], text, buttons
		if err := dr.record(text, ids[:1]); err != nil {
			dr.d.log.Debug("recording the draft's message id failed", "error", err)
		}
		return
	}
	if err := dr.d.edit(dr.tgt, dr.id, text, format, buttons); err != nil {
		if editMayPass(err) {
			// The message is still there: the next edit (or the final
			// reply's) tries again. Given up, a turn card would be left
			// with a live Stop button above the reply.
			dr.d.log.Debug("draft edit failed; the next one tries again", "error", err)
			return
		}
		dr.d.log.Debug("draft edit failed; falling back to separate messages", "error", err)
		dr.failed = true
		return
	}
	dr.shown, dr.shownButtons = text, buttons
	if err := dr.record(text, nil); err != nil {
		dr.d.log.Debug("recording the draft's text failed", "error", err)
	}
}

// Stop ends the throttled updates (the turn's text is complete).
func (dr *Draft) Stop() {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	select {
	case <-dr.stopped:
	default:
		close(dr.stopped)
	}
}

// Interrupted appends note to the text the draft message shows, when there
// is one (a turn stopped before its reply); a text that would no longer fit
// one message is left as it is. Updates end.
func (dr *Draft) Interrupted(note string) {
	dr.Stop()
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.id == "" || dr.failed || dr.shown == "" {
		return
	}
	text := dr.shown + "\n\n" + note
	if !dr.shape.fits(text) {
		return
	}
	if err := dr.d.edit(dr.tgt, dr.id, text, dr.shape.format(), nil); err != nil {
		dr.d.log.Debug("marking the stopped draft failed", "error", err)
		return
	}
	dr.shown = text
	if err := dr.record(text, nil); err != nil {
		dr.d.log.Debug("recording the draft's text failed", "error", err)
	}
}

// TakeFirst is called with the first chunk of the final reply: when the
// draft message exists it is edited to that chunk and its id returned
// with true (the chunk is delivered); otherwise the chunk is sent normally.
func (dr *Draft) TakeFirst(first string) (string, bool) {
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.id == "" || dr.failed {
		return "", false
	}
	if dr.shown == first && len(dr.shownButtons) == 0 {
		dr.taken = true
		return dr.id, true
	}
	if err := dr.d.edit(dr.tgt, dr.id, first, dr.shape.format(), nil); err != nil {
		dr.d.log.Debug("final draft edit failed; sending the reply as new messages", "error", err)
		return "", false
	}
	dr.shown, dr.shownButtons, dr.taken = first, nil, true
	return dr.id, true
}

// Final ends updates and, when the draft message exists and the reply did
// not take it over, replaces it with text (plain, no buttons): a turn
// card whose turn ended without a reply in it ("stopped", "no reply", a
// reply of files with no text before them) collapses to one line. It
// reports whether it did.
func (dr *Draft) Final(text string) bool {
	dr.Stop()
	dr.mu.Lock()
	defer dr.mu.Unlock()
	if dr.id == "" || dr.failed || dr.taken {
		return false
	}
	if err := dr.d.edit(dr.tgt, dr.id, text, channel.FormatPlain, nil); err != nil {
		dr.d.log.Debug("collapsing the turn card failed", "error", err)
		return false
	}
	dr.shown, dr.shownButtons = text, nil
	if err := dr.record(text, nil); err != nil {
		dr.d.log.Debug("recording the draft's text failed", "error", err)
	}
	return true
}

// editMayPass reports whether an edit that failed with err may pass when
// tried again: its outcome is unknown (an edit is idempotent), the
// plugin was not reached, or the platform was busy.
func editMayPass(err error) bool {
	return uncertain(err) || errors.Is(err, pluginclient.ErrNotSent) || channel.CodeOf(err).Retryable()
}

// sameButtons reports whether two button layouts are the same.
func sameButtons(a, b [][]channel.Button) bool {
	return slices.EqualFunc(a, b, func(x, y []channel.Button) bool { return slices.Equal(x, y) })
}
