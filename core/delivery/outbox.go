package delivery

import (
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Reply is a reply to a journal entry.
type Reply struct {
	// Key is the session; its sends are ordered.
	Key string
	// ID is the journal entry answered; Covers are further entries the
	// same reply answers (debounce batch, collect mode, steered messages).
	ID     int64
	Covers []int64
	Target message.Target
	// Text is the reply; empty records "no reply" (the entry is done).
	Text string
	// Format is channel.FormatMarkdown or channel.FormatPlain.
	Format  string
	ReplyTo string
	// Draft, when set, is the turn's live draft: the first chunk is
	// delivered by editing it (a *Draft of this package).
	Draft interface {
		TakeFirst(first string) (platformID string, ok bool)
	}
}

// Deliver records the reply in the outbox, then sends its chunks in order.
func (d *Dispatcher) Deliver(r Reply) {
	text, media := d.extractMedia(r.Text)
	parts, format := d.prepare(d.ctx, r.Target.Instance, text, r.Format)
	if len(parts) == 0 && len(media) > 0 {
		parts = []string{""}
	}
	err := d.store.RecordReply(d.ctx, store.Reply{JournalID: r.ID, Covers: r.Covers, Instance: r.Target.Instance, ChatID: r.Target.ChatID, ThreadID: r.Target.ThreadID, Text: text, Chunks: parts, ProducedAt: d.clock.Now()})
	if err != nil {
		if d.ctx.Err() == nil {
			d.log.Error("recording the reply failed; not sent", "id", r.ID, "error", err)
		}
		return
	}
	chunks := make([]store.Chunk, len(parts))
	for i, p := range parts {
		chunks[i] = store.Chunk{Index: i, Text: p}
	}
	if r.Draft != nil && len(chunks) > 0 && len(media) == 0 {
		if pid, ok := r.Draft.TakeFirst(chunks[0].Text); ok {
			chunks[0].SentAt = d.clock.Now()
			d.mark(r.ID, 0, []string{pid})
		}
	}
	d.sendChunks(r.Key, r.ID, r.Target, chunks, format, r.ReplyTo, media)
}

// DeliverPending sends the unsent chunks of a reply recovered from the
// outbox after a restart; fallback is the target when the reply has none.
func (d *Dispatcher) DeliverPending(key string, p store.PendingReply, fallback message.Target) {
	tgt := message.Target{Instance: p.Reply.Instance, ChatID: p.Reply.ChatID, ThreadID: p.Reply.ThreadID}
	if tgt.Instance == "" {
		tgt = fallback
	}
	d.log.Info("delivering a reply produced before the restart", "id", p.Entry.ID, "chunks", len(p.Unsent()))
	d.sendChunks(key, p.Entry.ID, tgt, p.Unsent(), d.shapeOf(d.ctx, tgt.Instance).format(), "", nil)
}

// sendChunks sends chunks in order under the session's lock and marks each
// in the outbox once the channel accepted it. A chunk that cannot be
// delivered ends the reply: the entry fails and the user is told, when
// that is possible, rather than left waiting.
func (d *Dispatcher) sendChunks(key string, id int64, tgt message.Target, chunks []store.Chunk, format, replyTo string, media []channel.OutboundMedia) {
	unlock := d.serialize(key)
	defer unlock()
	for i, c := range chunks {
		if c.Sent() {
			continue
		}
		req := channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: c.Text, Format: format}
		if i == 0 {
			req.ReplyToMessageID = replyTo
		}
		if i == len(chunks)-1 {
			req.Media = media
		}
		ids, err := d.sendOne(tgt, req)
		if err != nil {
			d.failed(id, tgt, i, c, err)
			return
		}
		d.mark(id, c.Index, ids)
	}
}

// failed ends a reply whose chunk could not be delivered.
func (d *Dispatcher) failed(id int64, tgt message.Target, i int, c store.Chunk, err error) {
	if d.ctx.Err() != nil {
		return // the outbox keeps it for the next start
	}
	code := channel.CodeOf(err)
	d.log.Error("reply could not be delivered", "id", id, "instance", tgt.Instance, "chat", tgt.ChatID, "chunk", c.Index, "error", err)
	if ferr := d.store.Finish(d.ctx, store.FinishRequest{IDs: []int64{id}, State: store.StateFailed, Reason: "delivery failed: " + string(code)}); ferr != nil && d.ctx.Err() == nil {
		d.log.Error("journal finish failed", "id", id, "error", ferr)
	}
	if i > 0 || code == channel.CodeMessageTooLong || code == channel.CodeInvalidRequest {
		_, _ = d.sendOne(tgt, channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: "(Part of the reply could not be delivered.)", Format: channel.FormatPlain})
	}
}

func (d *Dispatcher) mark(id int64, index int, platformIDs []string) {
	if _, err := d.store.MarkSent(d.ctx, store.ChunkSent{JournalID: id, Index: index, PlatformIDs: platformIDs}); err != nil && d.ctx.Err() == nil {
		d.log.Error("outbox mark failed", "id", id, "chunk", index, "error", err)
	}
}
