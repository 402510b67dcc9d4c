package git

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/safegit"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Settings is the decoded config block.
type Settings struct {
	// Remote is where Push goes (a path or URL); "": no Push.
	Remote string `json:"remote"`
	// AuthorName and AuthorEmail sign the commits.
	AuthorName  string `json:"author_name"`
	AuthorEmail string `json:"author_email"`
	// InlineLimit is the longest diff shown in the chat, in bytes; a
	// longer one is sent as a .diff file.
	InlineLimit int `json:"inline_limit"`
	// Git is the git program.
	Git string `json:"git"`
	// SSHCommand is the ssh a push to an ssh remote runs (git's
	// core.sshCommand); "": ssh remotes are refused.
	SSHCommand string `json:"ssh_command"`
}

// Schema is the plugin's config block.
var Schema = schema.Schema{
	{Name: "remote", Type: "string", Default: "", Description: "where Push sends the chat's branch: a path or URL (file, ssh or https); empty: no Push"},
	{Name: "author_name", Type: "string", Default: "clawhost", Description: "author and committer name of the commits made from a chat"},
	{Name: "author_email", Type: "string", Default: "clawhost@localhost", Description: "author and committer email of the commits made from a chat"},
	{Name: "inline_limit", Type: "number", Default: 3000, Description: "the longest diff shown in the chat, in bytes; a longer one is sent as a .diff file"},
	{Name: "git", Type: "string", Default: "git", Description: "the git program (a name looked up in PATH, or a path)"},
	{Name: "ssh_command", Type: "string", Default: "", Description: "the ssh command a push to an ssh remote runs, with its key and known_hosts (git's core.sshCommand; the plugin's HOME is /dev/null); empty: no ssh"},
}

// decode reads and checks the block: the one check Validate and Configure
// share.
func decode(cfg schema.Config) (Settings, error) {
	v := Settings{AuthorName: "clawhost", AuthorEmail: "clawhost@localhost", InlineLimit: 3000, Git: "git"}
	if err := cfg.Decode(&v); err != nil {
		return v, err
	}
	var diags schema.Diagnostics
	if v.InlineLimit < 200 || v.InlineLimit > 20000 {
		diags = append(diags, schema.Diagnostic{Attribute: "inline_limit", Summary: "Out of range",
			Detail: fmt.Sprintf("inline_limit is %d; use 200 to 20000 bytes (a chat message holds about 4000)", v.InlineLimit)})
	}
	if strings.TrimSpace(v.AuthorName) == "" || !strings.Contains(v.AuthorEmail, "@") {
		diags = append(diags, schema.Diagnostic{Attribute: "author_email", Summary: "No author",
			Detail: "author_name and author_email (with an @) name the author of the commits made from a chat"})
	}
	if strings.HasPrefix(strings.TrimSpace(v.Remote), "-") || strings.ContainsAny(v.Remote, "\n\x00") {
		diags = append(diags, schema.Diagnostic{Attribute: "remote", Summary: "Not a remote", Detail: "remote is a path or a URL"})
	}
	if v.Git == "" {
		v.Git = "git"
	}
	if len(diags) > 0 {
		return v, diags
	}
	return v, nil
}

// Plugin is the git plugin.
func Plugin() sdk.Plugin {
	h := &Handler{}
	return sdk.Plugin{
		Name:     "git",
		Version:  "0.1.0",
		Schema:   Schema,
		Validate: func(_ context.Context, cfg schema.Config) error { _, err := decode(cfg); return err },
		Configure: func(_ context.Context, cfg schema.Config) error {
			s, err := decode(cfg)
			if err != nil {
				return err
			}
			h.Settings = s
			if cfg.DataDir != "" {
				h.Dir = filepath.Join(cfg.DataDir, "diffs")
			}
			return nil
		},
		Command: h,
		Tool:    h,
	}
}

// Handler answers /git.
type Handler struct {
	Settings Settings
	// Now is the clock (the .diff files' names); nil is time.Now.
	Now func() time.Time
	// Dir is where the .diff files go, made 0700 at the first: Configure
	// sets it inside the instance's data directory, so that the files of
	// one run are the next run's to bound (keepFiles) instead of a
	// directory left in the temp dir by every process. "": a temp
	// directory of the process's own.
	Dir string

	filesOnce sync.Once
	files     string
	filesErr  error
}

var _ command.Handler = (*Handler)(nil)

// Commands implements command.Handler.
func (h *Handler) Commands() []command.Spec {
	return []command.Spec{{
		Name:        "git",
		Description: "the chat's repository: status, diff, log, branch, commit, push",
		Usage:       "/git [status|diff|log|branch|commit MESSAGE|push]",
	}}
}

