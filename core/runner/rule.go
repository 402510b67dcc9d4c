package runner

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/internal/bashrule"
)

// Rule is a Claude Code permission rule, "Tool" or "Tool(content)":
// "Bash(git log:*)" allows commands starting with "git log",
// "Edit(//srv/notes.md)" edits of that one file, "WebFetch(domain:x.org)"
// fetches from that host, "mcp__srv__tool" every use of a tool whose input
// has no scope. An approval's "always" grants the request's exact rules
// (AlwaysRules), never a whole tool that takes a scope: claude gets them as
// session rules (updatedPermissions), and the host keeps their strings with
// the session to answer a later process of it (Allows).
//
// Observed with claude 2.1.330 (TestRealPermissionAllowDenyAlways,
// TestRealAlwaysEditRuleCoversTheFile): for a Bash command it suggests the
// command itself as the rule (destination localSettings; this host sends
// every rule for the session only); for a Write outside the workspace only
// wider updates (setMode acceptEdits, addDirectories), where the derived
// Edit(//path) is taken and covers Write and Edit of that file; for a Read
// outside it, the directory (Read(//etc/**)), which is not taken: the
// derived Read(//etc/hostname) is. A command claude asks about
// for a path outside the workspace is asked again whatever Bash rule the
// session holds — only a whole-tool "Bash" rule passes that check, which
// is why none is ever granted.
type Rule struct {
	Tool    string
	Content string
}

// ParseRule reads "Tool" or "Tool(content)".
func ParseRule(s string) Rule {
	if i := strings.IndexByte(s, '('); i > 0 && strings.HasSuffix(s, ")") {
		return Rule{Tool: s[:i], Content: s[i+1 : len(s)-1]}
	}
	return Rule{Tool: s}
}

func (r Rule) String() string {
	if r.Content == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Content + ")"
}

// scoped are the tools whose use a rule scopes by its input (a command, a
// path, a host): a rule of one of them without content would allow every
// use, so it is neither granted by "always" nor honoured from storage (a
// stored bare "Bash" from before rules were scoped allows nothing).
var scoped = map[string]bool{
	"Bash": true, "Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true,
	"Read": true, "Glob": true, "Grep": true, "WebFetch": true,
}

// fileTools are the tools claude's Edit(...) rules cover.
var fileTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

// suggestion is one of can_use_tool's permission_suggestions (claude's
// PermissionUpdate).
type suggestion struct {
	Type     string `json:"type"`
	Behavior string `json:"behavior"`
	Rules    []struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	} `json:"rules"`
}

// AlwaysRules are the rules an "always" answer to p grants: claude's own
// suggestion (permission_suggestions) when it adds allow rules for this
// tool — each scoped one with its scope, a file tool's without a wildcard
// (claude suggests Read(//etc/**) for /etc/hostname) — else one derived
// from the input:
// Bash, the command's words up to and including its subcommand, options
// before it included ("git log:*", "git -C /srv status:*"), or the exact
// command where no such prefix is narrow (bashrule.Derive); a file tool,
// the file (Edit(//path)); Read, the file; WebFetch, the host; a tool
// without a scope, itself. Suggestions that change the mode, add
// directories or name a Bash prefix wider than the command's subcommand
// ("git:*") are not taken. Empty: no exact rule (a compound shell command,
// an interpreter, a wrapper like sudo): "always" is not offered.
func (p *PermissionRequest) AlwaysRules() []Rule {
	if p.NoAlways || p.Tool == AskUserQuestion {
		return nil
	}
	var out []Rule
	for _, raw := range p.Suggestions {
		var s suggestion
		if json.Unmarshal(raw, &s) != nil || s.Type != "addRules" || s.Behavior != "allow" {
			continue
		}
		for _, r := range s.Rules {
			rule := Rule{Tool: r.ToolName, Content: r.RuleContent}
			if !sameFamily(rule.Tool, p.Tool) || (scoped[p.Tool] && rule.Content == "") || (p.Tool != "Bash" && strings.Contains(rule.Content, "*")) ||
				(p.Tool == "Bash" && !bashSuggestionFits(p.command(), rule.Content)) {
				return derived(p) // a suggestion wider than the call (a tool, a directory, "git:*"): derive our own
			}
			out = append(out, rule)
		}
	}
	if len(out) > 0 {
		return out
	}
	return derived(p)
}

