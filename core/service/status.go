package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Uninstall stops and disables the service and removes its file. Nothing
// installed is no error. The file is removed even when the manager's
// command fails (the error is returned after), so a machine without a
// running manager can still be cleaned up; the system account and the
// data stay.
func (m *Manager) Uninstall(ctx context.Context) error {
	path := m.File()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(m.Out, "Nothing to remove: %s does not exist.\n", path)
		return nil
	}
	var stopErr error
	if m.launchd() {
		stopErr = m.run(ctx, []string{"launchctl", "bootout", m.domain() + "/" + Label})
	} else {
		stopErr = m.run(ctx, m.systemctl("disable", "--now", Name+".service"))
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	fmt.Fprintf(m.Out, "Removed %s.\n", path)
	if !m.launchd() {
		if err := m.run(ctx, m.systemctl("daemon-reload")); err != nil && stopErr == nil {
			stopErr = err
		}
	}
	if stopErr != nil {
		fmt.Fprintln(m.Out, "The service manager did not confirm the stop; check that no clawhost from the service still runs.")
		return fmt.Errorf("uninstall: %w", stopErr)
	}
	if m.Scope == ScopeSystem {
		fmt.Fprintf(m.Out, "The account %s and %s stay; `userdel -r %s` removes both.\n", SystemUser, SystemHome, SystemUser)
	}
	return nil
}

// Status is what `clawhost service status` reports.
type Status struct {
	// Manager is "systemd" or "launchd".
	Manager string `json:"manager"`
	// Scope is "user" or "system".
	Scope Scope `json:"scope"`
	// File is the unit file or plist.
	File string `json:"file"`
	// Installed says the file exists.
	Installed bool `json:"installed"`
	// UpToDate says the file is what install would write now (the same
	// binary, configuration, PATH and options).
	UpToDate bool `json:"up_to_date"`
	// Enabled is systemctl is-enabled's answer ("enabled", "disabled",
	// …), or for launchd "loaded" / "not loaded"; empty when not asked.
	Enabled string `json:"enabled,omitempty"`
	// Active is systemctl is-active's answer ("active", "inactive",
	// "failed", …), or launchd's state ("running", …).
	Active string `json:"active,omitempty"`
	// Problem is why Enabled or Active could not be read, when they
	// could not.
	Problem string `json:"problem,omitempty"`
	// Logs is the command that shows the service's last log lines.
	Logs string `json:"logs"`
}

// Running reports whether the service is installed and running.
func (s Status) Running() bool {
	return s.Installed && (s.Active == "active" || s.Active == "running")
}

// Status reads the service's file and asks the manager about it; u is
// what install would write now.
func (m *Manager) Status(ctx context.Context, u Unit) Status {
	st := Status{Manager: "systemd", Scope: m.Scope, File: m.File(), Logs: m.logsCommand()}
	if m.launchd() {
		st.Manager = "launchd"
	}
	data, err := os.ReadFile(st.File)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			st.Problem = err.Error()
		}
		return st
	}
	st.Installed = true
	st.UpToDate = bytes.Equal(data, m.Render(u))
	if m.launchd() {
		m.launchdState(ctx, &st)
		return st
	}
	unit := Name + ".service"
	for _, q := range []struct {
		verb string
		into *string
	}{{"is-enabled", &st.Enabled}, {"is-active", &st.Active}} {
		argv := m.systemctl(q.verb, unit)
		out, err := m.Runner.Run(ctx, argv[0], argv[1:]...)
		// is-enabled and is-active exit non-zero for "disabled" and
		// "inactive": their answer is the first line either way.
		*q.into = firstLine(out)
		if err != nil && (*q.into == "" || strings.Contains(*q.into, " ")) {
			why := firstLine(out)
			if why == "" {
				why = err.Error()
			}
			st.Problem = strings.Join(argv, " ") + ": " + why
			*q.into = ""
		}
	}
	return st
}

// launchdState fills st from `launchctl print gui/<uid>/dev.clawhost`.
func (m *Manager) launchdState(ctx context.Context, st *Status) {
	out, err := m.Runner.Run(ctx, "launchctl", "print", m.domain()+"/"+Label)
	if err != nil {
		st.Enabled = "not loaded"
		return
	}
	st.Enabled = "loaded"
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), " = "); ok && k == "state" {
			st.Active = v
			break
		}
	}
}

// firstLine is s's first non-empty line, trimmed.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}
