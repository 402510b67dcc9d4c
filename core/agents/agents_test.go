package agents

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
	"github.com/clawhost/clawhost/sdk/channel"
)

// binds is a Bindings over "<instance>:<chat>" entries; others are main's.
type binds map[string]string

func (b binds) Resolve(instance, chat, _ string) (string, bool) {
	if a, ok := b[instance+":"+chat]; ok {
		return a, true
	}
	return "main", false
}

// fixture is Agents over a real store in a temporary directory, with
// recording Running and Stop.
type fixture struct {
	a       *Agents
	db      *sqlite.DB
	mu      sync.Mutex
	set     Settings
	ws      map[string]Workspace
	running map[sessionkey.Key]bool
	stopped []sessionkey.Key
}

func newFixture(t *testing.T, set Settings, ws map[string]Workspace) *fixture {
	t.Helper()
	db := sqlitetest.Open(t, t.TempDir(), sqlite.Options{Synchronous: "NORMAL"})
	f := &fixture{db: db, set: set, ws: ws, running: map[sessionkey.Key]bool{}}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f.a = New(Options{Store: db, Meta: session.NewCache(16), Now: func() time.Time { return now },
		Settings:  func() Settings { f.mu.Lock(); defer f.mu.Unlock(); return f.set },
		Workspace: func(agent string) Workspace { return f.ws[agent] },
		Running:   func(key sessionkey.Key) bool { f.mu.Lock(); defer f.mu.Unlock(); return f.running[key] },
		Stop:      func(key sessionkey.Key) { f.mu.Lock(); defer f.mu.Unlock(); f.stopped = append(f.stopped, key) },
	})
	return f
}

func dm(id string) *message.Message {
	return &message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatDirect, ChatID: id, Sender: channel.Sender{ID: id}, From: "tg:" + id}
}

func TestBoundKey(t *testing.T) {
	t.Parallel()
	set := Settings{Bindings: binds{"tg:2": "ops"}}
	for _, c := range []struct {
		m    *message.Message
		want string
	}{
		{dm("1"), "agent:main:tg:direct:1"},
		{dm("2"), "agent:ops:tg:direct:2"},
		{&message.Message{Instance: "tg", Channel: "telegram", ChatType: channel.ChatGroup, ChatID: "-5", ThreadID: "7", Sender: channel.Sender{ID: "1"}}, "agent:main:tg:group:-5:thread:7"},
	} {
		if got := BoundKey(set, c.m).String(); got != c.want {
			t.Errorf("BoundKey(%s) = %q, want %q", c.m.ChatID, got, c.want)
		}
	}
	if got := BoundKey(Settings{}, dm("1")).String(); got != "agent:main:tg:direct:1" {
		t.Errorf("without bindings: %q", got)
	}
}

