// Package helper is the sandbox helper (issue 58): the init of a recycled sandbox's pid
// namespace, which core/sandbox's Pool starts inside bubblewrap (the clawhost-sandbox
// binary, or clawhost itself, run with Arg) and which starts each claude of the sandbox
// in a mount namespace of its own, confined; and the wire both sides speak over their
// socket (Request, Reply). It runs inside the sandbox and links nothing of the host.
package helper

// The steps of a start's mount list, the order at one path: a fresh tmpfs hiding what is
// there (or /dev/null over a file), an empty scratch tmpfs, a writable bind, a read-only
// bind.
const (
	OpHide = iota
	OpScratch
	OpBind
	OpReadOnly
)

// Testing holds the switches tests set in the test binary that is the helper; production
// code never sets them.
var Testing struct {
	// Weaken names the defences the helper leaves out (a deliberately broken helper,
	// to show the boundary tests fail without each defence): "signals", "dumpable",
	// "caps", "cloexec", "dev", "reap", "ipc", "userns" (claude of a host not run as
	// root started as the helper's root, in its user namespace); and "prepare", no
	// start made ahead (zygoteprep_linux.go), a helper as it was before; "stage", no
	// mounts made ahead, and "unverified", those made ahead taken without checking
	// that each is still what its path names (zygotestage_linux.go).
	Weaken string
	// Grants are paths a start may make ahead beside the system grants (stageable): a
	// test's own files, which it can replace.
	Grants []string
}
