package confine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// TryBubblewrap runs bubblewrap (path) once, as attr says (the user to run as), with
// BubblewrapArgs, the syscall filter read from filter (nil: none), the namespaces and
// mounts of args, and true as the command: a missing namespace or a kernel that refuses
// one is found before a real start. Its error is what bwrap said on stderr, else why it
// did not run.
func TryBubblewrap(ctx context.Context, path string, filter *os.File, attr *syscall.SysProcAttr, args ...string) error {
	fd := -1
	if filter != nil {
		fd = 3 // the first of ExtraFiles
	}
	cmd := exec.CommandContext(ctx, path, append(append(BubblewrapArgs(fd), args...), "--", "true")...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	if filter != nil {
		cmd.ExtraFiles = []*os.File{filter}
	}
	cmd.SysProcAttr = attr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if why := strings.TrimSpace(stderr.String()); why != "" {
			return errors.New(why)
		}
		return err
	}
	return nil
}
