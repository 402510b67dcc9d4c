//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/sandbox/helper"
)

// stagedZygote starts a test helper that may make grants ahead beside the system's
// (helper.Testing.Grants), weakened as weaken says, with stage as its first start's
// mounts made ahead (nil: none).
func stagedZygote(t *testing.T, weaken string, grants []string, stage []helper.Mount) *zygote {
	t.Helper()
	bwrap := needZygote(t)
	exe, err := os.Executable()
	must(t, err)
	Testing.HelperEnv = []string{"ZYGOTE_WEAKEN=" + weaken, "ZYGOTE_GRANTS=" + strings.Join(grants, ":")}
	t.Cleanup(func() { Testing.HelperEnv = nil })
	z, err := startZygote(bwrap, exe, nil, stage)
	must(t, err)
	t.Cleanup(z.stop)
	return z
}

// stagedRun runs script in z with mounts and returns its output and how many of the
// mounts its start found made ahead.
func stagedRun(t *testing.T, z *zygote, mounts []helper.Mount, script string) (string, int) {
	t.Helper()
	out, code, p := zygoteRunProc(t, z, helper.Request{Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Dir: "/", Mounts: mounts})
	if code != 0 || p == nil {
		t.Fatalf("the script exited %d: %s", code, out)
	}
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}
	return out, p.staged
}

// stageFixture is a file and a directory under a test's temporary directory (below /tmp,
// which a start's root covers while it is made), each granted read-only as a system
// grant is, with the system's grants and scratch directories: what the start's list is.
func stageFixture(t *testing.T) (file, dir string, mounts []helper.Mount) {
	t.Helper()
	base := t.TempDir()
	file, dir = filepath.Join(base, "conf"), filepath.Join(base, "dir")
	must(t, os.WriteFile(file, []byte("file-one\n"), 0o644))
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "marker"), []byte("dir-one\n"), 0o644))
	mounts = zygoteMountsOf(Spec{readOnly: append(slices.Clone(confine.SystemGrants()), file, dir), scratch: confine.Scratch})
	return file, dir, mounts
}

// replaceByRename puts content at path as a package manager or a network change does:
// a new file (or a new directory with marker) renamed over the old one.
func replaceByRename(t *testing.T, path string, isDir bool, content string) {
	t.Helper()
	tmp := path + ".new"
	if isDir {
		must(t, os.Mkdir(tmp, 0o755))
		must(t, os.WriteFile(filepath.Join(tmp, "marker"), []byte(content), 0o644))
		must(t, os.Rename(path, path+".old"))
	} else {
		must(t, os.WriteFile(tmp, []byte(content), 0o644))
	}
	must(t, os.Rename(tmp, path))
}

// TestZygoteStagedStartSeesReplacedFiles: the mounts a start makes ahead while its sandbox
// is idle (helper.StagePrefix) must not keep a file or directory replaced on the host
// since: a start shows what each path names at the start, as a start made whole does. The
// same run against a helper that takes what it made ahead unchecked ("unverified") must
// show the old ones: the check can fail.
func TestZygoteStagedStartSeesReplacedFiles(t *testing.T) {
	for _, tc := range []struct {
		weaken string
		want   string
	}{
		{"", "file-two\ndir-two\n"},
		{"unverified", "file-one\ndir-one\n"},
	} {
		t.Run("weaken="+tc.weaken, func(t *testing.T) {
			file, dir, mounts := stageFixture(t)
			z := stagedZygote(t, tc.weaken, []string{file, dir}, nil)
			script := "cat " + file + " " + filepath.Join(dir, "marker")
			if out, staged := stagedRun(t, z, mounts, script); out != "file-one\ndir-one\n" || staged != 0 {
				t.Fatalf("the first start (nothing made ahead) read %q, %d made ahead", out, staged)
			}
			// The next start is made ahead now, with every mount of the list.
			replaceByRename(t, file, false, "file-two\n")
			replaceByRename(t, dir, true, "dir-two\n")
			out, staged := stagedRun(t, z, mounts, script)
			if out != tc.want {
				t.Fatalf("after both were replaced a start read %q (%d made ahead), want %q", out, staged, tc.want)
			}
			if tc.weaken == "" {
				if staged != 0 {
					t.Fatalf("a start whose mounts made ahead are stale says %d were made ahead", staged)
				}
				// Nothing replaced since: the next start takes all it made ahead.
				if out, staged := stagedRun(t, z, mounts, script); out != tc.want || staged != len(mounts) {
					t.Fatalf("the start after read %q with %d of %d mounts made ahead", out, staged, len(mounts))
				}
			}
		})
	}
}

