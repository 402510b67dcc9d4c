package sqlite

import (
	"context"
	"runtime"
	"testing"
)

// TestDurableCommitsAreFsynced checks the durability classes of the
// writer: a durable write commits with synchronous=FULL (the WAL fsynced at
// its commit), any other with NORMAL, and a batch that holds one durable
// write is committed FULL whole. With Options.Synchronous "NORMAL" nothing
// is FULL. Each operation reads the pragma inside its own transaction.
func TestDurableCommitsAreFsynced(t *testing.T) {
	ctx := context.Background()
	probe := func(got *int) func(*wtx) error {
		return func(t *wtx) error { return t.scan("PRAGMA synchronous", nil, got) }
	}
	const normal, full = 1, 2
	for _, tc := range []struct {
		sync                 string
		plain, durable, both int
	}{
		{"FULL", normal, full, full},
		{"NORMAL", normal, normal, normal},
	} {
		t.Run(tc.sync, func(t *testing.T) {
			d, err := Open(ctx, t.TempDir(), Options{Synchronous: tc.sync})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			var plain, durable, after int
			if err := d.w.do(ctx, probe(&plain)); err != nil {
				t.Fatal(err)
			}
			if err := d.w.durable(ctx, probe(&durable)); err != nil {
				t.Fatal(err)
			}
			if err := d.w.do(ctx, probe(&after)); err != nil {
				t.Fatal(err)
			}
			if plain != tc.plain || durable != tc.durable || after != tc.plain {
				t.Errorf("synchronous: plain %d, durable %d, plain after it %d; want %d, %d, %d", plain, durable, after, tc.plain, tc.durable, tc.plain)
			}

			// Hold the writer so that a plain and a durable write queue up
			// and are committed in one batch.
			hold, held := make(chan struct{}), make(chan struct{})
			go d.w.do(ctx, func(*wtx) error { close(held); <-hold; return nil })
			<-held
			var a, b int
			errs := make(chan error, 2)
			go func() { errs <- d.w.do(ctx, probe(&a)) }()
			go func() { errs <- d.w.durable(ctx, probe(&b)) }()
			for len(d.w.reqs) < 2 {
				runtime.Gosched()
			}
			close(hold)
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if a != tc.both || b != tc.both {
				t.Errorf("a batch with a durable write: synchronous %d and %d, want %d", a, b, tc.both)
			}
		})
	}
}
