package sandbox

// The sandbox's mount list, its mechanics: a Spec (the policy, sandbox.go) as
// mounts in the order they are made, those that change nothing left out, and as
// bubblewrap's argv. The recycled sandbox's start makes the same list (core/sandbox/helper).

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/sandbox/helper"
)

// mount is one bwrap mount step.
type mount struct {
	path string
	op   int    // opHide, opBind or opReadOnly, the order at one path
	src  string // opBind from another path; "" for path itself
	dir  bool   // what is mounted (src, else path) is a directory
}

// The steps, the order at one path (the helper makes them: core/sandbox/helper).
const (
	opHide     = helper.OpHide
	opScratch  = helper.OpScratch
	opBind     = helper.OpBind
	opReadOnly = helper.OpReadOnly
)

// bwrapArgs is bwrap's argv (without the command) for s, up to and
// including "--". The sandbox's root is an empty tmpfs of its own (bwrap's):
// nothing of the host exists in it but what s grants, its own /dev and
// /proc. Each path is bound, hidden or made scratch in order of depth, so the
// deeper rule wins: a path bound back inside a hidden one is visible, a
// hidden one inside the workspace (other chats' media) is not; at one path a
// bind beats a hide and a read-only bind beats both. stat tells directories
// from files and reports what does not exist, which is skipped. Mounts that
// change nothing a process inside sees are left out (needless): each costs
// bwrap a mount and a read of the mount table at every start.
func bwrapArgs(s Spec, fsys pathInfo) []string {
	a := append(rowFlags("processes", "System V IPC"), "--dev", "/dev", "--proc", "/proc")
	for _, m := range prune(mountOrder(s, fsys), fsys) {
		switch {
		case m.op == opScratch:
			a = append(a, "--perms", "1777", "--tmpfs", m.path)
		case m.op == opBind:
			a = append(a, "--bind", cmp.Or(m.src, m.path), m.path)
		case m.op == opReadOnly:
			a = append(a, "--ro-bind", m.path, m.path)
		case m.dir:
			a = append(a, "--tmpfs", m.path)
		default:
			a = append(a, "--ro-bind", "/dev/null", m.path)
		}
	}
	// The root's own tmpfs (what bwrap made to hold the mount points) read-only,
	// as the recycled sandbox's is.
	return append(a, "--remount-ro", "/", "--chdir", cmp.Or(s.worktree, s.workspace), "--")
}

// BwrapArgs is bubblewrap's argv for a process that may see s, up to and including "--":
// Table's rows, the syscall filter read from descriptor 3 (what PerStart starts).
func (s Spec) BwrapArgs() []string {
	return append(rowFlags("user namespace, capabilities", "system calls"), bwrapArgs(s, hostPaths)...)
}

// mountOrder is s's mounts in the order bwrap applies them, those whose
// path (or source) does not exist left out, each marked a directory or not.
func mountOrder(s Spec, fsys pathInfo) []mount {
	var ms []mount
	add := func(p string, op int, src string) {
		if p != "" {
			ms = append(ms, mount{path: filepath.Clean(p), op: op, src: src})
		}
	}
	for _, p := range s.hide {
		add(p, opHide, "")
	}
	for _, p := range s.scratch {
		add(p, opScratch, "")
	}
	for _, p := range s.rw {
		add(p, opBind, "")
	}
	for _, p := range s.readOnly {
		add(p, opReadOnly, "")
	}
	for _, o := range s.overlays {
		add(o.dst, opBind, filepath.Clean(o.src))
	}
	slices.SortStableFunc(ms, func(x, y mount) int {
		if d := depth(x.path) - depth(y.path); d != 0 {
			return d
		}
		if c := strings.Compare(x.path, y.path); c != 0 {
			return c
		}
		if d := x.op - y.op; d != 0 {
			return d
		}
		return strings.Compare(x.src, y.src)
	})
	var out []mount
	for _, m := range slices.Compact(ms) {
		if m.op == opScratch {
			m.dir = true // made in the sandbox's own tree, whatever the host has there
			out = append(out, m)
			continue
		}
		dir, ok := fsys.stat(cmp.Or(m.src, m.path))
		if !ok {
			continue
		}
		m.dir = dir
		out = append(out, m)
	}
	return out
}

// depth is the number of elements of a clean absolute path.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// pathInfo is what bwrapArgs asks of the filesystem.
type pathInfo struct {
	// stat tells a directory from a file; ok is false when p does not
	// exist.
	stat func(p string) (dir, ok bool)
	// real is p with every link resolved, "" when it cannot be resolved.
	real func(p string) string
}

// statPath is pathInfo.stat on the real filesystem.
func statPath(p string) (dir, ok bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return false, false
	}
	return fi.IsDir(), true
}

// prune drops from ms, the mounts in the order bwrap applies them (each
// path existing), those that change nothing a process inside sees:
//
//   - a mount followed by another at the same path, which covers it;
//   - a hide where nothing is shown: outside every bind (the sandbox's root
//     is empty), inside a hidden tree or a scratch directory; and a hide of
//     /dev/shm, which --dev /dev makes an empty directory of the sandbox's own;
//   - a path bound at itself where the tree above it shows that same path
//     the same way already: read-only under a read-only bind, writable under
//     a writable bind (a claude package inside /usr).
//
// The last two only when no link is involved (byName). The result shows
// the same files, as writable, as ms does, or fewer (the absent hidden
// paths); TestBwrapArgs and core/e2e's TestSandboxManifest hold it to that.
func prune(ms []mount, fsys pathInfo) []mount {
	var out []mount
	real := map[string]string{}
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].path == m.path {
			continue
		}
		above := mount{path: "/", op: opHide} // the sandbox's own empty root
		for j := len(out) - 1; j >= 0; j-- {
			if under(m.path, out[j].path) {
				above = out[j]
				break
			}
		}
		switch {
		case m.op == opHide && m.path == "/dev/shm":
			continue
		case m.op == opHide && (above.op == opHide || above.op == opScratch) && byName(m.path, false, ms[:i], fsys, real):
			continue
		case m.op != opHide && m.src == "" && above.op == m.op && above.src == "" && byName(m.path, true, ms[:i], fsys, real):
			continue
		}
		out = append(out, m)
	}
	return out
}

// byName reports whether the mounts above p by name are all that decide
// what p shows: no mount of before lands at, above or below p through a
// link (bwrap resolves a mount's path when it mounts), and, with self, p
// holds no link. real caches fsys.real for one bwrapArgs.
func byName(p string, self bool, before []mount, fsys pathInfo, real map[string]string) bool {
	resolve := func(q string) string {
		r, ok := real[q]
		if !ok {
			r = fsys.real(q)
			real[q] = r
		}
		return r
	}
	if self && resolve(p) != p {
		return false
	}
	for _, q := range before {
		if r := resolve(q.path); r != q.path && (r == "" || r == p || under(p, r) || under(r, p)) {
			return false
		}
	}
	return true
}

// under reports whether the clean path p is inside the directory dir.
func under(p, dir string) bool {
	if dir == "/" {
		return p != "/"
	}
	return strings.HasPrefix(p, dir+"/")
}