// usage is the answer to a wrong invocation.
const usage = "usage: /git [status|diff|log|branch|commit MESSAGE|push]"

// Execute implements command.Handler.
func (h *Handler) Execute(ctx context.Context, req command.Request) (command.Response, error) {
	if !req.SenderIsOwner && !req.SenderIsMember {
		return command.Response{}, channel.Errorf(channel.CodeInvalidRequest, "/git is for owners and members only.")
	}
	sub, rest, _ := strings.Cut(strings.TrimSpace(req.Args), " ")
	rest = strings.TrimSpace(rest)
	r, err := h.runner(req)
	if err != nil {
		return command.Response{}, err
	}
	switch strings.ToLower(sub) {
	case "", "status":
		return h.status(ctx, r, req)
	case "diff":
		return h.diff(ctx, r)
	case "log":
		return h.log(ctx, r)
	case "branch", "branches":
		return h.branch(ctx, r, req)
	case "commit":
		return h.commit(ctx, r, rest)
	case "push":
		return h.push(ctx, r)
	}
	return command.Response{}, channel.Errorf(channel.CodeInvalidRequest, usage)
}

// runner is the safe git of the chat's directory, or the answer saying why
// there is none.
func (h *Handler) runner(req command.Request) (safegit.Runner, error) {
	r := safegit.Runner{Dir: req.Workdir, Git: h.Settings.Git, Config: [][2]string{
		{"user.name", h.Settings.AuthorName}, {"user.email", h.Settings.AuthorEmail},
	}}
	if h.Settings.SSHCommand != "" {
		r.Config = append(r.Config, [2]string{"core.sshCommand", h.Settings.SSHCommand})
	}
	switch {
	case req.Workdir == "":
		return r, channel.Errorf(channel.CodeInvalidRequest, "This chat has no agent directory: /git works in the agent's workspace or the chat's worktree.")
	case req.WorktreeBranch != "":
		if _, err := os.Stat(req.Workdir); errors.Is(err, os.ErrNotExist) {
			return r, channel.Errorf(channel.CodeInvalidRequest, "This chat's worktree does not exist yet: it is made when the chat first writes to the agent.")
		}
	}
	if err := r.Check(); err != nil {
		return r, notRepository(err)
	}
	return r, nil
}

// notRepository is the answer for a directory a Runner refuses: no
// repository, or a .git leading to another one.
func notRepository(err error) error {
	if errors.Is(err, safegit.ErrRedirected) {
		return channel.Errorf(channel.CodeInvalidRequest,
			"Refused: the directory's .git leads to another repository (%v). git runs only on the directory's own .git, or a worktree of its repository.", err)
	}
	return channel.Errorf(channel.CodeInvalidRequest, "The agent's directory is not a git repository (git init, and a first commit).")
}

// buttons are the actions under every answer; Branch only for a chat with
// a worktree, Push only with a remote.
func (h *Handler) buttons(req *command.Request) [][]channel.Button {
	row := []channel.Button{{ID: "/git diff", Label: "Diff"}, {ID: "/git log", Label: "Log"}, {ID: "/git commit", Label: "Commit"}}
	var row2 []channel.Button
	if h.Settings.Remote != "" {
		row2 = append(row2, channel.Button{ID: "/git push", Label: "Push"})
	}
	if req != nil && req.WorktreeBranch != "" {
		row2 = append(row2, channel.Button{ID: "/git branch", Label: "Branch"})
	}
	if len(row2) == 0 {
		return [][]channel.Button{row}
	}
	return [][]channel.Button{row, row2}
}

