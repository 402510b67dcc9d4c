package git

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/safegit"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/tool"
)

// repo is a real repository with one commit, and a bare remote.
type repo struct{ dir, bare, markers string }

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	if strings.HasPrefix(args[0], "--git-dir") {
		cmd = exec.Command("git", append([]string{"--git-dir=" + dir}, args[1:]...)...)
	}
	cmd.Env = safegit.Env(os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	sdktest.WriteExecutable(t, path, []byte(body), mode) // the scripts among them run at once
}

func newRepo(t *testing.T) repo {
	t.Helper()
	root := t.TempDir()
	r := repo{dir: filepath.Join(root, "ws"), bare: filepath.Join(root, "remote.git"), markers: filepath.Join(root, "markers")}
	if err := os.MkdirAll(r.markers, 0o700); err != nil {
		t.Fatal(err)
	}
	run(t, root, "init", "-q", "-b", "main", r.dir)
	run(t, root, "init", "-q", "--bare", r.bare)
	write(t, filepath.Join(r.dir, "README.md"), "# project\n", 0o600)
	run(t, r.dir, "add", "-A")
	run(t, r.dir, "commit", "-q", "-m", "first")
	return r
}

// plant makes the repository hostile: a hook, an fsmonitor, a filter and
// a textconv driver, an external diff, a pager and a receive-pack, each
// leaving a marker when it runs.
func (r repo) plant(t *testing.T) {
	t.Helper()
	evil := filepath.Join(filepath.Dir(r.dir), "evil")
	script := func(name, tail string) string {
		p := filepath.Join(evil, name)
		write(t, p, "#!/bin/sh\ntouch '"+filepath.Join(r.markers, name)+"'\n"+tail+"\n", 0o700)
		return p
	}
	for _, hook := range []string{"pre-commit", "commit-msg", "post-commit", "pre-push", "reference-transaction"} {
		write(t, filepath.Join(r.dir, ".git", "hooks", hook), "#!/bin/sh\ntouch '"+filepath.Join(r.markers, "hook-"+hook)+"'\n", 0o700)
	}
	write(t, filepath.Join(r.dir, ".gitattributes"), "*.go filter=evil diff=evil\n", 0o600)
	for k, v := range map[string]string{
		"core.fsmonitor":            script("fsmonitor", "exit 1"),
		"core.pager":                script("pager", "cat"),
		"filter.evil.clean":         script("clean", "cat"),
		"filter.evil.smudge":        script("smudge", "cat"),
		"diff.evil.textconv":        script("textconv", `cat "$1"`),
		"diff.external":             script("external", "exit 0"),
		"remote.origin.url":         r.bare,
		"remote.origin.receivepack": script("receivepack", `exec git-receive-pack "$@"`),
	} {
		run(t, r.dir, "config", k, v)
	}
}

