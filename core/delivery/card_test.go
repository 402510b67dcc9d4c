package delivery

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

var stopRow = [][]channel.Button{{{ID: "/stop", Label: "Stop"}}}

// TestTurnCardBecomesTheReply: a turn card is sent with its Stop button;
// the answer's draft updates keep the button; the final reply replaces
// the card without it, and the ping follows as a reply to it, once.
func TestTurnCardBecomesTheReply(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Capabilities.Buttons = true
	id := f.entry()
	dr := f.draft(id)
	dr.Card("⏳ Working · 5s\n⚙ Read: a_b.go", channel.FormatPlain, stopRow)
	dr.Stop()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "The answer.", Format: channel.FormatMarkdown, Draft: dr, Ping: "✅ Done — took 45s."})
	calls := f.ch.log()
	if len(calls) != 3 {
		t.Fatalf("calls %+v", calls)
	}
	if c := calls[0]; c.op != "send" || c.text != "⏳ Working · 5s\n⚙ Read: a_b.go" || c.format != channel.FormatPlain || c.buttons != "/stop" {
		t.Errorf("card %+v", c)
	}
	if c := calls[1]; c.op != "edit" || c.msgID != "1" || c.text != "The answer." || c.buttons != "" {
		t.Errorf("final edit %+v", c)
	}
	if c := calls[2]; c.op != "send" || c.replyTo != "1" || c.text != "✅ Done — took 45s." {
		t.Errorf("ping %+v", c)
	}
	if dr.Final("✓ Done in 45s.") {
		t.Error("Final replaced a card the reply had taken over")
	}
}

// TestTurnCardUpdatesKeepStop: the answer streaming into the card's
// draft keeps the Stop button until the end.
func TestTurnCardUpdatesKeepStop(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Capabilities.Buttons = true
	dr := f.draft(f.entry())
	dr.Card("⏳ Working · 5s", channel.FormatPlain, stopRow)
	intervalPassed(dr)
	dr.Update("The answer so far")
	calls := f.ch.log()
	if len(calls) != 2 || calls[1].op != "edit" || calls[1].text != "The answer so far" || calls[1].buttons != "/stop" {
		t.Fatalf("calls %+v", calls)
	}
}

// TestTurnCardCollapses: a card the turn ends without a reply in (stopped,
// NO_REPLY) becomes one line without buttons; no ping without a reply.
func TestTurnCardCollapses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Capabilities.Buttons = true
	id := f.entry()
	dr := f.draft(id)
	dr.Card("⏳ Working · 1m 10s", channel.FormatPlain, stopRow)
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Draft: dr, Ping: "✅ Done — took 1m 12s."})
	if !dr.Final("⏹ Stopped after 1m 12s.") {
		t.Fatal("the card was not collapsed")
	}
	calls := f.ch.log()
	if len(calls) != 2 || calls[1].op != "edit" || calls[1].text != "⏹ Stopped after 1m 12s." || calls[1].buttons != "" {
		t.Fatalf("calls %+v", calls)
	}
}

// TestNoPingForNewMessages: a reply of several messages notifies by
// itself (its later chunks are new messages), and one without a draft
// message is a new message: no ping.
func TestNoPingForNewMessages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 40)
	id := f.entry()
	dr := f.draft(id)
	dr.Update("Working on it")
	dr.Stop()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: strings.Repeat("word ", 20), Format: channel.FormatMarkdown, Draft: dr, Ping: "ping"})
	id2 := f.entry()
	f.d.Deliver(Reply{Key: sk("k"), ID: id2, Target: tgt, Text: "short", Format: channel.FormatMarkdown, Draft: f.d.NewDraft(sk("k"), id2, tgt, store.Live{}), Ping: "ping"})
	for _, c := range f.ch.log() {
		if c.text == "ping" {
			t.Errorf("pinged: %+v", f.ch.log())
		}
	}
}

// TestTypingLapses: a channel whose indicator lapses by itself
// (Capabilities.TypingLapses: Telegram, Discord) is not asked to clear it
// when the turn ends, one plugin call less per turn; any other is.
func TestTypingLapses(t *testing.T) {
	t.Parallel()
	for _, lapses := range []bool{false, true} {
		f := newFixture(t, 100)
		f.ch.desc.Typing = true
		f.ch.desc.Capabilities.TypingLapses = lapses
		f.d.Typing(tgt, 10*time.Minute)()
		// The fixture's clock lets the refreshes' waits pass at once:
		// any number of ons, then one off unless the indicator lapses.
		got := f.ch.typings()
		offs := len(got) - slices.Index(got, false)
		if slices.Index(got, false) < 0 {
			offs = 0
		}
		if want := map[bool]int{false: 1, true: 0}[lapses]; len(got) == 0 || !got[0] || offs != want {
			t.Errorf("lapses %v: typing %v, want ons then %d off", lapses, got, want)
		}
	}
}

