package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
)

// TestGitPluginRedirects: issue 76's findings 2 and 3 through the real
// binaries, each planted by a chat's claude from inside its sandbox. Chat
// u1's claude replaces its workspace's .git by a file naming agent b's
// repository: git.diff_summary, /git log and /git commit are refused and
// neither read nor change b's repository. Chat u2's claude allows the ext
// transport in its repository and gives the plugin's remote (a file://
// URL) a pushurl of ext::<command>: the owner's /git push is refused and
// the command never runs, outside the sandbox or in it.
func TestGitPluginRedirects(t *testing.T) {
	t.Parallel()
	lpNeedBwrap(t)
	outside := t.TempDir()
	bare, markers := filepath.Join(outside, "remote.git"), filepath.Join(outside, "markers")
	gitOut(t, "init", "-q", "--bare", bare)
	if err := os.MkdirAll(markers, 0o777); err != nil {
		t.Fatal(err)
	}
	remote := "file://" + bare
	var a, b, ws string
	h := startClaudeHost(t, clOptions{
		agent:   Attrs{"allowed_tools": []string{"Bash"}},
		senders: []string{"u1", "u2"},
		access:  Attrs{"owners": []string{"lo:u1", "lo:u2"}},
		agents: []Agent{
			{ID: "a", Attrs: Attrs{"workspace": "./a", "chats": []string{"lo:chat-u1"}, "tools": []string{"git.diff_summary"},
				"allowed_tools": []string{"Bash", "mcp__clawhost__git__diff_summary"}}},
			{ID: "b", Attrs: Attrs{"workspace": "./b", "chats": []string{"lo:chat-u3"}}},
		},
		plugins: []Plugin{{Name: "git", Source: "git", Config: Attrs{"remote": remote, "author_name": "Phone", "author_email": "phone@example.com"}}},
		setup: func(dir string) {
			a, b, ws = filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "workspace")
			for _, r := range []string{a, b, ws} {
				gitRepo(t, r)
			}
			writeFile(t, filepath.Join(b, "secret.txt"), "b's secret\n")
			gitOut(t, "-C", b, "add", "secret.txt")
			gitOut(t, "-C", b, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "b's private commit")
		},
	})
	bLog := func() string { return gitOut(t, "--git-dir", filepath.Join(b, ".git"), "log", "--format=%s") }
	before := bLog()

	// Finding 3: chat u1's .git names agent b's repository.
	// claude asks before a command that writes .git: a script does it.
	h.fake.Enqueue(bashRun("echo 'mv .git old-git && echo gitdir: " + filepath.Join(b, ".git") + " > .git && cat .git && echo planted-gitdir' > plant.sh && sh plant.sh")...)
	h.say("u1", "plant")
	if res := toolResults(h); !strings.Contains(res, "planted-gitdir") {
		t.Fatalf("chat u1 could not plant its .git file; the tool results:\n%s", res)
	}
	h.fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__git__diff_summary", Input: map[string]any{"commits": 5}}},
		anthropictest.Reply{Text: "Summarized."})
	h.say("u1", "what changed?")
	if res := toolResults(h); !strings.Contains(res, "Refused: this chat's .git leads to another repository") || strings.Contains(res, "b's private commit") {
		t.Errorf("git.diff_summary on a .git naming b's repository; the tool results:\n%s", res)
	}
	if r, _ := h.ask("u1", "/git log", 60*time.Second); !strings.Contains(r.Text, "leads to another repository") || strings.Contains(r.Text, "b's private commit") {
		t.Errorf("/git log on a .git naming b's repository: %q", r.Text)
	}
	writeFile(t, filepath.Join(a, "a.txt"), "a\n")
	if r, _ := h.ask("u1", "/git commit from chat a", 60*time.Second); !strings.Contains(r.Text, "leads to another repository") {
		t.Errorf("/git commit on a .git naming b's repository: %q", r.Text)
	}
	if after := bLog(); after != before {
		t.Errorf("b's repository changed from chat u1: %q, was %q", after, before)
	}

	// Finding 2: an ext:: pushurl for the plugin's remote.
	marker := filepath.Join(markers, "ext")
	h.fake.Enqueue(bashRun("git config protocol.ext.allow always && git config 'remote." + remote + ".pushurl' 'ext::sh -c touch% " + marker + "' && echo planted-ext")...)
	h.say("u2", "plant")
	if res := toolResults(h); !strings.Contains(res, "planted-ext") {
		t.Fatalf("chat u2 could not plant its pushurl; the tool results:\n%s", res)
	}
	if r, _ := h.ask("u2", "/git push", 60*time.Second); !strings.Contains(r.Text, "Push refused") || !strings.Contains(r.Text, "pushurl") {
		t.Errorf("/git push to a remote with a planted ext:: pushurl: %q", r.Text)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the planted ext:: command ran")
	}
	if refs := gitOut(t, "--git-dir", bare, "for-each-ref"); refs != "" {
		t.Errorf("the remote received a push: %q", refs)
	}
}

// toolResults are the texts of every tool result the fake API has been
// sent so far, one per line.
func toolResults(h *clHost) string {
	var out []string
	for _, req := range h.fake.Requests() {
		for _, m := range req.Messages {
			for _, c := range m.Content {
				if c.Type == "tool_result" {
					out = append(out, c.ResultText())
				}
			}
		}
	}
	return strings.Join(out, "\n")
}
