package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
)

// spareEnv is a fake-claude runner with spares on, its spares' arrivals on a channel.
type spareEnv struct {
	*fakeEnv
	ready chan *proc
	meter *recordingMeter
}

func newSpareFake(t *testing.T, mut func(*Config)) *spareEnv {
	t.Helper()
	f := newFake(t, func(c *Config) {
		c.Spare = true
		if mut != nil {
			mut(c)
		}
	})
	e := &spareEnv{fakeEnv: f, ready: make(chan *proc, 8), meter: &recordingMeter{dflt: procMemory}}
	f.r.mu.Lock()
	f.r.meter, f.r.unmeasured, f.r.measureAfter = e.meter, procMemory, 0
	f.r.spares.ready = func(p *proc) { e.ready <- p }
	f.r.mu.Unlock()
	return e
}

// nextSpare waits for the next spare the runner put in its pool (nil: given up).
func (e *spareEnv) nextSpare(t *testing.T) *proc {
	t.Helper()
	select {
	case p := <-e.ready:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no spare came")
		return nil
	}
}

// starting tells whether a spare start was decided and is under way.
func (e *spareEnv) starting() bool {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	return len(e.r.spares.starting) > 0
}

func newSession(key string) TurnRequest {
	return TurnRequest{Key: key, SessionID: uuid.NewString(), NewSession: true, AdoptSpare: true, Prompt: "hi " + key}
}

// A new session adopts the spare started after two new sessions alike: it answers from
// the spare's process under the spare's session, a replacement starts, the caller's id
// still reaches the adopted process until it names the spare's, and the spare never
// showed among the conversations' warm processes.
func TestSpareAdoptedByNewSession(t *testing.T) {
	t.Parallel()
	e := newSpareFake(t, nil)
	mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
	if e.starting() || e.r.Pool().Spares != 0 {
		t.Fatal("a spare started after the first new session (nothing repeated yet)")
	}
	mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
	sp := e.nextSpare(t)
	if sp == nil {
		t.Fatal("the spare was given up")
	}
	if p := e.r.Pool(); p.Spares != 1 || p.Warm != 3 || p.SparesStarted != 1 {
		t.Fatalf("pool with a spare: %+v", p)
	}
	if _, ok := e.r.Warm()[spareKey("")]; ok || len(e.r.Warm()) != 2 {
		t.Fatalf("the spare shows as a conversation's: %v", e.r.Warm())
	}

	req := newSession("c")
	res := runTurn(t, e.r, req)
	mustOK(t, res, "echo: hi c")
	if res.Wait.Start != StartSpare || res.PID != sp.pid || res.SessionID != sp.sessionID || res.SessionID == req.SessionID {
		t.Fatalf("new session: start %q pid %d session %s; the spare: pid %d session %s", res.Wait.Start, res.PID, res.SessionID, sp.pid, sp.sessionID)
	}
	if !strings.Contains(res.Wait.String(), "spare") {
		t.Fatalf("wait: %s", res.Wait)
	}
	next := e.nextSpare(t)
	if next == nil || next.pid == sp.pid {
		t.Fatal("no replacement spare")
	}
	if got := strings.Join(e.starts(t), "\n"); strings.Contains(got, req.SessionID) {
		t.Fatalf("claude was started for the new session's own id:\n%s", got)
	}
	if p := e.r.Pool(); p.Spares != 1 || p.SparesAdopted != 1 || p.SparesStarted != 2 || e.r.Warm()["c"] != sp.pid {
		t.Fatalf("pool after the adoption: %+v, warm %v", p, e.r.Warm())
	}
	// The caller has not recorded the spare's session yet: its id reaches the
	// adopted process; then the spare's own.
	for _, sid := range []string{req.SessionID, sp.sessionID} {
		res := runTurn(t, e.r, TurnRequest{Key: "c", SessionID: sid, Prompt: "again"})
		mustOK(t, res, "echo: again")
		if res.Wait.Start != StartWarm || res.PID != sp.pid || res.SessionID != sp.sessionID {
			t.Fatalf("follow-up naming %s: start %q pid %d session %s", sid, res.Wait.Start, res.PID, res.SessionID)
		}
	}
}