// TestTypingLastsTheTurn: the indicator is refreshed before the channel's
// declared lifetime lapses (Telegram 5 s: every 4 s; Discord 10 s: every
// 8 s; none declared: as Telegram) for the whole turn, up to the bound
// given (the turn's timeout), then switched off; sealing it switches it off
// at once.
func TestTypingLastsTheTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lifetime time.Duration
		want     int // refreshes over 10 min
	}{{0, 150}, {5 * time.Second, 150}, {10 * time.Second, 75}, {2 * time.Minute, 7}} {
		t.Run(tc.lifetime.String(), func(t *testing.T) {
			t.Parallel()
			lifetime := cmp.Or(tc.lifetime, channel.DefaultTypingLifetime)
			if r := typingRefresh(tc.lifetime); r >= lifetime || r < lifetime/2 {
				t.Errorf("refresh %v for a lifetime of %v", r, lifetime)
			}
			f := newFixture(t, 100)
			f.ch.desc.Typing = true
			f.ch.desc.Capabilities.TypingLifetime = tc.lifetime
			f.d.Typing(tgt, 10*time.Minute)()
			// Sealed at once: on, then off.
			f.ch.mu.Lock()
			sealed := append([]bool(nil), f.ch.typing...)
			f.ch.typing = nil
			f.ch.mu.Unlock()
			if len(sealed) < 2 || sealed[len(sealed)-1] {
				t.Fatalf("sealed typing %v", sealed)
			}
			seal := f.d.Typing(tgt, 10*time.Minute)
			// The fake clock lets each wait pass at once: the loop runs to its
			// bound by itself.
			deadline := time.Now().Add(5 * time.Second)
			for {
				f.ch.mu.Lock()
				n := len(f.ch.typing)
				last := n > 0 && !f.ch.typing[n-1]
				f.ch.mu.Unlock()
				if last || time.Now().After(deadline) {
					break
				}
				runtime.Gosched()
			}
			seal()
			f.ch.mu.Lock()
			defer f.ch.mu.Unlock()
			on := 0
			for _, v := range f.ch.typing {
				if v {
					on++
				}
			}
			if on != tc.want || f.ch.typing[len(f.ch.typing)-1] {
				t.Errorf("%d refreshes over 10 min (want %d), then %v", on, tc.want, f.ch.typing[len(f.ch.typing)-1])
			}
		})
	}
}

// TestTurnCardEditThatMayPassKeepsTheCard: a card's edit that failed in a
// way a retry may mend (its answer lost, the platform busy) does not give
// the card up: the reply still replaces it, Stop button and all, rather
// than following as a new message under a card left with a live Stop.
func TestTurnCardEditThatMayPassKeepsTheCard(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&channel.Error{Code: channel.CodeUncertain, Message: "connection reset after the request was written"},
		&channel.Error{Code: channel.CodeRateLimited, RetryAfter: time.Second},
		&channel.Error{Code: channel.CodeUnavailable},
	} {
		f := newFixture(t, 100)
		f.ch.desc.Capabilities.Buttons = true
		id := f.entry()
		dr := f.draft(id)
		dr.Card("⏳ Working · 5s", channel.FormatPlain, stopRow)
		f.ch.editErrs = []error{err}
		intervalPassed(dr)
		dr.Card("⏳ Working · 7s", channel.FormatPlain, stopRow)
		dr.Stop()
		f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "The answer.", Format: channel.FormatMarkdown, Draft: dr})
		calls := f.ch.log()
		last := calls[len(calls)-1]
		if last.op != "edit" || last.msgID != "1" || last.text != "The answer." || last.buttons != "" {
			t.Errorf("%v: calls %+v; want the card edited into the answer, without its Stop button", err, calls)
		}
		if f.state(id) != store.StateDone {
			t.Errorf("%v: entry %s", err, f.state(id))
		}
	}
}

// shownTexts is what the chat shows at the end of the calls: each sent
// message's text after its last edit, in order, with its files.
func shownTexts(calls []sent) (texts []string, media [][]string) {
	at := map[string]int{}
	for _, c := range calls {
		switch c.op {
		case "send":
			at[c.msgID] = len(texts)
			texts, media = append(texts, c.text), append(media, c.media)
		case "edit":
			if i, ok := at[c.msgID]; ok {
				texts[i] = c.text
			}
		}
	}
	return texts, media
}

