// Package bashrule knows what a Claude Code Bash permission rule lets
// through: the rule an "always" answer derives for a shell command
// ([Derive]) and why a rule lets arbitrary code run ([Risk]). The runner
// derives and honours rules with it, `clawhost security audit` judges the
// file's allowed_tools with it: one list of the programs that run code
// through their arguments, one parser of a subcommand tool's options.
//
// A rule's content is a command ("npm test": exactly that command) or a
// prefix followed by ":*" or " *" ("git log:*": the command's words, then
// any arguments). A derived prefix is always a prefix of the command's own
// words up to and including its subcommand, the options before the
// subcommand included ("git -C /srv status:*"), never the program alone for
// a tool with subcommands.
package bashrule

import (
	"path/filepath"
	"strings"
)

// shellOperators separate, redirect, expand or quote-escape commands: a
// command holding one is never covered by a prefix rule on this side
// (claude splits compound commands and checks each part; the host does
// not parse shell).
const shellOperators = ";&|<>`$(){}\n\r\\*?[]~!#"

// Plain reports whether cmd is one simple command a prefix rule may
// cover: no shell operator, no space but the plain one.
func Plain(cmd string) bool {
	return !strings.ContainsAny(cmd, shellOperators) && !strings.ContainsFunc(cmd, func(r rune) bool { return r != ' ' && isSpace(r) })
}

func isSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x180E, 0x200B, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// codeRunners run another command, or any code, named by their arguments:
// a prefix rule of one of them allows everything, so "always" derives none
// and the audit reports one. The value says how.
var codeRunners = map[string]string{
	"sh": "a shell runs any command (sh -c '…')", "bash": "a shell runs any command (bash -c '…')",
	"zsh": "a shell runs any command", "dash": "a shell runs any command", "fish": "a shell runs any command",
	"ksh": "a shell runs any command", "csh": "a shell runs any command", "tcsh": "a shell runs any command",
	"busybox": "busybox sh runs any command",
	"env":     "env runs the command its arguments name (env sh -c '…')",
	"sudo":    "sudo runs any command as root", "su": "su runs any command as another user", "doas": "doas runs any command as root",
	"xargs": "xargs runs the command its arguments name",
	"eval":  "eval runs its arguments as shell", "exec": "exec runs the command its arguments name",
	"source": "source runs a file as shell", ".": ". runs a file as shell",
	"nohup": "nohup runs the command its arguments name", "timeout": "timeout runs the command its arguments name",
	"nice": "nice runs the command its arguments name", "ionice": "ionice runs the command its arguments name",
	"time": "time runs the command its arguments name", "command": "command runs the command its arguments name",
	"builtin": "builtin runs the builtin its arguments name", "watch": "watch runs its arguments as shell",
	"strace": "strace runs the command its arguments name", "ltrace": "ltrace runs the command its arguments name",
	"setsid": "setsid runs the command its arguments name", "stdbuf": "stdbuf runs the command its arguments name",
	"taskset": "taskset runs the command its arguments name", "flock": "flock runs the command its arguments name",
	"chroot": "chroot runs the command its arguments name", "unshare": "unshare runs the command its arguments name",
	"parallel": "parallel runs the commands its arguments name", "script": "script runs its arguments as shell",
	"expect": "expect runs any script",
	"python": "python runs any code (python -c '…')", "python2": "python runs any code (python -c '…')",
	"python3": "python runs any code (python3 -c '…')", "pypy": "python runs any code", "pypy3": "python runs any code",
	"ipython": "python runs any code",
	"node":    "node runs any code (node -e '…')", "deno": "deno runs any code (deno eval '…')", "bun": "bun runs any code (bun -e '…')",
	"bunx": "bunx runs any package", "tsx": "tsx runs any code", "ts-node": "ts-node runs any code (ts-node -e '…')",
	"npx": "npx downloads and runs any package", "pnpx": "pnpx downloads and runs any package", "uvx": "uvx downloads and runs any package",
	"perl": "perl runs any code (perl -e '…')", "ruby": "ruby runs any code (ruby -e '…')", "irb": "irb runs any code",
	"php": "php runs any code (php -r '…')", "lua": "lua runs any code (lua -e '…')", "tclsh": "tclsh runs any code",
	"Rscript": "Rscript runs any code (Rscript -e '…')", "R": "R runs any code", "osascript": "osascript runs any code",
	"awk": "awk runs any command (system(\"…\"))", "gawk": "awk runs any command (system(\"…\"))",
	"mawk": "awk runs any command (system(\"…\"))", "nawk": "awk runs any command (system(\"…\"))",
	"sed":     "sed runs any command (GNU sed's e command) and writes any file (w, -i)",
	"find":    "find runs any command (-exec, -execdir, -ok) and deletes files (-delete)",
	"ssh":     "ssh runs any command on the host it reaches, and -o ProxyCommand=… here",
	"docker":  "docker runs any container, with the host's files mounted (docker run -v /:/host)",
	"podman":  "podman runs any container, with the host's files mounted",
	"kubectl": "kubectl runs any command in the cluster (kubectl exec, run)",
}

