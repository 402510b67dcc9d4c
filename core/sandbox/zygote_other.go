//go:build !linux

package sandbox

import (
	"errors"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/runas"
)

// errLinuxOnly is every recycled sandbox's error here.
var errLinuxOnly = errors.New("recycled sandboxes are Linux-only")

// Pool is Linux-only: no agent's sandbox is recycled here.
type Pool struct{}

// NewPool is Linux-only.
func NewPool(string, string, hclog.Logger, int) *Pool { return &Pool{} }

// Start is Linux-only.
func (*Pool) Start(Cmd) (*Started, error) { return nil, errLinuxOnly }

// Close does nothing.
func (*Pool) Close() {}

// Started is 0: no helper runs here.
func (*Pool) Started() int { return 0 }

// Idle is none.
func (*Pool) Idle(string, *runas.User) (int, bool) { return 0, false }

// NotifyRecycled does nothing.
func (*Pool) NotifyRecycled(chan<- int) {}

// ProbeHelper is Linux-only.
func ProbeHelper(string, string) error { return errLinuxOnly }

// HelperWanted: recycled sandboxes are never tried here.
func HelperWanted() (bool, string) { return false, "" }

// HelperUnsupported: recycled sandboxes are Linux-only.
func HelperUnsupported() string { return errLinuxOnly.Error() }

// HelperExecutable is exe.
func HelperExecutable(exe string) string { return exe }

// perStartWhy: every sandbox is made per start here.
func perStartWhy() string { return errLinuxOnly.Error() }
