package runner

import (
	"bytes"
	"cmp"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// needBwrap skips a test that needs bubblewrap when it is missing, unless
// CLAWHOST_REQUIRE_CLAUDE=1 (make test) asks for every claude test to run.
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath(bwrapCommand); err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
			t.Fatalf("bwrap not installed (make bubblewrap): %v", err)
		}
		t.Skip("bwrap not installed (make bubblewrap installs Debian's bubblewrap)")
	}
}

// TestBwrapArgs: the mounts in depth order on the sandbox's own empty root
// (a hide outside every bind is left out: nothing is there), so what is
// hidden inside the workspace is not visible;
// at one path a bind beats a hide and a read-only bind beats both; paths
// that do not exist are skipped; a hidden file gets /dev/null; an overlay
// binds another directory in a path's place.
func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	exists := map[string]bool{ // path → is a directory
		"/srv/bot/ws": true, "/srv/bot/ws/media": true, "/srv/bot/ws/media/tg/5": true, "/srv/bot/ws/.claude": true,
		"/srv/bot/data": true, "/srv/bot/data/claude": true, "/srv/bot/data/runner/t/1-1": true, "/srv/bot/data/runner/chats/c": true,
		"/srv/bot/data/claude/.credentials.json": false,
		"/root/.claude":                          true, "/root/.claude.json": false, "/srv/other-ws": true, "/srv/bot/config.hcl": false, "/tmp": true,
		"/dev/shm": true, "/srv/bot": true, "/srv/bot/data/run/agent.sock": false, "/srv/bot/ws/extra": true, "/usr/lib/node_modules": true,
		"/opt/claude/node_modules": true, "/srv/bot/pkg/node_modules": true, "/srv/hidelink": true, "/usr/lib": true, "/opt/ln": true,
	}
	links := map[string]string{ // a path with a link in it → where it leads
		"/opt/claude/node_modules": "/srv/bot/pkg/node_modules", "/srv/bot/pkg/node_modules": "/srv/bot/pkg/node_modules",
		"/srv/hidelink": "/usr/lib", "/usr/lib": "/usr/lib", "/opt/ln": "/srv/bot/data/run",
	}
	fsys := pathInfo{
		stat: func(p string) (bool, bool) { d, ok := exists[p]; return d, ok },
		real: func(p string) string { return cmp.Or(links[p], p) },
	}
	head := "--die-with-parent --unshare-pid --unshare-ipc --dev /dev --proc /proc "
	for _, tc := range []struct {
		name string
		spec sandboxSpec
		want string
	}{
		{"hidden, bound back, read-only, missing", sandboxSpec{
			workspace: "/srv/bot/ws",
			rw:        []string{"/srv/bot/ws", "/srv/bot/data/runner/t/1-1", "/srv/bot/ws/media/tg/5"},
			readOnly:  []string{"/srv/bot/ws/.claude"},
			hide:      []string{"/tmp", "/root/.claude", "/root/.claude.json", "/srv/bot/data", "/srv/other-ws", "/srv/bot/config.hcl", "/srv/missing", "/srv/bot/ws/media"},
		}, "--bind /srv/bot/ws /srv/bot/ws " +
			"--ro-bind /srv/bot/ws/.claude /srv/bot/ws/.claude --tmpfs /srv/bot/ws/media --bind /srv/bot/data/runner/t/1-1 /srv/bot/data/runner/t/1-1 " +
			"--bind /srv/bot/ws/media/tg/5 /srv/bot/ws/media/tg/5 --remount-ro / --chdir /srv/bot/ws --"},
		{"a chat's own state in the config directory's place", sandboxSpec{
			workspace: "/srv/bot/ws",
			readOnly:  []string{"/srv/bot/data/claude/.credentials.json", "/srv/bot/data/claude/settings.json"},
			hide:      []string{"/srv/bot/data"},
			overlays:  []overlay{{"/srv/bot/data/runner/chats/c", "/srv/bot/data/claude"}},
		}, "--bind /srv/bot/data/runner/chats/c /srv/bot/data/claude " +
			"--ro-bind /srv/bot/data/claude/.credentials.json /srv/bot/data/claude/.credentials.json --remount-ro / --chdir /srv/bot/ws --"},
		{"hidden and bound at one path: bound; hidden, bound and read-only: read-only", sandboxSpec{workspace: "/srv/bot/ws",
			hide: []string{"/srv/bot/ws/", "/srv/bot/data", "/srv/bot/data/claude"}, rw: []string{"/srv/bot/ws", "/srv/bot/data/claude"}, readOnly: []string{"/srv/bot/data/claude"}, worktree: "/srv/other-ws"},
			"--bind /srv/bot/ws /srv/bot/ws --ro-bind /srv/bot/data/claude /srv/bot/data/claude --remount-ro / --chdir /srv/other-ws --"},
		// Left out: the hides inside the hidden config directory, /dev/shm
		// (--dev /dev's own is empty), a package outside every hidden tree
		// (read-only already), a writable directory inside the writable
		// workspace. Kept: what is bound back inside a hidden tree, a
		// read-only directory inside a writable one, and a package whose
		// path leads into a hidden tree through a link, or into which a
		// hidden link leads.
		{"needless mounts left out", sandboxSpec{
			workspace: "/srv/bot/ws",
			rw:        []string{"/srv/bot/ws", "/srv/bot/ws/extra"},
			readOnly:  []string{"/srv/bot/ws/.claude", "/srv/bot/data/run/agent.sock", "/usr/lib/node_modules", "/opt/claude/node_modules"},
			hide:      []string{"/dev/shm", "/srv/bot", "/srv/bot/data", "/srv/bot/config.hcl"},
		}, "--ro-bind /opt/claude/node_modules /opt/claude/node_modules --bind /srv/bot/ws /srv/bot/ws --ro-bind /usr/lib/node_modules /usr/lib/node_modules " +
			"--ro-bind /srv/bot/ws/.claude /srv/bot/ws/.claude --ro-bind /srv/bot/data/run/agent.sock /srv/bot/data/run/agent.sock --remount-ro / --chdir /srv/bot/ws --"},
		{"a hide inside a hidden tree that a link leads into", sandboxSpec{workspace: "/srv/bot/ws", readOnly: []string{"/opt/ln"}, hide: []string{"/srv/bot", "/srv/bot/data"}},
			"--ro-bind /opt/ln /opt/ln --tmpfs /srv/bot --tmpfs /srv/bot/data --remount-ro / --chdir /srv/bot/ws --"},
		{"a package a hidden link leads to", sandboxSpec{workspace: "/srv/bot/ws", readOnly: []string{"/usr/lib/node_modules"}, hide: []string{"/srv/hidelink"}},
			"--ro-bind /usr/lib/node_modules /usr/lib/node_modules --remount-ro / --chdir /srv/bot/ws --"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := strings.Join(bwrapArgs(tc.spec, fsys), " "); got != head+tc.want {
				t.Errorf("args\n%s\nwant\n%s", got, head+tc.want)
			}
		})
	}
}

