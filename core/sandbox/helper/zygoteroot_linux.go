//go:build linux

package helper

// Claude's root and user in a recycled sandbox's start (zygoteStart): the empty root the
// start's mounts go into and that becomes claude's, and the user namespace claude gets.

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// zygoteStage is where a start builds claude's root before it becomes the root: the
// helper's /tmp, covered by a tmpfs in the start's mount namespace alone.
const zygoteStage = "/tmp"

// zygoteDevProc gives claude's root the helper's /dev, read-only, with a fresh /dev/shm,
// and its /proc (the pid namespace's, with bubblewrap's read-only covers).
func zygoteDevProc(mps mountPoints) error {
	dev, proc := zygoteStage+"/dev", zygoteStage+"/proc"
	mps.dir(dev)
	mps.dir(proc)
	if err := unix.Mount("/dev", dev, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	mps[dev] = false
	if !weakened("dev") {
		if err := unix.Mount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("/dev/shm: %w", err)
		}
		if err := unix.Mount("", dev, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|zygoteDevFlags, ""); err != nil {
			return fmt.Errorf("/dev read-only: %w", err)
		}
	}
	if err := unix.Mount("/proc", proc, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("/proc: %w", err)
	}
	mps[proc] = false
	return nil
}

// zygoteOld is where the helper's view is, in claude's root, from the pivot until
// zygoteDropOld.
const zygoteOld = "/.old"

// zygotePivotKeep makes the stage the calling thread's root (its own fs state:
// zygoteUnshare took CLONE_FS), the helper's view kept at zygoteOld.
func zygotePivotKeep() error {
	old := zygoteStage + zygoteOld
	if err := unix.Mkdir(old, 0o700); err != nil {
		return fmt.Errorf("root: %w", err)
	}
	if err := unix.PivotRoot(zygoteStage, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("root: %w", err)
	}
	return nil
}

// zygoteDropOld detaches the helper's view from claude's root and makes the root's own
// tmpfs read-only.
func zygoteDropOld() error {
	if err := unix.Unmount(zygoteOld, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the helper's view: %w", err)
	}
	if err := unix.Rmdir(zygoteOld); err != nil {
		return fmt.Errorf("root: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("root read-only: %w", err)
	}
	return nil
}

// mapSelf makes attr start its process in a user namespace of its own that maps uid
// and gid, and nothing else, to themselves.
func mapSelf(attr *syscall.SysProcAttr, uid, gid uint32) {
	attr.Cloneflags |= unix.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: int(uid), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: int(gid), HostID: int(gid), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

// threadGroups sets the calling thread's supplementary groups alone (the kernel keeps
// credentials per thread; syscall.Setgroups would set every thread's).
func threadGroups(groups []uint32) error {
	var p unsafe.Pointer
	if len(groups) > 0 {
		p = unsafe.Pointer(&groups[0])
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(p), 0); e != 0 {
		return fmt.Errorf("agent.run_as: groups: %w", e)
	}
	return nil
}
