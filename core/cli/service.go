package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/bubblewrap"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/clawhost/clawhost/core/service"
	"github.com/clawhost/clawhost/core/setup"
)

const serviceUsage = "usage: clawhost service install|uninstall|status|logs [-config FILE] [-user|-system] [-run-as USER] [-dir DIR] [-no-start] [-force] [-json] [-f]"

// serviceEnv is what `clawhost service` reads of the machine and runs on
// it; tests replace it to record the service manager's commands.
type serviceEnv struct {
	goos       string
	uid        int
	getenv     func(string) string
	executable func() (string, error)
	lookPath   func(string) (string, error)
	userExists func(string) bool
	// lookupUser finds an existing account (the -run-as user, the system account).
	lookupUser func(string) (*runas.User, error)
	runner     service.Runner
	// logs runs the service manager's log command with the terminal's output.
	logs func(ctx context.Context, name string, args ...string) error
}

// machineServiceEnv is this machine.
func machineServiceEnv() serviceEnv {
	return serviceEnv{
		goos:       runtime.GOOS,
		uid:        os.Getuid(),
		getenv:     os.Getenv,
		executable: os.Executable,
		lookPath:   exec.LookPath,
		userExists: func(name string) bool { _, err := user.Lookup(name); return err == nil },
		lookupUser: runas.Lookup,
		runner:     service.ExecRunner{},
		logs: func(ctx context.Context, name string, args ...string) error {
			cmd := exec.CommandContext(ctx, name, args...)
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			return cmd.Run()
		},
	}
}

// serviceFlags are the flags of `clawhost service`.
type serviceFlags struct {
	config                  string
	system, user            bool
	dir                     string
	noStart, force, jsonOut bool
	// runAs is the account a system unit runs as instead of clawhost's own.
	runAs  string
	follow bool
}

func serviceCommand(args []string, stdout, stderr io.Writer) int {
	return runService(args, machineServiceEnv(), stdout, stderr)
}

