package placement

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

// store answers Place from its script, one answer a call (the last one
// repeats), and records the handoffs.
type store struct {
	mu      sync.Mutex
	answers []answer
	handed  []int64
}

type answer struct {
	host string
	here bool
	err  error
}

func (s *store) Place(context.Context, string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.answers[0]
	if len(s.answers) > 1 {
		s.answers = s.answers[1:]
	}
	return a.host, a.here, a.err
}
func (s *store) Behind(context.Context, int64) (bool, error) { return false, nil }
func (s *store) Handoff(_ context.Context, _ string, ids ...int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handed = append(s.handed, ids...)
	return nil
}
func (s *store) Forget(string) {}

func newPlacer(t *testing.T, p Placement) (*Placer, *tstimetest.Fake) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clk := tstimetest.NewFake(time.Unix(0, 0))
	return New(Options{Placement: p, Clock: clk, Ctx: ctx, Logger: hclog.NewNullLogger(), Background: func(f func()) { go f() }}), clk
}

// One host runs every session at once.
func TestNoPlacementRunsHere(t *testing.T) {
	t.Parallel()
	p, _ := newPlacer(t, nil)
	if !p.Here("agent:main:tg:direct:1", []int64{1}, func() { t.Error("ran in the background") }, 0) || !p.RunsHere("k") {
		t.Fatal("a host alone does not run its sessions")
	}
}

// While the store fails the entries wait (in the journal) and run once the
// session is placed here; entries of another host's session are handed to
// it and never run here.
func TestPlacementRetriesThenRuns(t *testing.T) {
	t.Parallel()
	st := &store{answers: []answer{{err: errors.New("database down")}, {here: true}}}
	p, clk := newPlacer(t, st)
	ran := make(chan struct{})
	if p.Here("s", []int64{7}, func() { close(ran) }, 0) {
		t.Fatal("placed here while the store failed")
	}
	if sessions, _ := p.Waits(); sessions != 1 {
		t.Fatalf("%d sessions wait, want 1", sessions)
	}
	if !clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("the wait never armed its retry")
	}
	clk.Advance(BehindPoll) // the first retry: the store answers, here
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the entries never ran once placed")
	}
	if sessions, _ := p.Waits(); sessions != 0 {
		t.Errorf("%d sessions still wait", sessions)
	}
	elsewhere := &store{answers: []answer{{host: "b"}}}
	q, _ := newPlacer(t, elsewhere)
	if q.Here("s", []int64{8, 9}, func() { t.Error("another host's session ran here") }, 0) || len(elsewhere.handed) != 2 {
		t.Errorf("handed %v, want both entries to host b", elsewhere.handed)
	}
}
