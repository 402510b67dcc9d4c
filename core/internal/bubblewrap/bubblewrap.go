// Package bubblewrap says how to install bubblewrap (bwrap), claude's
// sandbox, on the machine at hand: the one command of its package
// manager, read from /etc/os-release. The host's refusal to start
// unsandboxed, `clawhost doctor`, `clawhost init` and `clawhost service
// install` print it.
package bubblewrap

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"
)

// Command is bwrap's executable name, looked up in PATH.
const Command = "bwrap"

// packageManagers map an os-release ID (or an ID_LIKE entry) to the
// command that installs bubblewrap there.
var packageManagers = []struct{ ids, command string }{
	{"debian ubuntu raspbian linuxmint pop elementary kali", "apt-get install bubblewrap"},
	{"fedora rhel centos rocky almalinux amzn ol", "dnf install bubblewrap"},
	{"arch manjaro endeavouros", "pacman -S bubblewrap"},
	{"opensuse opensuse-leap opensuse-tumbleweed suse sles", "zypper install bubblewrap"},
	{"alpine", "apk add bubblewrap"},
	{"gentoo", "emerge sys-apps/bubblewrap"},
	{"void", "xbps-install bubblewrap"},
	{"nixos", "nix-env -iA nixpkgs.bubblewrap"},
}

// InstallCommand is the command that installs bubblewrap for goos and the
// contents of /etc/os-release (nil when unreadable), prefixed with sudo
// unless root runs it; "" where there is no bubblewrap (macOS, Windows).
// A Linux it does not recognise gets the three common commands.
func InstallCommand(goos string, osRelease []byte, root bool) string {
	if goos != "linux" {
		return ""
	}
	sudo := "sudo "
	if root {
		sudo = ""
	}
	ids := releaseIDs(osRelease)
	for _, pm := range packageManagers {
		for _, id := range ids {
			if strings.Contains(" "+pm.ids+" ", " "+id+" ") {
				return sudo + pm.command
			}
		}
	}
	return sudo + "apt-get install bubblewrap (Debian, Ubuntu), " + sudo + "dnf install bubblewrap (Fedora) or " + sudo + "pacman -S bubblewrap (Arch)"
}

// releaseIDs are ID, then each of ID_LIKE, of an os-release file.
func releaseIDs(osRelease []byte) []string {
	var id, like []string
	sc := bufio.NewScanner(bytes.NewReader(osRelease))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		v = strings.ToLower(strings.Trim(v, `"'`))
		switch k {
		case "ID":
			id = []string{v}
		case "ID_LIKE":
			like = strings.Fields(v)
		}
	}
	return append(id, like...)
}

// Install is InstallCommand for this machine.
func Install() string {
	release, err := os.ReadFile("/etc/os-release")
	if err != nil {
		release, _ = os.ReadFile("/usr/lib/os-release")
	}
	return InstallCommand(runtime.GOOS, release, os.Geteuid() == 0)
}

// Advice is what to do to get bubblewrap here, as one sentence: the
// install command, or on a system without bubblewrap that there is none.
func Advice() string {
	if c := Install(); c != "" {
		return "install bubblewrap: " + c
	}
	return "bubblewrap exists on Linux only: on " + runtime.GOOS + " claude cannot be sandboxed"
}
