package turn

import (
	"strings"

	"context"
	"testing"

	"github.com/clawhost/clawhost/core/session"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
)

// A result in hand when the host starts stopping is delivered (recorded),
// never dropped to be produced a second time after the restart; a run the
// stop cut short is left for the restart.
func TestShutdownKeepsAResultInHand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		result   runner.Result
		wantHalt bool
	}{
		{"finished", runner.Result{Text: "the answer"}, false},
		{"cut by the stop", runner.Result{Err: &runner.Error{Kind: runner.KindAborted}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Settings{Streaming: StreamOff})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f.agent.result = tc.result
			f.agent.onRun = cancel // the stop comes while claude runs
			o := f.turns.Run(ctx, f.request("tg", "hi"))
			if o.Halt != tc.wantHalt {
				t.Fatalf("outcome %+v, want halt=%v", o, tc.wantHalt)
			}
			if !tc.wantHalt && (!o.Deliver || o.Text != "the answer") {
				t.Fatalf("the result in hand is delivered: %+v", o)
			}
		})
	}
}

// A turn run again after a restart continues the draft its earlier run
// showed; anything else it showed (blocks, a draft never confirmed) is
// announced before the run instead of silently shown again.
func TestRerunContinuesTheDraftOrSaysItStartsAgain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		live       []store.Live
		wantDraft  string
		wantNotice bool
	}{
		{"confirmed draft", []store.Live{{Kind: store.LiveDraft, Text: "Hal", PlatformIDs: []string{"m9"}}}, "m9", false},
		{"unconfirmed draft", []store.Live{{Kind: store.LiveDraft, Text: "Hal"}}, "", true},
		{"streamed blocks", []store.Live{{Kind: store.LiveDraft, Text: "Hal", PlatformIDs: []string{"m9"}}, {Seq: 1, Kind: store.LiveBlock, Text: "b", PlatformIDs: []string{"m10"}}}, "m9", true},
		{"nothing shown", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Settings{Streaming: StreamDraft})
			f.out.edits = true
			ctx := context.Background()
			req := f.request("tg", "hi")
			id := req.Entries[0].ID
			// The first run started, began (claude read the prompt: no
			// live output comes before) and showed live output; then the
			// host died.
			if err := f.db.Start(ctx, id); err != nil {
				t.Fatal(err)
			}
			if err := f.db.MarkBegan(ctx, id); err != nil {
				t.Fatal(err)
			}
			for i, l := range tc.live {
				l.JournalID, l.Seq = id, i
				if err := f.db.RecordLive(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.db.Recover(ctx, store.RecoverOptions{}); err != nil {
				t.Fatal(err)
			}
			e, _ := f.db.Entry(ctx, id)
			req.Entries[0] = e
			o := f.turns.Run(ctx, req)
			if !o.Deliver {
				t.Fatalf("outcome %+v", o)
			}
			if len(f.out.drafts) != 1 {
				t.Fatalf("drafts %+v", f.out.drafts)
			}
			got := ""
			if d := f.out.drafts[0]; d.Confirmed() {
				got = d.PlatformIDs[0]
			}
			if got != tc.wantDraft {
				t.Errorf("the draft continued is %q, want %q", got, tc.wantDraft)
			}
			notice := len(f.out.sent) == 1 && f.out.sent[0] == restartNotice
			if notice != tc.wantNotice || (!tc.wantNotice && len(f.out.sent) != 0) {
				t.Errorf("sent %q, want the restart notice: %v", f.out.sent, tc.wantNotice)
			}
		})
	}
}

// A system event a turn carried is carried again when that entry runs
// again after a crash that came before its reply was recorded (the
// session update marking it carried had been written), and by no turn of
// another entry after that.
func TestEventsCarriedAgainByARerun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Settings{Streaming: StreamOff})
	ctx := context.Background()
	const event = "System: The model is now opus, changed with /model."
	first := f.request("tg", "hi")
	if _, err := f.turns.opts.Meta.Update(ctx, f.db, first.Key.String(), func(m *session.Meta) error {
		m.AddEvent("The model is now opus, changed with /model.", f.now)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if o := f.turns.Run(ctx, first); !o.Deliver {
		t.Fatalf("first run: %+v", o)
	}
	// The host died before the reply was recorded: the entry runs again.
	if _, err := f.db.Recover(ctx, store.RecoverOptions{}); err != nil {
		t.Fatal(err)
	}
	e, _ := f.db.Entry(ctx, first.Entries[0].ID)
	first.Entries[0] = e
	if o := f.turns.Run(ctx, first); !o.Deliver {
		t.Fatalf("re-run: %+v", o)
	}
	if o := f.turns.Run(ctx, f.request("tg", "next")); !o.Deliver {
		t.Fatalf("next turn: %+v", o)
	}
	for i, want := range []int{1, 1, 0} {
		if n := strings.Count(f.agent.reqs[i].Prompt, event); n != want {
			t.Errorf("request %d carries the event %d times, want %d:\n%s", i, n, want, f.agent.reqs[i].Prompt)
		}
	}
}
