package delivery

import (
	"encoding/json"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Answer is an answer of several messages to a journal entry: a command's
// (every message of a command plugin's answer, with its files and
// buttons).
type Answer struct {
	// Key is the session; its sends are ordered.
	Key sessionkey.Key
	// ID is the journal entry answered.
	ID     int64
	Target message.Target
	// Messages are sent in order, each in its Format (none: plain); no
	// message records "no reply" (the entry is done).
	Messages []Message
}

// attachment is what a chunk of an answer is sent with beside its text:
// store.Part's Attach, encoded here (the store keeps it opaque).
type attachment struct {
	Media   []channel.OutboundMedia `json:"media,omitempty"`
	Buttons [][]channel.Button      `json:"buttons,omitempty"`
}

// DeliverAnswer records every message of an answer in the outbox, as one
// reply whose chunks carry their own format, files and buttons
// (store.Reply.Parts), then sends them in order, exactly as Deliver sends
// a reply's chunks: each chunk is marked attempted before its send and
// sent once the channel accepted it, and a restart resumes what was not
// sent (DeliverPending) and never sends a chunk twice. A message's text is
// shaped for the channel (rendered per its format, chunked); its files go
// with its last chunk (alone when it has no text), its buttons under it
// where the channel shows buttons. A file that cannot be sent is left out
// and the text says so.
func (d *Dispatcher) DeliverAnswer(a Answer) {
	var chunks []string
	var parts []store.Part
	for _, m := range a.Messages {
		media, notes := d.checkFiles(a.Target.Instance, m.Media)
		text := withNotes(m.Text, notes)
		if m.Format == "" {
			m.Format = channel.FormatPlain
		}
		texts, format := d.prepare(d.ctx, a.Target.Instance, text, m.Format)
		if len(texts) == 0 && len(media) > 0 {
			texts = []string{""}
		}
		if len(texts) == 0 {
			continue
		}
		buttons := m.Buttons
		if !d.HasButtons(a.Target.Instance) {
			buttons = nil
		}
		for i, t := range texts {
			p := store.Part{Format: string(format)}
			if i == len(texts)-1 && (len(media) > 0 || len(buttons) > 0) {
				p.Attach, _ = json.Marshal(attachment{Media: media, Buttons: buttons}) // plain structs: cannot fail
			}
			chunks, parts = append(chunks, t), append(parts, p)
		}
	}
	format := channel.FormatPlain
	if len(parts) > 0 {
		format = channel.Format(parts[0].Format)
	}
	rec := store.Reply{JournalID: a.ID, Instance: a.Target.Instance, ChatID: a.Target.ChatID, ThreadID: a.Target.ThreadID,
		Text: answerText(a.Messages), Chunks: chunks, Format: string(format), ProducedAt: d.clock.Now()}
	if len(chunks) > 0 {
		rec.Parts = parts
	}
	// As in Deliver: chunk 0's attempt is recorded with the answer under
	// the session's send lock, the send following at once.
	unlock := d.serialize(a.Key)
	defer unlock()
	if len(chunks) > 0 {
		_, ready := d.ch.Ready(a.Target.Instance)
		rec.AttemptFirst = ready && !d.halted()
	}
	if err := d.persist("record answer", a.ID, func() error { return d.store.RecordReply(d.ctx, rec) }); err != nil {
		if d.ctx.Err() == nil {
			d.log.Error("recording the answer failed; not sent", "id", a.ID, "error", err)
		}
		return
	}
	stored := make([]store.Chunk, len(chunks))
	for i := range chunks {
		stored[i] = store.Chunk{Index: i, Text: chunks[i], Part: parts[i]}
	}
	d.sendChunksLocked(a.ID, a.Target, stored, nil, format, "", "", nil, rec.AttemptFirst)
}

// withNotes appends the notes to text, a paragraph each.
func withNotes(text string, notes []string) string {
	for _, n := range notes {
		if strings.TrimSpace(text) == "" {
			text = n
		} else {
			text = strings.TrimRight(text, "\n") + "\n\n" + n
		}
	}
	return text
}

// answerText is an answer's text as recorded (Reply.Text): its messages'
// texts, a paragraph each.
func answerText(msgs []Message) string {
	var parts []string
	for _, m := range msgs {
		if strings.TrimSpace(m.Text) != "" {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// chunkRequest is the send request of a stored chunk: its text in its own
// format (the reply's when it has none), with what is attached to it. A
// file attached that can no longer be sent (a restart came between the
// record and the send, and the file is gone) is left out and the text says
// so.
func (d *Dispatcher) chunkRequest(tgt message.Target, c store.Chunk, format channel.Format) channel.SendRequest {
	req := channel.SendRequest{ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Text: c.Text, Format: format}
	if c.Part.Format != "" {
		req.Format = channel.Format(c.Part.Format)
	}
	if len(c.Part.Attach) == 0 {
		return req
	}
	var at attachment
	if err := json.Unmarshal(c.Part.Attach, &at); err != nil {
		d.log.Error("a chunk's attachments cannot be read; sent without them", "chat", tgt.ChatID, "chunk", c.Index, "error", err)
		return req
	}
	media, notes := d.checkFiles(tgt.Instance, at.Media)
	req.Text, req.Media, req.Buttons = withNotes(req.Text, notes), media, at.Buttons
	return req
}
