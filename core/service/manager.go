package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/core/internal/atomicfile"
)

// ErrDiffers is returned by Install when a different file is already
// installed and Force is not set.
var ErrDiffers = errors.New("a different service file is installed")

// Manager installs, removes and inspects the service with one service
// manager: systemd (GOOS "linux") or launchd ("darwin"). What it does and
// what to do next is written to Out.
type Manager struct {
	// GOOS is the operating system whose manager is used.
	GOOS string
	// Scope is the manager instance; launchd supports ScopeUser only.
	Scope Scope
	// Dir is the directory the unit file or plist goes in.
	Dir string
	// UID is the user's id: launchd's domain is gui/<UID>.
	UID int
	// Runner runs systemctl, launchctl and useradd.
	Runner Runner
	// UserExists says whether an account exists (system units: whether
	// SystemUser must be created).
	UserExists func(name string) bool
	// Out gets what was done and what to do next.
	Out io.Writer
}

// InstallOptions are install's choices.
type InstallOptions struct {
	// Force replaces a different installed file.
	Force bool
	// NoStart only writes the file: no account is created, no systemctl
	// or launchctl runs (the commands to run are printed).
	NoStart bool
}

// launchd reports whether m uses launchd.
func (m *Manager) launchd() bool { return m.GOOS == "darwin" }

// File is the path of the unit file or plist.
func (m *Manager) File() string {
	if m.launchd() {
		return filepath.Join(m.Dir, Label+".plist")
	}
	return filepath.Join(m.Dir, Name+".service")
}

// Render is the file Install writes for u.
func (m *Manager) Render(u Unit) []byte {
	if m.launchd() {
		return RenderLaunchd(u)
	}
	return RenderSystemd(u)
}

// systemctl is the systemctl command line for args in m's scope.
func (m *Manager) systemctl(args ...string) []string {
	if m.Scope == ScopeUser {
		return append([]string{"systemctl", "--user"}, args...)
	}
	return append([]string{"systemctl"}, args...)
}

// domain is the launchd domain target: gui/<uid>.
func (m *Manager) domain() string { return "gui/" + strconv.Itoa(m.UID) }

// Install writes the service file for u and, unless opts.NoStart, enables
// and starts it. An existing different file is replaced only with
// opts.Force (else ErrDiffers, with the difference written to Out); an
// identical one is kept. A system unit's account is created (useradd)
// when missing, before systemctl.
func (m *Manager) Install(ctx context.Context, u Unit, opts InstallOptions) error {
	if m.launchd() && m.Scope == ScopeSystem {
		return errors.New("install: a system service is systemd's (Linux); on macOS clawhost runs as the user's launchd agent")
	}
	want := m.Render(u)
	path := m.File()
	old, err := os.ReadFile(path)
	exists, replaced := err == nil, false
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("install: %w", err)
	case bytes.Equal(old, want):
		fmt.Fprintf(m.Out, "%s is up to date.\n", path)
	case !opts.Force:
		fmt.Fprintf(m.Out, "%s exists and differs from what install writes now:\n", path)
		writeDiff(m.Out, old, want)
		fmt.Fprintln(m.Out, "Run again with -force to replace it.")
		return fmt.Errorf("install: %s: %w", path, ErrDiffers)
	default:
		replaced = true
	}
	if !exists || replaced {
		if err := m.write(path, want, u); err != nil {
			return fmt.Errorf("install: %w", err)
		}
		fmt.Fprintf(m.Out, "Wrote %s.\n", path)
	}
	steps := m.startSteps(path, replaced)
	if m.Scope == ScopeSystem && u.User != "" && !m.UserExists(u.User) {
		steps = append([][]string{SystemUserAdd()}, steps...)
	}
	if opts.NoStart {
		fmt.Fprintln(m.Out, "Not started (-no-start). To start it:")
		printSteps(m.Out, steps)
		m.lingerHint()
		return nil
	}
	if err := m.runSteps(ctx, steps); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	m.afterInstall()
	return nil
}

