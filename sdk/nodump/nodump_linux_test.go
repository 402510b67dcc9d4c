//go:build linux

package nodump

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a process that calls Set, reports, and waits
// to be looked at: NODUMP_CHILD=1.
func TestMain(m *testing.M) {
	if os.Getenv("NODUMP_CHILD") == "1" {
		if os.Getenv("NODUMP_SKIP") != "1" {
			if err := Set(); err != nil {
				os.Stdout.WriteString("error " + err.Error() + "\n")
				os.Exit(1)
			}
		}
		d, _ := dumpable()
		os.Stdout.WriteString("dumpable=" + strconv.FormatBool(d) + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSet: after Set another process of the same user, without
// CAP_SYS_PTRACE, cannot read the process's environment; it can still read
// its statm (the status page's memory figures). As root, the reader runs
// as uid 65534 against a child of that uid too, so "the same user" holds.
func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodump  bool
		environ bool
	}{{"dumpable", false, true}, {"after Set", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			pid := startChild(t, tc.nodump)
			environ := readAs(t, "/proc/"+strconv.Itoa(pid)+"/environ")
			if got := strings.Contains(environ, "NODUMP_SECRET=s3cret"); got != tc.environ {
				t.Errorf("environ readable by the same user: %v, want %v (%q)", got, tc.environ, environ)
			}
			if statm := readAs(t, "/proc/"+strconv.Itoa(pid)+"/statm"); len(strings.Fields(statm)) < 3 {
				t.Errorf("statm unreadable: %q", statm)
			}
		})
	}
}

// startChild starts the test binary as a child (as uid 65534 when the test
// runs as root) that calls Set when nodump, and returns its pid once it
// has.
func startChild(t *testing.T, nodump bool) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{exe}
	if os.Geteuid() == 0 {
		args = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"NODUMP_SECRET=s3cret", "PATH=" + os.Getenv("PATH")}
	if nodump {
		cmd.Env = append(cmd.Env, "NODUMP_CHILD=1")
	} else {
		cmd.Env = append(cmd.Env, "NODUMP_CHILD=1", "NODUMP_SKIP=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	want := "dumpable=" + strconv.FormatBool(!nodump)
	if got := strings.TrimSpace(string(buf[:n])); got != want {
		t.Fatalf("child says %q, want %q", got, want)
	}
	return cmd.Process.Pid
}

// readAs reads path as another process of the child's user: uid 65534 when
// the test runs as root, else the test's own user.
func readAs(t *testing.T, path string) string {
	t.Helper()
	args := []string{"cat", path}
	if os.Geteuid() == 0 {
		args = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)
	}
	b, _ := exec.Command(args[0], args[1:]...).Output()
	return string(b)
}

// dumpable reads the flag back (prctl PR_GET_DUMPABLE).
func dumpable() (bool, error) {
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	if errno != 0 {
		return false, errno
	}
	return r != 0, nil
}
