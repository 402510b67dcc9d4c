package git

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/tool"
)

// TestPushRefusesRedirects: a repository that defines its own section for
// the push target (a pushurl such as ext::<command>, a url, a
// receive-pack, a helper), or rewrites URLs, has its push refused with
// what to remove, and nothing it names runs: finding 2 of issue 76 with
// file, ssh and https targets, and the other ways to the same end.
func TestPushRefusesRedirects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		remote string            // "" the bare remote's path; "file://" its URL
		config map[string]string // set in the repository; "$ext" is the ext:: command, "$remote" the target
	}{
		{"ext pushurl, file URL", "file://", map[string]string{"protocol.ext.allow": "always", "remote.$remote.pushurl": "$ext"}},
		{"ext pushurl, ssh URL", "ssh://git.example.invalid/p.git", map[string]string{"protocol.ext.allow": "always", "remote.$remote.pushurl": "$ext"}},
		{"ext pushurl, https URL", "https://git.example.invalid/p.git", map[string]string{"protocol.ext.allow": "always", "remote.$remote.pushurl": "$ext"}},
		{"ext url, path", "", map[string]string{"protocol.ext.allow": "always", "remote.$remote.url": "$ext"}},
		{"receivepack", "", map[string]string{"remote.$remote.receivepack": "$ext"}},
		{"insteadOf", "file://", map[string]string{"protocol.ext.allow": "always", "url.$ext.insteadOf": "$remote"}},
		{"pushInsteadOf", "", map[string]string{"protocol.ext.allow": "always", "url.$ext.pushInsteadOf": "$remote"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			remote := tc.remote
			switch remote {
			case "":
				remote = r.bare
			case "file://":
				remote += r.bare
			}
			marker := filepath.Join(r.markers, "ext")
			ext := "ext::sh -c touch% " + marker
			for k, v := range tc.config {
				k = strings.ReplaceAll(strings.ReplaceAll(k, "$remote", remote), "$ext", ext)
				v = strings.ReplaceAll(strings.ReplaceAll(v, "$remote", remote), "$ext", ext)
				run(t, r.dir, "config", k, v)
			}
			_, err := exec1(t, handler(t, remote), r.dir, "push")
			var ce *channel.Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, "Push refused") {
				t.Errorf("push: %v, want it refused", err)
			}
			if ran := r.ran(t); len(ran) > 0 {
				t.Errorf("the push ran %v", ran)
			}
		})
	}
}

// plantGitFile makes a second agent's repository b, with a private commit,
// and replaces the .git of a's workspace by a file naming b's: finding 3
// of issue 76.
func plantGitFile(t *testing.T, a repo) (b repo) {
	t.Helper()
	b = newRepo(t)
	write(t, filepath.Join(b.dir, "secret.txt"), "b's secret\n", 0o600)
	run(t, b.dir, "add", "-A")
	run(t, b.dir, "commit", "-q", "-m", "b's private commit")
	if err := os.RemoveAll(filepath.Join(a.dir, ".git")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(a.dir, ".git"), "gitdir: "+filepath.Join(b.dir, ".git")+"\n", 0o600)
	return b
}

// TestGitFileRedirect: the diff_summary tool and /git on a workspace whose
// .git names another agent's repository neither read nor write that
// repository.
func TestGitFileRedirect(t *testing.T) {
	t.Parallel()
	t.Run("diff_summary", func(t *testing.T) {
		t.Parallel()
		a := newRepo(t)
		plantGitFile(t, a)
		res, err := handler(t, "").Call(context.Background(), tool.CallRequest{CallID: "c1", Tool: DiffSummaryTool,
			Arguments: json.RawMessage(`{"commits":5}`), Workspace: a.dir, Workdir: a.dir})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Text, "b's private commit") || !res.IsError {
			t.Errorf("diff_summary read b's repository: %+v", res)
		}
	})
	for _, args := range []string{"log", "commit from a's chat"} {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			a := newRepo(t)
			b := plantGitFile(t, a)
			write(t, filepath.Join(a.dir, "a.txt"), "a\n", 0o600)
			before := run(t, b.dir, "log", "--format=%s")
			reply, err := exec1(t, handler(t, ""), a.dir, args)
			if strings.Contains(reply.Text, "b's private commit") {
				t.Errorf("/git %s showed b's repository: %q", args, reply.Text)
			}
			var ce *channel.Error
			if !errors.As(err, &ce) || ce.Code != channel.CodeInvalidRequest {
				t.Errorf("/git %s: %v, want it refused", args, err)
			}
			if after := run(t, b.dir, "log", "--format=%s"); after != before {
				t.Errorf("/git %s changed b's repository: %q", args, after)
			}
			if st := run(t, b.dir, "status", "--porcelain"); slices.Contains(strings.Fields(st), "a.txt") {
				t.Errorf("/git %s staged a's file in b's index: %q", args, st)
			}
		})
	}
}
