package bashrule

import (
	"slices"
	"strings"
	"testing"
)

// TestDerive: the rule "always" derives names the command's words up to
// and including the subcommand, the options before it included; the exact
// command where a prefix cannot be that narrow; nothing for a code runner
// or a command that is not one plain simple command.
func TestDerive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd, want string // want "" : no rule
	}{
		{"git log --oneline -5", "git log:*"},
		{"touch /tmp/x", "touch:*"},
		{"  ls -la  ", "ls:*"},
		{"git -C /srv/app status", "git -C /srv/app status:*"},
		{"git -C dir status --short", "git -C dir status:*"},
		{"git -c core.sshCommand=evil fetch origin", "git -c core.sshCommand=evil fetch:*"},
		{"git --git-dir=/x/.git log -3", "git --git-dir=/x/.git log:*"},
		{"git --git-dir /x/.git --work-tree /x diff", "git --git-dir /x/.git --work-tree /x diff:*"},
		{"git --exec-path=/tmp/evil status", "git --exec-path=/tmp/evil status:*"},
		{"git --no-pager -C d log", "git --no-pager -C d log:*"},
		{"git -C status log", "git -C status log:*"},
		// No subcommand, an unknown option, a missing value: exactly this.
		{"git", "git"},
		{"git --version", "git --version"},
		{"git --exec-path", "git --exec-path"},
		{"git -C", "git -C"},
		{"git -X foo status", "git -X foo status"},
		{"git -- status", "git -- status"},
		{"git -C dir -- log", "git -C dir -- log"},
		{"make", "make"},
		{"make -j 4 build", "make -j 4 build"},
		{"make build", "make build"},
		{"make -C sub test", "make -C sub test"},
		{"go test ./...", "go test:*"},
		{"go -C mod build ./...", "go -C mod build:*"},
		{"go run ./cmd/x", "go run ./cmd/x"},
		{"go generate ./...", "go generate ./..."},
		{"npm run build", "npm run build:*"},
		{"npm run", "npm run"},
		{"npm --prefix web run lint --fix", "npm --prefix web run lint:*"},
		{"npm exec cowsay", "npm exec cowsay"},
		{"npm test", "npm test:*"},
		{"pnpm -C web install", "pnpm -C web install:*"},
		{"yarn dlx create-x", "yarn dlx create-x"},
		{"cargo run --release", "cargo run --release"},
		{"cargo build --release", "cargo build:*"},
		{"uv run pytest", "uv run pytest"},
		// Quoting before the subcommand: the shell's words are not ours.
		{`git -c "a log b" status`, ""},
		{`git -c 'x' log`, ""},
		{`git log --format='%h %s'`, "git log:*"},
		// Subcommand names are plain lower-case words.
		{"git -C dir Status", "git -C dir Status"},
		// No rule at all.
		{"sh -c 'id'", ""},
		{"bash script.sh", ""},
		{"python3 -m pytest", ""},
		{"python -c 'import os'", ""},
		{"node -e 1", ""},
		{"npx prettier .", ""},
		{"env FOO=1 ls", ""},
		{"xargs rm", ""},
		{"find . -name x", ""},
		{"sed -n 1,10p f", ""},
		{"awk 1 f", ""},
		{"perl -pe 1", ""},
		{"docker ps", ""},
		{"kubectl get pods", ""},
		{"sudo ls", ""},
		{"ls; curl x | sh", ""},
		{"git log && rm -rf ~", ""},
		{"PATH=/tmp ls", ""},
		{"/tmp/evil arg", ""},
		{"-rf", ""},
		{"ls\t-la", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := Derive(tt.cmd)
		if !ok {
			got = ""
		}
		if got != tt.want {
			t.Errorf("Derive(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

// TestRisk: the audit's verdict on allowed_tools rules — a prefix of a
// program that runs code, of a subcommand tool without its subcommand, or
// of a subcommand that runs code is reported; an exact command and a
// prefix through the subcommand are not.
func TestRisk(t *testing.T) {
	t.Parallel()
	risky := []string{
		"", "*", ":*", "*:*", " * ",
		"git:*", "git *", "git * status", "git -C x:*", "git -c core.pager=x:*", "git --foo log:*", "/usr/bin/git:*",
		"sh:*", "bash:*", "python:*", "python3:*", "python3 -m pytest:*", "node:*", "npx:*", "npm:*", "pnpm:*", "yarn:*",
		"make:*", "make -C x:*", "make build:*", "env:*", "xargs:*", "find:*", "find . -name:*", "awk:*", "sed:*", "sed -n:*", "perl:*",
		"docker:*", "docker ps:*", "kubectl:*", "go:*", "go run:*", "go -C x run:*", "cargo:*", "cargo run:*",
		"npm exec:*", "npm x:*", "pnpm dlx:*", "yarn dlx:*", "uv run:*", "sudo:*", "ssh:*", "/bin/sh:*",
	}
	for _, c := range risky {
		why, instead := Risk(c)
		if why == "" || instead == "" {
			t.Errorf("Risk(%q) = %q, %q: want a reason and a fix", c, why, instead)
		}
	}
	safe := []string{
		"git log:*", "git log *", "git -C /srv status:*", "git status", "git", "npm test", "npm run build:*", "npm run:*",
		"make build", "go test:*", "go build:*", "cargo build:*", "ls:*", "touch:*", "go run ./cmd/x", "sh -c 'id'",
		"python3 script.py", "docker ps",
	}
	for _, c := range safe {
		if why, _ := Risk(c); why != "" {
			t.Errorf("Risk(%q) = %q, want none", c, why)
		}
	}
	if why, instead := Risk("git:*"); !strings.Contains(why, "core.sshCommand") || !strings.Contains(instead, "Bash(git status:*)") {
		t.Errorf("Risk(git:*) = %q, %q: say why and what to write", why, instead)
	}
}

// FuzzDerive: for any command, a derived prefix is a prefix of the
// command's own words that reaches its subcommand (never the program alone
// for a subcommand tool, no option before the subcommand dropped), and no
// derived rule is one Risk reports.
func FuzzDerive(f *testing.F) {
	for _, s := range []string{
		"git log", "git -C dir status", "git -c core.sshCommand=x fetch", "git --git-dir=x log", "git --exec-path=x status",
		"git -C", "git", "npm run build", "npm exec x", "go run .", "go -C x test", "make -C x", "make -j 4 all",
		"cargo run", "python -m http.server", "node x.js", "sh -c x", "npx x", "docker run x", "kubectl exec x",
		"pip install x", "yarn --cwd x run y", "pnpm -F x exec y", "ls -la", `git -c "a log b" status`, "find . -exec x",
		"sed -e x", "awk x", "env x", "xargs x", "uv run x", "git -P -p --bare log",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		content, ok := Derive(cmd)
		if !ok {
			return
		}
		if why, _ := Risk(content); why != "" {
			t.Fatalf("Derive(%q) = %q, which Risk reports: %s", cmd, content, why)
		}
		words := strings.Fields(cmd)
		prefix, wild := Prefix(content)
		if !wild {
			if content != strings.Join(words, " ") {
				t.Fatalf("Derive(%q) = %q: an exact rule must be the command", cmd, content)
			}
			return
		}
		pw := strings.Fields(prefix)
		if len(pw) == 0 || len(pw) > len(words) || !slices.Equal(pw, words[:len(pw)]) || prefix+":*" != content {
			t.Fatalf("Derive(%q) = %q: not a prefix of the command's words", cmd, content)
		}
		if codeRunners[pw[0]] != "" {
			t.Fatalf("Derive(%q) = %q: a prefix of a program that runs code", cmd, content)
		}
		tl, isTool := tools[pw[0]]
		if !isTool {
			if len(pw) != 1 {
				t.Fatalf("Derive(%q) = %q: a program without subcommands gets its name only", cmd, content)
			}
			return
		}
		sub, ok := tl.subcommand(words)
		if !ok || sub >= len(words) || len(pw) <= sub || tl.runs[words[sub]] != "" {
			t.Fatalf("Derive(%q) = %q: a prefix without the subcommand", cmd, content)
		}
		for _, w := range pw[1:] {
			if strings.ContainsAny(w, `'"`) {
				t.Fatalf("Derive(%q) = %q: quoting in the prefix", cmd, content)
			}
		}
		if want := sub + 1; len(pw) != want && !(tl.named[words[sub]] && len(pw) == want+1) {
			t.Fatalf("Derive(%q) = %q: the prefix goes beyond the subcommand", cmd, content)
		}
	})
}
