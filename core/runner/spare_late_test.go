package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingTools is a LateTools fake shared by every request of a test: it records the
// calls in order; Bind, for the chat its request is bound to (chatTools), writes the
// chat to <dir>/bound so the fake claude's first prompt can show it was bound before.
type recordingTools struct {
	dir     string
	mu      sync.Mutex
	calls   []string
	made    int
	bindErr error
	dropped chan string
}

func (f *recordingTools) process(agent string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.made++
	h := fmt.Sprintf("h%d", f.made)
	f.calls = append(f.calls, "process "+agent+" "+h)
	return `{"mcpServers":{},"process":"` + h + `"}`, h, nil
}

func (f *recordingTools) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.calls, "; ")
}

// chatTools is the LateTools of one chat's requests.
type chatTools struct {
	f    *recordingTools
	chat string
}

func (c chatTools) Process(agent string) (string, string, error) { return c.f.process(agent) }

func (c chatTools) Bind(h string) error {
	c.f.mu.Lock()
	defer c.f.mu.Unlock()
	c.f.calls = append(c.f.calls, "bind "+h+" "+c.chat)
	if c.f.bindErr != nil {
		return c.f.bindErr
	}
	return os.WriteFile(filepath.Join(c.f.dir, "bound"), []byte(c.chat), 0o600)
}

func (c chatTools) Drop(h string) {
	c.f.mu.Lock()
	c.f.calls = append(c.f.calls, "drop "+h)
	c.f.mu.Unlock()
	c.f.dropped <- h
}

// lateSpare is a runner with spares after two new chats with late-bound agent tools (f
// records them), and the spare they left.
func lateSpare(t *testing.T) (*spareEnv, *recordingTools, *proc) {
	t.Helper()
	e := newSpareFake(t, nil)
	f := &recordingTools{dir: t.TempDir(), dropped: make(chan string, 8)}
	mustOK(t, runTurn(t, e.r, lateSession(f, "a")), "echo: hi a")
	mustOK(t, runTurn(t, e.r, lateSession(f, "b")), "echo: hi b")
	return e, f, e.nextSpare(t)
}

// lateSession is a new session of chat key with its own per-chat MCP config and late
// tools.
func lateSession(f *recordingTools, key string) TurnRequest {
	req := newSession(key)
	req.MCPConfig, req.Tools = `{"mcpServers":{},"chat":"`+key+`"}`, []string{"mcp__clawhost__schedule_message"}
	req.LateTools = chatTools{f: f, chat: key}
	return req
}

// With late-bound agent tools, each chat's MCP config is no part of the spare's
// identity: a spare is started after two new chats (their configs differ) with a config
// of its own, a brand-new chat adopts it — bound to that chat before its first prompt
// reaches claude (the prompt reads what the binding wrote) — its next turn (the chat's
// own config) runs on the same process, and the spare's tools are dropped when it ends.
func TestSpareLateToolsAdoptedByNewChat(t *testing.T) {
	t.Parallel()
	e, f, sp := lateSpare(t)
	if sp == nil || sp.late == nil {
		t.Fatalf("no spare with its own tools after two new chats (calls: %s)", f.log())
	}
	if got := strings.Join(e.starts(t), "\n"); !strings.Contains(got, `"process":"h1"`) {
		t.Fatalf("the spare was not started with its own MCP config:\n%s", got)
	}
	if f.log() != "process  h1" {
		t.Fatalf("calls before any adoption: %s", f.log())
	}
	req := lateSession(f, "c")
	req.Prompt = "sh:cat " + filepath.Join(f.dir, "bound")
	res := runTurn(t, e.r, req)
	if res.Err != nil || res.Wait.Start != StartSpare || res.PID != sp.pid {
		t.Fatalf("the new chat: %v start %q pid %d, the spare %d", res.Err, res.Wait.Start, res.PID, sp.pid)
	}
	if !strings.Contains(res.Text, "c") {
		t.Fatalf("the first prompt ran before the binding: %q", res.Text)
	}
	if !strings.HasPrefix(f.log(), "process  h1; bind h1 c") {
		t.Fatalf("calls: %s", f.log())
	}
	follow := lateSession(f, "c")
	follow.NewSession, follow.AdoptSpare, follow.SessionID, follow.Prompt = false, false, res.SessionID, "again"
	if res := runTurn(t, e.r, follow); res.Err != nil || res.Wait.Start != StartWarm || res.PID != sp.pid {
		t.Fatalf("the chat's next turn: %v start %q pid %d, want warm on %d", res.Err, res.Wait.Start, res.PID, sp.pid)
	}
	next := e.nextSpare(t) // the replacement, with a config of its own again
	if next == nil || next.late == nil || next.late.handle == "h1" {
		t.Fatalf("replacement spare %+v", next)
	}
	// The adopted process ends (a reload): its tools are dropped.
	cfg := e.r.Config()
	cfg.Model = "changed"
	if err := e.r.Update(cfg); err != nil {
		t.Fatal(err)
	}
	e.r.Stop("c")
	for want := map[string]bool{"h1": true, next.late.handle: true}; len(want) > 0; {
		select {
		case h := <-f.dropped:
			delete(want, h)
		case <-time.After(10 * time.Second):
			t.Fatalf("not dropped: %v (calls %s)", want, f.log())
		}
	}
}

// A spare whose tools cannot be bound to the adopting chat (its process's token is gone)
// serves nobody: the new session starts claude of its own, and the spare is stopped, its
// tools dropped.
func TestSpareLateToolsBindFails(t *testing.T) {
	t.Parallel()
	e, f, sp := lateSpare(t)
	f.mu.Lock()
	f.bindErr = errors.New("no such process")
	f.mu.Unlock()
	req := lateSession(f, "c")
	res := runTurn(t, e.r, req)
	mustOK(t, res, "echo: hi c")
	if res.Wait.Start == StartSpare || res.PID == sp.pid || res.SessionID != req.SessionID {
		t.Fatalf("an unbound spare served the chat: start %q pid %d", res.Wait.Start, res.PID)
	}
	// The operator is told (the status page, clawhost status): Pool.SpareError.
	if p := e.r.Pool(); !strings.Contains(p.SpareError, "no such process") {
		t.Fatalf("the failed adoption is not the pool's SpareError: %+v", p)
	}
	select {
	case h := <-f.dropped:
		if h != sp.late.handle {
			t.Fatalf("dropped %s, want the spare's %s", h, sp.late.handle)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the unbound spare's tools were not dropped: %s", f.log())
	}
	<-sp.exited
	// The next spare started clears it.
	if next := e.nextSpare(t); next == nil || e.r.Pool().SpareError != "" {
		t.Fatalf("after a spare started again: %+v", e.r.Pool())
	}
}