// failed is the answer to a git command that failed: what git said.
func failed(what string, err error) error {
	var ge *safegit.Error
	if errors.As(err, &ge) && ge.Stderr != "" {
		return channel.Errorf(channel.CodeInvalidRequest, "%s failed: %s", what, clip(ge.Stderr, 600))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// clip cuts s to n bytes on a line or rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndex(s[:n], "\n")
	if cut < n/2 {
		cut = n
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
	}
	return s[:cut] + "\n…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// fence is text in a markdown code block of the given language.
func fence(lang, text string) string {
	text = strings.TrimRight(text, "\n")
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + text + "\n" + ticks
}

func (h *Handler) status(ctx context.Context, r safegit.Runner, req command.Request) (command.Response, error) {
	out, err := r.Run(ctx, "status", "--porcelain=v1", "--branch", "--untracked-files=all")
	if err != nil {
		return command.Response{}, failed("git status", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	head := strings.TrimPrefix(lines[0], "## ")
	changes := lines[1:]
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**", head)
	if last, err := r.Run(ctx, "log", "-1", "--format=%h %s (%cr)"); err == nil && len(strings.TrimSpace(string(last))) > 0 {
		fmt.Fprintf(&b, "\nLast commit: %s", strings.TrimSpace(string(last)))
	}
	if len(changes) == 0 {
		b.WriteString("\nNothing to commit, the working tree is clean.")
	} else {
		fmt.Fprintf(&b, "\n%d changed:\n%s", len(changes), fence("", clip(strings.Join(changes, "\n"), 1500)))
	}
	return command.Response{Replies: []command.Reply{{Text: b.String(), Format: channel.FormatMarkdown, Buttons: h.buttons(&req)}}}, nil
}

// diff is the working tree against HEAD (new files are listed by name),
// inline when short, else a .diff file with the summary inline.
func (h *Handler) diff(ctx context.Context, r safegit.Runner) (command.Response, error) {
	patch, err := r.Run(ctx, "diff", "HEAD", "--patch", "--no-color")
	if err != nil {
		return command.Response{}, failed("git diff", err)
	}
	untracked, err := r.Run(ctx, "ls-files", "--others", "--exclude-standard")
	if err != nil {
		return command.Response{}, failed("git ls-files", err)
	}
	var news string
	if u := strings.TrimSpace(string(untracked)); u != "" {
		names := strings.Split(u, "\n")
		news = fmt.Sprintf("New files, not in the diff until committed (%d): %s", len(names), clip(strings.Join(names, ", "), 500))
	}
	if len(strings.TrimSpace(string(patch))) == 0 {
		text := "No changes to tracked files."
		if news != "" {
			text += "\n" + news
		}
		return command.Response{Replies: []command.Reply{{Text: text, Buttons: h.buttons(nil)}}}, nil
	}
	if len(patch) <= h.Settings.InlineLimit {
		text := fence("diff", string(patch))
		if news != "" {
			text += "\n" + news
		}
		return command.Response{Replies: []command.Reply{{Text: text, Format: channel.FormatMarkdown, Buttons: h.buttons(nil)}}}, nil
	}
	stat, err := r.Run(ctx, "diff", "HEAD", "--stat=60", "--no-color")
	if err != nil {
		return command.Response{}, failed("git diff --stat", err)
	}
	path, err := h.writeDiff(patch)
	if err != nil {
		return command.Response{}, err
	}
	text := fmt.Sprintf("The diff is %d bytes: it is in the file.\n%s", len(patch), fence("", clip(string(stat), 1500)))
	if news != "" {
		text += "\n" + news
	}
	return command.Response{Replies: []command.Reply{{
		Text: text, Format: channel.FormatMarkdown, Buttons: h.buttons(nil),
		Media: []channel.OutboundMedia{{Path: path, Kind: channel.MediaDocument, MIME: "text/x-diff"}},
	}}}, nil
}

// keepFiles is how many .diff files the plugin keeps (the host may still
// be sending the latest).
const keepFiles = 20

// writeDiff writes a patch to a new file in the plugin's own directory
// (0700, files 0600) and removes the oldest beyond keepFiles.
func (h *Handler) writeDiff(patch []byte) (string, error) {
	h.filesOnce.Do(func() {
		if h.Dir == "" {
			h.files, h.filesErr = os.MkdirTemp("", "clawhost-git-")
			return
		}
		h.files, h.filesErr = h.Dir, os.MkdirAll(h.Dir, 0o700)
	})
	if h.filesErr != nil {
		return "", fmt.Errorf("diff file: %w", h.filesErr)
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	f, err := os.CreateTemp(h.files, "changes-"+now().UTC().Format("20060102-150405")+"-*.diff")
	if err != nil {
		return "", fmt.Errorf("diff file: %w", err)
	}
	_, err = f.Write(patch)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("diff file: %w", err)
	}
	if names, err := filepath.Glob(filepath.Join(h.files, "*.diff")); err == nil && len(names) > keepFiles {
		sort.Slice(names, func(i, j int) bool { return modTime(names[i]).Before(modTime(names[j])) })
		for _, n := range names[:len(names)-keepFiles] {
			_ = os.Remove(n)
		}
	}
	return f.Name(), nil
}

func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

func (h *Handler) log(ctx context.Context, r safegit.Runner) (command.Response, error) {
	out, err := r.Run(ctx, "log", "-10", "--format=%h %s — %an, %cr")
	if err != nil {
		return command.Response{}, failed("git log", err)
	}
	text := strings.TrimSpace(string(out))
	if text == "" {
		text = "No commits yet."
	}
	return command.Response{Replies: []command.Reply{{Text: fence("", text), Format: channel.FormatMarkdown, Buttons: h.buttons(nil)}}}, nil
}

func (h *Handler) branch(ctx context.Context, r safegit.Runner, req command.Request) (command.Response, error) {
	cur, err := r.Run(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil {
		return command.Response{}, failed("git rev-parse", err)
	}
	all, err := r.Run(ctx, "branch", "--list", "--no-color", "--format=%(refname:short) %(objectname:short) %(subject)")
	if err != nil {
		return command.Response{}, failed("git branch", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "On **%s**", strings.TrimSpace(string(cur)))
	if req.WorktreeBranch != "" {
		fmt.Fprintf(&b, " (this chat's worktree, branch %s)", req.WorktreeBranch)
		if n, err := r.Run(ctx, "rev-list", "--count", "--first-parent", "HEAD", "--not", "--exclude=clawhost/*", "--branches"); err == nil {
			fmt.Fprintf(&b, "; %s commit(s) of its own", strings.TrimSpace(string(n)))
		}
	}
	b.WriteString("\n" + fence("", clip(strings.TrimSpace(string(all)), 1500)))
	return command.Response{Replies: []command.Reply{{Text: b.String(), Format: channel.FormatMarkdown, Buttons: h.buttons(&req)}}}, nil
}

// draftPrompt is the Commit button's second choice: a message to the agent
// (not a command), which answers with the command to send. At most
// channel.MaxButtonID bytes.
const draftPrompt = "Draft a one-line commit message for my uncommitted changes"

func (h *Handler) commit(ctx context.Context, r safegit.Runner, message string) (command.Response, error) {
	if message == "" {
		return command.Response{Replies: []command.Reply{{
			Text:    "Type the message: /git commit MESSAGE — or let the agent draft one.",
			Buttons: [][]channel.Button{{{ID: draftPrompt, Label: "Draft with claude"}}},
		}}}, nil
	}
	if _, err := r.Run(ctx, "add", "-A"); err != nil {
		return command.Response{}, failed("git add", err)
	}
	staged, err := r.Run(ctx, "diff", "--cached", "--name-only")
	if err != nil {
		return command.Response{}, failed("git diff --cached", err)
	}
	if strings.TrimSpace(string(staged)) == "" {
		return command.Response{Replies: []command.Reply{{Text: "Nothing to commit, the working tree is clean.", Buttons: h.buttons(nil)}}}, nil
	}
	if _, err := r.RunInput(ctx, []byte(message), "commit", "-q", "--no-verify", "--no-gpg-sign", "-F", "-"); err != nil {
		return command.Response{}, failed("git commit", err)
	}
	out, err := r.Run(ctx, "log", "-1", "--format=%h %s", "--shortstat")
	if err != nil {
		return command.Response{}, failed("git log", err)
	}
	summary := strings.Join(strings.Fields(strings.ReplaceAll(string(out), "\n", " ")), " ")
	return command.Response{Replies: []command.Reply{{Text: "Committed " + summary, Buttons: h.buttons(nil)}}}, nil
}

func (h *Handler) push(ctx context.Context, r safegit.Runner) (command.Response, error) {
	if h.Settings.Remote == "" {
		return command.Response{}, channel.Errorf(channel.CodeInvalidRequest, "No remote is configured for /git push (the plugin's remote setting).")
	}
	redirects, err := r.Redirects(ctx, h.Settings.Remote)
	if err != nil {
		return command.Response{}, failed("git config", err)
	}
	if len(redirects) > 0 {
		return command.Response{}, channel.Errorf(channel.CodeInvalidRequest,
			"Push refused: the repository's configuration redirects a push to the remote (%s), which could send it elsewhere or run a program. Remove them (git config --unset).", clip(strings.Join(redirects, ", "), 600))
	}
	cur, err := r.Run(ctx, "symbolic-ref", "--short", "-q", "HEAD")
	branch := strings.TrimSpace(string(cur))
	if err != nil || branch == "" {
		return command.Response{}, channel.Errorf(channel.CodeInvalidRequest, "Push needs a branch: HEAD is detached.")
	}
	if _, err := r.Run(ctx, "push", "--porcelain", "--no-verify", "--", h.Settings.Remote, "HEAD:refs/heads/"+branch); err != nil {
		return command.Response{}, failed("git push", err)
	}
	return command.Response{Replies: []command.Reply{{Text: fmt.Sprintf("Pushed %s to the remote.", branch), Buttons: h.buttons(nil)}}}, nil
}
