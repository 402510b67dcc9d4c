package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// gitOut runs a git the test trusts (no planted configuration reaches it:
// it names the repository's git directory only for reading) and returns
// its output.
func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestGitPlugin: /git through the real binary with the real claude CLI.
// Chat u1 (an owner) works in its own worktree of a repository: /git shows
// the worktree's branch with the buttons, a short diff inline, a commit
// made from the chat lands in git log on the chat's branch, a push reaches a
// local bare remote. Chat u2 (a member) works in the agent's workspace: a
// long diff arrives as a .diff file. claude's call of the agent tool
// git.diff_summary summarises u1's worktree. u3, allowed in but neither owner nor
// member, is refused. The repositories carry planted hooks, an fsmonitor, a
// filter and a textconv driver (with a file the filter applies to, which
// the host's git worktree add checks out): none of them runs.
func TestGitPlugin(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	bare, markers := filepath.Join(outside, "remote.git"), filepath.Join(outside, "markers")
	gitOut(t, "init", "-q", "--bare", bare)
	if err := os.MkdirAll(markers, 0o700); err != nil {
		t.Fatal(err)
	}
	var repo, ws string
	h := startClaudeHost(t, clOptions{
		senders: []string{"u1", "u2", "u3"},
		access:  Attrs{"owners": []string{"lo:u1"}, "members": []string{"lo:u2"}},
		agents: []Agent{{ID: "repo", Attrs: Attrs{"workspace": "./repo", "worktrees": true, "chats": []string{"lo:chat-u1"},
			"tools": []string{"git.diff_summary"}, "allowed_tools": []string{"mcp__clawhost__git__diff_summary"}}}},
		loConfig: Attrs{"buttons": true},
		plugins:  []Plugin{{Name: "git", Source: "git", Config: Attrs{"remote": bare, "author_name": "Phone", "author_email": "phone@example.com"}}},
		setup: func(dir string) {
			repo, ws = filepath.Join(dir, "repo"), filepath.Join(dir, "workspace")
			for _, r := range []string{repo, ws} {
				gitRepo(t, r)
				plantGit(t, r, markers)
			}
		},
	})

	// u1's first message makes its worktree.
	if r, _ := h.ask("u1", "hello", 60*time.Second); !strings.Contains(r.Text, "hello") {
		t.Fatalf("the first answer: %q", r.Text)
	}
	wts, _ := filepath.Glob(filepath.Join(repo, ".clawhost", "worktrees", "*"))
	if len(wts) != 1 {
		t.Fatalf("worktrees: %v", wts)
	}
	wt := wts[0]
	branch := "clawhost/" + filepath.Base(wt)
	writeFile(t, filepath.Join(wt, "main.go"), "package main\n")
	writeFile(t, filepath.Join(wt, "README.md"), "hello\nchanged from the agent\n")

	// The agent tool git.diff_summary, called by claude in u1's turn,
	// summarises u1's worktree (the chat's directory, not the workspace).
	h.fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__git__diff_summary", Input: map[string]any{}}},
		anthropictest.Reply{Text: "Summarized."})
	from := h.mark()
	h.post("u1", "what changed?")
	for i := from; ; {
		var r clRecord
		r, i = h.waitSend("chat-u1", i, 60*time.Second)
		if strings.Contains(r.Text, "Summarized.") {
			break
		}
	}
	if res := lpToolResultWith(t, h, "Branch: "); !strings.Contains(res, "Branch: "+branch) || !strings.Contains(res, "README.md +1 -0") || !strings.Contains(res, "main.go") {
		t.Errorf("git.diff_summary's result: %q", res)
	}

	st, _ := h.ask("u1", "/git", 60*time.Second)
	if !strings.Contains(st.Text, branch) || !strings.Contains(st.Text, "main.go") || !strings.Contains(st.Text, "README.md") {
		t.Errorf("/git: %q", st.Text)
	}
	var ids []string
	for _, row := range st.Buttons {
		for _, b := range row {
			ids = append(ids, b.ID)
		}
	}
	if strings.Join(ids, " ") != "/git diff /git log /git commit /git push /git branch" {
		t.Errorf("/git's buttons: %v", ids)
	}
	if d, _ := h.ask("u1", "/git diff", 60*time.Second); !strings.Contains(d.Text, "+changed from the agent") || !strings.Contains(d.Text, "main.go") || len(d.Media) != 0 {
		t.Errorf("/git diff: %q %v", d.Text, d.Media)
	}
	if c, _ := h.ask("u1", "/git commit from the phone", 60*time.Second); !strings.Contains(c.Text, "Committed") {
		t.Errorf("/git commit: %q", c.Text)
	}
	if got := gitOut(t, "--git-dir", filepath.Join(repo, ".git"), "log", "-1", "--format=%an|%s", branch); got != "Phone|from the phone\n" {
		t.Errorf("git log of %s after the commit from the chat: %q", branch, got)
	}
	if got := gitOut(t, "--git-dir", filepath.Join(repo, ".git"), "show", branch+":main.go"); got != "package main\n" {
		t.Errorf("the committed main.go: %q", got)
	}
	if p, _ := h.ask("u1", "/git push", 60*time.Second); !strings.Contains(p.Text, "Pushed "+branch) {
		t.Errorf("/git push: %q", p.Text)
	}
	if got := gitOut(t, "--git-dir", bare, "log", "-1", "--format=%s", branch); got != "from the phone\n" {
		t.Errorf("the remote's %s: %q", branch, got)
	}

	// u2, a member, in the agent's workspace: a long diff is a file.
	writeFile(t, filepath.Join(ws, "README.md"), strings.Repeat("a line of a long change\n", 300))
	d, _ := h.ask("u2", "/git diff", 60*time.Second)
	if len(d.Media) != 1 || !strings.HasSuffix(d.Media[0], ".diff") || !strings.Contains(d.Text, "README.md") {
		t.Errorf("u2's long /git diff: %q %v", d.Text, d.Media)
	}

	if r, _ := h.ask("u3", "/git", 60*time.Second); !strings.Contains(r.Text, "owners and members only") {
		t.Errorf("/git from a sender neither owner nor member: %q", r.Text)
	}
	if ran := ranGit(t, markers); len(ran) > 0 {
		t.Errorf("the host's git or /git ran programs planted in the repositories: %v", ran)
	}
}

