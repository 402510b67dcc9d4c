//go:build linux

package helper

// One start on its thread, unprepared (zygoteStart) or as a prepared one finishes it
// (zygoteprep_linux.go): the mount sources opened, claude's view made in the thread's
// mount namespace, the thread's limits, the fork and exec.

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// zygoteSources opens the sources of ms (O_PATH) before anything is mounted (a hidden
// tree may hold them, as bwrap reads them from the old root): -1 for a mount without
// one (a hidden directory, a scratch). On an error it closes those it opened.
func zygoteSources(ms []Mount) ([]int, error) {
	srcs := make([]int, len(ms))
	for i, m := range ms {
		src := sourceOf(m)
		if src == "" {
			srcs[i] = -1
			continue
		}
		fd, err := unix.Open(src, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			closeSources(srcs[:i])
			return nil, fmt.Errorf("open %s: %w", src, err)
		}
		srcs[i] = fd
	}
	return srcs, nil
}

// sourceOf is what m mounts at its path: "" for a fresh tmpfs (a hidden directory, a
// scratch), /dev/null over a hidden file, else its source or the path itself.
func sourceOf(m Mount) string {
	switch {
	case m.Op == OpHide && m.Dir, m.Op == OpScratch:
		return ""
	case m.Op == OpHide:
		return "/dev/null"
	case m.Src == "":
		return m.Path
	}
	return m.Src
}

// MountEach makes ms in the calling thread's mount namespace, each at its path (its
// source opened first, as a start's are): a start's mounts without its own root, as the
// one-sandbox prototype (core/sandbox's BenchmarkSandboxZygote) makes them.
func MountEach(ms []Mount) error {
	srcs, err := zygoteSources(ms)
	if err != nil {
		return err
	}
	defer closeSources(srcs)
	mps := mountPoints{}
	for i, m := range ms {
		if err := zygoteMountOne(m, srcs[i], mps); err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
	}
	return nil
}

// closeSources closes the descriptors zygoteSources opened.
func closeSources(srcs []int) {
	for _, fd := range srcs {
		if fd > 0 {
			_ = unix.Close(fd)
		}
	}
}

// zygoteStart is one start on the calling, locked thread: a mount namespace of its own
// with req's mounts (zygoteView), the thread's capabilities limited (zygoteLimit), then
// the fork and exec (zygoteFork). It returns claude's pid and pidfd.
func zygoteStart(req Request, fds []int) (int, int, error) {
	if err := zygoteUnshare(); err != nil {
		return 0, 0, err
	}
	if err := zygoteView(req); err != nil {
		return 0, 0, err
	}
	attr, err := zygoteLimit(req.User)
	if err != nil {
		return 0, 0, err
	}
	return zygoteFork(req, fds, attr)
}

// zygoteView makes claude's view in the calling thread's mount namespace (zygoteUnshare's):
// req's mounts, /dev read-only and a fresh /dev/shm, on a root of its own.
func zygoteView(req Request) error {
	srcs, err := zygoteSources(req.Mounts)
	if err != nil {
		return err
	}
	defer closeSources(srcs)
	if _, err := zygoteRoot(req.Mounts, srcs); err != nil {
		return err
	}
	if err := zygotePivotKeep(); err != nil {
		return err
	}
	return zygoteDropOld()
}

// zygoteRoot makes claude's root with ms (their sources opened as srcs) at the stage: an
// empty tmpfs (mounted over the helper's /tmp, in this start's namespace alone) that gets
// /dev, /proc and the mounts, to become the root (zygotePivotKeep). It returns the root's
// mount points, by their paths at the stage.
func zygoteRoot(ms []Mount, srcs []int) (mountPoints, error) {
	if err := unix.Mount("tmpfs", zygoteStage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	mps := make(mountPoints, 2*len(ms)+4)
	mps[zygoteStage] = true
	if err := zygoteDevProc(mps); err != nil {
		return nil, err
	}
	for i, m := range ms {
		m.Path = zygoteStage + m.Path
		if err := zygoteMountOne(m, srcs[i], mps); err != nil {
			return nil, fmt.Errorf("mount %s: %w", strings.TrimPrefix(m.Path, zygoteStage), err)
		}
	}
	return mps, nil
}

// claudePath is req's claude as a path: its argv[0], looked up in the helper's PATH
// when it names no directory.
func claudePath(req Request) (string, error) {
	path := req.Argv[0]
	if !strings.Contains(path, "/") {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("start %s: %w", path, err)
		}
		path = p
	}
	return path, nil
}