// bashSuggestionFits reports whether claude's suggested Bash rule content
// is no wider than cmd: an exact command, or a prefix that lets no code run
// beyond its subcommand (bashrule.Risk) and is the start of one of cmd's
// simple commands, word for word. claude suggests "git status:*" and "git
// diff:*" for "git status && git diff"; a "git:*" for "git -C /x status"
// would drop the subcommand and the options before it.
func bashSuggestionFits(cmd, content string) bool {
	prefix, wild := bashrule.Prefix(content)
	if !wild {
		return true
	}
	if why, _ := bashrule.Risk(content); why != "" {
		return false
	}
	want := strings.Fields(prefix)
	for _, part := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(";&|<>()\n", r) }) {
		if words := strings.Fields(part); len(words) >= len(want) && slices.Equal(words[:len(want)], want) {
			return true
		}
	}
	return false
}

// command is a Bash request's command line.
func (p *PermissionRequest) command() string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(p.Input, &in)
	return in.Command
}

func sameFamily(ruleTool, tool string) bool {
	return ruleTool == tool || ruleTool == "Edit" && fileTools[tool]
}

// derived is the rule this host derives for p when claude suggests none.
func derived(p *PermissionRequest) []Rule {
	var in map[string]any
	_ = json.Unmarshal(p.Input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch {
	case p.Tool == "Bash":
		if content, ok := bashrule.Derive(str("command")); ok {
			return []Rule{{Tool: "Bash", Content: content}}
		}
	case fileTools[p.Tool]:
		path := str("file_path")
		if p.Tool == "NotebookEdit" {
			path = str("notebook_path")
		}
		if filepath.IsAbs(path) {
			return []Rule{{Tool: "Edit", Content: "/" + filepath.Clean(path)}}
		}
	case p.Tool == "Read":
		if path := str("file_path"); filepath.IsAbs(path) {
			return []Rule{{Tool: "Read", Content: "/" + filepath.Clean(path)}}
		}
	case p.Tool == "WebFetch":
		if u, err := url.Parse(str("url")); err == nil && u.Hostname() != "" {
			return []Rule{{Tool: "WebFetch", Content: "domain:" + u.Hostname()}}
		}
	case !scoped[p.Tool]:
		return []Rule{{Tool: p.Tool}}
	}
	return nil
}

// Allows reports whether r covers p, the way the host answers a question
// from the session's stored rules without asking (a new claude process of
// the session does not know the rules its predecessor was given). It is
// stricter than claude: a Bash rule covers a command only when the command
// is the rule's exact text, or its prefix followed by plain arguments
// with no shell operator; a file rule only that file; a rule without
// content only a tool without a scope.
func (r Rule) Allows(p *PermissionRequest) bool {
	if p.Tool == AskUserQuestion || !sameFamily(r.Tool, p.Tool) {
		return false
	}
	if r.Content == "" {
		return !scoped[p.Tool]
	}
	var in map[string]any
	_ = json.Unmarshal(p.Input, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch {
	case p.Tool == "Bash":
		cmd := str("command")
		prefix, wild := strings.CutSuffix(r.Content, ":*")
		if !wild {
			prefix, wild = strings.CutSuffix(r.Content, " *")
		}
		if !wild {
			return cmd == r.Content
		}
		if !bashrule.Plain(cmd) {
			return false
		}
		if why, _ := bashrule.Risk(r.Content); why != "" {
			return false // stored by an older version, which derived "git:*"
		}
		return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
	case fileTools[p.Tool] || p.Tool == "Read":
		path := str("file_path")
		if p.Tool == "NotebookEdit" {
			path = str("notebook_path")
		}
		abs, ok := strings.CutPrefix(r.Content, "//")
		return ok && filepath.IsAbs(path) && filepath.Clean(path) == "/"+abs
	case p.Tool == "WebFetch":
		host, ok := strings.CutPrefix(r.Content, "domain:")
		u, err := url.Parse(str("url"))
		return ok && err == nil && strings.EqualFold(u.Hostname(), host)
	}
	return false
}