// runService is `clawhost service VERB`: install, uninstall or status of
// clawhost as a systemd unit (Linux) or launchd agent (macOS).
func runService(args []string, env serviceEnv, stdout, stderr io.Writer) int {
	var verb string
	if len(args) > 0 && !isFlag(args[0]) {
		verb, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("clawhost service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	var f serviceFlags
	fs.StringVar(&f.config, "config", "", "configuration file (made absolute)")
	fs.BoolVar(&f.system, "system", false, "a system unit running as the clawhost account (the default for root)")
	fs.BoolVar(&f.user, "user", false, "a user unit (the default but for root)")
	fs.StringVar(&f.dir, "dir", "", "the directory the unit file goes in")
	fs.BoolVar(&f.noStart, "no-start", false, "install: only write the file")
	fs.BoolVar(&f.force, "force", false, "install: replace a different installed file")
	fs.BoolVar(&f.jsonOut, "json", false, "status: print it as JSON")
	fs.StringVar(&f.runAs, "run-as", "", "install: the system unit runs as this existing account (e.g. the one whose home holds the configuration) instead of the clawhost account")
	fs.BoolVar(&f.follow, "f", false, "logs: follow the log")
	if code, ok := parseFlags(fs, args, serviceUsage, stdout, stderr, "service"); !ok {
		return code
	}
	if verb == "" && fs.NArg() > 0 {
		verb = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "clawhost service: unexpected argument %q\n%s\n", fs.Arg(0), serviceUsage)
		return 2
	}
	if verb != "install" && verb != "uninstall" && verb != "status" && verb != "logs" {
		fmt.Fprintf(stderr, "clawhost service: want install, uninstall, status or logs, not %q\n%s\n", verb, serviceUsage)
		return 2
	}
	m, code := newServiceManager(f, env, stdout, stderr)
	if m == nil {
		return code
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	switch verb {
	case "uninstall":
		if err := m.Uninstall(ctx); err != nil {
			fmt.Fprintf(stderr, "clawhost service: %v\n", err)
			return 1
		}
		return 0
	case "status":
		return serviceStatus(ctx, m, f, env, stdout, stderr)
	case "logs":
		cancel() // a followed log runs until interrupted
		return serviceLogs(m, f, env, stderr)
	}
	u, cfg, ok := serviceUnit(f, env, m.Scope, stdout, stderr)
	if !ok {
		return 1
	}
	if m.Scope == service.ScopeSystem {
		if problems := serviceAccess(u, cfg, env); len(problems) > 0 {
			refuseServiceAccess(u, problems, f, env, stderr)
			return 1
		}
	}
	if err := m.Install(ctx, u, service.InstallOptions{Force: f.force, NoStart: f.noStart}); err != nil {
		fmt.Fprintf(stderr, "clawhost service: %v\n", err)
		return 1
	}
	return 0
}

// serviceLogs is `clawhost service logs [-f]`: the service manager's log of the unit
// (journalctl; on macOS the agent's log file).
func serviceLogs(m *service.Manager, f serviceFlags, env serviceEnv, stderr io.Writer) int {
	var name string
	var args []string
	switch {
	case env.goos == "darwin":
		name, args = "tail", []string{"-n", "200"}
		if f.follow {
			args = append(args, "-f")
		}
		args = append(args, filepath.Join(service.DefaultLogDir(serviceHome(env, m.Scope)), "clawhost.log"))
	default:
		name, args = "journalctl", []string{"-u", "clawhost", "-n", "200", "--no-pager"}
		if m.Scope == service.ScopeUser {
			args = append([]string{"--user"}, args...)
		}
		if f.follow {
			args = append(args, "-f")
		}
	}
	if err := env.logs(context.Background(), name, args...); err != nil {
		fmt.Fprintf(stderr, "clawhost service logs: %s %s: %v\n", name, strings.Join(args, " "), err)
		return 1
	}
	return 0
}

// newServiceManager is the manager the flags and the machine ask for; nil
// with the exit code on a usage error.
func newServiceManager(f serviceFlags, env serviceEnv, stdout, stderr io.Writer) (*service.Manager, int) {
	if f.system && f.user {
		fmt.Fprintln(stderr, "clawhost service: -system and -user exclude each other")
		return nil, 2
	}
	if env.goos != "linux" && env.goos != "darwin" {
		fmt.Fprintf(stderr, "clawhost service: no service manager support on %s (systemd on Linux, launchd on macOS)\n", env.goos)
		return nil, 1
	}
	scope := service.ScopeUser
	if f.system || (env.uid == 0 && !f.user && env.goos == "linux") {
		scope = service.ScopeSystem
	}
	if scope == service.ScopeSystem && env.goos == "darwin" {
		fmt.Fprintln(stderr, "clawhost service: -system is for systemd (Linux); on macOS clawhost is the user's launchd agent")
		return nil, 2
	}
	dir := f.dir
	if dir == "" {
		home := serviceHome(env, service.ScopeUser)
		if env.goos == "darwin" {
			dir = service.DefaultAgentDir(home)
		} else {
			dir = service.DefaultUnitDir(scope, env.getenv("XDG_CONFIG_HOME"), home)
		}
	}
	return &service.Manager{GOOS: env.goos, Scope: scope, Dir: dir, UID: env.uid, Runner: env.runner, UserExists: env.userExists, Out: stdout}, 0
}

// serviceHome is the HOME the service gets: the user's for a user
// service, the system account's for a system unit.
func serviceHome(env serviceEnv, scope service.Scope) string {
	if scope == service.ScopeSystem {
		return service.SystemHome
	}
	if h := env.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// serviceConfigPath is the configuration the service runs: -config made
// absolute, else the user's $XDG_CONFIG_HOME/clawhost/config.hcl when it
// exists, else config.hcl here.
func serviceConfigPath(f serviceFlags, env serviceEnv) (string, error) {
	p := f.config
	if p == "" {
		p = setup.ConfigPath(env.getenv) // as every command finds it
	}
	return filepath.Abs(p)
}

// serviceUnit is what the service runs: the configuration (which must
// load), this clawhost binary, and the PATH that finds each agent's
// claude CLI as this shell finds it now.
func serviceUnit(f serviceFlags, env serviceEnv, scope service.Scope, stdout, stderr io.Writer) (service.Unit, *config.Config, bool) {
	path, err := serviceConfigPath(f, env)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost service: config: %v\n", err)
		return service.Unit{}, nil, false
	}
	cfg, ok := load(path, stderr)
	if !ok {
		fmt.Fprintf(stderr, "clawhost service: %s does not load; fix it first (clawhost validate -config %s), or name another with -config\n", path, path)
		return service.Unit{}, nil, false
	}
	bin, err := env.executable()
	if err == nil {
		bin, err = filepath.Abs(bin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "clawhost service: this program's path: %v\n", err)
		return service.Unit{}, nil, false
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		// Through install.sh's link to the current release: an upgrade
		// then starts the new clawhost.
		bin = filepath.Join(installpath.Current(filepath.Dir(real)), filepath.Base(real))
	}
	var programs []string
	for _, a := range cfg.AllAgents() {
		if !slices.Contains(programs, a.Command) {
			programs = append(programs, a.Command)
		}
	}
	dirs, missing := service.SearchPath(append(programs, "bwrap"), env.lookPath, env.goos)
	for _, p := range missing {
		if p != "bwrap" {
			fmt.Fprintf(stdout, "WARN: %s is not found in this shell's PATH, so the service's PATH will not find it either:\n"+
				"      install it, or set agent.command to its path, then run install -force.\n", p)
		}
	}
	if slices.Contains(missing, bubblewrap.Command) && cfg.Agent.Sandbox != "off" {
		if who := sandboxreach.Strangers(cfg, sandboxreach.Probe(nil)); len(who) > 0 {
			fmt.Fprintf(stdout, "WARN: bubblewrap (bwrap), claude's sandbox, is not found in PATH, and people besides the owners can reach\n"+
				"      the agent (%s): the service will not start. %s, then run install -force;\n"+
				"      or write sandbox = \"off\" in the agent block to accept the risk.\n", strings.Join(who, "; "), capitalize(bubblewrap.Advice()))
		} else {
			fmt.Fprintf(stdout, "NOTE: bubblewrap (bwrap), claude's sandbox, is not found in PATH: claude runs unsandboxed (only owners\n"+
				"      can reach the agent; clawhost refuses to start unsandboxed once others can). %s.\n", capitalize(bubblewrap.Advice()))
		}
	}
	home := serviceHome(env, scope)
	u := service.Unit{
		Binary:    bin,
		Config:    path,
		WorkDir:   filepath.Dir(path),
		EnvFile:   filepath.Join(filepath.Dir(path), service.EnvFileName),
		Path:      dirs,
		Home:      home,
		ReadWrite: protectedWrites(cfg),
		LogDir:    service.DefaultLogDir(home),
	}
	if scope == service.ScopeSystem {
		u.User = service.SystemUser
		if f.runAs != "" {
			acct, err := env.lookupUser(f.runAs)
			if err != nil {
				fmt.Fprintf(stderr, "clawhost service: -run-as: %v\n", err)
				return service.Unit{}, nil, false
			}
			u.User, u.Home, u.LogDir = acct.Name, acct.Home, service.DefaultLogDir(acct.Home)
		}
	}
	return u, cfg, true
}

// protectedWrites are the directories the host writes (data_dir, the
// workspaces) that lie under what ProtectSystem=full makes read-only.
func protectedWrites(cfg *config.Config) []string {
	var out []string
	dirs := []string{cfg.DataDir}
	for _, a := range cfg.AllAgents() {
		dirs = append(dirs, a.Workspace)
	}
	for _, d := range dirs {
		for _, ro := range []string{"/usr", "/boot", "/efi", "/etc"} {
			if d != "" && (d == ro || strings.HasPrefix(d, ro+"/")) && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// serviceAccess lists what the unit's account cannot reach of what the unit needs — read
// the configuration and clawhost.env, enter the working directory, run clawhost and each
// agent's claude (as the unit's PATH finds it), write data_dir and each workspace (or
// create them) — checked as that account would be (runas.User.Access: mode bits and every
// directory above). The clawhost account install creates has no group of its own yet: it
// is checked as "others".
func serviceAccess(u service.Unit, cfg *config.Config, env serviceEnv) []string {
	acct, err := env.lookupUser(u.User)
	if err != nil {
		acct = &runas.User{Name: u.User, UID: 1<<32 - 2, GID: 1<<32 - 2} // not created yet: "others"
	}
	var out []string
	check := func(p string, want uint32, what string) {
		if err := acct.Access(p, want); err != nil {
			out = append(out, fmt.Sprintf("cannot %s %s: %v", what, p, err))
		}
	}
	check(u.Config, 4, "read the configuration")
	check(u.WorkDir, 1, "enter")
	if _, err := os.Stat(u.EnvFile); err == nil {
		check(u.EnvFile, 4, "read the secrets file")
	}
	check(u.Binary, 1, "run")
	writable := func(dir, what string) {
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(d); err == nil {
				check(d, 3, "write "+what+" at")
				return
			}
			if d == filepath.Dir(d) {
				return
			}
		}
	}
	writable(cfg.DataDir, "data_dir")
	seen := map[string]bool{}
	for _, a := range cfg.AllAgents() {
		if !seen[a.Workspace] {
			seen[a.Workspace] = true
			writable(a.Workspace, "the workspace of agent "+a.ID)
		}
		if filepath.IsAbs(a.Command) {
			check(a.Command, 1, "run claude")
			continue
		}
		for _, d := range u.Path {
			if p := filepath.Join(d, a.Command); fileExists(p) {
				check(p, 1, "run claude")
				break
			}
		}
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// refuseServiceAccess says why a system unit would not start, before anything is written
// or enabled, and the commands that fix it.
func refuseServiceAccess(u service.Unit, problems []string, f serviceFlags, env serviceEnv, w io.Writer) {
	fmt.Fprintf(w, "clawhost service: the account %s could not start clawhost from this configuration; nothing was installed:\n", u.User)
	for _, p := range problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	owner := env.getenv("SUDO_USER")
	if owner == "" || owner == "root" {
		owner = ownerOf(u.Config)
	}
	fmt.Fprintln(w, "Fix it one of these ways:")
	if owner != "" && owner != u.User {
		fmt.Fprintf(w, "  - run the service as %s, whose files these are:\n      clawhost service install -run-as %s -config %s\n", owner, owner, u.Config)
	} else {
		fmt.Fprintln(w, "  - run the service as an account that can reach them: clawhost service install -run-as USER")
	}
	fmt.Fprintf(w, "  - use the system layout: the configuration in /etc/clawhost, data_dir and the workspace in\n"+
		"    /var/lib/clawhost owned by %[1]s, claude installed for every user (npm install -g\n"+
		"    @anthropic-ai/claude-code); docs/service.md, \"As root\", gives the commands; then\n"+
		"      clawhost service install -config /etc/clawhost/config.hcl\n", service.SystemUser)
}

// ownerOf is the name of path's owner, "" when unknown.
func ownerOf(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10))
	if err != nil {
		return ""
	}
	return u.Username
}

// serviceStatus prints the service's status; exit 0 when it runs, 1 when
// it is not installed or not running.
func serviceStatus(ctx context.Context, m *service.Manager, f serviceFlags, env serviceEnv, stdout, stderr io.Writer) int {
	u, _, ok := serviceUnit(f, env, m.Scope, io.Discard, io.Discard)
	st := m.Status(ctx, u)
	if !ok {
		st.UpToDate = false
	}
	code := 0
	if !st.Running() {
		code = 1
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(st); err != nil {
			fmt.Fprintf(stderr, "clawhost service: %v\n", err)
			return 1
		}
		return code
	}
	fmt.Fprintf(stdout, "service  %s %s service\n", st.Manager, st.Scope)
	if !st.Installed {
		fmt.Fprintf(stdout, "file     %s: not installed (clawhost service install)\n", st.File)
		return code
	}
	switch {
	case st.UpToDate:
		fmt.Fprintf(stdout, "file     %s (as install writes it now)\n", st.File)
	case !ok:
		fmt.Fprintf(stdout, "file     %s (the configuration does not load: not compared)\n", st.File)
	default:
		fmt.Fprintf(stdout, "file     %s (differs from what install writes now: clawhost service install -force)\n", st.File)
	}
	fmt.Fprintf(stdout, "enabled  %s\nactive   %s\n", orUnknown(st.Enabled), orUnknown(st.Active))
	if st.Problem != "" {
		fmt.Fprintf(stdout, "problem  %s\n", st.Problem)
	}
	fmt.Fprintf(stdout, "logs     %s\n", st.Logs)
	return code
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// capitalize upper-cases s's first letter, to start a sentence with it.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
