package runner

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/confine"
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
