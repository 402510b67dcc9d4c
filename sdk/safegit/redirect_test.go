package safegit_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/safegit"
)

// gitIn runs git args in dir with the clean environment of a test (no
// plants of its own), failing the test when git fails.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Env = safegit.Env(os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// committed makes a repository at dir with one commit whose subject is
// subject.
func committed(t *testing.T, dir, subject string) {
	t.Helper()
	gitIn(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(subject+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", subject)
}

// envOnly is git with Env alone, without the Runner's overrides: the
// environment's GIT_ALLOW_PROTOCOL is what keeps ext:: out.
func envOnly(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = safegit.Env(os.Getenv("PATH"))
	return cmd.Output()
}

// TestExtPushURL is finding 2 of issue 76: a repository that allows the
// ext transport (protocol.ext.allow, which outranks protocol.allow) and
// gives the push target a pushurl of ext::<command> makes a push run the
// command. The environment's GIT_ALLOW_PROTOCOL outranks every file, so
// the command never runs, whatever the target's scheme, with Env alone
// too; a naive git runs it (the plant is live).
func TestExtPushURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, target string
	}{
		{"file", "file://"},
		{"ssh", "ssh://git.example.invalid/project.git"},
		{"https", "https://git.example.invalid/project.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, g := range []gitCase{{"naive", naive, true}, {"env", envOnly, false}, {"safegit", safe, false}} {
				h := NewHostile(t)
				target := tc.target
				if target == "file://" {
					target += h.Bare
				}
				marker := filepath.Join(h.Markers, "ext")
				gitIn(t, h.Dir, "config", "protocol.ext.allow", "always")
				gitIn(t, h.Dir, "config", "remote."+target+".pushurl", "ext::sh -c touch% "+marker)
				_, err := g.git(ctx, h.Dir, "push", "--", target, "HEAD:refs/heads/main")
				if _, serr := os.Stat(marker); (serr == nil) != g.runs {
					t.Errorf("%s: the ext:: pushurl ran: %v, want %v (push: %v)", g.name, serr == nil, g.runs, err)
				}
				if !g.runs && err == nil {
					t.Errorf("%s: the push to an ext:: pushurl succeeded", g.name)
				}
			}
		})
	}
}

// TestRedirects: every key that sends a push to the target somewhere else
// is reported — the target's own remote section (pushurl, url,
// receivepack, vcs …), URL rewrites, a legacy remotes or branches file —
// and nothing for a repository without them.
func TestRedirects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		target string
		key    string // a configuration key set to "x"; "" none
		file   string // a file written under .git; "" none
		want   string // in what Redirects reports; "" nothing
	}{
		{name: "clean", target: "file:///srv/project.git"},
		{name: "another remote", target: "file:///srv/project.git", key: "remote.origin.pushurl"},
		{name: "pushurl", target: "file:///srv/project.git", key: "remote.file:///srv/project.git.pushurl", want: "remote.file:///srv/project.git.pushurl"},
		{name: "url of a path", target: "/srv/project.git", key: "remote./srv/project.git.url", want: "remote./srv/project.git.url"},
		{name: "receivepack", target: "/srv/project.git", key: "remote./srv/project.git.receivepack", want: "receivepack"},
		{name: "vcs", target: "ssh://h/p.git", key: "remote.ssh://h/p.git.vcs", want: "vcs"},
		{name: "insteadOf", target: "/srv/project.git", key: "url.ext::sh.insteadOf", want: "url.ext::sh.insteadof"},
		{name: "pushInsteadOf", target: "/srv/project.git", key: "url./tmp/x.pushInsteadOf", want: "pushinsteadof"},
		{name: "remotes file", target: "backup", file: "remotes/backup", want: "remotes/backup"},
		{name: "branches file", target: "backup", file: "branches/backup", want: "branches/backup"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "repo")
			committed(t, dir, "first")
			if tc.key != "" {
				gitIn(t, dir, "config", tc.key, "x")
			}
			if tc.file != "" {
				p := filepath.Join(dir, ".git", tc.file)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("URL: ext::sh\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := safegit.Runner{Dir: dir}.Redirects(ctx, tc.target)
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.want == "" && len(got) > 0:
				t.Errorf("Redirects = %v, want none", got)
			case tc.want != "" && !strings.Contains(strings.Join(got, " "), tc.want):
				t.Errorf("Redirects = %v, want %q among them", got, tc.want)
			}
		})
	}
}

