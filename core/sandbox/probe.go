package sandbox

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/internal/bubblewrap"
	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/runas"
)

// Found is what Probe found out about the sandbox of an agent: the bwrap path when
// claude runs in one (Bwrap, "" without a sandbox), and the sentence the status page
// says (State: "bubblewrap", "off", "unavailable (why)").
type Found struct {
	Bwrap string
	State string
}

// Boundary is what this machine gives the sandbox of an agent of mode whose claude runs
// as user (nil: the host's; boundary.Assess says whether it holds): Probe's answer, the
// kernel setting that forbids user namespaces if one does, whether the syscall filter
// loads and Landlock's ABI (confine.State), and why sandboxes would be made per start,
// without Landlock ("" where they are recycled: the helper's own probe start, which only a
// running host makes, is not tried). `clawhost doctor` and `clawhost security audit`
// say it.
func Boundary(mode string, user *runas.User) boundary.Facts {
	seccompOK, abi := confine.State()
	root := os.Geteuid() == 0 && (user == nil || user.UID == 0)
	return boundary.Facts{Sandbox: Probe(mode, user).State, UsernsOff: usernsOff(root, os.ReadFile), Seccomp: seccompOK,
		LandlockABI: abi, PerStart: perStartWhy(), Root: root, GetBubblewrap: bubblewrap.Advice()}
}

// usernsOff names the kernel setting that forbids claude's user namespace, "" when
// none does: user.max_user_namespaces = 0 forbids them to everyone; Debian's
// kernel.unprivileged_userns_clone = 0 and Ubuntu's
// kernel.apparmor_restrict_unprivileged_userns = 1 to users other than root.
// read reads a file (os.ReadFile).
func usernsOff(root bool, read func(string) ([]byte, error)) string {
	for _, s := range []struct{ name, off string }{
		{"user.max_user_namespaces", "0"},
		{"kernel.unprivileged_userns_clone", "0"},
		{"kernel.apparmor_restrict_unprivileged_userns", "1"},
	} {
		if root && s.name != "user.max_user_namespaces" {
			break
		}
		b, err := read("/proc/sys/" + strings.ReplaceAll(s.name, ".", "/"))
		if err == nil && strings.TrimSpace(string(b)) == s.off {
			return s.name
		}
	}
	return ""
}

// bwrapCommand is bubblewrap's executable, looked up in PATH.
const bwrapCommand = "bwrap"

// probeTimeout bounds the probe run of bwrap.
const probeTimeout = 10 * time.Second

// Probe decides the sandbox of an agent of mode whose claude runs as user: with Auto,
// bwrap from PATH and one run of it with the namespaces claude's sandbox uses (as that
// user), so a kernel or container that forbids them is found here, not on the first turn.
func Probe(mode string, user *runas.User) Found {
	if mode == Off {
		return Found{State: "off"}
	}
	path, err := exec.LookPath(bwrapCommand)
	if err != nil {
		return Found{State: "unavailable (bubblewrap not installed)"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if err := confine.TryBubblewrap(ctx, path, nil, credentialAttr(user),
		"--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"); err != nil {
		return Found{State: "unavailable (bubblewrap failed: " + truncate(err.Error(), 200) + ")"}
	}
	return Found{Bwrap: path, State: "bubblewrap"}
}

// truncate is s cut to n characters, the last "…" when it was longer.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