// TestSandboxSpecFor: the policy for each shape of turn — what is
// writable, read-only and hidden (docs/security.md's list).
func TestSandboxSpecFor(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	wt := filepath.Join(ws, ".clawhost", "worktrees", "lo_direct_u1")
	admin := filepath.Join(ws, ".git", "worktrees", "lo_direct_u1")
	must(t, os.MkdirAll(wt, 0o755))
	must(t, os.MkdirAll(admin, 0o755))
	must(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+admin+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(admin, "gitdir"), []byte(filepath.Join(wt, ".git")+"\n"), 0o644))
	c := Config{Workspace: ws, Hide: []string{"/srv/data", "/srv/cfg"}, Expose: []string{"/srv/data/run/agent/agent.sock"}, AddDirs: []string{"/srv/extra"}}
	env := []string{"HOME=/home/bot", "CLAUDE_CONFIG_DIR=/srv/data/claude"}
	has := func(list []string, p string) bool { return slices.Contains(list, p) }
	t.Run("direct chat", func(t *testing.T) {
		c, ws := c, t.TempDir()
		c.Workspace = ws
		c.MCPConfig = []string{"/srv/cfg/mcp.json", "tools.json", `{"mcpServers":{}}`}
		s := c.sandboxSpecFor(sandboxLaunch{tmp: "/srv/data/runner/t/1", env: env, media: "lo_direct_u1", mcp: "/srv/data/run/agent/mcp-1.json", chatState: "/srv/data/runner/chats/k"})
		for _, p := range []string{"/srv/data/runner/t/1", "/srv/extra", ws, filepath.Join(ws, "media", "lo_direct_u1")} {
			if !has(s.rw, p) {
				t.Errorf("%s not writable: %q", p, s.rw)
			}
		}
		for _, p := range []string{"/srv/data/run/agent/agent.sock", "/srv/data/run/agent/mcp-1.json", "/srv/cfg/mcp.json", filepath.Join(ws, ".claude"), "/srv/data/claude/.credentials.json"} {
			if !has(s.readOnly, p) {
				t.Errorf("%s not read-only: %q", p, s.readOnly)
			}
		}
		for _, p := range []string{"/tmp", "/run", "/dev/shm", "/srv/data", "/srv/cfg", "/home/bot/.claude", filepath.Join(ws, "media")} {
			if !has(s.hide, p) {
				t.Errorf("%s not hidden: %q", p, s.hide)
			}
		}
		if has(s.rw, "/srv/data/claude") || len(s.overlays) != 1 || s.overlays[0] != (overlay{"/srv/data/runner/chats/k", "/srv/data/claude"}) {
			t.Errorf("the config directory is not the chat's own: rw %q overlays %v", s.rw, s.overlays)
		}
		if has(s.readOnly, filepath.Join(ws, ".git")) {
			t.Errorf("a repository without worktrees is read-only")
		}
	})
	t.Run("worktree chat", func(t *testing.T) {
		s := c.sandboxSpecFor(sandboxLaunch{tmp: "/srv/data/runner/t/2", env: env, worktree: wt, chatState: "/srv/data/runner/chats/k"})
		git := filepath.Join(ws, ".git")
		for _, p := range []string{wt, filepath.Join(git, "objects"), filepath.Join(git, "refs", "heads", "clawhost"), filepath.Join(git, "logs", "refs", "heads", "clawhost"), admin} {
			if !has(s.rw, p) {
				t.Errorf("%s not writable: %q", p, s.rw)
			}
		}
		if has(s.rw, ws) || has(s.rw, git) {
			t.Errorf("the repository's checkout or .git is writable: %q", s.rw)
		}
		for _, p := range []string{ws, filepath.Join(wt, ".git"), filepath.Join(wt, ".claude"), filepath.Join(admin, "commondir"), filepath.Join(admin, "gitdir"), filepath.Join(admin, "config.worktree")} {
			if !has(s.readOnly, p) {
				t.Errorf("%s not read-only: %q", p, s.readOnly)
			}
		}
		if !has(s.hide, filepath.Dir(wt)) {
			t.Errorf("the other worktrees are not hidden: %q", s.hide)
		}
	})
	t.Run("direct chat of a repository with worktrees", func(t *testing.T) {
		s := c.sandboxSpecFor(sandboxLaunch{tmp: "/srv/data/runner/t/3", env: env})
		if !has(s.readOnly, filepath.Join(ws, ".git")) {
			t.Errorf("the .git of a repository with worktrees is writable: %q", s.readOnly)
		}
	})
	t.Run("a worktree .git pointing elsewhere is not trusted", func(t *testing.T) {
		other := filepath.Join(ws, ".clawhost", "worktrees", "evil")
		must(t, os.MkdirAll(other, 0o755))
		must(t, os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: /srv/data\n"), 0o644))
		s := c.sandboxSpecFor(sandboxLaunch{tmp: "/t", env: env, worktree: other})
		if has(s.rw, "/srv/data") {
			t.Errorf("a worktree's .git file chose a writable path: %q", s.rw)
		}
	})
	t.Run("another worktree's admin directory is not trusted", func(t *testing.T) {
		// Its gitdir file names lo_direct_u1's .git, not this one's.
		other := filepath.Join(ws, ".clawhost", "worktrees", "thief")
		must(t, os.MkdirAll(other, 0o755))
		must(t, os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+admin+"\n"), 0o644))
		s := c.sandboxSpecFor(sandboxLaunch{tmp: "/t", env: env, worktree: other})
		if has(s.rw, admin) {
			t.Errorf("a worktree's .git file made another worktree's admin directory writable: %q", s.rw)
		}
	})
}

