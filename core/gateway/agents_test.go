package gateway

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/turn"
)

// agentsAt runs, in process over the store in dir, two agents: main, and
// ops (its own workspace), which tg:2 is bound to and every chat may
// switch to.
func agentsAt(t *testing.T, dir string) (*Gateway, *recPorts, *scripted, func()) {
	t.Helper()
	opsWS := t.TempDir()
	g, ports, agent, stop := inprocAt(t, dir, func(s *Settings) {
		s.Agents = routes{"tg:2": "ops"}
		s.Switchable = []string{"ops"}
		s.Turn.Agents = map[string]turn.AgentSettings{"ops": {Workspace: opsWS}}
	})
	agent.mu.Lock()
	agent.whole = true // a switch's System line comes first
	agent.mu.Unlock()
	return g, ports, agent, stop
}

// TestAgentSwitch: a chat bound to an agent talks to it; /agent lists the
// agents a chat may use and switches; each agent keeps its own
// conversation of the chat (switching back resumes it), and the switch
// outlives a restart.
func TestAgentSwitch(t *testing.T) {
	dir := t.TempDir()
	g, ports, _, stop := agentsAt(t, dir)
	ctx := context.Background()
	seen1, seen2 := 0, 0
	say := func(chat, text string, seen *int) string {
		t.Helper()
		sendDM(t, ctx, g, chat, text)
		return ports.next(t, chat, seen)
	}
	want := func(got string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(got, p) {
				t.Fatalf("%q lacks %q", got, p)
			}
		}
	}
	want(say("2", "hello ops", &seen2), "re: ", "hello ops")
	if s, err := g.store.Session(ctx, "agent:ops:tg:direct:2"); err != nil || s.Turns != 1 {
		t.Fatalf("the bound chat's session: %+v, %v", s, err)
	}
	say("1", "hi", &seen1)
	mainS, _ := g.store.Session(ctx, "agent:main:tg:direct:1")
	want(say("1", "/agent", &seen1), "Agent: main.", "Available: main, ops.")
	want(say("1", "/agent nope", &seen1), `There is no agent "nope"`)
	want(say("1", "/agent ops", &seen1), "Now talking to agent ops: a new conversation.")
	want(say("1", "to ops", &seen1), "to ops")
	opsS, err := g.store.Session(ctx, "agent:ops:tg:direct:1")
	if err != nil || opsS.Turns != 1 || opsS.ClaudeSessionID == mainS.ClaudeSessionID {
		t.Fatalf("ops's session of the chat: %+v, %v", opsS, err)
	}
	want(say("1", "/agent main", &seen1), "Now talking to agent main: its conversation in this chat goes on.")
	want(say("1", "back", &seen1), "back")
	if s, _ := g.store.Session(ctx, "agent:main:tg:direct:1"); s.Turns != 2 || s.ClaudeSessionID != mainS.ClaudeSessionID {
		t.Fatalf("main's conversation did not go on: %+v (was %s)", s, mainS.ClaudeSessionID)
	}
	want(say("1", "/agent ops", &seen1), "its conversation in this chat goes on")
	stop()

	g, ports, _, _ = agentsAt(t, dir)
	seen1 = 0
	want(say("1", "after the restart", &seen1), "after the restart")
	if s, _ := g.store.Session(ctx, "agent:ops:tg:direct:1"); s.Turns != 2 || s.ClaudeSessionID != opsS.ClaudeSessionID {
		t.Fatalf("after a restart the chat does not talk to ops: %+v", s)
	}
}

// A scheduled run runs on the agent its chat is bound to, or on the one it
// names.
func TestScheduledRunsOnTheirAgent(t *testing.T) {
	g, ports, _, _ := agentsAt(t, t.TempDir())
	ctx := context.Background()
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, r := range []ScheduledRun{
		{Job: "bound", At: at, Chat: "tg:2", Prompt: "to the bound agent"},
		{Job: "named", At: at, Chat: "tg:1", Prompt: "to the named agent", Agent: "ops"},
	} {
		if err := g.Scheduled(ctx, r); err != nil {
			t.Fatal(err)
		}
		seen := 0
		if got := ports.next(t, strings.TrimPrefix(r.Chat, "tg:"), &seen); !strings.Contains(got, r.Prompt) {
			t.Errorf("%s: %q", r.Job, got)
		}
	}
	for _, key := range []string{"agent:ops:tg:direct:2", "agent:ops:tg:direct:1"} {
		if s, err := g.store.Session(ctx, key); err != nil || s.Turns != 1 {
			t.Errorf("session %s: %+v, %v", key, s, err)
		}
	}
}

