package sandbox

import "sync/atomic"

// ZygoteEnv in the host's environment chooses how a sandboxed claude's sandbox is made
// (issue 58): "0" a bubblewrap per start, the escape hatch; "1" the agent's recycled
// sandboxes (Pool, Linux only) whatever the binary, tests' way to use a test binary as
// the helper; unset (or anything else), recycled sandboxes when the binary is a helper
// (EnableSandboxHelper) and they work here (root, a bubblewrap with --as-pid-1, a probe
// start that passes), else a bubblewrap per start. The runner's SandboxState says which
// an agent gets and why.
const ZygoteEnv = "CLAWHOST_SANDBOX_HELPER"

// helperBinary is set by EnableSandboxHelper.
var helperBinary atomic.Bool

// EnableSandboxHelper declares that the process's executable, run with the single argument
// ZygoteArg, runs ZygoteMain: clawhost's main calls it, and then the runner starts
// sandboxed claudes in recycled sandboxes by default. Without it (a binary that embeds the
// runner but is no helper, such as another package's test binary) only ZygoteEnv=1 does.
func EnableSandboxHelper() { helperBinary.Store(true) }

// Testing holds the switches tests set, in the test binary that is the helper and in the
// host that starts it; production code never sets them.
var Testing struct {
	// Weaken names the defences the helper leaves out (a deliberately broken helper,
	// to show the boundary tests fail without each defence): "signals", "dumpable",
	// "caps", "cloexec", "dev", "reap", "ipc", "userns" (claude of a host not run as
	// root started as the helper's root, in its user namespace); and "prepare", no
	// start made ahead (zygoteprep_linux.go), a helper as it was before.
	Weaken string
	// HelperEnv is added to each helper's environment (ZYGOTE_WEAKEN for the test
	// binary that is the helper).
	HelperEnv []string
}