// TestClaudeDirs: with a config directory of the bot's own the operator's
// ~/.claude and ~/.claude.json are hidden; without one (settings = "user")
// they are claude's, and the home directory they are in writable.
func TestClaudeDirs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env      []string
		rw, hide string
		name     string
	}{
		{[]string{"HOME=/root", "CLAUDE_CONFIG_DIR=/srv/data/claude"}, "/srv/data/claude", "/root/.claude /root/.claude.json", "own dir"},
		{[]string{"HOME=/root"}, "/root", "", "operator's"},
		{nil, "", "", "no home"},
		{[]string{"HOME=/root", "CLAUDE_CONFIG_DIR=/root/.claude/bot"}, "/root/.claude/bot", "", "inside the operator's"},
		{[]string{"HOME=/root", "CLAUDE_CONFIG_DIR=/x", "CLAUDE_CONFIG_DIR=/y"}, "/y", "/root/.claude /root/.claude.json", "last wins"},
		// HOME twice (the host's, then agent.env's or run_as's): the
		// operator's pair is hidden too.
		{[]string{"HOME=/root", "HOME=/srv/agent", "CLAUDE_CONFIG_DIR=/srv/data/claude"}, "/srv/data/claude",
			"/root/.claude /root/.claude.json /srv/agent/.claude /srv/agent/.claude.json", "both homes"},
		{[]string{"HOME=/root", "HOME=/srv/agent"}, "/srv/agent", "/root/.claude /root/.claude.json", "settings user, another home"},
		{[]string{"HOME=/root", "HOME=/srv/agent", "CLAUDE_CONFIG_DIR=/srv/agent/.claude/bot"}, "/srv/agent/.claude/bot", "/root/.claude /root/.claude.json", "inside the agent's"},
		{[]string{"HOME=/root", "HOME=/root"}, "/root", "", "the same home twice"},
	} {
		rw, hide := claudeDirs(tc.env)
		if strings.Join(rw, " ") != tc.rw || strings.Join(hide, " ") != tc.hide {
			t.Errorf("%s: rw %q hide %q, want %q %q", tc.name, rw, hide, tc.rw, tc.hide)
		}
	}
}

