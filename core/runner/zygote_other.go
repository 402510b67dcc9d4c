//go:build !linux

package runner

import (
	"fmt"
	"os"
)

// ZygoteArg is the argument that makes the clawhost binary the sandbox helper; Linux-only.
const ZygoteArg = "__sandbox-helper"

// ZygoteMain is the sandbox helper, Linux-only (mount and pid namespaces).
func ZygoteMain() int {
	fmt.Fprintln(os.Stderr, "sandbox helper: Linux only")
	return 2
}

// zygotePool is Linux-only: no agent's sandbox is recycled here.
type zygotePool struct{}

func (r *Runner) setupZygotes() {}

// perStartWhy: every sandbox is made per start here.
func perStartWhy() string      { return "recycled sandboxes are Linux-only" }
func (r *Runner) planZygotes() {}

func (r *Runner) zygoteFor(c *Config) *zygotePool { return nil }
func (zp *zygotePool) close()                     {}
func (r *Runner) spawnRecycled(zp *zygotePool, c *Config, l launch, key, extra, tmp string, argv, env []string, sl sandboxLaunch) (*proc, *Error) {
	return nil, newError(KindCrash, "recycled sandboxes are Linux-only")
}
