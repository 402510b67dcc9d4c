package delivery

import (
	"errors"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Reply is a reply to a journal entry.
type Reply struct {
	// Key is the session; its sends are ordered.
	Key sessionkey.Key
	// Workspace is the workspace of Key's agent as the turn resolved it,
	// where the reply's MEDIA: files are read; "": Settings' workspace of
	// the agent Key names.
	Workspace string
	// ID is the journal entry answered; Covers are further entries the
	// same reply answers (debounce batch, collect mode, steered messages).
	ID     int64
	Covers []int64
	Target message.Target
	// Text is the reply; empty records "no reply" (the entry is done).
	Text string
	// Format is channel.FormatMarkdown or channel.FormatPlain.
	Format  channel.Format
	ReplyTo string
	// Draft, when set, is the turn's live draft: the first chunk is
	// delivered by editing it (a *Draft of this package).
	Draft interface {
		// MessageID is the draft message's platform id; "" when none was
		// confirmed.
		MessageID() string
		TakeFirst(first string) (platformID string, ok bool)
	}
	// Ping, when set, is sent as a new message (a reply to the answer)
	// once the reply reached the chat only by editing the draft: an edit
	// does not notify a phone (messages { ping_after }).
	Ping string
	// Usage, when set, is the turn's usage ledger row, recorded with the
	// reply in one transaction.
	Usage *store.TurnUsage
	// ClaudeCost, when set, is claude's running total after the turn,
	// recorded with the reply in its session's row.
	ClaudeCost *store.ClaudeCost
	// Session, when not nil, is the turn's session bookkeeping, written
	// in the reply's transaction (store.Reply.Session) and given back when
	// the record is refused; Deliver waits for it (folded while the reply
	// is shaped) before the reply is recorded.
	Session *store.PendingSession
}

// uncertainDraft is a Reply's Draft that can tell its first send's
// outcome is unknown (*Draft): the reply is then preceded by
// noticeDraftUncertain.
type uncertainDraft interface {
	// Uncertain reports whether the draft may show in the chat with no
	// id to edit it into the reply.
	Uncertain() bool
}

var _ uncertainDraft = (*Draft)(nil)

// Notices the user gets when a reply cannot be delivered whole.
const (
	noticePartFailed = "(Part of the reply could not be delivered.)"
	noticeFailed     = "(The reply could not be delivered.)"
	// noticeUncertain: a chunk whose send has an unknown outcome is not
	// sent again (at most once); the user is told instead.
	noticeUncertain = "(Part of this reply may be missing: the connection to the chat broke while it was being sent, and it is not sent twice.)"
	// noticeDraftUncertain precedes a reply whose live draft's first send
	// has an unknown outcome: the draft may show with no id to edit it
	// into the reply, which therefore goes as new messages.
	noticeDraftUncertain = "(The connection to the chat broke while a draft of this reply was being sent: a cut-off copy may show above. The whole reply follows.)"
)

// Deliver records the reply in the outbox (with its format, reply-to and
// the draft whose message chunk 0 replaces), then sends its chunks in
// order.
func (d *Dispatcher) Deliver(r Reply) {
	text, media := d.extractMedia(r.Key, r.Workspace, r.Target.Instance, r.Text)
	parts, rendered, format := d.prepareRendered(d.ctx, r.Target.Instance, text, r.Format)
	if len(parts) == 0 && len(media) > 0 {
		parts = []string{""}
	}
	draftID := ""
	if r.Draft != nil && len(parts) > 0 {
		draftID = r.Draft.MessageID()
	}
	if draftID != "" && len(media) > 0 {
		// The draft shows the answer (streamed, or a turn card it is to
		// replace): it becomes the text before the files, and the files go
		// below it as a message of their own with their captions, so that
		// the answer shows once (issue 56). Files with no text before them
		// go as before, and the turn collapses the draft (core/turn).
		draftID, rendered = "", nil
		if head, tail := splitFiles(r.Text); head != "" {
			tailText, _ := d.extractMedia(r.Key, r.Workspace, r.Target.Instance, tail)
			parts, format = d.prepare(d.ctx, r.Target.Instance, head, r.Format)
			files, _ := d.prepare(d.ctx, r.Target.Instance, tailText, r.Format)
			if len(files) == 0 {
				files = []string{""}
			}
			parts = append(parts, files...)
			draftID = r.Draft.MessageID()
		}
	}
	if u, ok := r.Draft.(uncertainDraft); ok && u.Uncertain() && len(parts) > 0 {
		// The draft may show, cut off, and cannot become the reply: the
		// user is told before it, in the recorded reply (sent once).
		notice, _ := d.prepare(d.ctx, r.Target.Instance, noticeDraftUncertain, r.Format)
		parts, rendered = append(notice, parts...), nil
	}
	// Text is the reply as produced, its MEDIA: lines included: a delivery
	// resumed after a restart finds the files there again (DeliverPending).
	rec := store.Reply{JournalID: r.ID, Covers: r.Covers, Instance: r.Target.Instance, ChatID: r.Target.ChatID, ThreadID: r.Target.ThreadID,
		Text: r.Text, Chunks: parts, Format: string(format), ReplyTo: r.ReplyTo, DraftID: draftID, ProducedAt: d.clock.Now(), Usage: r.Usage, ClaudeCost: r.ClaudeCost}
	rec.Session = r.Session.Take()
	// When chunk 0 goes out as a new message to a channel that is ready,
	// its send attempt is recorded with the reply (one durable write
	// before the send, not two), under the session's send lock taken
	// first, so that nothing comes between the record and the send: a
	// chunk marked attempted that was never handed to the channel would
	// be lost after a restart (it is not sent twice).
	var unlock func()
	if draftID == "" && len(parts) > 0 {
		unlock = d.serialize(r.Key)
		_, ready := d.ch.Ready(r.Target.Instance)
		rec.AttemptFirst = ready && !d.halted()
	}
	err := d.persist("record reply", r.ID, func() error { return d.store.RecordReply(d.ctx, rec) })
	if err != nil {
		if rec.Session != nil && d.ctx.Err() == nil {
			// Refused (the entry is no longer the turn's): nothing was
			// written, and the turn writes its bookkeeping itself. When
			// the host stops, the entry's turn runs again and writes it.
			r.Session.Give()
		}
		if unlock != nil {
			unlock()
		}
		if d.ctx.Err() == nil {
			d.log.Error("recording the reply failed; not sent", "id", r.ID, "error", err)
		}
		return
	}
	chunks := make([]store.Chunk, len(parts))
	for i, p := range parts {
		chunks[i] = store.Chunk{Index: i, Text: p}
	}
	if draftID != "" && !d.halted() {
		// When this edit fails, sendChunks tries again (an edit whose answer
		// was lost is repeated, it is idempotent) and sends chunk 0 as a new
		// message only when the channel refuses the edit.
		if pid, ok := r.Draft.TakeFirst(chunks[0].Text); ok {
			chunks[0].SentAt = d.clock.Now()
			d.mark(r.ID, 0, []string{pid})
		}
	}
	if unlock == nil {
		unlock = d.serialize(r.Key)
	}
	d.sendChunksLocked(r.ID, r.Target, chunks, rendered, format, r.ReplyTo, draftID, media, rec.AttemptFirst)
	unlock()
	if r.Ping != "" && draftID != "" && len(parts) == 1 && !d.halted() {
		d.ping(r.Key, r.Target, draftID, r.Ping)
	}
}

// ping sends text as a reply to message id, in session order, once: it is
// not recorded, so a restart never sends it again.
func (d *Dispatcher) ping(key sessionkey.Key, tgt message.Target, id, text string) {
	unlock := d.serialize(key)
	defer unlock()
	parts, format := d.prepare(d.ctx, tgt.Instance, text, channel.FormatPlain)
	if len(parts) == 0 {
		return
	}
	if _, err := d.sendOne(tgt, channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, ReplyToMessageID: id, Text: parts[0], Format: format}); err != nil && !d.halted() {
		d.log.Warn("the completion ping was not sent", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
	}
}

// DeliverPending sends the unsent chunks of a reply recovered from the
// outbox after a restart, with the format and reply-to it was recorded
// with; fallback is the target when the reply has none. An unsent chunk 0
// of a reply with a draft is delivered by editing the draft; a chunk
// whose send was attempted before the restart is not sent again (see
// sendChunks).
func (d *Dispatcher) DeliverPending(key sessionkey.Key, p store.PendingReply, fallback message.Target) {
	tgt := message.Target{Instance: p.Reply.Instance, ChatID: p.Reply.ChatID, ThreadID: p.Reply.ThreadID}
	if tgt.Instance == "" {
		tgt = fallback
	}
	// The chunks were recorded already shaped for the channel, in the
	// format recorded with them; a reply recorded without one goes in the
	// channel's format.
	format := channel.Format(p.Reply.Format)
	if format == "" {
		format = d.shapeOf(d.ctx, tgt.Instance).format()
	}
	unsent := len(p.Unsent())
	d.log.Info("delivering a reply produced before the restart", "id", p.Entry.ID, "chunks", unsent)
	if unsent > 1 {
		// A reply of several messages takes a while at the platform's
		// pace: the chat shows the bot typing meanwhile, as during a turn.
		seal := d.Typing(tgt, 0)
		defer seal()
	}
	// The files go with the last chunk, as they would have: when it was
	// sent (or attempted) before the restart, they went with it (or are
	// not sent twice). An answer of several messages (Parts: a command's)
	// carries its files in its parts, and its text's MEDIA: lines are not
	// the agent's: DeliverAnswer sent none either.
	var media []channel.OutboundMedia
	if p.Reply.Parts == nil {
		_, media = d.extractMedia(key, "", tgt.Instance, p.Reply.Text)
	}
	unlock := d.serialize(key)
	defer unlock()
	d.sendChunksLocked(p.Entry.ID, tgt, p.Chunks, nil, format, p.Reply.ReplyTo, p.Reply.DraftID, media, false)
}

// sendChunksLocked sends the unsent chunks in order; the caller holds the
// session's send lock. Each chunk is marked attempted in the outbox before
// its first send (chunk 0's was recorded with the reply when attempted0:
// it is sent even if the dispatcher began to drain meanwhile, rather than
// left attempted and unsent) and marked sent once the channel accepted it. Chunk 0 of a reply with a
// draft is delivered by editing the draft, never as a new message (unless
// the edit is refused). A chunk attempted before (a restart came between
// the send and its mark) or whose send has an unknown outcome is marked
// sent as uncertain, not sent again, and the user is told once that a part
// may be missing: delivery is at most once for that chunk. A chunk that
// cannot be delivered ends the reply: the entry fails and the user is told,
// when that is possible, rather than left waiting. Once the dispatcher
// drains, the chunks left stay in the outbox for the next start.
// rendered, by chunk index (nil: none), is what prepareRendered rendered
// of a chunk: its send carries it.
func (d *Dispatcher) sendChunksLocked(id int64, tgt message.Target, chunks []store.Chunk, rendered []*channel.Rendered, format channel.Format, replyTo, draftID string, media []channel.OutboundMedia, attempted0 bool) {
	told := false
	tell := func() {
		if !told {
			told = true
			d.notice(tgt, noticeUncertain)
		}
	}
	for i, c := range chunks {
		if c.Sent() {
			continue
		}
		premarked := attempted0 && c.Index == 0
		if d.halted() && !premarked {
			return
		}
		if !c.AttemptedAt.IsZero() {
			d.log.Warn("a chunk was being sent when the host stopped; not sent again", "id", id, "chunk", c.Index)
			d.markUncertain(id, c.Index)
			tell()
			continue
		}
		if c.Index == 0 && draftID != "" {
			err := d.editDraft(tgt, draftID, c.Text, format)
			if err == nil {
				d.mark(id, 0, []string{draftID})
				continue
			}
			if d.halted() {
				return
			}
			d.log.Warn("the draft could not be edited to the reply; sending it as a new message", "id", id, "error", err)
		}
		req := d.chunkRequest(tgt, c, format)
		if c.Index < len(rendered) && req.Format == channel.FormatMarkdown && req.Text == c.Text {
			req.Rendered = rendered[c.Index]
		}
		if i == 0 {
			req.ReplyToMessageID = replyTo
		}
		if i == len(chunks)-1 && len(media) > 0 {
			req.Media = append(req.Media, media...)
		}
		// The chunk is marked attempted once, just before the plugin is
		// first asked (not while waiting for it to be ready), unless that
		// was recorded with the reply.
		attempted, markErr := premarked, error(nil)
		ids, err := d.sendOneAfter(tgt, req, premarked, func() error {
			if attempted {
				return nil
			}
			markErr = d.persist("mark attempt", id, func() error { return d.store.MarkAttempt(d.ctx, id, c.Index) })
			attempted = markErr == nil
			return markErr
		})
		switch {
		case markErr != nil:
			if !d.halted() {
				d.failed(id, tgt, i, c, markErr)
			}
			return
		case errors.Is(err, errUncertain):
			d.log.Warn("the outcome of a send is unknown; not sent again", "id", id, "chunk", c.Index, "error", err)
			d.markUncertain(id, c.Index)
			tell()
		case err != nil:
			d.failed(id, tgt, i, c, err)
			return
		default:
			d.mark(id, c.Index, ids)
		}
	}
}

// failed ends a reply whose chunk could not be delivered; the user is told
// unless the chat cannot be reached at all.
func (d *Dispatcher) failed(id int64, tgt message.Target, i int, c store.Chunk, err error) {
	if d.halted() {
		return // the outbox keeps it for the next start
	}
	code := channel.CodeOf(err)
	d.log.Error("reply could not be delivered", "id", id, "instance", tgt.Instance, "chat", tgt.ChatID, "chunk", c.Index, "error", err)
	if ferr := d.persist("finish", id, func() error {
		return d.store.Finish(d.ctx, store.FinishRequest{IDs: []int64{id}, State: store.StateFailed, Reason: "delivery failed: " + string(code)})
	}); ferr != nil && d.ctx.Err() == nil {
		d.log.Error("journal finish failed", "id", id, "error", ferr)
	}
	if i > 0 {
		d.notice(tgt, noticePartFailed)
		return
	}
	switch code {
	case channel.CodeForbidden, channel.CodeChatNotFound, channel.CodeUnauthorized:
		// The chat cannot be reached at all.
	default:
		d.notice(tgt, noticeFailed)
	}
}

// notice tells the chat something about its reply (plain text, outside the
// outbox, no retries once draining).
//
// A notice is sent at most once: one whose own send has an unknown outcome
// (the plugin died during it, as it may have during the chunk the notice is
// about) is not sent again, as it may have arrived — a chat got the
// identical notice twice (issue 85). The cost: when both the part and its
// notice were lost, the chat is not told.
func (d *Dispatcher) notice(tgt message.Target, text string) {
	req := channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: text, Format: channel.FormatPlain}
	if _, err := d.sendOne(tgt, req); errors.Is(err, errUncertain) {
		d.log.Warn("the outcome of a notice's send is unknown; not sent again", "instance", tgt.Instance, "chat", tgt.ChatID, "error", err)
	}
}

