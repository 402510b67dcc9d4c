package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/internal/bubblewrap"
	"github.com/clawhost/clawhost/core/internal/confine"
)

// ProbeSandbox is what [Runner.SandboxState] would say for cfg on this
// machine, without a Runner: `clawhost validate` and `clawhost doctor`
// tell whether the host would refuse to start unsandboxed.
func ProbeSandbox(cfg Config) string { return probeSandbox(cfg).state }

// ProbeBoundary is what this machine gives the sandbox of the agent cfg configures
// (boundary.Assess says whether it holds): ProbeSandbox's answer, the kernel setting
// that forbids user namespaces if one does, whether the syscall filter loads and
// Landlock's ABI (confine.State), and why sandboxes would be made per start, without
// Landlock ("" where they are recycled: the helper's own probe start, which only a
// running host makes, is not tried). `clawhost doctor` and `clawhost security audit`
// say it.
func ProbeBoundary(cfg Config) boundary.Facts {
	seccompOK, abi := confine.State()
	root := os.Geteuid() == 0 && (cfg.RunAs == nil || cfg.RunAs.UID == 0)
	return boundary.Facts{Sandbox: probeSandbox(cfg).state, UsernsOff: usernsOff(root, os.ReadFile), Seccomp: seccompOK,
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

// probeTimeout bounds the probe run of bwrap at New.
const probeTimeout = 10 * time.Second

// probeSandbox decides the sandbox for cfg: with SandboxAuto, bwrap from
// PATH and one run of it with the namespaces claude's sandbox uses (as the
// user claude runs as), so a kernel or container that forbids them is found
// here, not on the first turn.
func probeSandbox(cfg Config) sandbox {
	if cfg.Sandbox == SandboxOff {
		return sandbox{state: "off"}
	}
	path, err := exec.LookPath(bwrapCommand)
	if err != nil {
		return sandbox{state: "unavailable (bubblewrap not installed)"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	args := append(confine.BubblewrapArgs(-1), "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true")
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	cmd.SysProcAttr = credentialAttr(cfg.RunAs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return sandbox{state: "unavailable (bubblewrap failed: " + truncate(why, 200) + ")"}
	}
	return sandbox{bwrap: path, state: "bubblewrap"}
}