// TestGitFileRedirect is finding 3 of issue 76: a chat that replaces its
// workspace's .git by a file naming another agent's repository (or a
// symbolic link to it) would have the plugin read and write that
// repository. A .git file is followed only to a worktree's admin
// directory <repo>/.git/worktrees/<name> that names the directory back;
// the naive git follows all of them (the plant is live).
func TestGitFileRedirect(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	committed(t, a, "a's own")
	committed(t, b, "b's private")
	bwt := filepath.Join(b, ".clawhost", "worktrees", "x")
	gitIn(t, b, "worktree", "add", "-q", "-b", "clawhost/x", bwt, "HEAD")
	gitIn(t, b, "commit", "-q", "--allow-empty", "-m", "b's private too")
	// A legitimate worktree of a's own, to be accepted.
	awt := filepath.Join(a, ".clawhost", "worktrees", "y")
	gitIn(t, a, "worktree", "add", "-q", "-b", "clawhost/y", awt, "HEAD")
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, dotgit string)
	}{
		{"gitdir to b's .git", func(t *testing.T, dotgit string) { writeFile(t, dotgit, "gitdir: "+filepath.Join(b, ".git")+"\n") }},
		{"gitdir to b's worktree admin", func(t *testing.T, dotgit string) {
			writeFile(t, dotgit, "gitdir: "+filepath.Join(b, ".git", "worktrees", "x")+"\n")
		}},
		// Relative to the workspace, root/ws-…: root/b.
		{"relative gitdir", func(t *testing.T, dotgit string) { writeFile(t, dotgit, "gitdir: ../b/.git\n") }},
		{"symbolic link", func(t *testing.T, dotgit string) {
			if err := os.Symlink(filepath.Join(b, ".git"), dotgit); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case is a copy of a's workspace with its .git planted.
			ws := filepath.Join(root, "ws-"+strings.ReplaceAll(tc.name, " ", "-"))
			committed(t, ws, "the chat's own")
			if err := os.RemoveAll(filepath.Join(ws, ".git")); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, filepath.Join(ws, ".git"))
			if out, _ := naive(ctx, ws, "log", "--format=%s"); !strings.Contains(string(out), "b's private") {
				t.Fatalf("the naive git does not follow the plant (log %q): the test proves nothing", out)
			}
			out, err := safe(ctx, ws, "log", "--format=%s")
			if strings.Contains(string(out), "b's private") {
				t.Errorf("safegit followed the plant to b's repository: %q", out)
			}
			if !errors.Is(err, safegit.ErrRedirected) {
				t.Errorf("err = %v, want ErrRedirected", err)
			}
		})
	}
	t.Run("own worktree", func(t *testing.T) {
		out, err := safe(ctx, awt, "log", "--format=%s")
		if err != nil || strings.TrimSpace(string(out)) != "a's own" {
			t.Fatalf("a's own worktree: %q %v", out, err)
		}
	})
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLinkInGitDir: a chat that can write its .git links what git reads
// there (refs, objects, HEAD, logs …) to another agent's repository, or
// lends it that repository's objects (alternates): the git a Runner
// starts would read b's commits. A Runner refuses the repository; a
// naive git follows the links (the plant is live). A linked hooks
// directory, which a Runner never runs, is accepted.
func TestLinkInGitDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	b := filepath.Join(root, "b")
	committed(t, b, "b's private")
	bgit := filepath.Join(b, ".git")
	gitIn(t, b, "pack-refs", "--all")
	link := func(name, to string) func(t *testing.T, git string) {
		return func(t *testing.T, git string) {
			t.Helper()
			p := filepath.Join(git, name)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(to, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		plant   func(t *testing.T, git string)
		control bool // a naive git shows b's commits
		ok      bool // the Runner accepts the repository
	}{
		{name: "objects and refs", plant: func(t *testing.T, git string) {
			link("objects", filepath.Join(bgit, "objects"))(t, git)
			link("refs", filepath.Join(bgit, "refs"))(t, git)
			link("packed-refs", filepath.Join(bgit, "packed-refs"))(t, git)
		}, control: true},
		{name: "a branch", plant: link(filepath.Join("refs", "heads", "main"), filepath.Join(bgit, "refs", "heads", "main"))},
		{name: "packed-refs", plant: link("packed-refs", filepath.Join(bgit, "packed-refs"))},
		{name: "HEAD", plant: link("HEAD", filepath.Join(bgit, "HEAD"))},
		{name: "index", plant: link("index", filepath.Join(bgit, "index"))},
		{name: "logs", plant: link("logs", filepath.Join(bgit, "logs"))},
		{name: "objects/pack", plant: link(filepath.Join("objects", "pack"), filepath.Join(bgit, "objects", "pack"))},
		{name: "alternates", plant: func(t *testing.T, git string) {
			writeFile(t, filepath.Join(git, "objects", "info", "alternates"), filepath.Join(bgit, "objects")+"\n")
		}},
		{name: "hooks", plant: link("hooks", filepath.Join(bgit, "hooks")), ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			ws := filepath.Join(t.TempDir(), "ws")
			committed(t, ws, "the chat's own")
			tc.plant(t, filepath.Join(ws, ".git"))
			if tc.control {
				if out, _ := naive(ctx, ws, "log", "--format=%s"); !strings.Contains(string(out), "b's private") {
					t.Fatalf("the naive git does not follow the plant (log %q): the test proves nothing", out)
				}
			}
			out, err := safe(ctx, ws, "log", "--format=%s")
			if strings.Contains(string(out), "b's private") {
				t.Errorf("safegit read b's repository: %q", out)
			}
			if tc.ok && err != nil {
				t.Errorf("log: %v", err)
			}
			if !tc.ok && !errors.Is(err, safegit.ErrRedirected) {
				t.Errorf("err = %v (log %q), want ErrRedirected", err, out)
			}
		})
	}
	t.Run("a worktree's admin directory", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		ws := filepath.Join(t.TempDir(), "ws")
		committed(t, ws, "the chat's own")
		wt := filepath.Join(ws, ".clawhost", "worktrees", "x")
		gitIn(t, ws, "worktree", "add", "-q", "-b", "clawhost/x", wt, "HEAD")
		if _, err := safe(ctx, wt, "log", "--format=%s"); err != nil {
			t.Fatalf("the worktree before the plant: %v", err)
		}
		link("HEAD", filepath.Join(bgit, "HEAD"))(t, filepath.Join(ws, ".git", "worktrees", "x"))
		if _, err := safe(ctx, wt, "log", "--format=%s"); !errors.Is(err, safegit.ErrRedirected) {
			t.Errorf("err = %v, want ErrRedirected", err)
		}
	})
}
