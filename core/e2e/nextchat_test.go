package e2e

import (
	"fmt"
	"hash/crc32"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/procstat"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestBoundaryNextChat: what one chat's claude leaves behind when it ends, the next
// chat's claude of the same agent never meets — through the real binary and the real CLI,
// one-shot (each turn's claude exits), the chats one after the other. Chat A's claude
// leaves a file in every directory it can write (TMPDIR, /tmp, /dev, /dev/shm, its claude
// state, the root's writable places), a background process in its own session, a System V
// shared memory segment (it outlives its maker), and reads its MCP tool file's name; after
// it ended, nothing of it may still run on the host, and
// chat B's claude must find none of A's files outside the agent's workspace (shared by
// every chat of the agent by design, docs/security.md), no process of A's and not A's
// agent tool token file nor its shared memory segment.
//
// Today every start is a new bubblewrap; the test is the contract a sandbox reused for
// the next chat (issue 58, "the sandbox paid once") must keep. It fails against a broken
// boundary: without --unshare-pid the background process outlives A's claude; with the
// chats sharing one claude state directory B finds A's file in it.
func TestBoundaryNextChat(t *testing.T) {
	t.Parallel()
	t.Run("bwrap per start", func(t *testing.T) { testBoundaryNextChat(t, sandboxRun{helper: "0"}) })
	t.Run("recycled", func(t *testing.T) { testBoundaryNextChat(t, sandboxRun{helper: "1"}) })
}

// testBoundaryNextChat is TestBoundaryNextChat with the host run as run says: each claude
// in a bubblewrap of its own, or, recycled, chat B's claude in the very sandbox chat A's
// ran in (its pid namespace, asserted), made empty again by the agent's sandbox helper.
// With the host's own choice (run.helper ""), the sandbox it says it uses is the one
// held to its contract.
func testBoundaryNextChat(t *testing.T, run sandboxRun) {
	t.Parallel()
	lpNeedBwrap(t)
	h, mode := run.startHost(t, clOptions{
		oneShot: true,
		agent:   Attrs{"allowed_tools": []string{"Bash"}},
		senders: []string{"u1", "u2"},
	})
	recycled := run.helper == "1" || (run.helper == "" && recycledMode(mode))
	nonce := testNonce(t)
	left, sleeper := "left-"+nonce, "sleeper-"+nonce
	// The segment's key, this test's; were it made in the host's IPC namespace, removed
	// at the end. (Below 0x80000000: ctypes passes it as a C int.)
	shmKey := fmt.Sprintf("0x7%07x", crc32.ChecksumIEEE([]byte(nonce))&0xfffffff)
	t.Cleanup(func() { _ = exec.Command("ipcrm", "-M", shmKey).Run() })
	// The scripts spell the markers split ("lef""t-"), so a script's own command line
	// never matches what it looks for.
	split := func(s string) string { return s[:3] + `""` + s[3:] }
	plant := strings.Join([]string{
		`n=0; for d in $(find / \( -path /proc -o -path /sys \) -prune -o -type d -writable -print 2>/dev/null) "$TMPDIR" /dev /dev/shm; do touch "$d/.` + split(left) + `" 2>/dev/null && n=$((n+1)); done; echo "planted $n"`,
		`setsid sh -c 'sleep 600; true "$0"' ` + split(sleeper) + ` </dev/null >/dev/null 2>&1 &`,
		`python3 -c 'import ctypes; ctypes.CDLL(None).shmget(` + shmKey + `, 4096, 0o1666)' && ipcs -m | grep -qi ` + shmKey + ` && echo shm-made`,
		`echo tmpdir "$TMPDIR"`,
		`echo "pidns $(readlink /proc/self/ns/pid)"`,
		`echo started-background`,
	}, "\n")
	h.fake.Enqueue(bashRun(plant)...)
	h.say("u1", "leave something behind")
	planted := lpToolResult(t, h, 2)
	t.Logf("chat A planted:\n%s", planted)
	if !regexp.MustCompile(`(?m)^planted [1-9]`).MatchString(planted) || !regexp.MustCompile(`(?m)^started-background$`).MatchString(planted) ||
		!regexp.MustCompile(`(?m)^shm-made$`).MatchString(planted) {
		t.Fatalf("chat A's script did not run as meant:\n%s", planted)
	}

	// A's claude ends with its turn (one-shot); so must everything it started.
	sdktest.WaitFor(t, "chat A's claude and what it started to end", func() bool {
		return len(h.claudePIDs()) == 0 && len(hostProcsWith(sleeper)) == 0
	})
	if recycled {
		sdktest.WaitFor(t, "chat A's sandbox to be empty again", func() bool {
			return strings.Contains(h.log.String(), "claude's sandbox is empty again")
		})
	}

	ws := filepath.Join(h.dir, "workspace")
	data := filepath.Join(h.dir, "data")
	look := strings.Join([]string{
		`find / \( -path /proc -o -path /sys \) -prune -o -name ".` + split(left) + `" -print 2>/dev/null | sed 's/^/F /'`,
		// The list is written before it is searched: a grep in the same pipeline would
		// list itself.
		`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done > "$TMPDIR/ps"`,
		`grep -F ` + split(sleeper) + ` "$TMPDIR/ps" | sed 's/^/P /'`,
		`cat ` + filepath.Join(data, "run", "agent") + `/*.json 2>/dev/null | grep -o 'lo:chat-u[0-9]*' | sort -u | sed 's/^/T /'`,
		`ipcs -m | grep -i ` + shmKey + ` | sed 's/^/I /'`,
		`echo "pidns $(readlink /proc/self/ns/pid)"`,
		`echo looked`,
	}, "\n")
	h.fake.Enqueue(bashRun(look)...)
	h.say("u2", "look around")
	found := lpToolResult(t, h, 4)
	t.Logf("chat B found:\n%s", found)
	if !regexp.MustCompile(`(?m)^looked$`).MatchString(found) {
		t.Fatalf("chat B's script did not run:\n%s", found)
	}
	for _, l := range strings.Split(found, "\n") {
		switch {
		case strings.HasPrefix(l, "F ") && !strings.HasPrefix(l, "F "+ws+"/"):
			t.Errorf("chat B found a file chat A left: %s", l[2:])
		case strings.HasPrefix(l, "P "):
			t.Errorf("chat B sees a process chat A left: %s", l[2:])
		case strings.HasPrefix(l, "I "):
			t.Errorf("chat B sees chat A's shared memory segment: %s", l[2:])
		case strings.HasPrefix(l, "T ") && strings.Contains(l, "chat-u1"):
			t.Errorf("chat B reads chat A's agent tool token file: %s", l[2:])
		}
	}
	if ps := hostProcsWith(sleeper); len(ps) > 0 {
		t.Errorf("chat A's background process still runs on the host: %v", ps)
	}
	ns := regexp.MustCompile(`(?m)^pidns (.+)$`)
	a, b := ns.FindStringSubmatch(planted), ns.FindStringSubmatch(found)
	if a == nil || b == nil {
		t.Fatalf("a chat's pid namespace is missing: A %q, B %q", a, b)
	}
	if recycled && a[1] != b[1] {
		t.Errorf("chat B's claude ran in another sandbox (%s) than chat A's (%s): the recycling was not tested", b[1], a[1])
	}
	if !recycled && a[1] == b[1] {
		t.Errorf("chats A and B shared a pid namespace (%s) with bubblewrap per start", a[1])
	}
}

// hostProcsWith are the live processes on the host whose command line contains s.
func hostProcsWith(s string) []int {
	var out []int
	for _, st := range procstat.All() {
		if st.State() == "Z" {
			continue
		}
		if strings.Contains(strings.Join(clCmdline(st.PID), " "), s) {
			out = append(out, st.PID)
		}
	}
	return out
}
