package pluginhost

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// go-plugin's client makes a directory for each plugin process's socket
// (plugin-dir*, in the temp dir) and removes it when it stops the plugin;
// a host that is killed leaves them all behind, and nothing removed them
// later (3,776 of them on the development machine after a day of kill
// tests). The host therefore gives go-plugin a directory of its own,
// clawhost-sock-*, which names the host process in an owner file: it is
// removed by Stop, and by the next host that starts once its owner is gone.

const (
	sockDirPattern = "clawhost-sock-*"
	sockDirOwner   = "owner.pid"
)

// socketDir returns the host's directory for plugin sockets, made on first
// use; "" (go-plugin's default, the temp dir) when it cannot be made.
func (h *Host) socketDir() string {
	h.sockOnce.Do(func() {
		removeSocketLeftovers(os.TempDir())
		dir, err := os.MkdirTemp("", strings.TrimSuffix(sockDirPattern, "*"))
		if err != nil {
			h.log.Warn("no directory of its own for plugin sockets; using the temp dir", "error", err)
			return
		}
		if err := os.WriteFile(filepath.Join(dir, sockDirOwner), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			os.RemoveAll(dir)
			h.log.Warn("no directory of its own for plugin sockets; using the temp dir", "error", err)
			return
		}
		h.sockDir = dir
	})
	return h.sockDir
}

// removeSocketLeftovers removes the socket directories in tmp whose host
// process has exited. Another user's directory is left alone (its owner
// cannot be signalled: EPERM, not ESRCH).
func removeSocketLeftovers(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, sockDirPattern))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, sockDirOwner))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && pid > 0 && pid != os.Getpid() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
