// Package service is `clawhost service`: clawhost as a service of the
// machine's service manager — a systemd unit on Linux (a user unit by
// default, a system unit with a dedicated account when installed by root)
// and a launchd agent on macOS. It renders the unit file or property list
// from a [Unit] (systemd.go, launchd.go), and installs, removes and
// inspects it through the manager's own commands (systemctl, launchctl),
// which it runs through a [Runner] so tests record them instead.
//
// What the unit contains and why each hardening option is on or off is in
// the comment the unit carries (systemdHardening) and in docs/service.md.
package service

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Name is the service's name: the systemd unit is Name+".service".
const Name = "clawhost"

// Label is the launchd label of the macOS agent, and its plist's base
// name (Label+".plist").
const Label = "dev.clawhost"

// SystemUser is the account a system unit runs as; install creates it
// when it is missing (SystemUserAdd).
const SystemUser = "clawhost"

// SystemHome is the system account's home directory: claude keeps its
// login and settings there.
const SystemHome = "/var/lib/clawhost"

// EnvFileName is the secrets file `clawhost init` writes next to the
// configuration (0600); the unit reads it with EnvironmentFile=.
const EnvFileName = "clawhost.env"

// StopTimeout is how long the service manager waits after SIGTERM before
// it kills what is left: the host's own shutdown is bounded at 10 s
// (turns drain or park, plugins and claude stop), so this leaves it room.
const StopTimeout = 30

// RestartDelay is how long, in seconds, the manager waits before starting
// a host that exited with an error again.
const RestartDelay = 5

// Scope says which service manager instance runs clawhost.
type Scope string

const (
	// ScopeUser is the user's own manager (systemctl --user, launchd's
	// gui/<uid> domain): clawhost runs as the user who installed it.
	ScopeUser Scope = "user"
	// ScopeSystem is the machine's manager (systemctl): clawhost runs as
	// SystemUser. Linux only.
	ScopeSystem Scope = "system"
)

// Unit is what the service runs; the same fields render a systemd unit and
// a launchd property list. Every path is absolute.
type Unit struct {
	// Binary is the clawhost executable.
	Binary string
	// Config is the configuration file, passed as run -config.
	Config string
	// WorkDir is the working directory: the configuration's directory.
	WorkDir string
	// EnvFile is the secrets file read into the environment at start
	// (systemd only; a missing file is no error).
	EnvFile string
	// Path is the PATH the host and its children get, in order: where the
	// claude CLI (and what it needs) was found, then the system's.
	Path []string
	// Home is HOME: where claude keeps its login and settings.
	Home string
	// User is the account a system unit runs as; empty for a user unit.
	User string
	// ReadWrite are paths the host writes that ProtectSystem=full would
	// make read-only (a data_dir or workspace under /etc or /usr).
	ReadWrite []string
	// LogDir is where launchd writes the host's output (macOS only).
	LogDir string
}

// DefaultUnitDir is where the unit file of scope goes: for a user unit
// $XDG_CONFIG_HOME/systemd/user (configHome; home/.config when it is
// empty), for a system unit /etc/systemd/system.
func DefaultUnitDir(scope Scope, configHome, home string) string {
	if scope == ScopeSystem {
		return "/etc/systemd/system"
	}
	if configHome == "" {
		configHome = filepath.Join(home, ".config")
	}
	return filepath.Join(configHome, "systemd", "user")
}

// DefaultAgentDir is where a macOS user's launchd agents are.
func DefaultAgentDir(home string) string { return filepath.Join(home, "Library", "LaunchAgents") }

// DefaultLogDir is where the macOS agent's output goes.
func DefaultLogDir(home string) string { return filepath.Join(home, "Library", "Logs", "clawhost") }

// SystemUserAdd is the command that creates SystemUser.
func SystemUserAdd() []string {
	return []string{"useradd", "--system", "--home-dir", SystemHome, "--create-home", "--shell", "/usr/sbin/nologin", SystemUser}
}

// Runner runs the service manager's commands (systemctl, launchctl,
// useradd). Run returns the command's combined output, and an error when
// it could not start or exited non-zero; the output is returned either way.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (string, error)
}

// ExecRunner runs commands as processes of this machine.
type ExecRunner struct{}

// Run runs name with args and returns its combined output.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

// SystemPath is the PATH a service gets after the directories the host
// needs: the Filesystem Hierarchy's, with Homebrew's on macOS.
func SystemPath(goos string) []string {
	if goos == "darwin" {
		return []string{"/opt/homebrew/bin", "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"}
	}
	return []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}
}