// TestTurnCardWithFile (issue 56): a turn card, then the answer streamed
// into it, then the reply with a send_file's caption and file: the chat
// shows the answer once (the card became it) and the file once, with its
// caption, below it.
func TestTurnCardWithFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	f.ch.desc.Capabilities.Buttons = true
	ws, _ := mediaWorkspace(t)
	f.d.SetSettings(Settings{Workspace: ws, MaxMediaBytes: 1000})
	id := f.entry()
	dr := f.d.NewDraft(sk("tg:direct:1"), id, tgt, store.Live{})
	dr.Card("⏳ Working · 5s", channel.FormatPlain, stopRow)
	intervalPassed(dr)
	dr.Update("Here it is.")
	dr.Stop()
	// As core/turn's AttachFile and run add the queued file to the reply.
	f.d.Deliver(Reply{Key: sk("tg:direct:1"), ID: id, Target: tgt, Format: channel.FormatMarkdown, Draft: dr,
		Text: "Here it is.\n\nQ3 report\nMEDIA:report.pdf"})
	texts, media := shownTexts(f.ch.log())
	n := 0
	for _, s := range texts {
		n += strings.Count(s, "Here it is.")
	}
	if n != 1 || len(texts) != 2 {
		t.Fatalf("the chat shows %q: the answer %d times, want once and the file below", texts, n)
	}
	if texts[0] != "Here it is." || texts[1] != "Q3 report" || len(media[1]) != 1 || !strings.HasSuffix(media[1][0], "report.pdf") {
		t.Errorf("the chat shows %q with files %q; want the answer, then the file with its caption", texts, media)
	}
	if c := f.ch.log(); c[len(c)-1].op != "send" || len(c[len(c)-1].media) != 1 {
		t.Errorf("the file is not the last message: %+v", c)
	}
	if dr.Final("✓ Done in 5s.") {
		t.Error("Final replaced a card the reply had taken over")
	}
}

// TestTurnCardWithFileAfterRestart: the outbox records the reply split as
// it is sent (the draft's text, then the caption the file goes with), so
// a delivery resumed after a restart between the draft's edit and the
// file sends the file with its caption, once, and the answer not again.
func TestTurnCardWithFileAfterRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 100)
	ws, _ := mediaWorkspace(t)
	f.d.SetSettings(Settings{Workspace: ws, MaxMediaBytes: 1000})
	id := f.entry()
	dr := f.d.NewDraft(sk("tg:direct:1"), id, tgt, store.Live{})
	dr.Card("⏳ Working · 5s", channel.FormatPlain, nil)
	dr.Stop()
	text := "Here it is.\n\nQ3 report\nMEDIA:report.pdf"
	f.d.Deliver(Reply{Key: sk("tg:direct:1"), ID: id, Target: tgt, Format: channel.FormatMarkdown, Draft: dr, Text: text})
	p := f.pending(id)
	if !slices.Equal(p.Reply.Chunks, []string{"Here it is.", "Q3 report"}) || p.Reply.DraftID != "1" || p.Reply.Text != text {
		t.Fatalf("recorded %q with draft %q, text %q", p.Reply.Chunks, p.Reply.DraftID, p.Reply.Text)
	}
	// The same reply recorded before a restart, its draft edited, its
	// file not yet sent.
	ctx := t.Context()
	id2 := f.entry()
	rec := p.Reply
	rec.JournalID, rec.DraftID = id2, "1"
	f.record(rec)
	if _, err := f.db.MarkSent(ctx, store.ChunkSent{JournalID: id2, Index: 0, PlatformIDs: []string{"1"}}); err != nil {
		t.Fatal(err)
	}
	before := len(f.ch.log())
	f.d.DeliverPending(sk("tg:direct:1"), f.pending(id2), tgt)
	f.d.DeliverPending(sk("tg:direct:1"), f.pending(id2), tgt)
	calls := f.ch.log()[before:]
	if len(calls) != 1 || calls[0].op != "send" || calls[0].text != "Q3 report" || len(calls[0].media) != 1 {
		t.Errorf("resumed delivery: %+v; want the file with its caption, once", calls)
	}
}

// TestSplitFiles: the text before a reply's files and the files with
// their captions.
func TestSplitFiles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, head, tail string }{
		{"Here it is.\n\nQ3 report\nMEDIA:/w/r.txt", "Here it is.", "Q3 report\nMEDIA:/w/r.txt"},
		{"Here it is.\n\nMEDIA:/w/a\nB\nMEDIA:/w/b", "Here it is.", "MEDIA:/w/a\nB\nMEDIA:/w/b"},
		{"Here you are.\nMEDIA: r.pdf", "", "Here you are.\nMEDIA: r.pdf"},
		{"One.\n\nTwo.\nMEDIA: r.pdf\nAfter.", "One.", "Two.\nMEDIA: r.pdf\nAfter."},
		{"Q3 report\nMEDIA:/w/r.txt", "", "Q3 report\nMEDIA:/w/r.txt"},
		{"MEDIA:/w/r.txt", "", "MEDIA:/w/r.txt"},
		{"No files.", "No files.", ""},
	} {
		if head, tail := splitFiles(c.text); head != c.head || tail != c.tail {
			t.Errorf("splitFiles(%q) = %q, %q; want %q, %q", c.text, head, tail, c.head, c.tail)
		}
	}
}

// intervalPassed makes dr's last update a draft interval older: the next
// update is shown at once.
func intervalPassed(dr *Draft) {
	dr.mu.Lock()
	dr.last = dr.last.Add(-draftInterval)
	dr.mu.Unlock()
}
