package pluginhost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/ownerdir"
)

// TestSocketDir: the plugins' sockets are in the host's own directory,
// which names the host process, goes when the host stops, and is removed
// by the next host once the host that made it is gone (killed).
func TestSocketDir(t *testing.T) {
	tmp, err := os.MkdirTemp("/tmp", "sd") // short: a socket path has ~107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(tmp, "clawhost-sock-left")
	if err := os.MkdirAll(filepath.Join(left, "plugin-dir1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, ownerdir.File), []byte(strconv.Itoa(gone.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}

	rec := newRecorder()
	h := newHost(t, rec)
	runLoopback(t, h)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the socket directory of an exited host is still there (stat: %v)", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, sockDirPattern))
	if len(dirs) != 1 {
		t.Fatalf("socket directories %q, want this host's", dirs)
	}
	owner, _ := os.ReadFile(filepath.Join(dirs[0], ownerdir.File))
	if strings.TrimSpace(string(owner)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("owner %q, want this process %d", owner, os.Getpid())
	}
	socks, _ := filepath.Glob(filepath.Join(dirs[0], "plugin-dir*", "plugin*"))
	if len(socks) != 1 {
		t.Errorf("plugin sockets in the host's directory: %q, want the loopback plugin's", socks)
	}
	stray, _ := filepath.Glob(filepath.Join(tmp, "plugin-dir*"))
	if len(stray) != 0 {
		t.Errorf("socket directories outside the host's: %q", stray)
	}
	h.Stop()
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the host's socket directory is still there after Stop (stat: %v)", err)
	}
}
