package sandbox

import (
	"cmp"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
		spec Spec
		want string
	}{
		{"hidden, bound back, read-only, missing", Spec{
			workspace: "/srv/bot/ws",
			rw:        []string{"/srv/bot/ws", "/srv/bot/data/runner/t/1-1", "/srv/bot/ws/media/tg/5"},
			readOnly:  []string{"/srv/bot/ws/.claude"},
			hide:      []string{"/tmp", "/root/.claude", "/root/.claude.json", "/srv/bot/data", "/srv/other-ws", "/srv/bot/config.hcl", "/srv/missing", "/srv/bot/ws/media"},
		}, "--bind /srv/bot/ws /srv/bot/ws " +
			"--ro-bind /srv/bot/ws/.claude /srv/bot/ws/.claude --tmpfs /srv/bot/ws/media --bind /srv/bot/data/runner/t/1-1 /srv/bot/data/runner/t/1-1 " +
			"--bind /srv/bot/ws/media/tg/5 /srv/bot/ws/media/tg/5 --remount-ro / --chdir /srv/bot/ws --"},
		{"a chat's own state in the config directory's place", Spec{
			workspace: "/srv/bot/ws",
			readOnly:  []string{"/srv/bot/data/claude/.credentials.json", "/srv/bot/data/claude/settings.json"},
			hide:      []string{"/srv/bot/data"},
			overlays:  []overlay{{"/srv/bot/data/runner/chats/c", "/srv/bot/data/claude"}},
		}, "--bind /srv/bot/data/runner/chats/c /srv/bot/data/claude " +
			"--ro-bind /srv/bot/data/claude/.credentials.json /srv/bot/data/claude/.credentials.json --remount-ro / --chdir /srv/bot/ws --"},
		{"hidden and bound at one path: bound; hidden, bound and read-only: read-only", Spec{workspace: "/srv/bot/ws",
			hide: []string{"/srv/bot/ws/", "/srv/bot/data", "/srv/bot/data/claude"}, rw: []string{"/srv/bot/ws", "/srv/bot/data/claude"}, readOnly: []string{"/srv/bot/data/claude"}, worktree: "/srv/other-ws"},
			"--bind /srv/bot/ws /srv/bot/ws --ro-bind /srv/bot/data/claude /srv/bot/data/claude --remount-ro / --chdir /srv/other-ws --"},
		// Left out: the hides inside the hidden config directory, /dev/shm
		// (--dev /dev's own is empty), a package outside every hidden tree
		// (read-only already), a writable directory inside the writable
		// workspace. Kept: what is bound back inside a hidden tree, a
		// read-only directory inside a writable one, and a package whose
		// path leads into a hidden tree through a link, or into which a
		// hidden link leads.
		{"needless mounts left out", Spec{
			workspace: "/srv/bot/ws",
			rw:        []string{"/srv/bot/ws", "/srv/bot/ws/extra"},
			readOnly:  []string{"/srv/bot/ws/.claude", "/srv/bot/data/run/agent.sock", "/usr/lib/node_modules", "/opt/claude/node_modules"},
			hide:      []string{"/dev/shm", "/srv/bot", "/srv/bot/data", "/srv/bot/config.hcl"},
		}, "--ro-bind /opt/claude/node_modules /opt/claude/node_modules --bind /srv/bot/ws /srv/bot/ws --ro-bind /usr/lib/node_modules /usr/lib/node_modules " +
			"--ro-bind /srv/bot/ws/.claude /srv/bot/ws/.claude --ro-bind /srv/bot/data/run/agent.sock /srv/bot/data/run/agent.sock --remount-ro / --chdir /srv/bot/ws --"},
		{"a hide inside a hidden tree that a link leads into", Spec{workspace: "/srv/bot/ws", readOnly: []string{"/opt/ln"}, hide: []string{"/srv/bot", "/srv/bot/data"}},
			"--ro-bind /opt/ln /opt/ln --tmpfs /srv/bot --tmpfs /srv/bot/data --remount-ro / --chdir /srv/bot/ws --"},
		{"a package a hidden link leads to", Spec{workspace: "/srv/bot/ws", readOnly: []string{"/usr/lib/node_modules"}, hide: []string{"/srv/hidelink"}},
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
	c := Policy{Workspace: ws, Hide: []string{"/srv/data", "/srv/cfg"}, Expose: []string{"/srv/data/run/agent/agent.sock"}, AddDirs: []string{"/srv/extra"}}
	env := []string{"HOME=/home/bot", "CLAUDE_CONFIG_DIR=/srv/data/claude"}
	has := func(list []string, p string) bool { return slices.Contains(list, p) }
	t.Run("direct chat", func(t *testing.T) {
		c, ws := c, t.TempDir()
		c.Workspace = ws
		c.MCPConfig = []string{"/srv/cfg/mcp.json", "tools.json", `{"mcpServers":{}}`}
		s := SpecFor(c, Launch{Tmp: "/srv/data/runner/t/1", Env: env, Media: "lo_direct_u1", MCP: "/srv/data/run/agent/mcp-1.json", ChatState: "/srv/data/runner/chats/k"})
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
		s := SpecFor(c, Launch{Tmp: "/srv/data/runner/t/2", Env: env, Worktree: wt, ChatState: "/srv/data/runner/chats/k"})
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
		s := SpecFor(c, Launch{Tmp: "/srv/data/runner/t/3", Env: env})
		if !has(s.readOnly, filepath.Join(ws, ".git")) {
			t.Errorf("the .git of a repository with worktrees is writable: %q", s.readOnly)
		}
	})
	t.Run("a worktree .git pointing elsewhere is not trusted", func(t *testing.T) {
		other := filepath.Join(ws, ".clawhost", "worktrees", "evil")
		must(t, os.MkdirAll(other, 0o755))
		must(t, os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: /srv/data\n"), 0o644))
		s := SpecFor(c, Launch{Tmp: "/t", Env: env, Worktree: other})
		if has(s.rw, "/srv/data") {
			t.Errorf("a worktree's .git file chose a writable path: %q", s.rw)
		}
	})
	t.Run("another worktree's admin directory is not trusted", func(t *testing.T) {
		// Its gitdir file names lo_direct_u1's .git, not this one's.
		other := filepath.Join(ws, ".clawhost", "worktrees", "thief")
		must(t, os.MkdirAll(other, 0o755))
		must(t, os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+admin+"\n"), 0o644))
		s := SpecFor(c, Launch{Tmp: "/t", Env: env, Worktree: other})
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
		{"off", Off, "", "off"},
		{"not installed", Auto, t.TempDir(), "unavailable (bubblewrap not installed)"},
		{"probe fails", Auto, failing, "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)"},
		{"works", Auto, filepath.Dir(real), "bubblewrap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "works" && real == "" {
				needBwrap(t)
			}
			// Only the case's directory: /usr/bin may hold the real bwrap.
			t.Setenv("PATH", tc.path)
			if got := Probe(tc.sandbox, nil).State; got != tc.want {
				t.Errorf("state %q, want %q", got, tc.want)
			}
		})
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
		s := Spec{workspace: "/a", hide: pick(), rw: pick(), readOnly: pick()}
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
