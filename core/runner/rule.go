package runner

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
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
// Bash, the command's first word(s) ("git log:*"); a file tool, the file
// (Edit(//path)); Read, the file; WebFetch, the host; a tool without a
// scope, itself. Suggestions that change the mode or add directories are
// wider than the call and are not taken. Empty: no exact rule (a compound
// shell command, an interpreter, a wrapper like sudo): "always" is not
// offered.
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
			if !sameFamily(rule.Tool, p.Tool) || (scoped[p.Tool] && rule.Content == "") || (p.Tool != "Bash" && strings.Contains(rule.Content, "*")) {
				return derived(p) // a suggestion wider than the call (a tool, a directory): derive our own
			}
			out = append(out, rule)
		}
	}
	if len(out) > 0 {
		return out
	}
	return derived(p)
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
		if prefix, ok := commandPrefix(str("command")); ok {
			return []Rule{{Tool: "Bash", Content: prefix + ":*"}}
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

// shellOperators separate or redirect commands: a command holding one is
// never covered by a prefix rule on this side (claude splits compound
// commands and checks each part; the host does not parse shell).
const shellOperators = ";&|<>`$(){}\n\r\\*?[]~!#"

// wrappers run another command (or any code) given as arguments: a prefix
// rule of one of them allows everything.
var wrappers = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "fish": true, "env": true, "sudo": true, "su": true, "doas": true,
	"xargs": true, "eval": true, "exec": true, "nohup": true, "timeout": true, "nice": true, "time": true, "command": true,
	"builtin": true, "watch": true, "strace": true, "python": true, "python3": true, "node": true, "perl": true, "ruby": true,
	"php": true, "lua": true, "awk": true, "find": true, "ssh": true, "docker": true, "kubectl": true, "npx": true,
}

// subcommands take a subcommand as their second word: the rule names both
// ("git log").
var subcommands = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "cargo": true, "gh": true, "pip": true,
	"pip3": true, "uv": true, "make": true, "systemctl": true, "apt": true, "brew": true, "terraform": true,
}

// commandPrefix is the first word of a simple command — and its
// subcommand for tools like git — or false for a command no prefix rule
// should cover: compound or redirected, an assignment, a wrapper.
func commandPrefix(cmd string) (string, bool) {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || strings.ContainsAny(cmd, shellOperators) || strings.ContainsFunc(cmd, func(r rune) bool { return r != ' ' && isSpace(r) }) {
		return "", false
	}
	words := strings.Fields(cmd)
	first := words[0]
	if strings.ContainsAny(first, "=/'\"") || wrappers[first] || strings.HasPrefix(first, "-") {
		return "", false
	}
	if subcommands[first] && len(words) > 1 && plainWord(words[1]) {
		return first + " " + words[1], true
	}
	return first, true
}

func plainWord(w string) bool {
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return w != "" && w[0] != '-'
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x180E, 0x200B, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
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
		if strings.ContainsAny(cmd, shellOperators) || strings.ContainsFunc(cmd, func(r rune) bool { return r != ' ' && isSpace(r) }) {
			return false
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