// A new session whose start differs from the spare's (another model, MCP config, agent
// tools) does not adopt it; nor does a caller that keeps its own id (no AdoptSpare).
func TestSpareMismatchNotAdopted(t *testing.T) {
	t.Parallel()
	e := newSpareFake(t, nil)
	mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
	mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
	sp := e.nextSpare(t)
	for i, mut := range []func(*TurnRequest){
		func(q *TurnRequest) { q.Model = "other" },
		func(q *TurnRequest) { q.MCPConfig = `{"mcpServers":{}}` },
		func(q *TurnRequest) { q.Tools = []string{"mcp__clawhost__react"} },
		func(q *TurnRequest) { q.ExtraSystemPrompt = "another chat kind's section" },
		func(q *TurnRequest) { q.AdoptSpare = false },
	} {
		req := newSession("m" + string(rune('0'+i)))
		mut(&req)
		res := runTurn(t, e.r, req)
		if res.Err != nil || res.Wait.Start == StartSpare || res.PID == sp.pid || res.SessionID != req.SessionID {
			t.Fatalf("case %d: %+v start %q pid %d (spare %d)", i, res.Err, res.Wait.Start, res.PID, sp.pid)
		}
	}
	if p := e.r.Pool(); p.Spares != 1 || p.SparesAdopted != 0 {
		t.Fatalf("pool: %+v", p)
	}
}

// A reload that changes the agent's next-turn settings stops its spare; Close stops
// one that is left (newFake's cleanup fails when Close does not end everything).
func TestSpareStoppedOnUpdate(t *testing.T) {
	t.Parallel()
	e := newSpareFake(t, nil)
	mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
	mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
	sp := e.nextSpare(t)
	next := e.r.Config()
	next.Model = "changed"
	if err := e.r.Update(next); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sp.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the spare outlived the reload")
	}
	if p := e.r.Pool(); p.Spares != 0 {
		t.Fatalf("pool after the reload: %+v", p)
	}
	// The next new sessions (the new profile) start claude and leave a new spare.
	mustOK(t, runTurn(t, e.r, newSession("c")), "echo: hi c")
	mustOK(t, runTurn(t, e.r, newSession("d")), "echo: hi d")
	if p := e.nextSpare(t); p == nil || !strings.Contains(strings.Join(e.starts(t), "\n"), "--model changed") {
		t.Fatal("no spare with the new profile")
	}
}

// The spare counts in max_warm and warm_memory: it starts only when it fits beside the
// warm processes without stopping one, and it is the first stopped to make room.
func TestSpareCountedInWarmPool(t *testing.T) {
	t.Parallel()
	t.Run("max_warm full", func(t *testing.T) {
		t.Parallel()
		e := newSpareFake(t, func(c *Config) { c.MaxWarm = 2 })
		mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
		mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
		if e.starting() || e.r.Pool().Spares != 0 {
			t.Fatal("a spare started with max_warm full")
		}
	})
	t.Run("warm_memory full", func(t *testing.T) {
		t.Parallel()
		// Two processes of 210 MB (none measured yet) fit 500 MB; a third does not.
		e := newSpareFake(t, func(c *Config) { c.WarmMemory = 500 * mb })
		mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
		mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
		if e.starting() || e.r.Pool().Spares != 0 {
			t.Fatal("a spare started beyond warm_memory")
		}
	})
	t.Run("counted and stopped first", func(t *testing.T) {
		t.Parallel()
		e := newSpareFake(t, func(c *Config) { c.MaxWarm = 3 })
		mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
		mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
		sp := e.nextSpare(t)
		p := e.r.Pool()
		if p.Warm != 3 || p.Spares != 1 {
			t.Fatalf("pool: %+v", p)
		}
		e.r.mu.Lock()
		mem, est := e.r.memoryOfLocked(nil), e.r.estimateLocked()
		e.r.mu.Unlock()
		if p.Memory != mem || mem < 3*est-1 {
			t.Fatalf("memory %d, the three count %d", p.Memory, 3*est)
		}
		// A returning chat that needs room (another model: not the spare's)
		// stops the spare, not a chat's warm process.
		req := newSession("c")
		req.Model = "other"
		mustOK(t, runTurn(t, e.r, req), "echo: hi c")
		select {
		case <-sp.exited:
		case <-time.After(10 * time.Second):
			t.Fatal("the spare was not the one stopped to make room")
		}
		if w := e.r.Warm(); w["a"] == 0 || w["b"] == 0 || w["c"] == 0 {
			t.Fatalf("warm: %v", w)
		}
	})
}

// A conversation key cannot name the spare's slot.
func TestSpareKeyRefused(t *testing.T) {
	t.Parallel()
	e := newSpareFake(t, nil)
	req := newSession(spareKey(""))
	if _, err := e.r.Run(t.Context(), req); err == nil {
		t.Fatal("a key naming the spare slot was accepted")
	}
}

