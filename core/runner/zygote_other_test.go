//go:build !linux

package runner

// zygoteSpike is BenchmarkSandboxZygote's helper, Linux-only (mount namespaces).
func zygoteSpike() int { return 2 }
