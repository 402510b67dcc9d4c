package sdk

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// envDeathsigChild makes TestParentDeathSignal's process the child it
// starts: it prints its parent-death signal and whether watchParent
// returned at once.
const envDeathsigChild = "SDK_TEST_DEATHSIG_CHILD"

// TestParentDeathSignal: a plugin started with a parent-death signal (as
// the host starts every plugin) has read it at its start, whichever
// thread asks later (the setting is per thread), and watchParent
// then returns at once without polling and without calling gone; without
// one it reads 0 (and watchParent polls).
func TestParentDeathSignal(t *testing.T) {
	if os.Getenv(envDeathsigChild) == "1" {
		sig := hostDeathSignal
		fmt.Printf("pdeathsig=%d\n", sig)
		if sig != 0 {
			watchParent(hclog.NewNullLogger(), os.Getppid(), func() { fmt.Println("gone") })
			fmt.Println("watch=returned")
		}
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The signal is tied to the forking thread: keep it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, sig := range []syscall.Signal{0, syscall.SIGKILL, syscall.SIGTERM} {
		cmd := exec.Command(exe, "-test.run=^TestParentDeathSignal$")
		cmd.Env = append(os.Environ(), envDeathsigChild+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: sig}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child with pdeathsig %d: %v\n%s", sig, err, out)
		}
		want := fmt.Sprintf("pdeathsig=%d\n", sig)
		if sig != 0 {
			want += "watch=returned\n"
		}
		if !strings.HasPrefix(string(out), want) || strings.Contains(string(out), "gone") {
			t.Errorf("child with pdeathsig %d printed %q, want it to begin with %q", sig, out, want)
		}
	}
}
