package turn

import (
	"context"
	"testing"

	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
)

// TestOnlyARunThatBeganSpendsAnAttempt (issue 85): the turn records the
// runner's EventBegan (claude read the prompt) in the journal; a run that
// never got that far (the host killed right after the launch) is queued
// again by recovery with its attempt given back, one that did spends it.
func TestOnlyARunThatBeganSpendsAnAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		events       []runner.Event
		began        bool
		wantAttempts int
	}{
		{"killed before claude read the prompt", nil, false, 0},
		{"claude read the prompt", []runner.Event{{Kind: runner.EventBegan}, {Kind: runner.EventText, Text: "hi"}}, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Settings{Streaming: StreamOff})
			f.agent.events = tc.events
			req := f.request("tg", "hello")
			id := req.Entries[0].ID
			var marks int
			req.Began = func(ctx context.Context) error {
				marks++
				return f.db.MarkBegan(ctx, id)
			}
			f.turns.Run(context.Background(), req)
			// The fake output records the reply without storing it: the
			// entry is left in processing, as a kill -9 leaves it.
			e := sqlitetest.Entry(t, f.db, id)
			if e.State != store.StateProcessing || e.Began != tc.began || (marks == 1) != tc.began {
				t.Fatalf("after the run: %s, began %v (%d marks); want processing, began %v", e.State, e.Began, marks, tc.began)
			}
			if _, err := f.db.Recover(context.Background(), store.RecoverOptions{}); err != nil {
				t.Fatal(err)
			}
			if e, _ := f.db.Entry(context.Background(), id); e.State != store.StateQueued || e.Attempts != tc.wantAttempts {
				t.Fatalf("recovered: %s with %d attempts; want queued with %d", e.State, e.Attempts, tc.wantAttempts)
			}
		})
	}
}
