package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/sandbox/helper"
	"golang.org/x/sys/unix"
)

// helperChildren is the pids of the helper's children (any of its threads'), as the host
// sees them.
func helperChildren(t *testing.T, z *zygote) []int {
	t.Helper()
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(z.helperPID()) + "/task/[0-9]*/children")
	var pids []int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(w); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// preparedRun runs req in z, which must exit 0 and leave z clean, and says whether the
// helper had made the start ahead.
func preparedRun(t *testing.T, z *zygote, req helper.Request) (out string, prepared bool) {
	t.Helper()
	out, code, prepared := zygoteRunPrepared(t, z, req)
	if code != 0 {
		t.Fatalf("exited %d: %s", code, out)
	}
	if after := zygoteAfter(t, z); after != "clean" {
		t.Fatalf("the helper is %s", after)
	}
	return out, prepared
}

// TestZygotePrepared: a helper makes each start ahead while it is idle — the first when it
// starts, each next once the sandbox is clean — and a start takes it: claude runs as the
// prepared process, with its own directory, environment and descriptors. A prepared
// process killed while it waited, or made for another user, is not used: that start is
// made as an unprepared one, and still runs.
func TestZygotePrepared(t *testing.T) {
	z := testZygote(t, "")
	sh := func(script string) helper.Request {
		return helper.Request{Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin", "X=1", "X=2"}, Dir: "/usr", Mounts: zygoteSystem()}
	}
	// Its own environment (GOGC, GOMAXPROCS) is not claude's.
	const look = `echo "$(pwd) X=$X GOGC=${GOGC-unset}"; ls /proc/self/fd | tr '\n' ' '`
	for i := range 2 {
		out, prepared := preparedRun(t, z, sh(look))
		if !prepared {
			t.Fatalf("start %d was not made ahead", i+1)
		}
		// ls's own descriptor to the directory it lists is the 3.
		if want := "/usr X=2 GOGC=unset\n0 1 2 3 "; out != want {
			t.Fatalf("start %d: claude saw %q, want %q", i+1, out, want)
		}
	}

	// Killed while it waits: the start is made without it.
	var waiting []int
	deadline := time.Now().Add(zygoteTimeout)
	for waiting = helperChildren(t, z); len(waiting) != 1; waiting = helperChildren(t, z) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle helper's children: %v, want the prepared start alone", waiting)
		}
		time.Sleep(time.Millisecond)
	}
	must(t, unix.Kill(waiting[0], unix.SIGKILL))
	for !zombie(waiting[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("the killed prepared start %d did not end", waiting[0])
		}
		time.Sleep(time.Millisecond)
	}
	if out, prepared := preparedRun(t, z, sh("echo after")); prepared || out != "after\n" {
		t.Fatalf("after the prepared start was killed: %q, prepared %v", out, prepared)
	}
	if _, prepared := preparedRun(t, z, sh("true")); !prepared {
		t.Fatal("the start after that was not made ahead")
	}

	if os.Geteuid() != 0 {
		return // agent.run_as needs a host run as root
	}
	nobody := sh("id -u")
	nobody.User = &helper.User{UID: 65534, GID: 65534}
	if out, prepared := preparedRun(t, z, nobody); prepared || out != "65534\n" {
		t.Fatalf("a start for another user: %q, prepared %v", out, prepared)
	}
	if out, prepared := preparedRun(t, z, nobody); !prepared || out != "65534\n" {
		t.Fatalf("the next start for that user: %q, prepared %v", out, prepared)
	}
}

// zombie reports whether pid has ended and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z")
}