func TestValidMediaDir(t *testing.T) {
	t.Parallel()
	for d, want := range map[string]bool{"": true, "tg/5": true, "a": true, "/etc": false, "..": false, "../x": false, "a/../../b": false, "a//b": false, ".": false} {
		if got := validMediaDir(d); got != want {
			t.Errorf("validMediaDir(%q) = %v, want %v", d, got, want)
		}
	}
}

// TestFakeSandbox runs the fake claude under bubblewrap: the data
// directory, another agent's workspace, the operator's ~/.claude and other
// chats' media are invisible; the workspace, its TMPDIR and its config
// directory (the chat's own state) are writable, /tmp is its own and empty,
// the rest read-only; it has its own pid
// namespace. The warm process is reused, and Abort kills it and the tool it
// started.
func TestFakeSandbox(t *testing.T) {
	t.Run("bwrap per start", func(t *testing.T) { testFakeSandbox(t, false) })
	t.Run("recycled", func(t *testing.T) { testFakeSandbox(t, true) })
}

func testFakeSandbox(t *testing.T, recycled bool) {
	needBwrap(t)
	// Per start: the escape hatch. Recycled: the default.
	t.Setenv(ZygoteEnv, "0")
	want := "bubblewrap (per start: CLAWHOST_SANDBOX_HELPER=0)"
	if recycled {
		t.Setenv(ZygoteEnv, "")
		want = "bubblewrap (recycled)"
	}
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, ".claude"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"operator":"OPERATOR-SETTINGS"}`), 0o600))
	must(t, os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"oauth":"OPERATOR-LOGIN"}`), 0o600))
	t.Setenv("HOME", home)
	data, other := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(data, "clawhost.db"), []byte("DATABASE-CONTENT"), 0o600))
	must(t, os.WriteFile(filepath.Join(other, "notes.md"), []byte("OTHER-AGENT"), 0o600))
	ws := t.TempDir()
	for _, d := range []string{"media/tg/1", "media/tg/2", "state"} {
		must(t, os.MkdirAll(filepath.Join(ws, d), 0o700))
	}
	must(t, os.WriteFile(filepath.Join(ws, "media/tg/1/mine.jpg"), []byte("MY-PHOTO\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "media/tg/2/theirs.jpg"), []byte("THEIR-PHOTO"), 0o600))
	exe, err := os.Executable()
	must(t, err)
	r, err := New(Config{
		Command: exe, Workspace: ws, StateDir: filepath.Join(data, "runner"), ConfigDir: filepath.Join(data, "claude"),
		Env:  map[string]string{"FAKE_CLAUDE": "1", "FAKE_CLAUDE_STATE": filepath.Join(ws, "state")},
		Hide: []string{data, other}, Sandbox: SandboxAuto, Timeout: 10 * time.Second, KillGrace: 300 * time.Millisecond,
	}, nil)
	must(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	r.waitZygotes()
	if r.SandboxState() != want {
		t.Fatalf("sandbox %q", r.SandboxState())
	}
	sid := uuid.NewString()
	script := strings.Join([]string{
		"cat " + filepath.Join(data, "clawhost.db"),
		"cat " + filepath.Join(other, "notes.md"),
		"cat " + filepath.Join(home, ".claude", "settings.json"),
		"cat " + filepath.Join(home, ".claude.json"),
		"cat media/tg/2/theirs.jpg",
		"cat media/tg/1/mine.jpg",
		"echo written > out.txt && cat out.txt",
		"echo x > $CLAUDE_CONFIG_DIR/login && echo config-writable",
		"echo x > $TMPDIR/t && echo tmp-writable",
		"touch " + filepath.Join(home, "planted") + " || echo home-read-only",
		"echo pid $$",
	}, "; ")
	res := runTurn(t, r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "sh:" + script, MediaDir: "tg/1"})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	out := res.Text
	for _, secret := range []string{"DATABASE-CONTENT", "OTHER-AGENT", "OPERATOR-SETTINGS", "OPERATOR-LOGIN", "THEIR-PHOTO"} {
		if strings.Contains(out, secret) {
			t.Errorf("the sandbox shows %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"MY-PHOTO", "written", "config-writable", "tmp-writable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pid 1\n") || !strings.Contains(out, "pid ") {
		t.Errorf("not in its own pid namespace:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, "planted")); err == nil {
		t.Errorf("the home directory was written through")
	}
	// The config directory claude sees is the chat's own.
	if _, err := os.Stat(filepath.Join(data, "runner", "chats", "k", "login")); err != nil {
		t.Errorf("the chat's claude state was not written through: %v", err)
	}
	if _, err := os.Stat(filepath.Join(data, "claude", "login")); err == nil {
		t.Errorf("the chat wrote the shared config directory")
	}

	if recycled {
		// claude's parent is the agent's sandbox helper, not a bubblewrap of its own.
		if pp := parentCmdline(t, r.Warm()["k"]); !strings.Contains(pp, ZygoteArg) {
			t.Errorf("claude's parent is %q, not the sandbox helper", pp)
		}
	}
	// Warm reuse through bwrap: the same process runs the next turn.
	res = runTurn(t, r, TurnRequest{Key: "k", SessionID: sid, Prompt: "again", MediaDir: "tg/1"})
	mustOK(t, res, "echo: again")
	if res.NewProcess {
		t.Error("the second turn started a new process")
	}

	// Abort kills claude and the tool it started, inside the sandbox.
	turn, err := r.Run(context.Background(), TurnRequest{Key: "k", SessionID: sid, Prompt: "hang", MediaDir: "tg/1"})
	must(t, err)
	if ev := afterBegan(turn); ev.Kind != EventText || ev.Text != "partial" {
		t.Fatalf("first event %+v", ev)
	}
	pid := r.Warm()["k"]
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		// Every thread's children: the fake is a Go program, which may
		// start the tool from any of its threads.
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, task := range tasks {
			b, _ := os.ReadFile(task)
			if f := strings.Fields(string(b)); len(f) > 0 {
				child, _ = strconv.Atoi(f[0])
				break
			}
		}
	}
	if child == 0 {
		t.Fatalf("claude (pid %d) started no tool", pid)
	}
	r.Abort("k")
	if res := turn.Wait(); res.Err == nil || res.Err.Kind != KindAborted {
		t.Fatalf("result %+v", res)
	}
	waitGone(t, pid, 2*time.Second)
	waitGone(t, child, 2*time.Second)
}

// parentCmdline is the command line of pid's parent, its arguments joined by spaces.
func parentCmdline(t testing.TB, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	must(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	cmd, err := os.ReadFile("/proc/" + f[1] + "/cmdline")
	must(t, err)
	return strings.ReplaceAll(string(cmd), "\x00", " ")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestProbeSandbox: what Runner.SandboxState says for each way the sandbox
// can be found or not.
func TestProbeSandbox(t *testing.T) {
	failing := t.TempDir()
	sdktest.WriteExecutable(t, filepath.Join(failing, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755)
	real, _ := exec.LookPath(bwrapCommand)
	for _, tc := range []struct {
		name, sandbox, path, want string
	}{
		{"off", SandboxOff, "", "off"},
		{"not installed", SandboxAuto, t.TempDir(), "unavailable (bubblewrap not installed)"},
		{"probe fails", SandboxAuto, failing, "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)"},
		{"works", SandboxAuto, filepath.Dir(real), "bubblewrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "works" && real == "" {
				needBwrap(t)
			}
			// Only the case's directory: /usr/bin may hold the real bwrap.
			t.Setenv("PATH", tc.path)
			if got := probeSandbox(Config{Sandbox: tc.sandbox}).state; got != tc.want {
				t.Errorf("state %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRealNotLoggedIn: the real CLI with a config directory of its own
// that holds no login and no API key fails the turn as auth, and the
// error says where it looked and how to log the bot in.
func TestRealNotLoggedIn(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "claude")
	e := newReal(t, func(c *Config) {
		c.Env["ANTHROPIC_API_KEY"] = "" // empty: claude counts it as missing
		c.ConfigDir = dir
	})
	res := runTurn(t, e.r, TurnRequest{SessionID: uuid.NewString(), NewSession: true, Prompt: "hello"})
	if res.Err == nil || res.Err.Kind != KindAuth {
		t.Fatalf("result %+v", res)
	}
	for _, want := range []string{"Not logged in", dir + " has no credentials and no ANTHROPIC_API_KEY is configured",
		"`CLAUDE_CONFIG_DIR=" + dir + " claude` and type /login"} {
		if !strings.Contains(res.Err.Detail, want) {
			t.Errorf("detail %q lacks %q", res.Err.Detail, want)
		}
	}
	if e.fake.Count() != 0 {
		t.Errorf("claude called the API %d times without credentials", e.fake.Count())
	}
}

// TestShareMedia: with run_as, the session's media directory and the
// attachments in it become claude's user's before a turn; the media root
// stays the host's (0711), a link in the directory is left alone and what
// it points to is not given away.
func TestShareMedia(t *testing.T) {
	t.Parallel()
	u := needNobody(t, "give files to another user")
	ws, outside := t.TempDir(), filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws, "media", "tg_direct_1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	photo := filepath.Join(dir, "a.jpg")
	if err := os.WriteFile(photo, []byte("jpg"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	r := &Runner{cfg: Config{Workspace: ws, RunAs: u}}
	if err := r.shareMedia(&r.cfg, "tg_direct_1"); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) uint32 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	if owner(dir) != u.UID || owner(photo) != u.UID {
		t.Errorf("directory %d, attachment %d, want %d", owner(dir), owner(photo), u.UID)
	}
	if owner(outside) != 0 || owner(filepath.Join(ws, "media")) != 0 {
		t.Error("a link's target or the media root was given away")
	}
	if fi, _ := os.Stat(filepath.Join(ws, "media")); fi.Mode().Perm() != 0o711 {
		t.Errorf("media root %v, want 0711", fi.Mode().Perm())
	}
	if err := (&Runner{}).shareMedia(&Config{Workspace: ws}, "tg_direct_1"); err != nil {
		t.Errorf("without run_as: %v", err)
	}
}

// TestSandboxUnavailable: SandboxState's sentence, for one agent and for
// agents whose sandboxes differ, read back.
func TestSandboxUnavailable(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{
		"bubblewrap":                             "-",
		"off":                                    "-",
		"unavailable (bubblewrap not installed)": "bubblewrap not installed",
		"main: bubblewrap; ops: unavailable (bubblewrap failed: no namespaces)": "bubblewrap failed: no namespaces",
		"main: off; ops: bubblewrap": "-",
	} {
		why, ok := SandboxUnavailable(state)
		if got := map[bool]string{true: why, false: "-"}[ok]; got != want {
			t.Errorf("SandboxUnavailable(%q) = %q, %v; want %q", state, why, ok, want)
		}
	}
}

// TestPruneShowsTheSame: for random mount lists over a small tree (no
// links), every path shows the same with the needless mounts left out as
// with all of them: read-only or writable from the same host path,
// or hidden (an empty directory or file, or absent). A model of bwrap's mounts decides what a path
// shows: the last mount at or above it.
func TestPruneShowsTheSame(t *testing.T) {
	t.Parallel()
	paths := []string{"/a", "/a/b", "/a/b/c", "/a/b/c/d", "/a/c", "/a/c/f", "/b", "/b/a", "/b/a/b", "/c", "/c/f", "/dev/shm"}
	files := map[string]bool{"/a/c/f": true, "/c/f": true}
	fsys := pathInfo{
		stat: func(p string) (bool, bool) { return !files[p], slices.Contains(paths, p) },
		real: func(p string) string { return p },
	}
	// shows is what p shows under ms: "ro:<host path>", "rw:<host path>"
	// or "hidden".
	shows := func(ms []mount, p string) string {
		what := "hidden" // the sandbox's own empty root
		for _, m := range ms {
			if m.path != p && !under(p, m.path) {
				continue
			}
			rel := strings.TrimPrefix(p, m.path)
			switch {
			case m.op == opHide: // an empty directory or file, or absent when pruned
				what = "hidden"
			case m.op == opReadOnly:
				what = "ro:" + p
			default:
				what = "rw:" + cmp.Or(m.src, m.path) + rel
			}
		}
		if p == "/dev/shm" || strings.HasPrefix(p, "/dev/shm/") {
			what = "hidden" // --dev /dev's own, empty
		}
		return what
	}
	rng := rand.New(rand.NewPCG(58, 1))
	pick := func() []string {
		var out []string
		for _, p := range paths {
			if rng.IntN(4) == 0 {
				out = append(out, p)
			}
		}
		return out
	}
	for i := range 5000 {
		s := sandboxSpec{workspace: "/a", hide: pick(), rw: pick(), readOnly: pick()}
		if rng.IntN(3) == 0 {
			s.overlays = []overlay{{paths[rng.IntN(len(paths))], paths[rng.IntN(len(paths))]}}
		}
		all := mountOrder(s, fsys)
		kept := prune(all, fsys)
		for _, p := range paths {
			if a, k := shows(all, p), shows(kept, p); a != k {
				t.Fatalf("case %d: %s shows %s with every mount, %s pruned\nspec %+v\nall  %v\nkept %v", i, p, a, k, s, all, kept)
			}
		}
	}
}

// sandboxCmd is exec.Command(exe, argv...) for the bwrap argv sandboxed returns: the
// syscall filter on descriptor 3, as spawn starts it.
func sandboxCmd(tb testing.TB, exe string, argv ...string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command(exe, argv...)
	f, err := confine.FilterFile()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	cmd.ExtraFiles = []*os.File{f}
	return cmd
}
