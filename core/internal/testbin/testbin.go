// Package testbin gives tests the clawhost binaries: the directory named by
// CLAWHOST_BIN_DIR (make test sets it to make build's bin/), or, when it is
// unset, a fresh build of clawhost and every first-party and example plugin
// into a temporary directory, once per test process. Binaries are named as
// the Makefile names them: clawhost and clawhost-<plugin>.
//
// A test process cannot remove its directory when it exits (no hook runs
// after the last test, nor after kill -9), so each directory names its
// process (core/internal/ownerdir), and the next build removes the
// directories of processes that are gone: ~150 MB each, they once filled
// the disk.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/ownerdir"
)

const module = "github.com/clawhost/clawhost/"

// packages maps binary names to the main packages they are built from.
var packages = map[string]string{
	"clawhost":                  module + "core/cmd/clawhost",
	"clawhost-telegram":         module + "plugins/telegram/cmd/clawhost-telegram",
	"clawhost-webchat":          module + "plugins/webchat/cmd/clawhost-webchat",
	"clawhost-discord":          module + "plugins/discord/cmd/clawhost-discord",
	"clawhost-whatsapp":         module + "plugins/whatsapp/cmd/clawhost-whatsapp",
	"clawhost-mcp-channel":      module + "plugins/mcpchannel/cmd/clawhost-mcp-channel",
	"clawhost-loopback":         module + "examples/loopback",
	"clawhost-ping":             module + "examples/ping",
	"clawhost-clock-hook":       module + "examples/clock-hook",
	"clawhost-transcribe-hook":  module + "examples/transcribe-hook",
	"clawhost-channel-template": module + "examples/channel-template",
}

var (
	once sync.Once
	dir  string
	err  error
)

// Dir returns the directory holding the binaries.
func Dir() (string, error) {
	if d := os.Getenv("CLAWHOST_BIN_DIR"); d != "" {
		return d, nil
	}
	once.Do(func() {
		// Directories made before owner files were written are removed
		// once they are an hour old.
		ownerdir.RemoveLeftovers(os.TempDir(), "clawhost-bin-*", time.Hour)
		if dir, err = ownerdir.Make("", "clawhost-bin-"); err != nil {
			return
		}
		for name, pkg := range packages {
			// As the Makefile builds them: static, stripped, without
			// gRPC's x/net/trace (the Makefile says why).
			cmd := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags=-s -w", "-o", filepath.Join(dir, name), pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, berr := cmd.CombinedOutput(); berr != nil {
				err = fmt.Errorf("build %s: %v\n%s", name, berr, out)
				return
			}
		}
	})
	return dir, err
}
