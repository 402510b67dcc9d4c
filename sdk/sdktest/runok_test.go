package sdktest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
)

// ending is a channel whose Run returns err once its context ends.
type ending struct {
	channel.Channel
	err error
}

func (e ending) Run(ctx context.Context, _ channel.Inbox) error {
	<-ctx.Done()
	return e.err
}

// errRecorder is a testing.TB that records Errorf and runs its cleanups on
// demand.
type errRecorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *errRecorder) Helper()          {}
func (r *errRecorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *errRecorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *errRecorder) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestRunOK: a Run error is reported once, whether the test stops the
// channel (then the cleanup stops it again) or the cleanup does; a clean
// end reports nothing.
func TestRunOK(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		stop     bool
		wantErrs int
	}{
		{"error, stopped by the test", errors.New("boom"), true, 1},
		{"error, stopped at the end", errors.New("boom"), false, 1},
		{"clean end", nil, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &errRecorder{TB: t}
			stop := RunOK(r, ending{err: tc.err}, &Inbox{})
			if tc.stop {
				stop()
			}
			r.cleanup()
			if len(r.errs) != tc.wantErrs {
				t.Fatalf("errors reported: %q, want %d", r.errs, tc.wantErrs)
			}
			if tc.wantErrs > 0 && r.errs[0] != "run: boom" {
				t.Errorf("error = %q", r.errs[0])
			}
		})
	}
}

// TestConfigJSON: extra's attributes replace the base's, the others stay,
// the base map is not changed, and a value JSON cannot hold fails the test.
func TestConfigJSON(t *testing.T) {
	base := map[string]any{"token": "t", "limit": 1}
	got := string(ConfigJSON(t, base, map[string]any{"limit": 2, "mode": "x"}))
	if want := `{"limit":2,"mode":"x","token":"t"}`; got != want {
		t.Errorf("ConfigJSON = %s, want %s", got, want)
	}
	if base["limit"] != 1 || len(base) != 2 {
		t.Errorf("the base map changed: %v", base)
	}
	r := &fatalRecorder{TB: t}
	func() {
		defer func() { _ = recover() }()
		ConfigJSON(r, base, map[string]any{"ch": make(chan int)})
	}()
	if !r.failed {
		t.Error("an unmarshallable value did not fail the test")
	}
}

// fatalRecorder records Fatalf and stops the caller with a panic.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(string, ...any) {
	r.failed = true
	panic("fatal")
}