// TestWorktrees: two chats of an agent with worktrees each commit on their
// own branch in their own worktree of one repository; the default branch
// is untouched; /worktree reset keeps a dirty worktree and makes a clean
// one anew.
func TestWorktrees(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	gitEnv := map[string]string{"GIT_AUTHOR_NAME": "bot", "GIT_AUTHOR_EMAIL": "bot@example.com", "GIT_COMMITTER_NAME": "bot", "GIT_COMMITTER_EMAIL": "bot@example.com"}
	for _, args := range [][]string{{"init", "-q", "-b", "main", repo}, {"-C", repo, "commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", args...)
		for k, v := range gitEnv {
			cmd.Env = append(cmd.Environ(), k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	exe, _ := os.Executable()
	env := map[string]string{fakeclaude.EnvVar: "1"}
	maps.Copy(env, gitEnv)
	e := newEnv(t, envOptions{dir: dir,
		runner: func(c *runner.Config) {
			c.Agents = map[string]runner.Config{"repo": {Command: exe, Env: env, Workspace: repo}}
		},
		settings: func(s *Settings) {
			s.Access.AllowFrom = append(s.Access.AllowFrom, "lo:u2")
			s.Agents = routes{"lo:chat-u1": "repo", "lo:chat-u2": "repo", "lo:chat-owner": "repo"}
			s.Turn.Agents = map[string]turn.AgentSettings{"repo": {Workspace: repo, Worktrees: true}}
		},
	})
	for _, u := range []string{"u1", "u2"} {
		e.post(dm(u, "#sh=echo+"+u+">"+u+".txt&&git+add+"+u+".txt&&git+commit+-qm+from-"+u+"&&pwd"))
		contains(t, e.text("chat-"+u), "sh: "+filepath.Join(repo, ".clawhost/worktrees/lo_direct_"+u))
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, u := range []string{"u1", "u2"} {
		if got := git("log", "--format=%s", "clawhost/lo_direct_"+u); got != "from-"+u+"\nfirst" {
			t.Errorf("branch of %s: %q", u, got)
		}
	}
	if got := git("log", "--format=%s", "main"); got != "first" {
		t.Errorf("the default branch changed: %q", got)
	}
	if st := git("status", "--porcelain"); st != "" {
		t.Errorf("the repository's own status: %q", st)
	}
	e.post(dm("u1", "/agent"))
	contains(t, e.text("chat-u1"), "Branch: clawhost/lo_direct_u1 (this chat's own worktree).")

	idle := func() {
		t.Helper()
		key := sessionkey.Key{Agent: "repo", Chat: "lo:direct:owner"}
		for deadline := time.Now().Add(10 * time.Second); e.gw.queue.Running(key); {
			if time.Now().After(deadline) {
				t.Fatal("the turn did not end")
			}
			runtime.Gosched()
		}
	}
	e.post(dm("owner", "#sh=echo+wip>wip.txt"))
	e.text("chat-owner")
	idle()
	e.post(dm("owner", "/worktree reset"))
	contains(t, e.text("chat-owner"), "has uncommitted changes, so it was kept")
	if _, err := os.Stat(filepath.Join(repo, ".clawhost/worktrees/lo_direct_owner/wip.txt")); err != nil {
		t.Fatal("the dirty worktree's file is gone")
	}
	e.post(dm("owner", "#sh=rm+wip.txt"))
	e.text("chat-owner")
	idle()
	e.post(dm("owner", "/worktree reset"))
	contains(t, e.text("chat-owner"), "A new worktree on clawhost/lo_direct_owner, from the repository's HEAD.")
	e.post(dm("owner", "#sh=git+log+--format=%25s"))
	contains(t, e.text("chat-owner"), "sh: first")
}