// TestSwitch: a chat lists its bound agent first, then the switchable
// ones; a switch is kept in the bound session's metadata, tells the agent
// taking over, and says whether that agent's conversation goes on; an
// agent the chat may not use is refused; switching back to the bound agent
// clears the switch.
func TestSwitch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Settings{Bindings: binds{"tg:2": "ops"}, Switchable: []string{"ops", "research"}}, nil)
	m := dm("1")
	if choices, active := f.a.Choices(ctx, m); !slices.Equal(choices, []string{"main", "ops", "research"}) || active != "main" {
		t.Fatalf("choices %q, active %q", choices, active)
	}
	if choices, active := f.a.Choices(ctx, dm("2")); !slices.Equal(choices, []string{"ops", "research"}) || active != "ops" {
		t.Fatalf("the bound chat's choices %q, active %q", choices, active)
	}
	if _, err := f.a.Switch(ctx, m, "nope"); !errors.Is(err, ErrNoSuchAgent) {
		t.Fatalf("an unknown agent: %v", err)
	}
	resumed, err := f.a.Switch(ctx, m, "ops")
	if err != nil || resumed {
		t.Fatalf("switch to ops: %v, resumed %v", err, resumed)
	}
	if key := f.a.Key(ctx, f.set, m).String(); key != "agent:ops:tg:direct:1" {
		t.Errorf("key after the switch %q", key)
	}
	ops, err := f.db.Session(ctx, "agent:ops:tg:direct:1")
	if err != nil {
		t.Fatal(err)
	}
	if ev := session.NewCache(4).Of(ops).Events; len(ev) != 1 || !strings.Contains(ev[0].Text, `from agent "main" with /agent`) {
		t.Errorf("ops was told %+v", ev)
	}
	// An agent taken out of agent.switchable no longer serves the chat.
	if key := f.a.Key(ctx, Settings{Switchable: []string{"research"}}, m).String(); key != "agent:main:tg:direct:1" {
		t.Errorf("key with ops not switchable %q", key)
	}
	// Main has a conversation in the chat: switching back resumes it.
	if _, err := f.db.UpdateSession(ctx, "agent:main:tg:direct:1", func(s *store.Session, found bool) error {
		s.Key, s.ClaudeSessionID = "agent:main:tg:direct:1", "c-main"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if resumed, err := f.a.Switch(ctx, m, "main"); err != nil || !resumed {
		t.Fatalf("switch back: %v, resumed %v", err, resumed)
	}
	if key := f.a.Key(ctx, f.set, m).String(); key != "agent:main:tg:direct:1" {
		t.Errorf("key after switching back %q", key)
	}
	// A switch to the agent already serving is no change: nobody is told.
	if _, err := f.a.Switch(ctx, m, "main"); err != nil {
		t.Fatal(err)
	}
	mainS, _ := f.db.Session(ctx, "agent:main:tg:direct:1")
	if ev := session.NewCache(4).Of(mainS).Events; len(ev) != 1 {
		t.Errorf("main was told %d times, want once (the first switch back)", len(ev))
	}
}

// TestWorktree: an agent with worktrees gives each chat its own; Dir is
// the worktree (or the workspace without worktrees); a reset is refused
// while a reply runs, and stops the chat's warm process when done.
func TestWorktree(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	repo := filepath.Join(t.TempDir(), "repo")
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo}, {"-C", repo, "-c", "user.name=bot", "-c", "user.email=bot@example.com", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	plain := t.TempDir()
	f := newFixture(t, Settings{Bindings: binds{"tg:1": "repo"}}, map[string]Workspace{"repo": {Dir: repo, Worktrees: true}, "main": {Dir: plain}})
	w, key, ok := f.a.Worktree(ctx, dm("1"))
	if !ok || key.String() != "agent:repo:tg:direct:1" || w.Branch != "clawhost/tg_direct_1" || w.Path != filepath.Join(repo, ".clawhost/worktrees/tg_direct_1") {
		t.Fatalf("worktree %+v, %q, %v", w, key, ok)
	}
	if dir, branch := f.a.Dir(key); dir != w.Path || branch != w.Branch {
		t.Errorf("Dir(%s) = %q, %q", key, dir, branch)
	}
	if dir, branch := f.a.Dir(sessionkey.Key{Agent: "main", Chat: "tg:direct:2"}); dir != plain || branch != "" {
		t.Errorf("Dir without worktrees = %q, %q", dir, branch)
	}
	if _, _, err := f.a.ResetWorktree(ctx, dm("2")); !errors.Is(err, ErrNoWorktree) {
		t.Errorf("reset without worktrees: %v", err)
	}
	f.running[key] = true
	if _, _, err := f.a.ResetWorktree(ctx, dm("1")); !errors.Is(err, ErrTurnRunning) {
		t.Errorf("reset while a reply runs: %v", err)
	}
	f.running[key] = false
	if w, _, err := f.a.ResetWorktree(ctx, dm("1")); err != nil || w.Branch != "clawhost/tg_direct_1" {
		t.Fatalf("reset: %+v, %v", w, err)
	}
	if !slices.Equal(f.stopped, []sessionkey.Key{key}) {
		t.Errorf("stopped %q, want the chat's process", f.stopped)
	}
}