// zygoteFork starts claude for req, with fds as its stdin, stdout and stderr, from the
// calling thread (whose view zygoteView made) with attr (zygoteLimit's).
func zygoteFork(req Request, fds []int, attr *syscall.SysProcAttr) (int, int, error) {
	pidfd := -1
	attr.PidFD = &pidfd
	path, err := claudePath(req)
	if err != nil {
		return 0, 0, err
	}
	// claude is started through the helper's own binary (/proc/self/exe, a link the
	// kernel resolves whatever the mounts show), which, in claude's user namespace,
	// gives up what confine.Exec takes and execs claude (confinedExec).
	argv := append([]string{os.Args[0], Arg, confineSpec(req).Encode(), path}, req.Argv...)
	// The descriptors as numbers, never as *os.File: a file's collector finalizer
	// (os.NewFile sets it on the inner file, which SetFinalizer on the *os.File does not
	// clear) would close its number again later — by then another start's descriptor, a
	// mount's source or the runtime's own (EBADF in fork/exec, claude's output lost).
	// The caller closes them (seqpacket.CloseAll), once.
	pid, err := syscall.ForkExec("/proc/self/exe", argv, &syscall.ProcAttr{Dir: req.Dir, Env: lastWins(req.Env),
		Files: []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])}, Sys: attr})
	if err != nil {
		return 0, 0, fmt.Errorf("start %s: fork/exec %s: %w", req.Argv[0], path, err)
	}
	// Reaped by the helper's own wait (reap).
	return pid, pidfd, nil
}

// zygoteLimit takes from the calling start thread what claude must not inherit (new
// privileges) and returns claude's start attributes: a user namespace of claude's own,
// whoever runs the host, in which the helper's binary (confinedExec) gives up every
// capability, joins a session keyring of its own, confines itself (Landlock, the
// syscall filter) and execs claude. Its user: root mapped to root outside (a host run
// as root, no agent.run_as), agent.run_as's user to that user, or — in a helper of a
// host not run as root — the host's user (asHostUser). No capability claude holds is
// one of the host's namespace: open_by_handle_at and every other check the kernel
// makes against the initial namespace fails.
func zygoteLimit(user *User) (*syscall.SysProcAttr, error) {
	if !weakened("caps") {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("no new privileges: %w", err)
		}
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if weakened("userns") {
		if u := user; u != nil {
			attr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: u.Groups}
		}
		return attr, nil
	}
	switch u := user; {
	case zygoteIDs != nil:
		if err := asHostUser(attr, zygoteIDs, user); err != nil {
			return nil, err
		}
	case u != nil:
		// The user's groups are the thread's, which the child inherits: setgroups is
		// refused inside a user namespace that maps one group.
		if err := threadGroups(u.Groups); err != nil {
			return nil, err
		}
		mapSelf(attr, u.UID, u.GID)
		attr.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, NoSetGroups: true}
	default:
		mapSelf(attr, 0, 0)
	}
	return attr, nil
}

// lastWins is env with each variable once, at its last place with its last value, as
// os/exec hands an environment to bubblewrap per start (syscall.ForkExec passes it as it
// is). The runner's is the host's with the agent's after it: given HOME twice, claude
// (node reads the first) would run with the operator's.
func lastWins(env []string) []string {
	out := make([]string, 0, len(env))
	saw := make(map[string]bool, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		k, _, ok := strings.Cut(env[i], "=")
		if ok && saw[k] {
			continue
		}
		saw[k] = true
		out = append(out, env[i])
	}
	slices.Reverse(out)
	return out
}
