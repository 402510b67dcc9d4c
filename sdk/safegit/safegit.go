// Package safegit runs git on a repository someone else can write — the
// workspace or worktree of a chat, which the chat's claude (in its sandbox)
// changes at will — without running anything that repository's files name.
//
// Git runs programs its configuration and the repository name: hooks, the
// fsmonitor daemon, clean/smudge/process filters and textconv or external
// diff drivers (named by .gitattributes, defined in configuration), a pager,
// an editor, ssh and credential helpers, gpg, a remote's receive-pack. A
// sandbox that can write .git/config, .git/hooks or .gitattributes could
// make a git the plugin runs outside the sandbox run its program. A Runner
// turns every one of them off:
//
//   - the environment is built from nothing: PATH, the C locale, HOME and
//     the global configuration /dev/null, no system configuration or
//     attributes, no replace refs, no prompts, no optional locks, and only
//     the file, https and ssh transports (GIT_ALLOW_PROTOCOL, which
//     outranks the repository's protocol.<name>.allow: ext::<command> is
//     a transport that runs a program);
//   - the working tree, the git directory and the common directory are
//     given (GIT_WORK_TREE, GIT_DIR, GIT_COMMON_DIR), never discovered: a
//     planted core.worktree cannot move the working tree, and a .git file
//     is followed only to the repository's own worktree admin directory
//     (Locate), never to another agent's repository;
//   - configuration given through GIT_CONFIG_COUNT, which outranks every
//     file's and reaches the git processes git itself starts, turns off the
//     keys that run a program (Neutral);
//   - before each command, the keys the repository's configuration holds
//     (its includes too) are listed, and every filter, diff driver,
//     credential helper and remote pack program they define is overridden
//     by an empty (or the stock) value, and every protocol.<name>.allow by
//     never;
//   - diff, log and show get --no-ext-diff and --no-textconv; status and diff
//     ignore submodules, whose own configuration is never read; push, fetch
//     and ls-remote name the stock receive-pack and upload-pack.
//
// Git's configuration is read again by each git process, so a repository
// changed between the listing and the command could still define a driver
// the listing did not see: run commands when the chat's agent is idle, as
// the host's own /worktree commands do. A remote's URLs (remote.<name>.url,
// pushurl) and URL rewrites (url.*.insteadOf) are many-valued and cannot be
// overridden: Runner.Redirects reports every key that would send a push to
// a target somewhere else, and a push must be refused when there is one.
//
// The package uses only the standard library; the host's own git on a
// chat's worktree (core/worktree) runs through a Runner too.
package safegit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Neutral is the configuration every git a Runner starts gets, whatever the
// repository says: each key runs a program, or lets one run (a hook, the
// fsmonitor daemon, ssh, a credential helper, a pager, an editor, an
// external diff, gpg), or recurses into submodules (whose configuration is
// not checked), or fetches. The transports are Env's GIT_ALLOW_PROTOCOL's;
// protocol.allow never is for a git too old to know it.
var Neutral = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", os.DevNull},
	{"core.untrackedCache", "false"},
	{"core.sshCommand", "false"},
	{"core.pager", "cat"},
	{"core.editor", "false"},
	{"core.askPass", ""},
	{"core.alternateRefsCommand", ""},
	{"sequence.editor", "false"},
	{"credential.helper", ""},
	{"diff.external", ""},
	{"gpg.program", "false"},
	{"gpg.openpgp.program", "false"},
	{"gpg.x509.program", "false"},
	{"gpg.ssh.program", "false"},
	{"gpg.ssh.defaultKeyCommand", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"push.gpgSign", "false"},
	{"log.showSignature", "false"},
	{"protocol.allow", "never"},
	{"submodule.recurse", "false"},
	{"push.recurseSubmodules", "no"},
	{"fetch.recurseSubmodules", "false"},
	{"status.submoduleSummary", "false"},
	{"diff.ignoreSubmodules", "all"},
	{"safe.bareRepository", "explicit"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
}

