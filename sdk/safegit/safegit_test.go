package safegit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/safegit"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// Hostile is a repository whose configuration, hooks and attributes name
// programs, each of which leaves a marker file when it runs: what a
// sandboxed agent can plant in its workspace.
type Hostile struct {
	// Dir is the repository, Bare a bare repository to push to (not
	// hostile: the operator's), Markers where the markers appear.
	Dir, Bare, Markers string
}

// plant names each planted program after the marker it leaves.
var plants = []string{
	"fsmonitor", "hookspath-pre-commit", "hookspath-post-commit", "hookspath-pre-push", "hookspath-reference-transaction", "filter-clean", "filter-smudge", "include-filter-clean",
	"textconv", "diff-command", "diff-external", "pager", "gpg", "receivepack",
}

// NewHostile makes a Hostile repository with one commit and a change in
// its working tree.
func NewHostile(t *testing.T) Hostile {
	t.Helper()
	root := t.TempDir()
	h := Hostile{Dir: filepath.Join(root, "repo"), Bare: filepath.Join(root, "remote.git"), Markers: filepath.Join(root, "markers")}
	evil := filepath.Join(root, "evil")
	for _, d := range []string{h.Dir, h.Markers, evil, filepath.Join(root, "evilhooks"), filepath.Join(root, "elsewhere")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	clean := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = safegit.Env(os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	clean("init", "-q", "-b", "main", h.Dir)
	clean("init", "-q", "--bare", h.Bare)
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		sdktest.WriteExecutable(t, path, []byte(body), mode) // the scripts among them run at once
	}
	// script writes a program that leaves the marker name and then does
	// what tail says (pass data through, succeed, fail).
	script := func(name, tail string) string {
		p := filepath.Join(evil, name)
		write(p, "#!/bin/sh\ntouch '"+filepath.Join(h.Markers, name)+"'\n"+tail+"\n", 0o700)
		return p
	}
	cat := "cat"
	write(filepath.Join(h.Dir, "a.txt"), "one\n", 0o600)
	write(filepath.Join(h.Dir, "b.txt"), "one\n", 0o600)
	write(filepath.Join(h.Dir, "c.txt"), "one\n", 0o600)
	write(filepath.Join(root, "elsewhere", "secret.txt"), "not the repository's\n", 0o600)
	clean("-C", h.Dir, "add", "-A")
	clean("-C", h.Dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "first")
	// The plants, after the first commit.
	write(filepath.Join(h.Dir, ".gitattributes"), "a.txt filter=evil diff=conv\nb.txt diff=ext\nc.txt filter=inc\n", 0o600)
	write(filepath.Join(h.Dir, ".git", "info", "attributes"), "new.txt filter=evil\n", 0o600)
	for _, hook := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction"} {
		p := filepath.Join(h.Dir, ".git", "hooks", hook)
		write(p, "#!/bin/sh\ntouch '"+filepath.Join(h.Markers, "hooks-"+hook)+"'\n", 0o700)
	}
	for _, hook := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction"} {
		p := filepath.Join(root, "evilhooks", hook)
		write(p, "#!/bin/sh\ntouch '"+filepath.Join(h.Markers, "hookspath-"+hook)+"'\n", 0o700)
	}
	write(filepath.Join(root, "evil.cfg"), "[filter \"inc\"]\n\tclean = "+script("include-filter-clean", cat)+"\n", 0o600)
	cfg := map[string]string{
		"core.fsmonitor":            script("fsmonitor", "exit 1"),
		"core.hooksPath":            filepath.Join(root, "evilhooks"),
		"core.pager":                script("pager", cat),
		"filter.evil.clean":         script("filter-clean", cat),
		"filter.evil.smudge":        script("filter-smudge", cat),
		"filter.evil.required":      "true",
		"filter.proc.process":       script("filter-process", "exit 1"),
		"diff.conv.textconv":        script("textconv", `cat "$1"`),
		"diff.ext.command":          script("diff-command", "exit 0"),
		"diff.external":             script("diff-external", "exit 0"),
		"gpg.program":               script("gpg", "exit 1"),
		"commit.gpgSign":            "true",
		"remote.origin.url":         h.Bare,
		"remote.origin.receivepack": script("receivepack", `exec git-receive-pack "$@"`),
		"include.path":              filepath.Join(root, "evil.cfg"),
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		clean("-C", h.Dir, "config", k, cfg[k])
	}
	// Changed to another size: git compares the files' times in whole
	// seconds, and an index written since by a git whose working tree was
	// elsewhere (TestWorktreePinned's naive one) no longer counts an entry
	// of the same second as one to check by its content (git's "racy
	// clean" files): a rewrite of the same size within that second would
	// look unchanged.
	write(filepath.Join(h.Dir, "a.txt"), "second\n", 0o600)
	write(filepath.Join(h.Dir, "b.txt"), "second\n", 0o600)
	write(filepath.Join(h.Dir, "c.txt"), "second\n", 0o600)
	write(filepath.Join(h.Dir, "new.txt"), "new\n", 0o600)
	return h
}