// write writes the service file, making its directory (and on macOS the
// log directory).
func (m *Manager) write(path string, data []byte, u Unit) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if m.launchd() && u.LogDir != "" {
		if err := os.MkdirAll(u.LogDir, 0o700); err != nil {
			return err
		}
	}
	return atomicfile.Write(path, data)
}

// startSteps are the commands that load and start an installed file;
// replaced says the file changed under a possibly running service.
func (m *Manager) startSteps(path string, replaced bool) [][]string {
	if m.launchd() {
		steps := [][]string{{"launchctl", "bootstrap", m.domain(), path}}
		if replaced {
			steps = append([][]string{{"launchctl", "bootout", m.domain() + "/" + Label}}, steps...)
		}
		return steps
	}
	unit := Name + ".service"
	if replaced {
		return [][]string{m.systemctl("daemon-reload"), m.systemctl("enable", unit), m.systemctl("restart", unit)}
	}
	return [][]string{m.systemctl("daemon-reload"), m.systemctl("enable", "--now", unit)}
}

// runSteps runs each step in order, stopping at the first failure, which
// it explains with the steps still to run by hand.
func (m *Manager) runSteps(ctx context.Context, steps [][]string) error {
	for i, s := range steps {
		if err := m.run(ctx, s); err != nil {
			fmt.Fprintf(m.Out, "\nThe service file is in place, but %s failed.\n", s[0])
			if s[0] != "systemctl" {
				fmt.Fprintln(m.Out, "Run these yourself once the cause is fixed:")
			} else {
				fmt.Fprintln(m.Out, "Without systemd (a container, WSL without systemd) run `clawhost run -config FILE` under")
				fmt.Fprintln(m.Out, "what supervises processes there instead. Otherwise, once the cause is fixed, run:")
			}
			printSteps(m.Out, steps[i:])
			return err
		}
	}
	return nil
}

// run runs one command, echoing it and its output to Out.
func (m *Manager) run(ctx context.Context, argv []string) error {
	fmt.Fprintf(m.Out, "$ %s\n", strings.Join(argv, " "))
	out, err := m.Runner.Run(ctx, argv[0], argv[1:]...)
	if s := strings.TrimSpace(out); s != "" {
		fmt.Fprintf(m.Out, "  %s\n", strings.ReplaceAll(s, "\n", "\n  "))
	}
	return err
}

// afterInstall says where the logs are and, for a user unit, how it
// outlives the login session.
func (m *Manager) afterInstall() {
	fmt.Fprintf(m.Out, "\nclawhost runs as a service. Its log: %s\n", m.logsCommand())
	m.lingerHint()
}

// lingerHint says, for a user unit, how it outlives the login session:
// after an install, and after one that wrote the unit without starting it.
func (m *Manager) lingerHint() {
	if !m.launchd() && m.Scope == ScopeUser {
		fmt.Fprintln(m.Out, "A user unit stops when you log out; `loginctl enable-linger $USER` keeps it running")
		fmt.Fprintln(m.Out, "(and starts it at boot).")
	}
}

// logsCommand is the command that shows the service's last log lines.
func (m *Manager) logsCommand() string {
	if m.launchd() {
		return "tail -n 50 ~/Library/Logs/clawhost/clawhost.log"
	}
	if m.Scope == ScopeUser {
		return "journalctl --user -u " + Name + " -n 50"
	}
	return "journalctl -u " + Name + " -n 50"
}

// printSteps writes each command on a line of its own, indented.
func printSteps(w io.Writer, steps [][]string) {
	for _, s := range steps {
		fmt.Fprintf(w, "  %s\n", strings.Join(s, " "))
	}
}

// writeDiff writes the lines only the old file has ("-") and those only
// the new one has ("+"), in file order.
func writeDiff(w io.Writer, old, new []byte) {
	count := func(b []byte) map[string]int {
		n := map[string]int{}
		for _, l := range strings.Split(string(b), "\n") {
			n[l]++
		}
		return n
	}
	inOld, inNew := count(old), count(new)
	for _, l := range strings.Split(string(old), "\n") {
		if inNew[l] == 0 {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
	for _, l := range strings.Split(string(new), "\n") {
		if inOld[l] == 0 {
			fmt.Fprintf(w, "  + %s\n", l)
		}
	}
}