// Sandboxed, a spare binds one chat's claude state and media: it is started for the
// chat whose new sessions repeated, another chat's new session does not adopt it (it
// would see the first chat's conversations) — late-bound agent tools do not change that
// — and the chat's own next new session does, its claude writing to that chat's state
// directory, its tools bound to that chat.
func TestSpareSandboxedKeyedOnChat(t *testing.T) {
	needBwrap(t)
	ws, data := t.TempDir(), t.TempDir()
	for _, d := range []string{"media/tg/1", "media/tg/2", "state"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o700))
	}
	r, ready, _ := sandboxedSpares(t, ws, data)
	// The agent tools are late-bound (each chat its own MCP config): sandboxed, the
	// spare stays keyed on the chat all the same.
	tools := &recordingTools{dir: t.TempDir(), dropped: make(chan string, 8)}
	chat := func(key, media, name string) Result {
		req := lateSession(tools, key)
		req.MediaDir, req.Prompt = media, "sh:echo x > $CLAUDE_CONFIG_DIR/"+name+" && echo wrote"
		res := runTurn(t, r, req)
		if res.Err != nil || !strings.Contains(res.Text, "wrote") {
			t.Fatalf("%s: %+v %q", name, res.Err, res.Text)
		}
		return res
	}
	chat("x", "tg/1", "x1")
	chat("x", "tg/1", "x2")
	sp := <-ready
	if sp == nil {
		t.Fatal("no spare for chat x")
	}
	if res := chat("y", "tg/2", "y1"); res.Wait.Start == StartSpare || res.PID == sp.pid {
		t.Fatalf("chat y adopted chat x's spare: %q", res.Wait.Start)
	}
	if res := chat("x", "tg/1", "x3"); res.Wait.Start != StartSpare || res.PID != sp.pid {
		t.Fatalf("chat x's next new session: start %q pid %d, the spare %d", res.Wait.Start, res.PID, sp.pid)
	}
	if got := tools.log(); !strings.Contains(got, "bind h1 x") || strings.Contains(got, " y") {
		t.Fatalf("the spare's tools: %s, want bound to chat x only", got)
	}
	for name, key := range map[string]string{"x3": "x", "y1": "y"} {
		if _, err := os.Stat(filepath.Join(data, "runner", "chats", key, name)); err != nil {
			t.Errorf("%s not in chat %s's claude state: %v", name, key, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "runner", "chats", "y", "x3")); err == nil {
		t.Error("chat x's spare wrote into chat y's claude state")
	}
}

// A spare no new session adopted stops after the agent's idle timeout, as an idle warm
// process does.
func TestSpareStopsWhenIdle(t *testing.T) {
	t.Parallel()
	e := newSpareFake(t, func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
	mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
	mustOK(t, runTurn(t, e.r, newSession("b")), "echo: hi b")
	sp := e.nextSpare(t)
	select {
	case <-sp.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle spare was not stopped")
	}
	if p := e.r.Pool(); p.Spares != 0 {
		t.Fatalf("pool: %+v", p)
	}
}

// A spare's start waits for the turn that asked for it to be settled (its reply
// delivered: Turn.Settle), so that it never takes the processor the reply's path
// needs; a turn its caller never settles starts it settleLimit after its end.
func TestSpareStartsOnceTheTurnIsSettled(t *testing.T) {
	t.Parallel()
	e := newSpareFake(t, nil)
	clk := tstimetest.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	e.r.mu.Lock()
	e.r.clock = clk
	e.r.mu.Unlock()
	// unsettled runs a new session's turn to its end without settling it, and
	// returns it once the spare's start waits for it: armed more timers are
	// then armed on the clock (the start's wait, and the idle timer of a
	// process new to the pool).
	unsettled := func(key string, armed int) *Turn {
		t.Helper()
		before := clk.Waiters()
		turn, err := e.r.Run(context.Background(), newSession(key))
		if err != nil {
			t.Fatal(err)
		}
		for range turn.Events() {
		}
		<-turn.Done()
		if !e.starting() {
			t.Fatalf("turn %s: no spare start was decided", key)
		}
		if !clk.BlockUntil(before+armed, 10*time.Second) {
			t.Fatalf("turn %s: the spare's start never waited (%d timers armed, %d before)", key, clk.Waiters(), before)
		}
		select {
		case <-e.ready:
			t.Fatalf("turn %s: a spare was started before the turn was settled", key)
		default:
		}
		return turn
	}
	mustOK(t, runTurn(t, e.r, newSession("a")), "echo: hi a")
	b := unsettled("b", 2)
	if p := e.r.Pool(); p.SparesStarted != 0 {
		t.Fatalf("pool before the turn was settled: %+v", p)
	}
	b.Settle()
	sp := e.nextSpare(t)
	if sp == nil {
		t.Fatal("the spare was given up")
	}
	// c adopts it; its replacement waits for c, whose caller never settles it.
	unsettled("c", 1) // the spare's idle timer was armed already
	clk.Advance(settleLimit)
	if next := e.nextSpare(t); next == nil || next == sp {
		t.Fatal("no new spare after settleLimit")
	}
}
