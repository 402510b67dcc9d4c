package delivery

import (
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// SendBlock sends a block streamed while the turn of journal entry id runs
// (seq 1, 2, … in order), recorded as the entry's live output before it is
// sent and again with its message ids: a restart before the reply is
// recorded knows the user saw part of the turn. It returns false when the
// block could not be recorded or sent.
func (d *Dispatcher) SendBlock(key sessionkey.Key, id int64, seq int, tgt message.Target, text string) bool {
	if d.halted() {
		return false
	}
	l := store.Live{JournalID: id, Seq: seq, Kind: store.LiveBlock, Text: text}
	if err := d.store.RecordLive(d.ctx, l); err != nil {
		if !d.halted() {
			d.log.Error("recording a streamed block failed; not sent", "id", id, "error", err)
		}
		return false
	}
	ids := d.Send(key, tgt, text, channel.FormatMarkdown)
	if len(ids) == 0 {
		return false
	}
	l.PlatformIDs = ids
	if err := d.store.RecordLive(d.ctx, l); err != nil && !d.halted() {
		d.log.Warn("recording a streamed block's message ids failed", "id", id, "error", err)
	}
	return true
}

// Interrupted tells the chat that the turn which showed live (its
// recorded live output) will not be finished: a confirmed draft is edited
// to its text followed by the notice, so the cut-off draft is marked as
// such; otherwise the notice is sent as its own message.
func (d *Dispatcher) Interrupted(key sessionkey.Key, tgt message.Target, live []store.Live, notice string) {
	for _, l := range live {
		if l.Kind == store.LiveDraft && l.Confirmed() {
			if err := d.editDraft(tgt, l.PlatformIDs[0], l.Text+"\n\n"+notice, channel.FormatMarkdown); err == nil {
				return
			}
		}
	}
	d.Notify(key, tgt, notice)
}
