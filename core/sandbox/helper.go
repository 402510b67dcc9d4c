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
// helper.Arg, runs helper.Main: clawhost's main calls it, and then the runner starts
// sandboxed claudes in recycled sandboxes by default. Without it (a binary that embeds the
// runner but is no helper, such as another package's test binary) only ZygoteEnv=1 does.
func EnableSandboxHelper() { helperBinary.Store(true) }

// Testing holds the switches tests set in the host that starts a helper; production code
// never sets them. (The helper's own, what it leaves out: helper.Testing.)
var Testing struct {
	// HelperEnv is added to each helper's environment (ZYGOTE_WEAKEN for the test
	// binary that is the helper).
	HelperEnv []string
}