func (d *Dispatcher) mark(id int64, index int, platformIDs []string) {
	d.markSent(store.ChunkSent{JournalID: id, Index: index, PlatformIDs: platformIDs})
}

func (d *Dispatcher) markUncertain(id int64, index int) {
	d.markSent(store.ChunkSent{JournalID: id, Index: index, Uncertain: true})
}

func (d *Dispatcher) markSent(c store.ChunkSent) {
	err := d.persist("mark sent", c.JournalID, func() error { _, err := d.store.MarkSent(d.ctx, c); return err })
	if err != nil && d.ctx.Err() == nil {
		d.log.Error("outbox mark failed", "id", c.JournalID, "chunk", c.Index, "error", err)
	}
}

// persist runs a write of the outbox, retrying a failure that may pass (a
// locked database, a full disk) with backoff until it succeeds or the
// dispatcher is closed. What delivery writes is a result in hand: a reply
// dropped because the store failed once leaves its entry in processing, to
// be run again by claude after the next restart, and a chunk left
// attempted but unmarked becomes an uncertain send. So the session's
// delivery waits for the store instead; a drain does not end the retries
// (a graceful stop records what it holds, for as long as Close allows). A
// refused transition, a missing entry and a closed store are final.
func (d *Dispatcher) persist(op string, id int64, write func() error) error {
	wait := firstRetry
	for {
		err := write()
		if err == nil || d.ctx.Err() != nil || errors.Is(err, store.ErrBadTransition) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrClosed) {
			return err
		}
		d.log.Error("outbox write failed; retrying", "op", op, "id", id, "in", wait, "error", err)
		select {
		case <-d.ctx.Done():
			return err
		case <-d.clock.After(wait):
		}
		wait = min(wait*2, maxStoreWait)
	}
}

// splitFiles splits a reply with MEDIA: lines into the text before the
// files (head) and the files with their captions (tail): the paragraph
// holding the first MEDIA: line begins the tail (send_file's caption and
// file lines come after the answer and a blank line, and a caption goes
// with its file). head is "" when the reply begins with that paragraph.
func splitFiles(text string) (head, tail string) {
	lines := strings.Split(text, "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "MEDIA:") })
	if first < 0 {
		return strings.TrimSpace(text), ""
	}
	start := first
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	return strings.TrimSpace(strings.Join(lines[:start], "\n")), strings.Join(lines[start:], "\n")
}
