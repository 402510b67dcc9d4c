// The helper's side of a sandbox's file system: the namespaces it unshares
// and the mounts it makes from a request's list.

package helper

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// zygoteUnshare gives the calling, locked thread the start's own namespaces: a mount
// namespace, private (nothing mounted in it reaches the helper's), and a System V IPC one —
// a shared memory segment, message queue or semaphore set outlives the process that made
// it, and the next chat's claude in this sandbox would find it.
func zygoteUnshare() error {
	flags := unix.CLONE_NEWNS | unix.CLONE_FS
	if !weakened("ipc") {
		flags |= unix.CLONE_NEWIPC
	}
	if err := unix.Unshare(flags); err != nil {
		return fmt.Errorf("unshare: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private: %w", err)
	}
	return nil
}

// zygoteMountOne makes one mount as bwrapArgs would ask bwrap to, from the source opened
// as src, its mount point made as mps says.
func zygoteMountOne(m Mount, src int, mps mountPoints) error {
	if m.Op == OpHide && m.Dir || m.Op == OpScratch {
		mode := "mode=0755"
		if m.Op == OpScratch {
			mode = "mode=1777"
		}
		mps.dir(m.Path)
		if err := unix.Mount("tmpfs", m.Path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, mode); err != nil {
			return err
		}
		mps[m.Path] = true
		return nil
	}
	if m.Dir {
		mps.dir(m.Path)
	} else {
		mps.file(m.Path)
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(src), m.Path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	mps[m.Path] = false
	kept, ro := mountFlagsKept(src)
	if m.Op != OpBind {
		if ro {
			return nil // its source, in the helper's read-only view, was read-only already
		}
		kept |= unix.MS_RDONLY
	}
	return unix.Mount("", m.Path, "", unix.MS_BIND|unix.MS_REMOUNT|kept, "")
}

// mountPoints is what one start knows of the directories its mounts go on: true for a
// tmpfs it mounted (a hidden tree) and each directory it made in one — nothing is in
// such a directory but what the start made, so a mount point below it is made without
// looking first (a start's fstatat and mkdirat calls were a tenth of its helper CPU);
// false for a path it bound something onto, whose content is the source's. Elsewhere
// (the read-only view, a bound tree) a mount point is looked for and made as
// os.MkdirAll does.
type mountPoints map[string]bool

// fresh reports whether p lies in a tmpfs of this start, no bind between.
func (mps mountPoints) fresh(p string) bool {
	for {
		if v, ok := mps[p]; ok {
			return v
		}
		q := filepath.Dir(p)
		if q == p {
			return false
		}
		p = q
	}
}

// dir makes directory p, and its parents, where missing.
func (mps mountPoints) dir(p string) {
	if mps[p] {
		return
	}
	parent := filepath.Dir(p)
	if parent == p || !mps.fresh(parent) {
		_ = os.MkdirAll(p, 0o755)
		return
	}
	mps.dir(parent)
	_ = unix.Mkdir(p, 0o755)
	mps[p] = true
}

// file makes p an empty file where missing (a file's mount point), and its parents.
func (mps mountPoints) file(p string) {
	parent := filepath.Dir(p)
	if !mps.fresh(parent) {
		if _, err := os.Lstat(p); err == nil {
			return
		}
	}
	mps.dir(parent)
	if fd, err := unix.Open(p, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644); err == nil {
		_ = unix.Close(fd)
	}
}
