package runner

// ProbeSandbox is what [Runner.SandboxState] would say for cfg on this
// machine, without a Runner: `clawhost validate` and `clawhost doctor`
// tell whether the host would refuse to start unsandboxed.
func ProbeSandbox(cfg Config) string { return probeSandbox(cfg).state }
