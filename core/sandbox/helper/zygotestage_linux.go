//go:build linux

package helper

// A start's system mounts made ahead (issue 84). Of a start's ~47 mounts some 40 are the
// same in every start of an agent: the system's grants (/usr, /etc/passwd …, read-only,
// root's), the scratch directories and the operator's home hidden, the leading part of
// its list (the list goes by depth, and a chat's own paths lie deeper). Making them was
// about half of the helper's work per start, two mount calls each. While the sandbox is idle the prepared start
// (zygoteprep_linux.go) now makes that part of the last start's list in its namespace:
// claude's root, its /dev and /proc, the mounts, and the pivot into it, the helper's view
// kept at /.old. The start then only checks it and makes the rest:
//
//   - its list must begin with exactly the mounts made ahead (path, source, kind, in order),
//     so that the mounts end as the whole list made at once would leave them;
//   - each mount made ahead must still show what its path names now: its source is opened
//     by name again (in the helper's view, through /.old) and must be the same file on
//     the same mount. A system file replaced since (/etc/resolv.conf on a network change,
//     a package's upgrade) fails that, and the start is made whole instead, as before;
//   - then the rest of the list's sources are opened there, mounted, the helper's view
//     detached and the root made read-only.
//
// Anything off that path (another list, a replaced file, an error) ends the prepared
// start, and the start is made without it (zygoteStart). What claude gets is the same
// either way: the boundary and manifest tests run on starts made both ways.

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/core/internal/confine"
	"golang.org/x/sys/unix"
)

// StageEnv gives a new helper the mounts its first start may make ahead
// (EncodeMounts(StagePrefix(the agent's last start's list))); later starts use the
// list of the start before.
const StageEnv = "CLAWHOST_SANDBOX_STAGE"

// errStageStale is a start that cannot use the mounts made ahead.
var errStageStale = errors.New("the mounts made ahead are not the start's")

// stageable reports whether m may be made ahead of its start: a system grant bound
// read-only at itself, or a fresh tmpfs (a scratch directory, a hidden one: the
// operator's home) or /dev/null over a hidden file.
func stageable(m Mount) bool {
	switch {
	case m.Src != "":
		return false
	case m.Op == OpScratch, m.Op == OpHide:
		return true
	case m.Op == OpReadOnly:
		return systemGrant()[m.Path] || slices.Contains(Testing.Grants, m.Path)
	}
	return false
}

var systemGrant = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range confine.SystemGrants() {
		m[p] = true
	}
	return m
})

// StagePrefix is the leading mounts of ms that a start may make ahead (stageable).
func StagePrefix(ms []Mount) []Mount {
	n := 0
	for n < len(ms) && stageable(ms[n]) {
		n++
	}
	return ms[:n:n]
}

// EncodeMounts is ms as StageEnv carries them: their wire form, in base64.
func EncodeMounts(ms []Mount) string {
	return base64.RawStdEncoding.EncodeToString(appendMounts(nil, ms))
}

// decodeMounts is EncodeMounts' inverse.
func decodeMounts(s string) ([]Mount, error) {
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, errZygoteWire
	}
	d := &zygoteDecoder{b: b}
	ms := d.mounts()
	return ms, d.end()
}

// canStage reports whether this kernel has what a start's check needs: openat2 with
// RESOLVE_IN_ROOT (Linux 5.6) and statx's mount id (5.8). Without, nothing is made ahead.
func canStage() bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	_, err = idOf(fd)
	return err == nil
}

// fileID is what a mount's source was: its mount and inode.
type fileID struct {
	mnt, dev, ino uint64
}

// idOf is fd's fileID.
func idOf(fd int) (fileID, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return fileID{}, err
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return fileID{}, errors.New("statx: no mount id")
	}
	return fileID{mnt: st.Mnt_id, dev: unix.Mkdev(st.Dev_major, st.Dev_minor), ino: st.Ino}, nil
}

// stage is a start's mounts made ahead, in the calling thread's namespace, whose root is
// claude's root now.
type stage struct {
	mounts []Mount
	ids    []fileID    // each mount's source as it was opened (zero: none)
	mps    mountPoints // claude's root's mount points, by claude's paths
	old    int         // the helper's view (/.old), O_PATH
}

// stageAhead makes tmpl, the leading mounts of a start to come, in the calling thread's
// mount namespace (zygoteUnshare's) under claude's root, and pivots into it. On an error
// the namespace is half made: the caller discards it with its thread.
func stageAhead(tmpl []Mount) (*stage, error) {
	srcs, err := zygoteSources(tmpl)
	if err != nil {
		return nil, err
	}
	defer closeSources(srcs)
	s := &stage{mounts: tmpl, ids: make([]fileID, len(tmpl)), old: -1}
	for i, fd := range srcs {
		if fd < 0 {
			continue
		}
		if s.ids[i], err = idOf(fd); err != nil {
			return nil, err
		}
	}
	mps, err := zygoteRoot(tmpl, srcs)
	if err != nil {
		return nil, err
	}
	if err := zygotePivotKeep(); err != nil {
		return nil, err
	}
	s.mps = mountPoints{}
	for p, fresh := range mps {
		if p == zygoteStage {
			s.mps["/"] = fresh
		} else if q, ok := strings.CutPrefix(p, zygoteStage+"/"); ok {
			s.mps["/"+q] = fresh
		}
	}
	if s.old, err = unix.Open(zygoteOld, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		s.old = -1
		return nil, fmt.Errorf("the helper's view: %w", err)
	}
	return s, nil
}

// finish makes req's view from s: it checks that req's list begins with s's mounts,
// each still what its path names, makes the rest, and detaches the helper's view.
// errStageStale (or another error) leaves the namespace to be discarded.
func (s *stage) finish(req Request) error {
	defer s.close()
	k := len(s.mounts)
	if len(req.Mounts) < k || !slices.Equal(req.Mounts[:k], s.mounts) {
		return errStageStale
	}
	for i, m := range s.mounts {
		if s.ids[i] == (fileID{}) || weakened("unverified") {
			continue
		}
		fd, err := s.open(sourceOf(m))
		if err != nil {
			return errStageStale
		}
		id, err := idOf(fd)
		_ = unix.Close(fd)
		if err != nil || id != s.ids[i] {
			return errStageStale
		}
	}
	rest := req.Mounts[k:]
	srcs := make([]int, len(rest))
	defer closeSources(srcs)
	for i, m := range rest {
		srcs[i] = -1
		if src := sourceOf(m); src != "" {
			fd, err := s.open(src)
			if err != nil {
				return fmt.Errorf("open %s: %w", src, err)
			}
			srcs[i] = fd
		}
	}
	for i, m := range rest {
		if err := zygoteMountOne(m, srcs[i], s.mps); err != nil {
			return fmt.Errorf("mount %s: %w", m.Path, err)
		}
	}
	return zygoteDropOld()
}

// close closes s's descriptor of the helper's view.
func (s *stage) close() {
	if s.old >= 0 {
		_ = unix.Close(s.old)
		s.old = -1
	}
}

// open opens path as the helper sees it (O_PATH), through its view at /.old: links are
// followed there, absolute ones from its root, as an open by name before the pivot.
func (s *stage) open(path string) (int, error) {
	rel := strings.TrimPrefix(path, "/")
	if rel == "" {
		rel = "."
	}
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT}
	for try := 0; ; try++ {
		// EAGAIN: a rename or mount raced the walk (RESOLVE_IN_ROOT checks for it).
		fd, err := unix.Openat2(s.old, rel, how)
		if (err != unix.EINTR && err != unix.EAGAIN) || try == 3 {
			return fd, err
		}
	}
}
