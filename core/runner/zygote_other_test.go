//go:build !linux

package runner

// zygoteSpike is BenchmarkSandboxZygote's helper, Linux-only (mount namespaces).
func zygoteSpike() int { return 2 }

// zygoteWeaken is the helper's test switch (zygote_linux.go); TestMain sets it before it
// runs ZygoteMain, which here only says it is Linux-only.
var zygoteWeaken string
