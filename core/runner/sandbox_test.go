package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/runas"
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

// TestBwrapArgs: the mounts in depth order, so what is bound back inside a
// hidden tree is visible and what is hidden inside the workspace is not;
// paths that do not exist are skipped; a hidden file gets /dev/null.
func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	exists := map[string]bool{ // path → is a directory
		"/srv/bot/ws": true, "/srv/bot/ws/media": true, "/srv/bot/ws/media/tg/5": true, "/srv/bot/ws/.claude": true,
		"/srv/bot/data": true, "/srv/bot/data/claude": true, "/srv/bot/data/runner/t/1-1": true,
		"/root/.claude": true, "/root/.claude.json": false, "/srv/other-ws": true, "/srv/bot/config.hcl": false,
		"/srv/bot/ws/.clawhost/worktrees": true, "/srv/bot/ws/.clawhost/worktrees/tg_group_-1": true,
	}
	stat := func(p string) (bool, bool) { d, ok := exists[p]; return d, ok }
	head := "--die-with-parent --unshare-pid --ro-bind / / --dev /dev --proc /proc "
	for _, tc := range []struct {
		name string
		spec sandboxSpec
		want string
	}{
		{"bot's own config dir", sandboxSpec{
			workspace: "/srv/bot/ws", tmpdir: "/srv/bot/data/runner/t/1-1",
			rw:       []string{"/srv/bot/data/claude"},
			readOnly: []string{"/srv/bot/ws/.claude"},
			hide:     []string{"/root/.claude", "/root/.claude.json", "/srv/bot/data", "/srv/other-ws", "/srv/bot/config.hcl", "/srv/missing"},
			mediaDir: "tg/5",
		}, "--tmpfs /root/.claude --ro-bind /dev/null /root/.claude.json --tmpfs /srv/other-ws " +
			"--ro-bind /dev/null /srv/bot/config.hcl --tmpfs /srv/bot/data --bind /srv/bot/ws /srv/bot/ws " +
			"--bind /srv/bot/data/claude /srv/bot/data/claude --ro-bind /srv/bot/ws/.claude /srv/bot/ws/.claude " +
			"--tmpfs /srv/bot/ws/media --bind /srv/bot/data/runner/t/1-1 /srv/bot/data/runner/t/1-1 " +
			"--bind /srv/bot/ws/media/tg/5 /srv/bot/ws/media/tg/5 --chdir /srv/bot/ws --"},
		{"no media of its own", sandboxSpec{workspace: "/srv/bot/ws", tmpdir: "/srv/bot/data/runner/t/1-1", hide: []string{"/srv/bot/data"}},
			"--tmpfs /srv/bot/data --bind /srv/bot/ws /srv/bot/ws --tmpfs /srv/bot/ws/media " +
				"--bind /srv/bot/data/runner/t/1-1 /srv/bot/data/runner/t/1-1 --chdir /srv/bot/ws --"},
		{"a chat's worktree: the others hidden, claude in it", sandboxSpec{workspace: "/srv/bot/ws", worktree: "/srv/bot/ws/.clawhost/worktrees/tg_group_-1"},
			"--bind /srv/bot/ws /srv/bot/ws --tmpfs /srv/bot/ws/media --tmpfs /srv/bot/ws/.clawhost/worktrees " +
				"--bind /srv/bot/ws/.clawhost/worktrees/tg_group_-1 /srv/bot/ws/.clawhost/worktrees/tg_group_-1 " +
				"--chdir /srv/bot/ws/.clawhost/worktrees/tg_group_-1 --"},
		{"hidden and bound at one path: bound", sandboxSpec{workspace: "/srv/bot/ws", hide: []string{"/srv/bot/ws/"}},
			"--tmpfs /srv/bot/ws --bind /srv/bot/ws /srv/bot/ws --tmpfs /srv/bot/ws/media --chdir /srv/bot/ws --"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := strings.Join(bwrapArgs(tc.spec, stat), " "); got != head+tc.want {
				t.Errorf("args\n%s\nwant\n%s", got, head+tc.want)
			}
		})
	}
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
// directory are writable, the rest read-only; it has its own pid
// namespace. The warm process is reused, and Abort kills it and the tool it
// started.
func TestFakeSandbox(t *testing.T) {
	needBwrap(t)
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
	if r.SandboxState() != "bubblewrap" {
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
	for _, want := range []string{"MY-PHOTO", "written", "config-writable", "tmp-writable", "home-read-only"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pid 1\n") || !strings.Contains(out, "pid ") {
		t.Errorf("not in its own pid namespace:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(data, "claude", "login")); err != nil {
		t.Errorf("the config directory was not written through: %v", err)
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
	if ev := <-turn.Events(); ev.Kind != EventText || ev.Text != "partial" {
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
	must(t, os.WriteFile(filepath.Join(failing, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755))
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
	if os.Geteuid() != 0 {
		t.Skip("giving files to another user needs root")
	}
	t.Parallel()
	u, err := runas.Lookup("nobody")
	if err != nil {
		t.Skip(err)
	}
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
