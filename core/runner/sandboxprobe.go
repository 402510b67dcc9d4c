package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/runas"
)

// ProbeSandbox is what [Runner.SandboxState] would say for cfg on this
// machine, without a Runner: `clawhost validate` and `clawhost doctor`
// tell whether the host would refuse to start unsandboxed.
func ProbeSandbox(cfg Config) string { return probeSandbox(cfg).state }

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
	args := append(rootCapArgs(cfg.RunAs), "--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true")
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

// rootFileCaps are the capabilities a sandboxed claude running as root
// keeps: those of file permissions, so that it reads and writes what it is
// shown as root does (the agent tool file of a run_as agent's user among
// them). No other: bubblewrap run by root keeps every capability unless
// told, and with CAP_SYS_ADMIN a tool unmounts what hides data_dir
// (TestSandboxManifest). The sandbox helper keeps the same (zygoteRootCaps).
var rootFileCaps = []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID"}

// rootCapArgs are bwrap's capability options for claude run as u (nil: the
// host's user): when that is root, every capability dropped but
// rootFileCaps; none otherwise (bwrap in a user namespace gives claude no
// capability of the host's).
func rootCapArgs(u *runas.User) []string {
	if uid := uidOf(u); uid != 0 && (uid != -1 || os.Geteuid() != 0) {
		return nil
	}
	a := []string{"--cap-drop", "ALL"}
	for _, c := range rootFileCaps {
		a = append(a, "--cap-add", c)
	}
	return a
}