// plantGit makes repository r hostile: hooks, an fsmonitor, a filter and a
// textconv driver for *.go, an external diff and a receive-pack for its
// origin, each leaving a marker in markers when it runs.
func plantGit(t *testing.T, r, markers string) {
	t.Helper()
	evil := filepath.Join(filepath.Dir(r), "evil-"+filepath.Base(r))
	if err := os.MkdirAll(evil, 0o700); err != nil {
		t.Fatal(err)
	}
	script := func(name, tail string) string {
		p := filepath.Join(evil, name)
		sdktest.WriteExecutable(t, p, []byte("#!/bin/sh\ntouch '"+filepath.Join(markers, filepath.Base(r)+"-"+name)+"'\n"+tail+"\n"), 0o700)
		return p
	}
	for _, hook := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction", "post-checkout"} {
		script("hook-"+hook, "exit 0")
		if err := os.Rename(filepath.Join(evil, "hook-"+hook), filepath.Join(r, ".git", "hooks", hook)); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(r, ".gitattributes"), "*.go filter=evil diff=evil\n")
	// A file the filter applies to, which the host's git worktree add
	// checks out (smudge) for a chat's worktree.
	writeFile(t, filepath.Join(r, "lib.go"), "package lib\n")
	// Committed before the configuration is planted (this git would run it).
	gitOut(t, "-C", r, "add", ".gitattributes", "lib.go")
	gitOut(t, "-C", r, "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "attributes")
	for _, kv := range [][2]string{
		{"core.fsmonitor", script("fsmonitor", "exit 1")},
		{"core.pager", script("pager", "cat")},
		{"filter.evil.clean", script("clean", "cat")},
		{"filter.evil.smudge", script("smudge", "cat")},
		{"diff.evil.textconv", script("textconv", `cat "$1"`)},
		{"diff.external", script("external", "exit 0")},
		{"gpg.program", script("gpg", "exit 1")},
		{"commit.gpgSign", "true"},
	} {
		gitOut(t, "-C", r, "config", kv[0], kv[1])
	}
}

// ranGit lists the markers.
func ranGit(t *testing.T, markers string) []string {
	t.Helper()
	ents, err := os.ReadDir(markers)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
