package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Spec is what Exec grants and keeps: the paths of the sandbox (as the process
// sees them, inside its mount namespace), and which defences to leave out.
type Spec struct {
	// ReadOnly paths may be read and executed beneath; Writable ones written too.
	ReadOnly []string `json:"ro,omitempty"`
	Writable []string `json:"rw,omitempty"`
	// Files are those of ReadOnly and Writable that are files; the others are
	// directories. Each rule is made from this, without a look at the path first.
	Files []string `json:"files,omitempty"`
	// Weaken names defences left out, for tests that show a boundary test fails
	// without one: "seccomp", "landlock", "caps", "keyring".
	Weaken []string `json:"weaken,omitempty"`
}

func (s Spec) weakened(what string) bool {
	for _, w := range s.Weaken {
		if w == what {
			return true
		}
	}
	return false
}

// Encode is s as one argument of the start's argv.
func (s Spec) Encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// DecodeSpec reads Encode's form.
func DecodeSpec(v string) (Spec, error) {
	var s Spec
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return Spec{}, fmt.Errorf("confine: spec: %w", err)
	}
	return s, nil
}

// Exec gives up, on the calling thread, everything s says, then execs path with
// argv and env; it returns only when something failed, and then nothing was
// run. The caller's goroutine must be locked to its thread (the kernel keeps the
// keyring, capabilities, Landlock domain and filter per thread, and exec keeps
// those of the thread that calls it). Order: the keyring first (the filter
// denies keyctl), then no new privileges, capabilities, Landlock, the filter.
func Exec(s Spec, path string, argv, env []string) error {
	if err := Apply(s); err != nil {
		return err
	}
	return unix.Exec(path, argv, env)
}

// Apply is Exec without the exec: the calling thread alone is confined.
func Apply(s Spec) error {
	if !s.weakened("keyring") {
		// A new anonymous session keyring: none of another process's is
		// reachable by the keyring's "@s" from here on.
		if _, _, e := unix.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); e != 0 && e != unix.ENOSYS {
			return fmt.Errorf("confine: session keyring: %w", e)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("confine: no new privileges: %w", err)
	}
	if !s.weakened("caps") {
		if err := dropCaps(); err != nil {
			return err
		}
	}
	if !s.weakened("landlock") {
		if err := restrictPaths(s); err != nil {
			return err
		}
	}
	if !s.weakened("seccomp") {
		if err := loadFilter(); err != nil {
			return err
		}
	}
	return nil
}

// dropCaps empties every capability set of the calling thread: the bounding set
// (so that exec gives root none either), the ambient, inheritable, permitted and
// effective ones, and locks root's special treatment off.
func dropCaps() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL && err != unix.EPERM {
			return fmt.Errorf("confine: drop capability %d: %w", c, err)
		}
	}
	// SECBIT_NOROOT and its lock: a uid 0 gains nothing at exec. Needs
	// CAP_SETPCAP, which a process not root in its namespace lacks — and
	// such a process has nothing to gain at exec (no new privileges).
	const noRoot = 1<<0 | 1<<1 | 1<<2 | 1<<3 // NOROOT(+LOCKED), NO_SETUID_FIXUP(+LOCKED)
	_ = unix.Prctl(unix.PR_SET_SECUREBITS, noRoot, 0, 0, 0)
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("confine: ambient capabilities: %w", err)
	}
	var none [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("confine: capset: %w", err)
	}
	return nil
}

// restrictPaths makes s's paths the thread's Landlock allow-list: reading any
// directory's entries, reading and executing beneath s.ReadOnly, and everything
// but making devices beneath s.Writable; nothing else. Scoped too: no abstract
// Unix socket or signal outside the domain. Best effort: a kernel without Landlock
// leaves the mounts alone to decide (State says so).
func restrictPaths(s Spec) error {
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}.BestEffort()
	rules := []landlock.Rule{landlock.PathAccess(ll.AccessFSReadDir, "/")}
	for _, p := range s.ReadOnly {
		rules = append(rules, pathRule(p, false, !slices.Contains(s.Files, p)))
	}
	for _, p := range s.Writable {
		rules = append(rules, pathRule(p, true, !slices.Contains(s.Files, p)))
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("confine: landlock: %w", err)
	}
	if fd < 0 {
		return nil // no Landlock on this kernel
	}
	defer unix.Close(fd)
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("confine: landlock: %w", err)
	}
	return nil
}

// pathRule is p's rule: a directory's rights beneath it, a file's on itself. A
// path that is missing is left out (it cannot be opened from the domain either).
func pathRule(p string, writable, dir bool) landlock.Rule {
	switch {
	case dir && writable:
		return landlock.RWDirs(p).WithIoctlDev().WithRefer().IgnoreIfMissing()
	case dir:
		return landlock.RODirs(p).IgnoreIfMissing()
	case writable:
		return landlock.RWFiles(p).WithIoctlDev().IgnoreIfMissing()
	default:
		return landlock.ROFiles(p).IgnoreIfMissing()
	}
}

// loadFilter installs the filter on the calling thread (no new privileges is set).
func loadFilter() error {
	raw, err := program()
	if err != nil {
		return err
	}
	fs := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		fs[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(fs)), Filter: &fs[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("confine: seccomp: %w", e)
	}
	return nil
}

// Warm does ahead what Apply otherwise does first: the syscall filter's program, built
// once per process where it is not compiled ahead (amd64 has it built in:
// filter_linux_amd64.go). A process that waits for its start (a sandbox's prepared
// start) calls it while it waits.
func Warm() { _, _ = program() }

// State is what this kernel gives a sandbox: whether the filter loads (seccomp
// filter mode), and Landlock's ABI version (0: none).
func State() (seccompOK bool, landlockABI int) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		v = 0
	}
	_, err = program()
	// PR_GET_SECCOMP fails with EINVAL on a kernel without seccomp.
	_, serr := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil && !errors.Is(serr, unix.EINVAL), v
}
