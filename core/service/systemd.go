package service

import (
	"fmt"
	"strings"
)

// systemdHardening is the unit's sandboxing, with the reason for each
// option that is on and each common one that is off. Claude runs in its
// own bubblewrap sandbox (unprivileged user namespaces: Debian's bwrap is
// not setuid), writes in HOME and the workspace, and node's JIT needs
// memory that is writable and executable; what would break that stays off.
const systemdHardening = `# Hardening that leaves claude working (docs/service.md):
#  on:  NoNewPrivileges (bubblewrap needs no setuid: it uses user namespaces),
#       PrivateTmp, ProtectSystem=full (/usr, /boot, /etc read-only),
#       ProtectKernelTunables, ProtectKernelModules, ProtectControlGroups,
#       RestrictSUIDSGID, LockPersonality, RestrictRealtime.
#  off: ProtectSystem=strict and ProtectHome (claude writes in HOME, the
#       workspace and data_dir, which the configuration may put anywhere),
#       MemoryDenyWriteExecute (node's JIT needs W+X memory),
#       PrivateUsers and RestrictNamespaces (bubblewrap makes user and pid
#       namespaces), PrivateDevices (not tried with bubblewrap's own /dev).
#  A user manager that cannot make a mount namespace starts the unit without
#  the filesystem options (systemd says so at debug level); a system unit has them.
NoNewPrivileges=yes
PrivateTmp=yes
ProtectSystem=full
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes
RestrictRealtime=yes
`

// RenderSystemd is the systemd unit file of u: a system unit when u.User
// is set, else a user unit.
func RenderSystemd(u Unit) []byte {
	var b strings.Builder
	scope := "user unit: systemctl --user"
	wantedBy := "default.target"
	if u.User != "" {
		scope = "system unit: systemctl"
		wantedBy = "multi-user.target"
	}
	fmt.Fprintf(&b, "# Written by `clawhost service install` (%s). Reinstall rather than edit:\n", scope)
	b.WriteString("# `clawhost service install -force` rewrites it; `clawhost service status` says when it differs.\n")
	b.WriteString("[Unit]\n")
	b.WriteString("Description=clawhost: chat apps to the Claude Code CLI\n")
	b.WriteString("After=network-online.target\nWants=network-online.target\n\n")
	b.WriteString("[Service]\nType=exec\n")
	if u.User != "" {
		fmt.Fprintf(&b, "User=%s\n", u.User)
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", execLine(u.Binary, "run", "-config", u.Config))
	b.WriteString("# SIGHUP reloads the configuration (an invalid file is refused and the running set kept).\n")
	b.WriteString("ExecReload=/bin/kill -HUP $MAINPID\n")
	fmt.Fprintf(&b, "WorkingDirectory=%s\n", specifierEscape(u.WorkDir))
	b.WriteString("# The secrets `clawhost init` wrote (0600); read by systemd before the start, optional.\n")
	fmt.Fprintf(&b, "EnvironmentFile=-%s\n", specifierEscape(u.EnvFile))
	b.WriteString("# PATH: where the claude CLI was found at install time, then the system's.\n")
	fmt.Fprintf(&b, "Environment=%s\n", quoteWord("PATH="+strings.Join(u.Path, ":")))
	fmt.Fprintf(&b, "Environment=%s\n", quoteWord("HOME="+u.Home))
	b.WriteString("Restart=on-failure\n")
	fmt.Fprintf(&b, "RestartSec=%ds\n", RestartDelay)
	b.WriteString("# SIGTERM to clawhost alone: it stops its plugins and claude processes itself (within 10 s);\n")
	b.WriteString("# whatever is left after TimeoutStopSec is killed.\n")
	b.WriteString("KillMode=mixed\n")
	fmt.Fprintf(&b, "TimeoutStopSec=%ds\n", StopTimeout)
	b.WriteString("StandardOutput=journal\nStandardError=journal\n")
	fmt.Fprintf(&b, "SyslogIdentifier=%s\n", Name)
	b.WriteString(systemdHardening)
	if len(u.ReadWrite) > 0 {
		b.WriteString("# data_dir and workspaces under a directory ProtectSystem=full makes read-only.\n")
		words := make([]string, len(u.ReadWrite))
		for i, p := range u.ReadWrite {
			words[i] = quoteWord("-" + p)
		}
		fmt.Fprintf(&b, "ReadWritePaths=%s\n", strings.Join(words, " "))
	}
	fmt.Fprintf(&b, "\n[Install]\nWantedBy=%s\n", wantedBy)
	return []byte(b.String())
}

// execLine is a command line for ExecStart=: each word quoted when it has
// to be, "%" (specifiers) and "$" (variables) escaped.
func execLine(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strings.ReplaceAll(quoteWord(w), "$", "$$")
	}
	return strings.Join(q, " ")
}

// quoteWord is w as one word of a systemd setting: "%" doubled (systemd
// expands specifiers), and in double quotes with C escapes when it holds
// a space, a quote or a backslash.
func quoteWord(w string) string {
	w = specifierEscape(w)
	if w != "" && !strings.ContainsAny(w, " \t\"'\\") {
		return w
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(w) + `"`
}

// specifierEscape doubles "%", which systemd reads as a specifier.
func specifierEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }
