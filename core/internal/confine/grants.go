package confine

import (
	"path/filepath"
	"slices"
	"strconv"
	"sync"
)

// systemGrants are what of the host's own files every sandbox shows, read-only:
// the system's programs and libraries, and the files of /etc a shell, the C
// library, git, Python and TLS read. Nothing else of the host exists inside: no
// home directory, no /etc/shadow, no /var, /srv, /opt or /mnt. docs/security.md
// lists them; core/e2e's TestSandboxManifest fails on a readable file off the list.
var systemGrants = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf",
	"/etc/gai.conf", "/etc/services", "/etc/protocols", "/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/pki", "/etc/crypto-policies", "/etc/localtime", "/etc/timezone", "/etc/ld.so.cache", "/etc/ld.so.conf",
	"/etc/ld.so.conf.d", "/etc/alternatives", "/etc/mime.types", "/etc/magic", "/etc/magic.mime", "/etc/terminfo",
	"/etc/inputrc", "/etc/bash.bashrc", "/etc/profile", "/etc/gitconfig", "/etc/os-release", "/etc/debian_version",
	"/etc/locale.alias", "/etc/mtab", "/etc/shells", "/etc/ssh/ssh_config", "/etc/ssh/ssh_config.d",
}

// SystemGrants is systemGrants with Debian's per-version Python configuration
// (/etc/python3.11: sitecustomize.py, which its python3 reads at start). A path
// that does not exist here is in the list still: the mount list leaves it out.
var SystemGrants = sync.OnceValue(func() []string {
	m, _ := filepath.Glob("/etc/python3*")
	return slices.Concat(systemGrants, m)
})

// Scratch are the temporary directories every sandbox gets of its own, empty
// and writable.
var Scratch = []string{"/tmp", "/var/tmp"}

// BubblewrapArgs are bubblewrap's options for what a process gives up in a
// sandbox made per start (Exec, in a recycled sandbox, does the same and more): a
// user namespace of its own whoever runs clawhost (bwrap maps the user to itself),
// no further user namespace inside, no capability, and the syscall filter read
// from descriptor fd (Filter; -1: none, a probe). Landlock and a session keyring
// of its own are Exec's alone; the filter denies the keyring's calls here too.
func BubblewrapArgs(fd int) []string {
	a := []string{"--unshare-user", "--disable-userns", "--cap-drop", "ALL"}
	if fd >= 0 {
		a = append(a, "--seccomp", strconv.Itoa(fd))
	}
	return a
}
