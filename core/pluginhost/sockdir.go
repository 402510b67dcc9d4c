package pluginhost

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/go-plugin"

	"github.com/clawhost/clawhost/core/internal/runas"

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
func (h *Supervisor) socketDir() string {
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

// runAs prepares a plugin's start as u: its data directory u's (and
// reachable: the error says what to chmod), and its socket directory
// writable by u's group inside the host's, which others may then enter
// but not list (0711).
func (h *Supervisor) runAs(u *runas.User, dataDir string, sock *plugin.UnixSocketConfig) error {
	if dataDir != "" {
		if err := u.Chown(dataDir); err != nil {
			return err
		}
		// The directory of all instances' data (<data_dir>/plugins):
		// passable, not listable.
		if err := os.Chmod(filepath.Dir(dataDir), 0o711); err != nil {
			return err
		}
		if err := u.Access(dataDir, 7); err != nil {
			return fmt.Errorf("%w; let it enter the directories above (chmod o+x, or chgrp to its group and chmod g+x)", err)
		}
	}
	if sock.TempDir != "" {
		if err := os.Chmod(sock.TempDir, 0o711); err != nil {
			return err
		}
	}
	sock.Group = strconv.FormatUint(uint64(u.GID), 10)
	return nil
}