// tool is what this package knows of a program that takes a subcommand:
// its options that may come before the subcommand.
type tool struct {
	// value are options that take the next word as their value (-C dir);
	// an option written --name=value is one word whatever its name.
	value map[string]bool
	// flag are options that take no value.
	flag map[string]bool
	// runs are subcommands that run any program or code their arguments
	// name (go run, npm exec): "always" derives the exact command only.
	runs map[string]string
	// named are subcommands whose next word is what they act on (npm run
	// build): the rule names it too.
	named map[string]bool
	// exact, when set, says why no prefix of this tool is narrow: "always"
	// derives the exact command only.
	exact string
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// tools take a subcommand as their first word that is not an option: a
// rule names the subcommand (and every option before it), never the
// program alone — "git:*" allows git -c core.sshCommand=… and aliases
// that run shell commands. An option before the subcommand that is not
// listed here makes the subcommand uncertain (does it take a value?):
// "always" then derives the exact command.
var tools = map[string]tool{
	"git": {
		value: set("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"),
		flag: set("-p", "-P", "--paginate", "--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs",
			"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-advice", "--no-lazy-fetch"),
	},
	"go":   {value: set("-C"), runs: map[string]string{"run": "go run builds and runs any program", "generate": "go generate runs the commands the sources name", "tool": "go tool runs any tool, and any module's (go tool -modfile)"}},
	"npm":  {value: set("--prefix", "-w", "--workspace"), flag: set("-g", "--global", "-s", "--silent", "-q", "--quiet", "-ws", "--workspaces"), runs: map[string]string{"exec": "npm exec downloads and runs any package", "x": "npm x downloads and runs any package", "init": "npm init runs any create-* package", "create": "npm create runs any create-* package", "explore": "npm explore runs any command"}, named: set("run", "run-script")},
	"pnpm": {value: set("-C", "--dir", "-F", "--filter"), flag: set("-r", "--recursive", "-w", "--workspace-root", "-s", "--silent"), runs: map[string]string{"exec": "pnpm exec runs any command", "dlx": "pnpm dlx downloads and runs any package", "create": "pnpm create runs any create-* package"}, named: set("run")},
	"yarn": {value: set("--cwd"), flag: set("-s", "--silent"), runs: map[string]string{"exec": "yarn exec runs any command", "dlx": "yarn dlx downloads and runs any package", "create": "yarn create runs any create-* package", "node": "yarn node runs any code"}, named: set("run")},
	"cargo": {value: set("-C", "-Z", "--color"), flag: set("-q", "--quiet", "-v", "--verbose", "--frozen", "--locked", "--offline"),
		runs: map[string]string{"run": "cargo run builds and runs any program", "install": "cargo install builds and installs any crate", "script": "cargo script runs any code"}},
	"make":      {exact: "make takes options and variables after its targets too (make build -f any.mk, make build SHELL=…), so every make prefix runs any recipe"},
	"pip":       {flag: set("-q", "--quiet", "-v", "--verbose", "--isolated", "--no-cache-dir", "--disable-pip-version-check")},
	"pip3":      {flag: set("-q", "--quiet", "-v", "--verbose", "--isolated", "--no-cache-dir", "--disable-pip-version-check")},
	"uv":        {value: set("--directory", "--project"), flag: set("-q", "--quiet", "-v", "--verbose", "--offline"), runs: map[string]string{"run": "uv run runs any command", "tool": "uv tool run runs any package"}},
	"gh":        {value: set("-R", "--repo")},
	"systemctl": {value: set("-H", "--host", "-M", "--machine"), flag: set("--user", "--system", "--no-pager", "-q", "--quiet")},
	"apt":       {flag: set("-y", "-q", "--yes", "--quiet")},
	"brew":      {},
	"terraform": {},
}

// Derive is the rule content an "always" grants for cmd when claude
// suggests none: the command's words up to and including its subcommand
// followed by ":*" ("git log:*", "git -C /srv status:*", "npm run
// build:*"; a program without subcommands, its name: "touch:*"), or the
// exact command when a prefix cannot be narrow (a subcommand tool with no
// subcommand or an option this package does not know before it, or a
// subcommand that runs any code: "go run ./cmd/x"; make, whose options
// may follow its targets). False: no rule at all
// — empty, compound or redirected, an assignment, a path, quoting before
// the subcommand, or a program in codeRunners (sh, python, sudo, sed …).
func Derive(cmd string) (string, bool) {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || !Plain(cmd) {
		return "", false
	}
	words := strings.Fields(cmd)
	first := words[0]
	if strings.ContainsAny(first, "=/'\"") || strings.HasPrefix(first, "-") || codeRunners[first] != "" {
		return "", false
	}
	t, ok := tools[first]
	if !ok {
		return first + ":*", true
	}
	sub, ok := t.subcommand(words)
	switch {
	case t.exact != "" || !ok || sub >= len(words):
		return strings.Join(words, " "), true
	case t.runs[words[sub]] != "":
		return strings.Join(words, " "), true
	}
	end := sub + 1
	if t.named[words[sub]] {
		if end >= len(words) || !plainWord(words[end]) {
			return strings.Join(words, " "), true
		}
		end++
	}
	if quoted(words[:end]) {
		return "", false
	}
	return strings.Join(words[:end], " ") + ":*", true
}

// subcommand is the index of the subcommand in words (words[0] is the
// program): the first word after the options t knows; len(words) when
// there is none. False when an option before it is unknown, its value is
// missing, or the word found is not a plain subcommand name.
func (t tool) subcommand(words []string) (int, bool) {
	i := 1
	for i < len(words) && strings.HasPrefix(words[i], "-") {
		w := words[i]
		name, _, eq := strings.Cut(w, "=")
		switch {
		case w == "-" || w == "--":
			return 0, false
		case eq && strings.HasPrefix(name, "--"):
			i++
		case t.value[w]:
			if i+1 >= len(words) {
				return 0, false
			}
			i += 2
		case t.flag[w]:
			i++
		default:
			return 0, false
		}
	}
	if i < len(words) && !plainWord(words[i]) {
		return 0, false
	}
	return i, true
}

// plainWord is a subcommand's or a script's name: lower-case letters,
// digits, '-', '_', '.' and ':', not starting with '-'.
func plainWord(w string) bool {
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':') {
			return false
		}
	}
	return w != "" && w[0] != '-'
}

