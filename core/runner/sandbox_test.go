package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/asnobody"
	"github.com/clawhost/clawhost/core/sandbox/helper"
	"github.com/google/uuid"
)

// needBwrap skips a test that needs bubblewrap when it is missing, unless
// CLAWHOST_REQUIRE_CLAUDE=1 (make test) asks for every claude test to run.
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
			t.Fatalf("bwrap not installed (make bubblewrap): %v", err)
		}
		t.Skip("bwrap not installed (make bubblewrap installs Debian's bubblewrap)")
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
		if pp := parentCmdline(t, r.Warm()["k"]); !strings.Contains(pp, helper.Arg) {
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
	u := asnobody.Nobody(t, "give files to another user")
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
