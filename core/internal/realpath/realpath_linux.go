//go:build linux

package realpath

import (
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// resolvedPath is the absolute path p resolves to, every link followed; ok is false when
// it cannot tell (Of then asks filepath.EvalSymlinks), true with "" when p does not
// exist. Most paths hold no link: opened refusing every link (openat2's
// RESOLVE_NO_SYMLINKS, one path walk) p is its own answer. Otherwise the kernel names what
// it opened (/proc/self/fd): one walk again, and a read of /proc.
func resolvedPath(p string) (string, bool) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &how)
	switch err {
	case nil:
		_ = unix.Close(fd)
		return filepath.Clean(p), true
	case unix.ENOENT, unix.ENOTDIR:
		return "", true
	case unix.ELOOP:
	default:
		return "", false // ENOSYS (before Linux 5.6), EACCES, ...
	}
	if fd, err = unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
		return "", false
	}
	defer unix.Close(fd)
	var buf [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || n == 0 || n == len(buf) || buf[0] != '/' {
		return "", false
	}
	r := string(buf[:n])
	if strings.HasSuffix(r, " (deleted)") {
		return "", false
	}
	return r, true
}