// Ran lists the markers: what ran.
func (h Hostile) Ran(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(h.Markers)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// gitFunc runs git args in dir.
type gitFunc func(ctx context.Context, dir string, args ...string) ([]byte, error)

// gitCase is a way to run git, and whether what a hostile repository
// plants runs under it.
type gitCase struct {
	name string
	git  gitFunc
	runs bool
}

// naive is git as a plugin would run it without this package.
func naive(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.Output()
	return out, err
}

func safe(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return safegit.Runner{Dir: dir, Config: [][2]string{{"user.name", "t"}, {"user.email", "t@example.com"}}}.Run(ctx, args...)
}

// use is what the git plugin does with a repository: status, diff, log
// with patches, a commit of everything, a push.
func use(ctx context.Context, h Hostile, git gitFunc) (status string) {
	out, err := git(ctx, h.Dir, "status", "--porcelain")
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return err.Error()
	}
	_, _ = git(ctx, h.Dir, "diff", "HEAD")
	_, _ = git(ctx, h.Dir, "log", "-p", "-2")
	_, _ = git(ctx, h.Dir, "add", "-A")
	_, _ = git(ctx, h.Dir, "commit", "-q", "-m", "from the chat")
	// A signing gpg fails the commit above: once more without.
	_, _ = git(ctx, h.Dir, "commit", "-q", "--no-gpg-sign", "-m", "from the chat")
	_, _ = git(ctx, h.Dir, "push", h.Bare, "HEAD:refs/heads/main")
	_, _ = git(ctx, h.Dir, "push", "origin", "HEAD:refs/heads/other")
	_, _ = git(ctx, h.Dir, "checkout", "-q", "HEAD~1", "--", "a.txt")
	return string(out)
}

// TestHostileRepositoryRunsNothing is the attack: every planted program
// runs when git is run naively (the test can fail), none through a
// Runner, which still sees the repository's own files.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	t.Parallel()
	t.Run("naive", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		h := NewHostile(t)
		use(ctx, h, naive)
		ran := h.Ran(t)
		// What git runs without a pager's terminal: all but the pager.
		for _, p := range plants {
			if p == "pager" {
				continue
			}
			if !slices.Contains(ran, p) {
				t.Errorf("the naive git did not run the planted %s (ran %v): the plant is dead, the test proves nothing", p, ran)
			}
		}
	})
	t.Run("safegit", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		h := NewHostile(t)
		status := use(ctx, h, safe)
		if ran := h.Ran(t); len(ran) > 0 {
			t.Errorf("safegit ran planted programs: %v", ran)
		}
		if !strings.Contains(status, "a.txt") || !strings.Contains(status, "new.txt") {
			t.Errorf("status should be the repository's own: %q", status)
		}
		// The commit was made and pushed, with the files as they are.
		cmd := exec.Command("git", "--git-dir", h.Bare, "log", "--format=%s", "main")
		cmd.Env = safegit.Env(os.Getenv("PATH"))
		log, err := cmd.Output()
		if err != nil || !strings.Contains(string(log), "from the chat") {
			t.Errorf("the commit did not reach the remote: %q %v", log, err)
		}
	})
}

// TestNotRepository refuses a directory without .git.
func TestNotRepository(t *testing.T) {
	t.Parallel()
	_, err := safegit.Runner{Dir: t.TempDir()}.Run(context.Background(), "status")
	if !errors.Is(err, safegit.ErrNotRepository) {
		t.Fatalf("err = %v, want ErrNotRepository", err)
	}
	_, err = safegit.Runner{Dir: "relative"}.Run(context.Background(), "status")
	if !errors.Is(err, safegit.ErrNotRepository) {
		t.Fatalf("err = %v, want ErrNotRepository", err)
	}
}

// TestWorktreePinned: a planted core.worktree would make git show, and
// commit into the repository, the files of another directory (a home,
// its keys); a Runner's working tree is its Dir.
func TestWorktreePinned(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h := NewHostile(t)
	elsewhere := filepath.Join(filepath.Dir(h.Dir), "elsewhere")
	cmd := exec.Command("git", "-C", h.Dir, "config", "core.worktree", elsewhere)
	cmd.Env = safegit.Env(os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if out, _ := naive(ctx, h.Dir, "status", "--porcelain"); !strings.Contains(string(out), "secret.txt") {
		t.Fatalf("the naive git should show core.worktree's directory: %q", out)
	}
	out, err := safe(ctx, h.Dir, "status", "--porcelain")
	if err != nil || strings.Contains(string(out), "secret.txt") || !strings.Contains(string(out), "a.txt") {
		t.Fatalf("status = %q, %v; want the repository's own files", out, err)
	}
}

// TestProcessFilter: a long-running filter process (filter.<x>.process)
// planted on a file runs when the file is added, naively; not through a
// Runner. (A process that does not speak the filter protocol fails the
// naive git, hence a repository of its own.)
func TestProcessFilter(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, g := range []gitCase{{"naive", naive, true}, {"safegit", safe, false}} {
		h := NewHostile(t)
		evil := filepath.Join(filepath.Dir(h.Dir), "evil", "filter-process")
		sdktest.WriteExecutable(t, evil, []byte("#!/bin/sh\ntouch '"+filepath.Join(h.Markers, "filter-process")+"'\n"), 0o700)
		if err := os.WriteFile(filepath.Join(h.Dir, ".gitattributes"), []byte("*.txt filter=proc\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "-C", h.Dir, "config", "filter.proc.process", evil)
		cmd.Env = safegit.Env(os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		_, err := g.git(ctx, h.Dir, "add", "-A")
		if ran := slices.Contains(h.Ran(t), "filter-process"); ran != g.runs {
			t.Errorf("%s: the process filter ran: %v, want %v (add: %v)", g.name, ran, g.runs, err)
		}
		if !g.runs && err != nil {
			t.Errorf("%s: add: %v", g.name, err)
		}
	}
}