func (r repo) ran(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(r.markers)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func handler(t *testing.T, remote string) *Handler {
	return &Handler{Settings: Settings{Remote: remote, AuthorName: "Phone", AuthorEmail: "phone@example.com", InlineLimit: 400, Git: "git"},
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Dir: t.TempDir()}
}

func exec1(t *testing.T, h *Handler, dir, args string) (command.Reply, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.Execute(ctx, command.Request{Command: "git", Args: args, SenderIsOwner: true, Workdir: dir})
	if err != nil {
		return command.Reply{}, err
	}
	if len(res.Replies) != 1 {
		t.Fatalf("/git %s: %d replies", args, len(res.Replies))
	}
	return res.Replies[0], nil
}

func mustExec(t *testing.T, h *Handler, dir, args string) command.Reply {
	t.Helper()
	r, err := exec1(t, h, dir, args)
	if err != nil {
		t.Fatalf("/git %s: %v", args, err)
	}
	return r
}

// TestStatusDiffCommitPush: the whole round on a real repository: status
// names the change, a short diff is inline, a long one a .diff file, a
// commit from the chat is in git log with the configured author, a push
// reaches the bare remote.
func TestStatusDiffCommitPush(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	h := handler(t, r.bare)
	write(t, filepath.Join(r.dir, "README.md"), "# project\nchanged\n", 0o600)
	write(t, filepath.Join(r.dir, "new.txt"), "new\n", 0o600)

	st := mustExec(t, h, r.dir, "")
	if !strings.Contains(st.Text, "main") || !strings.Contains(st.Text, "README.md") || !strings.Contains(st.Text, "new.txt") || st.Format != channel.FormatMarkdown {
		t.Errorf("status: %+v", st)
	}
	if ids := buttonIDs(st.Buttons); ids != "/git diff /git log /git commit /git push" {
		t.Errorf("status buttons: %q", ids)
	}
	d := mustExec(t, h, r.dir, "diff")
	if !strings.Contains(d.Text, "```diff") || !strings.Contains(d.Text, "+changed") || !strings.Contains(d.Text, "new.txt") || len(d.Media) != 0 {
		t.Errorf("short diff: %+v", d)
	}
	write(t, filepath.Join(r.dir, "README.md"), "# project\n"+strings.Repeat("a long line of the diff\n", 40), 0o600)
	d = mustExec(t, h, r.dir, "diff")
	if len(d.Media) != 1 || !strings.HasSuffix(d.Media[0].Path, ".diff") || !strings.Contains(d.Text, "README.md") {
		t.Fatalf("long diff: %+v", d)
	}
	body, err := os.ReadFile(d.Media[0].Path)
	if err != nil || !strings.Contains(string(body), "+a long line of the diff") {
		t.Errorf("the .diff file: %q %v", body, err)
	}
	if fi, err := os.Stat(d.Media[0].Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the .diff file's mode: %v %v", fi.Mode(), err)
	}

	c := mustExec(t, h, r.dir, "commit")
	if len(c.Buttons) != 1 || c.Buttons[0][0].ID != draftPrompt || len(draftPrompt) > channel.MaxButtonID {
		t.Errorf("commit without a message: %+v", c)
	}
	c = mustExec(t, h, r.dir, "commit -n fix: the readme, from the phone")
	if !strings.Contains(c.Text, "Committed") {
		t.Errorf("commit: %+v", c)
	}
	log := run(t, r.dir, "log", "-1", "--format=%an <%ae>|%s")
	if log != "Phone <phone@example.com>|-n fix: the readme, from the phone\n" {
		t.Errorf("git log after the commit: %q", log)
	}
	if st := run(t, r.dir, "status", "--porcelain"); st != "" {
		t.Errorf("the commit left changes: %q", st)
	}
	if c := mustExec(t, h, r.dir, "commit again"); !strings.Contains(c.Text, "Nothing to commit") {
		t.Errorf("empty commit: %+v", c)
	}
	l := mustExec(t, h, r.dir, "log")
	if !strings.Contains(l.Text, "from the phone") || !strings.Contains(l.Text, "first") {
		t.Errorf("log: %+v", l)
	}

	p := mustExec(t, h, r.dir, "push")
	if !strings.Contains(p.Text, "Pushed main") {
		t.Errorf("push: %+v", p)
	}
	if got := run(t, r.bare, "--git-dir=.", "log", "-1", "--format=%s", "main"); got != "-n fix: the readme, from the phone\n" {
		t.Errorf("the remote's main: %q", got)
	}
}

func buttonIDs(rows [][]channel.Button) string {
	var ids []string
	for _, row := range rows {
		for _, b := range row {
			ids = append(ids, b.ID)
		}
	}
	return strings.Join(ids, " ")
}

// TestHostileRepository: /git status, diff, commit and push on a
// repository with planted programs run none of them, and still work. The
// same repository run through a naive git runs them (the plants are live).
func TestHostileRepository(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.plant(t)
	write(t, filepath.Join(r.dir, "main.go"), "package main\n", 0o600)
	write(t, filepath.Join(r.dir, "README.md"), "# project\nchanged\n", 0o600)
	h := handler(t, r.bare)
	for _, args := range []string{"status", "diff", "log", "branch", "commit planted", "push"} {
		if _, err := exec1(t, h, r.dir, args); err != nil {
			t.Errorf("/git %s: %v", args, err)
		}
	}
	if ran := r.ran(t); len(ran) > 0 {
		t.Errorf("/git ran planted programs: %v", ran)
	}
	if got := run(t, r.bare, "--git-dir=.", "log", "-1", "--format=%s", "main"); got != "planted\n" {
		t.Errorf("the remote's main: %q", got)
	}

	// The control: a naive git on a copy of the same plants runs them.
	n := newRepo(t)
	n.plant(t)
	write(t, filepath.Join(n.dir, "main.go"), "package main\n", 0o600)
	for _, args := range [][]string{{"status"}, {"add", "-A"}, {"diff", "HEAD"}, {"commit", "-qm", "x"}, {"push", "origin", "HEAD:main"}} {
		cmd := exec.Command("git", append([]string{"-C", n.dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		_ = cmd.Run()
	}
	if ran := n.ran(t); len(ran) < 6 {
		t.Errorf("a naive git ran only %v of the plants: the test proves little", ran)
	}
}

// TestRolesAndDirectories: owners and members only; a chat without a
// directory, a directory without a repository, a worktree not made yet
// and a bad subcommand are told what is wrong.
func TestRolesAndDirectories(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	h := handler(t, "")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  command.Request
		want string
	}{
		{"stranger", command.Request{Workdir: r.dir}, "owners and members only"},
		{"no dir", command.Request{SenderIsMember: true}, "no agent directory"},
		{"no repo", command.Request{SenderIsMember: true, Workdir: t.TempDir()}, "not a git repository"},
		{"no worktree", command.Request{SenderIsMember: true, Workdir: filepath.Join(r.dir, ".clawhost/worktrees/x"), WorktreeBranch: "clawhost/x"}, "does not exist yet"},
		{"usage", command.Request{SenderIsMember: true, Workdir: r.dir, Args: "rebase -i"}, "usage: /git"},
		{"no remote", command.Request{SenderIsMember: true, Workdir: r.dir, Args: "push"}, "No remote"},
	} {
		_, err := h.Execute(ctx, tc.req)
		var ce *channel.Error
		if !errors.As(err, &ce) || ce.Code != channel.CodeInvalidRequest || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	res, err := h.Execute(ctx, command.Request{SenderIsMember: true, Workdir: r.dir, WorktreeBranch: "clawhost/x"})
	if err != nil || buttonIDs(res.Replies[0].Buttons) != "/git diff /git log /git commit /git branch" {
		t.Errorf("a worktree chat's buttons: %+v %v", res, err)
	}
}

// TestWorktreeBranch: in a chat's worktree, /git branch names the chat's
// branch and counts its own commits.
func TestWorktreeBranch(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	wt := filepath.Join(r.dir, ".clawhost", "worktrees", "tg-5")
	run(t, r.dir, "worktree", "add", "-q", "-b", "clawhost/tg-5", wt, "HEAD")
	write(t, filepath.Join(wt, "x.txt"), "x\n", 0o600)
	h := handler(t, r.bare)
	ctx := context.Background()
	res, err := h.Execute(ctx, command.Request{SenderIsOwner: true, Workdir: wt, WorktreeBranch: "clawhost/tg-5", Args: "commit in the worktree"})
	if err != nil {
		t.Fatal(err)
	}
	res, err = h.Execute(ctx, command.Request{SenderIsOwner: true, Workdir: wt, WorktreeBranch: "clawhost/tg-5", Args: "branch"})
	if err != nil || !strings.Contains(res.Replies[0].Text, "On **clawhost/tg-5**") || !strings.Contains(res.Replies[0].Text, "1 commit(s) of its own") {
		t.Fatalf("branch: %+v %v", res, err)
	}
	if _, err := h.Execute(ctx, command.Request{SenderIsOwner: true, Workdir: wt, WorktreeBranch: "clawhost/tg-5", Args: "push"}); err != nil {
		t.Fatal(err)
	}
	if got := run(t, r.bare, "--git-dir=.", "log", "-1", "--format=%s", "clawhost/tg-5"); got != "in the worktree\n" {
		t.Errorf("the remote's chat branch: %q", got)
	}
}

// TestThroughTheWire: the plugin served over gRPC, configured from its
// block, answers /git with the request's directory.
func TestThroughTheWire(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	cfg := sdktest.ConfigJSON(t, map[string]any{"remote": r.bare, "author_name": "Wire", "author_email": "w@example.com", "inline_limit": 3000, "git": "git"}, nil)
	hs := sdktest.Start(t, Plugin()).Configure(t, schema.Config{Instance: "git", JSON: cfg})
	ctx := context.Background()
	write(t, filepath.Join(r.dir, "a.txt"), "a\n", 0o600)
	res, err := hs.Plugin.Execute(ctx, command.Request{Command: "git", Args: "commit over the wire", SenderIsMember: true, Workdir: r.dir})
	if err != nil || len(res.Replies) != 1 || !strings.Contains(res.Replies[0].Text, "Committed") {
		t.Fatalf("commit: %+v %v", res, err)
	}
	if got := run(t, r.dir, "log", "-1", "--format=%an|%s"); got != "Wire|over the wire\n" {
		t.Errorf("git log: %q", got)
	}
}

// TestValidate: the block's checks point at the attribute.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		json string
		attr string
	}{
		{`{"inline_limit": 5}`, "inline_limit"},
		{`{"author_email": "nobody"}`, "author_email"},
		{`{"remote": "--upload-pack=x"}`, "remote"},
		{`{}`, ""},
	} {
		_, err := decode(schema.Config{JSON: []byte(tc.json)})
		var d schema.Diagnostics
		switch {
		case tc.attr == "" && err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case tc.attr != "" && (!errors.As(err, &d) || d[0].Attribute != tc.attr):
			t.Errorf("%s: %v, want a diagnostic at %s", tc.json, err, tc.attr)
		}
	}
}

// TestSSHCommand: a push to an ssh remote runs the operator's ssh_command,
// never the repository's core.sshCommand; without ssh_command, no ssh runs.
func TestSSHCommand(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	evil := filepath.Join(filepath.Dir(r.dir), "evil-ssh")
	good := filepath.Join(filepath.Dir(r.dir), "good-ssh")
	write(t, evil, "#!/bin/sh\ntouch '"+filepath.Join(r.markers, "evil-ssh")+"'\nexit 1\n", 0o700)
	write(t, good, "#!/bin/sh\ntouch '"+filepath.Join(r.markers, "good-ssh")+"'\nexit 1\n", 0o700)
	run(t, r.dir, "config", "core.sshCommand", evil)
	h := handler(t, "ssh://git.example.invalid/project.git")
	if _, err := exec1(t, h, r.dir, "push"); err == nil {
		t.Fatal("a push without ssh_command succeeded")
	}
	if ran := r.ran(t); len(ran) > 0 {
		t.Fatalf("without ssh_command: %v ran", ran)
	}
	h.Settings.SSHCommand = good
	if _, err := exec1(t, h, r.dir, "push"); err == nil {
		t.Fatal("a push through a failing ssh succeeded")
	}
	if ran := r.ran(t); len(ran) != 1 || ran[0] != "good-ssh" {
		t.Fatalf("with ssh_command: %v ran, want good-ssh", ran)
	}
}

// TestDiffSummaryTool: the agent tool summarises the chat's directory
// (Workdir before Workspace) and runs nothing the repository planted.
func TestDiffSummaryTool(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.plant(t)
	write(t, filepath.Join(r.dir, "README.md"), "# project\none\ntwo\n", 0o600)
	write(t, filepath.Join(r.dir, "main.go"), "package main\n", 0o600)
	h := handler(t, "")
	specs, err := h.Tools(context.Background())
	if err != nil || len(specs) != 1 || specs[0].Name != DiffSummaryTool {
		t.Fatalf("tools: %+v %v", specs, err)
	}
	res, err := h.Call(context.Background(), tool.CallRequest{CallID: "c1", Tool: DiffSummaryTool, Arguments: json.RawMessage(`{"commits":1}`),
		Workspace: t.TempDir(), Workdir: r.dir})
	if err != nil || res.IsError {
		t.Fatalf("call: %+v %v", res, err)
	}
	for _, want := range []string{"Branch: main", "README.md +2 -0", "New files (2)", "main.go", ".gitattributes", "first"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, res.Text)
		}
	}
	// The commit's own date, not its age: a call the host repeats (same
	// call id) is answered the same, whenever it comes.
	if date := strings.TrimSpace(run(t, r.dir, "log", "-1", "--format=%ci")); !strings.Contains(res.Text, "first ("+date+")") {
		t.Errorf("the summary does not date the commit %s:\n%s", date, res.Text)
	}
	if ran := r.ran(t); len(ran) > 0 {
		t.Errorf("diff_summary ran planted programs: %v", ran)
	}
	res, err = h.Call(context.Background(), tool.CallRequest{CallID: "c2", Tool: DiffSummaryTool, Workspace: t.TempDir()})
	if err != nil || !res.IsError || !strings.Contains(res.Text, "not a git repository") {
		t.Errorf("a workspace without a repository: %+v %v", res, err)
	}
}

// TestDiffFilesInTheDataDir: configured by the host, the plugin writes its
// .diff files inside the instance's data directory (0700), and a later
// process finds them there and keeps no more than keepFiles in all: no run
// leaves a directory of diffs in the temp dir.
func TestDiffFilesInTheDataDir(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	var paths []string
	for run := 0; run < 2; run++ {
		p := Plugin()
		if err := p.Configure(context.Background(), schema.Config{Instance: "git", JSON: []byte(`{}`), DataDir: data}); err != nil {
			t.Fatal(err)
		}
		h := p.Command.(*Handler)
		for i := 0; i < keepFiles; i++ {
			path, err := h.writeDiff([]byte("+a line\n"))
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
	}
	dir := filepath.Join(data, "diffs")
	for _, p := range paths {
		if filepath.Dir(p) != dir {
			t.Fatalf("a .diff file at %s, want it in %s", p, dir)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the diffs directory: %v %v", fi, err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.diff"))
	if len(names) != keepFiles {
		t.Errorf("%d .diff files after two runs of %d each, want %d", len(names), keepFiles, keepFiles)
	}
	if _, err := os.Stat(paths[len(paths)-1]); err != nil {
		t.Errorf("the latest .diff file was removed: %v", err)
	}
}
