package delivery

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
)

// The rules that keep a reply from being lost or posted twice across a
// restart: what is shown is recorded before it is sent, a recovered draft
// is edited rather than re-posted, and a send of unknown outcome is never
// repeated (the user is told instead).

func (f *fixture) pending(id int64) store.PendingReply {
	f.t.Helper()
	p, err := f.db.PendingReply(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func TestDraftIsRecordedBeforeItIsSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	id := f.entry()
	var during []store.Live
	f.ch.onSend = func(channel.SendRequest) {
		during, _ = f.db.LiveOutput(context.Background(), id)
	}
	dr := f.d.NewDraft("k", id, tgt, store.Live{})
	dr.Update("Hel")
	dr.Stop()
	if len(during) != 1 || during[0].Kind != store.LiveDraft || during[0].Text != "Hel" || during[0].Confirmed() {
		t.Fatalf("while the draft was sent the store held %+v, want the attempted draft", during)
	}
	after, _ := f.db.LiveOutput(context.Background(), id)
	if len(after) != 1 || !after[0].Confirmed() || after[0].PlatformIDs[0] != "1" {
		t.Fatalf("after the send the store holds %+v, want the draft's message id", after)
	}
}

func TestStreamedBlockIsRecordedBeforeItIsSent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	id := f.entry()
	var during []store.Live
	f.ch.onSend = func(channel.SendRequest) { during, _ = f.db.LiveOutput(context.Background(), id) }
	if !f.d.SendBlock("k", id, 1, tgt, "first block") {
		t.Fatal("block not sent")
	}
	after, _ := f.db.LiveOutput(context.Background(), id)
	if len(during) != 1 || during[0].Confirmed() || len(after) != 1 || !after[0].Confirmed() || after[0].Kind != store.LiveBlock {
		t.Fatalf("during %+v after %+v", during, after)
	}
}

func TestRerunContinuesTheRecordedDraft(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	id := f.entry()
	dr := f.d.NewDraft("k", id, tgt, store.Live{JournalID: id, Kind: store.LiveDraft, Text: "Hel", PlatformIDs: []string{"m7"}})
	dr.Update("Hello")
	dr.Stop()
	f.d.Deliver(Reply{Key: "k", ID: id, Target: tgt, Text: "Hello world", Format: channel.FormatMarkdown, Draft: dr})
	for _, c := range f.ch.log() {
		if c.op != "edit" || c.msgID != "m7" {
			t.Fatalf("the earlier run's draft is continued, nothing new is posted: %+v", f.ch.log())
		}
	}
	if p := f.pending(id); p.Entry.State != store.StateDone || p.Reply.DraftID != "m7" {
		t.Fatalf("reply %+v", p)
	}
}

// After RecordReply and before chunk 0 was marked, a restart: recovery
// edits the draft to chunk 0, it never posts chunk 0 as a new message; the
// other chunks keep the recorded format.
func TestRecoveredReplyEditsTheDraftAndKeepsItsFormat(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	id := f.entry()
	ctx := context.Background()
	if err := f.db.RecordReply(ctx, store.Reply{JournalID: id, Text: "x", Chunks: []string{"one", "two"}, Format: channel.FormatPlain, ReplyTo: "m0", DraftID: "d1"}); err != nil {
		t.Fatal(err)
	}
	f.d.DeliverPending("k", f.pending(id), tgt)
	calls := f.ch.log()
	if len(calls) != 2 || calls[0].op != "edit" || calls[0].msgID != "d1" || calls[0].text != "one" ||
		calls[1].op != "send" || calls[1].text != "two" || calls[1].format != channel.FormatPlain {
		t.Fatalf("calls %+v", calls)
	}
	if f.state(id) != store.StateDone {
		t.Errorf("entry %s", f.state(id))
	}
}

func TestRecoveredReplyKeepsReplyTo(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	id := f.entry()
	if err := f.db.RecordReply(context.Background(), store.Reply{JournalID: id, Text: "x", Chunks: []string{"*one*"}, Format: channel.FormatMarkdown, ReplyTo: "m0"}); err != nil {
		t.Fatal(err)
	}
	f.d.DeliverPending("k", f.pending(id), tgt)
	if c := f.ch.log(); len(c) != 1 || c[0].replyTo != "m0" || c[0].format != channel.FormatMarkdown {
		t.Fatalf("calls %+v", c)
	}
}

