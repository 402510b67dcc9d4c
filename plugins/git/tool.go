package git

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/sdk/safegit"
	"github.com/clawhost/clawhost/sdk/tool"
)

// DiffSummaryTool is the agent tool's name: granted as "git.diff_summary"
// (agent { tools = ["git.diff_summary"] }), called by claude as
// mcp__clawhost__git__diff_summary.
const DiffSummaryTool = "diff_summary"

var _ tool.Provider = (*Handler)(nil)

// Tools implements tool.Provider.
func (h *Handler) Tools(context.Context) ([]tool.Spec, error) {
	return []tool.Spec{{
		Name: DiffSummaryTool,
		Description: "Summarize the uncommitted changes of this chat's git repository (its worktree or the agent's workspace): " +
			"the branch, the changed files with lines added and removed, the new files, and the last commits. " +
			"Read-only; the repository's hooks and configured programs never run.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"commits":{"type":"integer","minimum":0,"maximum":20,"description":"how many recent commits to list (default 3)"}}}`),
	}}, nil
}

// Call implements tool.Provider: diff_summary is read-only, so a repeated
// call id needs nothing remembered.
func (h *Handler) Call(ctx context.Context, req tool.CallRequest) (tool.Result, error) {
	if req.Tool != DiffSummaryTool {
		return tool.Result{Text: "unknown tool " + req.Tool, IsError: true}, nil
	}
	var args struct {
		Commits *int `json:"commits"`
	}
	if len(req.Arguments) > 0 {
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return tool.Result{Text: "arguments: " + err.Error(), IsError: true}, nil
		}
	}
	n := 3
	if args.Commits != nil {
		n = min(max(*args.Commits, 0), 20)
	}
	dir := req.Workdir
	if dir == "" {
		dir = req.Workspace
	}
	r := safegit.Runner{Dir: dir, Git: h.Settings.Git}
	if err := r.Check(); err != nil {
		if errors.Is(err, safegit.ErrRedirected) {
			return tool.Result{Text: "Refused: this chat's .git leads to another repository (" + err.Error() + ").", IsError: true}, nil
		}
		return tool.Result{Text: "This chat's directory is not a git repository.", IsError: true}, nil
	}
	text, err := summary(ctx, r, n)
	if err != nil {
		return tool.Result{Text: err.Error(), IsError: true}, nil
	}
	return tool.Result{Text: text}, nil
}

// summary is the branch, the numstat of the working tree against HEAD,
// the untracked files and the last n commits.
func summary(ctx context.Context, r safegit.Runner, n int) (string, error) {
	head, err := r.Run(ctx, "status", "--porcelain=v1", "--branch", "--untracked-files=all")
	if err != nil {
		return "", fmt.Errorf("git status: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(head), "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "Branch: %s\n", strings.TrimPrefix(lines[0], "## "))
	var untracked []string
	for _, l := range lines[1:] {
		if name, ok := strings.CutPrefix(l, "?? "); ok {
			untracked = append(untracked, name)
		}
	}
	stat, err := r.Run(ctx, "diff", "HEAD", "--numstat")
	if err != nil {
		return "", fmt.Errorf("git diff: %w", err)
	}
	changed := strings.Split(strings.TrimSpace(string(stat)), "\n")
	if len(changed) == 1 && changed[0] == "" {
		changed = nil
	}
	fmt.Fprintf(&b, "Changed files (%d, +added -removed):\n", len(changed))
	for _, l := range changed {
		f := strings.SplitN(l, "\t", 3)
		if len(f) == 3 {
			fmt.Fprintf(&b, "  %s +%s -%s\n", f[2], f[0], f[1])
		}
	}
	fmt.Fprintf(&b, "New files (%d):\n", len(untracked))
	for _, u := range untracked {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	if n > 0 {
		// The commit's date, not its age ("%cr"): a call repeated with its call id
		// (the host's retry) gets the same answer a second later too.
		out, err := r.Run(ctx, "log", fmt.Sprintf("-%d", n), "--format=%h %s (%ci)")
		if err == nil {
			fmt.Fprintf(&b, "Last commits:\n%s", indent(strings.TrimSpace(string(out))))
		}
	}
	return clip(strings.TrimRight(b.String(), "\n"), 16000), nil
}

func indent(s string) string {
	if s == "" {
		return "  (none)\n"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ") + "\n"
}