// Protocols are the transports git may use (GIT_ALLOW_PROTOCOL): local
// paths and file:// URLs, https and ssh. The environment outranks every
// configuration file: a repository's protocol.ext.allow = always cannot
// let ext::<command> (or any other transport) in.
const Protocols = "file:https:ssh"

// Env is the environment of a git started on a repository someone else can
// write: PATH (path), the C locale, no prompts, HOME and the global
// configuration /dev/null, no system configuration or attributes, no
// replace refs or optional locks, no pager or editor, the transports of
// Protocols only, and the configuration Neutral then extra (later keys
// win).
func Env(path string, extra ...[2]string) []string {
	e := []string{
		"PATH=" + path, "LC_ALL=C", "HOME=" + os.DevNull, "GIT_TERMINAL_PROMPT=0", "GIT_ALLOW_PROTOCOL=" + Protocols,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_ATTR_NOSYSTEM=1", "GIT_NO_REPLACE_OBJECTS=1",
		"GIT_OPTIONAL_LOCKS=0", "GIT_PAGER=cat", "PAGER=cat", "GIT_EDITOR=false", "GIT_SEQUENCE_EDITOR=false",
		"GIT_ASKPASS=", "SSH_ASKPASS=",
	}
	kvs := append(append([][2]string(nil), Neutral...), extra...)
	e = append(e, "GIT_CONFIG_COUNT="+strconv.Itoa(len(kvs)))
	for i, kv := range kvs {
		n := strconv.Itoa(i)
		e = append(e, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	return e
}

// Runner runs git in one repository's working tree.
type Runner struct {
	// Dir is the top of the working tree (where .git is), absolute: the
	// repository's own, or one of its worktrees (see Locate).
	Dir string
	// Git is the git program; "" is "git" looked up in PATH.
	Git string
	// PATH is git's PATH; "" is the process's.
	PATH string
	// Config is configuration given after Neutral and the overrides
	// (user.name, user.email, core.sshCommand …): the caller's, never
	// the repository's.
	Config [][2]string
}

// Error is a git command that failed: its exit and what it said.
type Error struct {
	// Args are the git arguments (without the options the Runner adds).
	Args []string
	// Stderr is what git said, trimmed.
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("git %s: %v: %s", strings.Join(e.Args, " "), e.Err, e.Stderr)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotRepository: Dir is not the top of a git working tree.
var ErrNotRepository = errors.New("not the top of a git working tree")

// Check reports why Dir is not a working tree a Runner runs git in:
// ErrNotRepository when it holds no .git, ErrRedirected (both wrapped)
// when its .git leads to another repository (Locate, Unlinked).
func (r Runner) Check() error {
	_, err := r.layout()
	return err
}

// layout is Dir's layout, when git run on it reads only its repository.
func (r Runner) layout() (Layout, error) {
	l, err := Locate(r.Dir)
	if err != nil {
		return l, err
	}
	return l, Unlinked(l)
}

// Run runs git args in Dir and returns its standard output. Before the
// command it lists the repository's configuration keys (overrides).
func (r Runner) Run(ctx context.Context, args ...string) ([]byte, error) {
	return r.RunInput(ctx, nil, args...)
}

// RunInput is Run with stdin (nil: none).
func (r Runner) RunInput(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	l, keys, err := r.keys(ctx)
	if err != nil {
		return nil, err
	}
	extra := append(overrides(keys), r.Config...)
	return r.exec(ctx, l, Env(r.path(), extra...), stdin, hardened(args))
}

// Redirects lists what in the repository would send a push to target (a
// path or URL, as given to git push) somewhere else, or through a program
// of the repository's choosing — none of it can be taken back by
// configuration, since URLs are many-valued: the target's own remote
// section (remote.<target>.url, pushurl, receivepack, vcs, …), URL
// rewrites (url.<base>.insteadOf, pushInsteadOf), and for a target
// without a slash the legacy remotes/<target> and branches/<target>
// files. A push must be refused when the list is not empty.
func (r Runner) Redirects(ctx context.Context, target string) ([]string, error) {
	l, keys, err := r.keys(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range keys {
		section, sub, name := split(k)
		switch {
		case section == "url" && (name == "insteadof" || name == "pushinsteadof"):
			out = append(out, k)
		case section == "remote" && strings.EqualFold(sub, target):
			out = append(out, k)
		}
	}
	if !strings.Contains(target, "/") {
		for _, f := range []string{"remotes", "branches"} {
			if _, err := os.Lstat(filepath.Join(l.CommonDir, f, target)); err == nil {
				out = append(out, filepath.Join(".git", f, target))
			}
		}
	}
	return out, nil
}

// keys finds the repository's layout and lists the configuration keys git
// sees in it (every file, includes followed), lowercased where git
// lowercases them. Listing runs nothing the configuration names.
func (r Runner) keys(ctx context.Context) (Layout, []string, error) {
	l, err := r.layout()
	if err != nil {
		return l, nil, err
	}
	out, err := r.exec(ctx, l, Env(r.path()), nil, []string{"config", "--list", "--name-only", "-z"})
	if err != nil {
		return l, nil, err
	}
	var keys []string
	for _, k := range strings.Split(string(out), "\x00") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return l, keys, nil
}

// split cuts a configuration key into its section and name (lowercase) and
// its subsection (as written; it may hold dots).
func split(key string) (section, sub, name string) {
	i, j := strings.Index(key, "."), strings.LastIndex(key, ".")
	if i < 0 || i == j {
		section, name, _ = strings.Cut(key, ".")
		return strings.ToLower(section), "", strings.ToLower(name)
	}
	return strings.ToLower(key[:i]), key[i+1 : j], strings.ToLower(key[j+1:])
}

// overrides are the values that take back what the repository's keys
// define: a filter's programs (empty: no filter) and its requirement, a
// diff driver's textconv and command, a credential helper, a remote's
// proxy, a transport's permission (never: GIT_ALLOW_PROTOCOL decides).
// (A remote's pack programs keep their first value: hardened gives them
// as options.)
func overrides(keys []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, [2]string{k, v})
		}
	}
	for _, k := range keys {
		section, sub, name := split(k)
		if sub == "" {
			continue
		}
		switch {
		case section == "filter" && (name == "clean" || name == "smudge" || name == "process"):
			add(k, "")
		case section == "filter" && name == "required":
			add(k, "false")
		case section == "diff" && (name == "textconv" || name == "command"):
			add(k, "")
		case section == "credential" && name == "helper":
			add(k, "")
		case section == "remote" && name == "proxy":
			add(k, "")
		case section == "protocol" && name == "allow":
			add(k, "never")
		}
	}
	return out
}

// hardened adds to a command the options that keep it from reading what
// it need not: no external diff or textconv for the diffing commands, no
// submodules for status and diff, the stock pack programs for the
// transports.
func hardened(args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := []string{args[0]}
	switch args[0] {
	case "diff", "log", "show":
		out = append(out, "--no-ext-diff", "--no-textconv", "--ignore-submodules=all")
	case "status":
		out = append(out, "--ignore-submodules=all")
	case "push":
		// remote.<name>.receivepack keeps its first value: an option
		// outranks it.
		out = append(out, "--receive-pack=git-receive-pack", "--no-recurse-submodules")
	case "fetch", "ls-remote":
		out = append(out, "--upload-pack=git-upload-pack")
	}
	return append(out, args[1:]...)
}

func (r Runner) path() string {
	if r.PATH != "" {
		return r.PATH
	}
	return os.Getenv("PATH")
}

func (r Runner) exec(ctx context.Context, l Layout, env []string, stdin []byte, args []string) ([]byte, error) {
	bin := r.Git
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--no-pager", "-C", l.WorkTree}, args...)...)
	// The working tree is Dir whatever core.worktree says; the
	// repository is the one Locate accepted, whatever a .git file or a
	// commondir file says.
	cmd.Env = append(env, "GIT_WORK_TREE="+l.WorkTree, "GIT_DIR="+l.GitDir, "GIT_COMMON_DIR="+l.CommonDir)
	cmd.Dir = l.WorkTree
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &Error{Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return out, nil
}