// A chunk whose send was attempted before the restart (the platform may
// have it) is not sent again: it is marked uncertain, the user is told once,
// and the rest of the reply is delivered.
func TestAttemptedChunkIsNotSentAgainAfterARestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	id := f.entry()
	ctx := context.Background()
	if err := f.db.RecordReply(ctx, store.Reply{JournalID: id, Text: "x", Chunks: []string{"one", "two", "three"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.MarkSent(ctx, store.ChunkSent{JournalID: id, Index: 0, PlatformIDs: []string{"p0"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.db.MarkAttempt(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	f.d.DeliverPending("k", f.pending(id), tgt)
	var texts []string
	for _, c := range f.ch.log() {
		texts = append(texts, c.text)
	}
	if want := []string{noticeUncertain, "three"}; fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Fatalf("sent %q, want %q", texts, want)
	}
	p := f.pending(id)
	if p.Entry.State != store.StateDone || !p.Chunks[1].Uncertain || p.Chunks[2].AttemptedAt.IsZero() {
		t.Fatalf("reply %+v", p)
	}
}

// A send whose answer was lost is never repeated, whatever said so: the
// plugin (uncertain), the deadline, or the plugin's death mid-call.
func TestUncertainSendIsNotRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"plugin says uncertain", &channel.Error{Code: channel.CodeUncertain, Message: "connection reset after the request was written"}},
		{"deadline", fmt.Errorf("send: %w", context.DeadlineExceeded)},
		{"plugin died", fmt.Errorf("send: %w: eof", host.ErrPluginExited)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 20)
			f.ch.sendErrs = []error{tc.err}
			id := f.entry()
			f.d.Deliver(Reply{Key: "k", ID: id, Target: tgt, Text: "one two three", Format: channel.FormatMarkdown})
			calls := f.ch.log()
			var texts []string
			for _, c := range calls {
				texts = append(texts, c.op+":"+c.text)
			}
			if want := []string{"send-failed:one two three", "send:" + noticeUncertain}; fmt.Sprint(texts) != fmt.Sprint(want) {
				t.Fatalf("calls %q, want %q", texts, want)
			}
			if w := f.clock.recorded(); len(w) != 0 {
				t.Errorf("no retry waits: %v", w)
			}
			if p := f.pending(id); p.Entry.State != store.StateDone || !p.Chunks[0].Uncertain {
				t.Fatalf("reply %+v", p)
			}
		})
	}
}

// A malformed or failed answer that the plugin reports as a definite error
// is not silent: the user is told the reply could not be delivered.
func TestUndeliverableFirstChunkTellsTheUser(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.sendErrs = []error{&channel.Error{Code: channel.CodeInternal, Message: "bad answer"}}
	id := f.entry()
	f.d.Deliver(Reply{Key: "k", ID: id, Target: tgt, Text: "hello", Format: channel.FormatMarkdown})
	calls := f.ch.log()
	if len(calls) != 2 || calls[1].text != noticeFailed {
		t.Fatalf("calls %+v", calls)
	}
	if f.state(id) != store.StateFailed {
		t.Errorf("entry %s", f.state(id))
	}
}

// Drain during a send: the send in flight is marked when it returns; the
// next chunk is not started and stays in the outbox.
func TestDrainLetsTheSendInFlightBeMarked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 20)
	id := f.entry()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	f.ch.onSend = func(channel.SendRequest) {
		entered <- struct{}{}
		<-release
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.d.Deliver(Reply{Key: "k", ID: id, Target: tgt, Text: "one two three four five six seven eight nine ten", Format: channel.FormatMarkdown})
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no send")
	}
	f.d.Drain()
	close(release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Deliver did not return after Drain")
	}
	p := f.pending(id)
	if !p.Chunks[0].Sent() || p.Chunks[0].Uncertain || p.Chunks[1].Sent() || !p.Chunks[1].AttemptedAt.IsZero() {
		t.Fatalf("chunks %+v: the first is marked, the second not attempted", p.Chunks)
	}
	if p.Entry.State != store.StateReplied {
		t.Errorf("entry %s, want replied (the rest waits in the outbox)", p.Entry.State)
	}
	if n := len(f.ch.log()); n != 1 {
		t.Errorf("%d sends after drain, want only the one in flight", n)
	}
}

// The draft of a turn that will not finish is marked as interrupted (its
// text kept), not left looking complete, and nothing is re-posted.
func TestInterruptedEditsTheDraft(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.d.Interrupted("k", tgt, []store.Live{{Kind: store.LiveDraft, Text: "Half an ans", PlatformIDs: []string{"m3"}}}, "(interrupted)")
	c := f.ch.log()
	if len(c) != 1 || c[0].op != "edit" || c[0].msgID != "m3" || !strings.HasPrefix(c[0].text, "Half an ans") || !strings.HasSuffix(c[0].text, "(interrupted)") {
		t.Fatalf("calls %+v", c)
	}
	f.d.Interrupted("k", tgt, []store.Live{{Kind: store.LiveBlock, Text: "b", PlatformIDs: []string{"m4"}}}, "(interrupted)")
	if c := f.ch.log(); len(c) != 2 || c[1].op != "send" || c[1].text != "(interrupted)" {
		t.Fatalf("calls %+v", c)
	}
}
