package delivery

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// An answer of several messages is recorded whole before the first send
// (one reply, a part per chunk), then sent in order: each message in its
// format, a long one in several chunks with its file and buttons under
// the last; the entry is done when the last is marked.
func TestAnswerIsRecordedThenSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	f.ch.desc.Capabilities.Buttons = true
	file := filepath.Join(t.TempDir(), "a.pdf")
	if err := os.WriteFile(file, []byte("%PDF"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := f.entry()
	var recorded store.PendingReply
	f.ch.onSend = func(channel.SendRequest) {
		if recorded.Entry.ID == 0 {
			recorded = f.pending(id) // at the first send
		}
	}
	f.d.DeliverAnswer(Answer{Key: sk("k"), ID: id, Target: tgt, Messages: []Message{
		{Text: "**bold**", Format: channel.FormatMarkdown},
		{Text: "0123456789 0123456789", Format: channel.FormatPlain,
			Media: []channel.OutboundMedia{{Path: file}}, Buttons: [][]channel.Button{{{ID: "/again", Label: "Again"}}}},
		{Media: []channel.OutboundMedia{{Path: file}}},
	}})
	if n := len(recorded.Chunks); n != 4 || len(recorded.Reply.Parts) != 4 {
		t.Fatalf("at the first send %d chunks and %d parts were recorded, want 4 each", n, len(recorded.Reply.Parts))
	}
	calls := f.ch.log()
	if len(calls) != 4 {
		t.Fatalf("calls %+v", calls)
	}
	want := []struct {
		format  channel.Format
		media   int
		buttons string
	}{{channel.FormatMarkdown, 0, ""}, {channel.FormatPlain, 0, ""}, {channel.FormatPlain, 1, "/again"}, {channel.FormatPlain, 1, ""}}
	for i, w := range want {
		if c := calls[i]; c.op != "send" || c.format != w.format || len(c.media) != w.media || c.buttons != w.buttons {
			t.Errorf("send %d = %+v, want %+v", i, c, w)
		}
	}
	if calls[0].text != "**bold**" || calls[3].text != "" {
		t.Errorf("texts %q, %q", calls[0].text, calls[3].text)
	}
	if st := f.state(id); st != store.StateDone {
		t.Fatalf("entry %s, want done", st)
	}
}

// After a restart the chunks not sent go out with their own format and
// attachments (a file gone meanwhile is left out and said so); a chunk
// attempted before is not sent again.
func TestAnswerResumedAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Capabilities.Buttons = true
	file := filepath.Join(t.TempDir(), "a.pdf")
	if err := os.WriteFile(file, []byte("%PDF"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, _ := mediaWorkspace(t) // holds report.pdf, which a MEDIA: line of the agent's would send
	f.d.SetSettings(Settings{Workspace: ws})
	id := f.entry()
	f.d.Drain() // recorded, nothing sent: the host stopped
	f.d.DeliverAnswer(Answer{Key: sk("k"), ID: id, Target: tgt, Messages: []Message{
		{Text: "one", Format: channel.FormatPlain},
		{Text: "two", Format: channel.FormatMarkdown, Buttons: [][]channel.Button{{{ID: "/b", Label: "B"}}}},
		{Text: "three", Format: channel.FormatPlain, Media: []channel.OutboundMedia{{Path: file}}},
		{Text: "MEDIA: report.pdf", Format: channel.FormatPlain}, // a command's text, not the agent's MEDIA: line
	}})
	if n := len(f.ch.log()); n != 0 {
		t.Fatalf("%d sends while draining", n)
	}
	ctx := context.Background()
	if err := f.db.MarkAttempt(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	next := New(Options{Channels: f.ch, Store: f.db, Clock: f.clock, Settings: Settings{Workspace: ws}})
	defer next.Close()
	next.DeliverPending(sk("tg:direct:1"), f.pending(id), tgt)
	calls := f.ch.log()
	if len(calls) != 4 || calls[0].text != noticeUncertain {
		t.Fatalf("calls %+v", calls)
	}
	if c := calls[3]; len(c.media) != 0 {
		t.Errorf("the last message went as %+v; want its text as written, no file", c)
	}
	if c := calls[1]; c.text != "two" || c.format != channel.FormatMarkdown || c.buttons != "/b" {
		t.Errorf("two went as %+v", c)
	}
	if c := calls[2]; c.text != "three\n\n(a.pdf was not sent: no such file.)" || len(c.media) != 0 {
		t.Errorf("three went as %+v", c)
	}
	if st := f.state(id); st != store.StateDone {
		t.Fatalf("entry %s, want done", st)
	}
}
