package helper

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The sandbox helper of a host not run as root.
//
// bwrap run by an unprivileged user makes its sandbox in a user namespace of its own. Per
// start, bwrap maps the user to root there while it mounts, then enters a second user
// namespace that maps root back to the user, and runs claude in it; the mounts it made
// belong to the first one. A helper run that way could not mount per start: a mount
// namespace made in the second user namespace copies the first's mounts locked, and a
// bind from the read-only root cannot be made writable again. So the helper stays root in
// bwrap's one user namespace (zygoteBwrapUser: --uid 0, CAP_SYS_ADMIN, CAP_SETPCAP and
// CAP_SETFCAP there, nothing outside it), makes each start's mount and IPC namespaces there, and starts
// claude in a user namespace of its own that maps the host's user back, as bwrap per
// start does: claude runs as the host's user, with no capability (zygoteStart), and sees
// its own uid and gid, not root.

// zygoteIDs is the host's user and group in a helper of a host not run as root (the host
// says so, zygoteIDsEnv); nil in a helper of a host run as root — in a container's user
// namespace too, where root is mapped to some other id outside: the host is root there.
var zygoteIDs *hostIDs

// zygoteIDsEnv carries the host's uid and gid ("uid:gid") to a helper of a host not run as
// root (startZygote); the helper does not pass its environment on.
const zygoteIDsEnv = "CLAWHOST_SANDBOX_HOST_IDS"

// hostIDs is a uid and a gid outside the helper's user namespace.
type hostIDs struct{ uid, gid int }

// parseHostIDs reads zygoteIDsEnv's value; nil for "" (a host run as root).
func parseHostIDs(v string) (*hostIDs, error) {
	if v == "" {
		return nil, nil
	}
	u, g, ok := strings.Cut(v, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid <= 0 || gid < 0 {
		return nil, fmt.Errorf("%s=%q is no uid:gid of a user other than root", zygoteIDsEnv, v)
	}
	return &hostIDs{uid: uid, gid: gid}, nil
}

// HostIDsEnv is zygoteIDsEnv for a helper of this process: its uid and gid when it is not
// root, nothing when it is.
func HostIDsEnv() []string {
	if os.Geteuid() == 0 {
		return nil
	}
	return []string{zygoteIDsEnv + "=" + strconv.Itoa(os.Geteuid()) + ":" + strconv.Itoa(os.Getegid())}
}

// asHostUser makes attr start claude in a user namespace of its own that maps the host's
// user and group (ids) to the helper's root: claude runs as that user with no capability,
// as in bwrap per start. The helper's start thread writes the maps, one id each, its own:
// mapping the helper's root takes CAP_SETFCAP in the helper's namespace (the kernel's
// guard on file capabilities), which the thread alone keeps; setgroups is denied there
// first. In its namespace claude is not root: its exec leaves it no capability, and with
// no new privileges it gains none.
func asHostUser(attr *syscall.SysProcAttr, ids *hostIDs, user *User) error {
	if user != nil {
		return errors.New("agent.run_as needs clawhost to run as root")
	}
	attr.Cloneflags |= unix.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: ids.uid, HostID: 0, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: ids.gid, HostID: 0, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	return nil
}

// mountFlagsKept are the flags of the mount fd is on that a bind remount of it (or of a
// bind of it, which has its flags) keeps, and whether it is read-only. In a user namespace
// the kernel refuses a remount that would change nosuid, nodev, noexec or the atime mode of
// a mount copied from the host's namespace (they are locked); bwrap asks for them again
// when it remounts too. None of them makes a mount less restricted.
func mountFlagsKept(fd int) (flags uintptr, readOnly bool) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return 0, false
	}
	var f uintptr
	for _, m := range [...]struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&m.st != 0 {
			f |= m.ms
		}
	}
	return f, st.Flags&unix.ST_RDONLY != 0
}

// zygoteDevFlags are the flags /dev's read-only remount keeps (mountFlagsKept), read once:
// the helper's /dev, which every start's mount namespace copies, does not change.
var zygoteDevFlags uintptr

// devFlags reads zygoteDevFlags.
func devFlags() uintptr {
	fd, err := unix.Open("/dev", unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	f, _ := mountFlagsKept(fd)
	return f
}

// MayKeep is every capability a start's thread may use once the helper has started
// (zygoteLimit): those that write claude's user namespace's id maps. claude itself keeps
// none (confine.Exec).
const MayKeep = 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETFCAP

// narrowBounding drops from the bounding set of every thread of the helper, once at its
// start, each capability no start uses (MayKeep): bwrap leaves a helper run as
// root the full set. The bounding set only limits what an exec may gain; the helper's
// one exec, claude's start, happens in a new user namespace, which starts with a full
// set of its own, and confine.Exec empties that. Threads made later inherit the set.
// Not done where the runtime cannot reach every thread: a binary built with cgo (tests).
func narrowBounding() {
	_ = dropBounding(MayKeep, boundingSet(), func(c uintptr) error {
		if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0); errno != 0 {
			return errno // ENOTSUP (cgo): each start drops them all
		}
		return nil
	})
}

// dropBounding calls drop for each capability in the bounding set have that keep does
// not hold, until one fails; EINVAL (past the kernel's last capability) ends it quietly.
func dropBounding(keep uint32, have uint64, drop func(c uintptr) error) error {
	for c := 0; c < 64; c++ {
		if c < 32 && keep&(1<<c) != 0 || have&(1<<c) == 0 {
			continue // kept, or not in the set
		}
		if err := drop(uintptr(c)); err != nil {
			if err == unix.EINVAL {
				return nil
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}

// boundingSet is the calling thread's capability bounding set, from /proc.
func boundingSet() uint64 {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return ^uint64(0)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil {
				return n
			}
		}
	}
	return ^uint64(0)
}