// quoted reports whether a word holds a quote: the shell would join it
// with its neighbours, so the words seen here are not the words run.
func quoted(words []string) bool {
	for _, w := range words {
		if strings.ContainsAny(w, `'"`) {
			return true
		}
	}
	return false
}

// Prefix splits a Bash rule's content into its command prefix and whether
// it is a wildcard rule: "git log:*" and "git log *" are the prefix "git
// log"; a "*" anywhere else cuts the prefix there ("git * status" is
// "git"); "npm test" is the exact command.
func Prefix(content string) (string, bool) {
	if p, ok := strings.CutSuffix(content, ":*"); ok && !strings.Contains(p, "*") {
		return strings.TrimSpace(p), true
	}
	if i := strings.IndexByte(content, '*'); i >= 0 {
		return strings.TrimRight(strings.TrimSpace(content[:i]), ":"), true
	}
	return content, false
}

// Risk says why a Bash rule lets arbitrary code run, and what to allow
// instead; both empty when it does not. content is the rule's content
// (what is between "Bash(" and ")"), empty for a bare "Bash". An exact
// command is never a risk here (it allows that command only); a prefix is
// when it is empty, when its program is in codeRunners, when it names a
// subcommand tool without its subcommand ("git:*", "git -C x:*"), a
// subcommand that runs any code ("go run:*"), or any make prefix.
func Risk(content string) (why, instead string) {
	prefix, wild := Prefix(strings.TrimSpace(content))
	if content == "" || wild && prefix == "" {
		return "it allows every shell command", `allow the commands needed, e.g. "Bash(git log:*)", "Bash(npm test)"`
	}
	if !wild {
		return "", ""
	}
	words := strings.Fields(prefix)
	prog := filepath.Base(words[0])
	if how := codeRunners[prog]; how != "" {
		return "a prefix rule of " + prog + " allows any code: " + how,
			"write each command needed exactly, without a wildcard (\"Bash(" + prog + " <its arguments>)\"), or leave them to approvals"
	}
	t, ok := tools[prog]
	if !ok {
		return "", ""
	}
	if t.exact != "" {
		return t.exact, "allow the exact commands needed, without a wildcard: " + insteadOf(prog)
	}
	sub, ok := t.subcommand(words)
	if !ok || sub >= len(words) {
		return "it allows every " + prog + " subcommand, and options before it that run code (" + example(prog) + ")",
			"allow each subcommand needed: " + insteadOf(prog)
	}
	if how := t.runs[words[sub]]; how != "" {
		return how, "write each command needed exactly, without a wildcard (\"Bash(" + strings.Join(words[:sub+1], " ") + " <its arguments>)\"), or leave them to approvals"
	}
	return "", ""
}

func example(prog string) string {
	switch prog {
	case "git":
		return "git -c core.sshCommand=… fetch, git -c alias.x='!…' x"
	case "go":
		return "go run, go generate"
	case "npm", "pnpm", "yarn":
		return prog + " exec, " + prog + " run with any script"
	case "cargo":
		return "cargo run, cargo --config with a runner"
	}
	return prog + " with any options"
}

func insteadOf(prog string) string {
	switch prog {
	case "git":
		return `"Bash(git status:*)", "Bash(git log:*)", "Bash(git diff:*)"`
	case "go":
		return `"Bash(go build:*)", "Bash(go test:*)", "Bash(go vet:*)"`
	case "npm", "pnpm", "yarn":
		return `"Bash(` + prog + ` test)", "Bash(` + prog + ` run build:*)"`
	case "make":
		return `"Bash(make build)", "Bash(make test)"`
	case "cargo":
		return `"Bash(cargo build:*)", "Bash(cargo test:*)"`
	}
	return `"Bash(` + prog + ` <subcommand>:*)"`
}
