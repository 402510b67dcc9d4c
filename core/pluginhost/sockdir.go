package pluginhost

import (
	"os"
	"strings"

	"github.com/clawhost/clawhost/core/internal/ownerdir"
)

// go-plugin's client makes a directory for each plugin process's socket
// (plugin-dir*, in the temp dir) and removes it when it stops the plugin;
// a host that is killed leaves them all behind, and nothing removed them
// later (3,776 of them on the development machine after a day of kill
// tests). The host therefore gives go-plugin a directory of its own,
// clawhost-sock-*, which names the host process (core/internal/ownerdir):
// it is removed by Stop, and by the next host that starts once its owner
// is gone.

const sockDirPattern = "clawhost-sock-*"

// socketDir returns the host's directory for plugin sockets, made on first
// use; "" (go-plugin's default, the temp dir) when it cannot be made.
func (h *Host) socketDir() string {
	h.sockOnce.Do(func() {
		ownerdir.RemoveLeftovers(os.TempDir(), sockDirPattern, 0)
		dir, err := ownerdir.Make("", strings.TrimSuffix(sockDirPattern, "*"))
		if err != nil {
			h.log.Warn("no directory of its own for plugin sockets; using the temp dir", "error", err)
			return
		}
		h.sockDir = dir
	})
	return h.sockDir
}
