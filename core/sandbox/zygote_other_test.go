//go:build !linux

package sandbox

// zygoteSpike is BenchmarkSandboxZygote's helper, Linux-only (mount namespaces).
func zygoteSpike() int { return 2 }
