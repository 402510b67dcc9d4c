package pluginhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/runas"
)

// A plugin block with untrusted_input (Spec.Untrusted) handles what chats
// wrote: its process runs inside bubblewrap with a filesystem granted, not
// hidden — the system's programs and libraries (confine.SystemGrants), a
// /tmp and /var/tmp of its own, its binary, its data directory, the
// directory of its go-plugin socket and the agents' media (Spec.ReadOnly),
// nothing else of the host — in user, pid and IPC namespaces of its own,
// without capabilities and under the syscall filter claude's sandbox has
// (confine.Filter). The network is the host's: a hook may call an API. A
// host that cannot run bubblewrap does not start the plugin
// (StateNoSandbox): a plugin marked untrusted never runs unconfined.

// bwrapCommand is bubblewrap's executable, looked up in PATH.
const bwrapCommand = "bwrap"

// Descriptors bwrap gets (exec.Cmd.ExtraFiles start at 3): the syscall
// filter, and the binary the host checked against the block's sha256.
const (
	seccompFD  = 3
	verifiedFD = 4
)

// sandboxProbeTimeout bounds the run of bwrap that tells whether it works
// here.
const sandboxProbeTimeout = 10 * time.Second

// confinement is what an untrusted plugin's bubblewrap grants besides the
// system's files.
type confinement struct {
	// path is the plugin's binary, at the same path inside.
	path string
	// verified: the binary is the descriptor verifiedFD (the file the host
	// checked against sha256), bound at path; false: path itself is bound.
	verified bool
	// dataDir is the plugin's data directory, writable, and its working
	// directory; socketDir the directory of its go-plugin socket, writable.
	dataDir, socketDir string
	// readOnly are further directories it reads (the agents' media).
	readOnly []string
}

// bwrapArgs is bubblewrap's argv after its name, up to and including
// "--", for c: confine.BubblewrapArgs with the filter on seccompFD, the
// namespaces, each of confine.SystemGrants that exists (exists says;
// a missing one is left out) read-only, confine.Scratch empty and its own,
// then c's grants from the shallowest path down, by name at one depth (so
// a grant inside a scratch directory or another grant, as a socket
// directory in /tmp is, lies over it), and the root bwrap made for the
// mount points read-only.
func (c confinement) bwrapArgs(exists func(string) bool) []string {
	a := append(confine.BubblewrapArgs(seccompFD), "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--dev", "/dev", "--proc", "/proc")
	for _, p := range confine.SystemGrants() {
		if exists(p) {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, p := range confine.Scratch {
		a = append(a, "--perms", "1777", "--tmpfs", p)
	}
	type grant struct {
		path string
		opt  []string
	}
	var gs []grant
	if c.verified {
		gs = append(gs, grant{c.path, []string{"--ro-bind-fd", strconv.Itoa(verifiedFD), c.path}})
	} else {
		gs = append(gs, grant{c.path, []string{"--ro-bind", c.path, c.path}})
	}
	for _, p := range c.readOnly {
		if exists(p) {
			gs = append(gs, grant{p, []string{"--ro-bind", p, p}})
		}
	}
	for _, p := range []string{c.dataDir, c.socketDir} {
		if p != "" {
			gs = append(gs, grant{p, []string{"--bind", p, p}})
		}
	}
	slices.SortFunc(gs, func(x, y grant) int {
		if d := strings.Count(filepath.Clean(x.path), "/") - strings.Count(filepath.Clean(y.path), "/"); d != 0 {
			return d
		}
		return strings.Compare(x.path, y.path)
	})
	for _, g := range gs {
		a = append(a, g.opt...)
	}
	a = append(a, "--remount-ro", "/")
	if c.dataDir != "" {
		a = append(a, "--chdir", c.dataDir)
	}
	return append(a, "--")
}

// sandboxEnv is what an untrusted plugin's environment says of the places
// it has (before the block's env, which may replace them): its data
// directory is its home, /tmp its temporary directory. The host's HOME
// and TMPDIR do not exist inside.
func sandboxEnv(dataDir string) []string {
	env := []string{"TMPDIR=/tmp"}
	if dataDir != "" {
		env = append(env, "HOME="+dataDir)
	}
	return env
}

// pathExists is bwrapArgs' exists on the real filesystem.
func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// errNoSandbox is why an untrusted plugin was not started.
var errNoSandbox = errors.New("bubblewrap cannot run here")

// noSandboxFix is what the operator does about errNoSandbox.
const noSandboxFix = "install it (apt-get install bubblewrap, or make bubblewrap) and let it make user namespaces (clawhost doctor), then reload; or remove untrusted_input from the block"

// prepareConfinement returns bubblewrap's path for an untrusted instance
// that is to run as u ("" for one that is not untrusted) and makes the
// directories it reads (Spec.ReadOnly) that are missing. Where bubblewrap
// cannot run, the error settles the instance in StateNoSandbox.
func (i *Instance) prepareConfinement(u *runas.User) (string, error) {
	if !i.spec.Untrusted {
		return "", nil
	}
	bwrap, err := i.h.findBubblewrap(u)
	if err != nil {
		return "", &runError{StateNoSandbox, fmt.Errorf("start plugin %s: refused: untrusted_input is set and %w; %s", i.spec.Instance, err, noSandboxFix)}
	}
	// Bound at the start: one made later (a workspace's first attachment)
	// would not be there for the plugin.
	for _, d := range i.spec.ReadOnly {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
		}
	}
	return bwrap, nil
}

// findBubblewrap is findBubblewrap of bwrap, or of the command the
// options name instead.
func (h *Supervisor) findBubblewrap(u *runas.User) (string, error) {
	return findBubblewrap(cmp.Or(h.opts.bubblewrap, bwrapCommand), u)
}

// findBubblewrap returns the path of bubblewrap (name, looked up in PATH)
// after one run of it with the namespaces and filter an untrusted plugin
// gets, as user u (nil: the host's), so a missing bwrap or a kernel that
// refuses the namespaces is found before the plugin's start, not as a
// failed handshake.
func findBubblewrap(name string, u *runas.User) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: %s not found in PATH", errNoSandbox, name)
	}
	filter, err := confine.FilterFile()
	if err != nil {
		return "", err
	}
	defer filter.Close()
	ctx, cancel := context.WithTimeout(context.Background(), sandboxProbeTimeout)
	defer cancel()
	if err := confine.TryBubblewrap(ctx, path, filter, &syscall.SysProcAttr{Credential: u.Credential()},
		"--die-with-parent", "--unshare-pid", "--unshare-ipc", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"); err != nil {
		return "", fmt.Errorf("%w: bwrap: %v", errNoSandbox, err)
	}
	return path, nil
}