// TestZygoteStagedStartIsTheWholeStart: a start that found its system mounts made ahead
// gives claude the same mount table, in the same order with the same options, as the one
// made whole; another list than the one made ahead is made whole; and the helper's
// first start takes what StageEnv said.
func TestZygoteStagedStartIsTheWholeStart(t *testing.T) {
	_, c, l := zygoteSpikeSetup(t)
	mounts := zygoteMounts(c, l, "/bin/sh")
	k := len(helper.StagePrefix(mounts))
	if k < 30 || k == len(mounts) {
		t.Fatalf("%d of the %d mounts of a chat's start may be made ahead: want the system's, not the chat's", k, len(mounts))
	}
	// The table without what differs between two starts: mount and parent ids, and the
	// device numbers of the fresh tmpfs mounts.
	const table = `sed -E 's/^[0-9]+ [0-9]+ [0-9]+:[0-9]+ //' /proc/self/mountinfo`
	z := stagedZygote(t, "", nil, mounts[:k])
	staged, n := stagedRun(t, z, mounts, table)
	if n != k {
		t.Fatalf("the first start found %d mounts made ahead, want StageEnv's %d", n, k)
	}
	whole := stagedZygote(t, "stage", nil, nil)
	want, n := stagedRun(t, whole, mounts, table)
	if n != 0 {
		t.Fatalf("a helper that makes nothing ahead says %d", n)
	}
	if staged != want {
		t.Fatalf("the mount table of a start made ahead:\n%s\nof one made whole:\n%s", staged, want)
	}
	// Another chat's list (the next start is made ahead with the same system mounts).
	other := zygoteMounts(c, Launch{Tmp: l.Tmp, Env: l.Env}, "/bin/sh")
	if out, n := stagedRun(t, z, other, "echo ok"); out != "ok\n" || n != k {
		t.Fatalf("another chat's start read %q with %d made ahead, want %d", out, n, k)
	}
	// A list that does not begin as the one made ahead: made whole.
	short := slices.Delete(slices.Clone(mounts), k-1, k)
	if out, n := stagedRun(t, z, short, "test -e "+mounts[k-1].Path+" || echo gone"); n != 0 || out != "gone\n" {
		t.Fatalf("a start of another list read %q with %d made ahead", out, n)
	}
}

// TestZygoteSaysReady: a helper tells the host once it has made its first start ahead,
// which it has before any start was asked of it.
func TestZygoteSaysReady(t *testing.T) {
	z := testZygote(t, "")
	select {
	case <-z.ready:
	case <-z.dead:
		t.Fatalf("the helper ended: %s", z.stderr.String())
	case <-time.After(zygoteTimeout):
		t.Fatal("the helper did not say it is ready")
	}
	if _, _, prepared := zygoteRunPrepared(t, z, helper.Request{Argv: []string{"/bin/true"}, Env: []string{"PATH=/usr/bin:/bin"}, Dir: "/", Mounts: zygoteSystem()}); !prepared {
		t.Fatal("the start after Ready was not made ahead")
	}
}

// TestTakeIdlePrefersAReadyHelper: a start takes the idle sandbox that came back last among
// those whose helper is ready, not one still starting (a spare just started beside it).
func TestTakeIdlePrefersAReadyHelper(t *testing.T) {
	mk := func(ready bool) *zygote {
		z := &zygote{ready: make(chan struct{})}
		if ready {
			close(z.ready)
		}
		return z
	}
	a, b, c := mk(true), mk(true), mk(false)
	z, q := takeIdle([]*zygote{a, b, c})
	if z != b || len(q) != 2 || q[0] != a || q[1] != c {
		t.Fatalf("took the %s one", map[*zygote]string{a: "first", b: "second", c: "third (not ready)"}[z])
	}
	z, q = takeIdle([]*zygote{mk(false), c})
	if z != c || len(q) != 1 {
		t.Fatal("with none ready, the last to come is taken")
	}
}
