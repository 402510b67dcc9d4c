package pluginhost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/runas"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// shutdown stops a launched plugin (Process.Stop with the host's grace),
// warning when it had to be killed.
func (h *Supervisor) shutdown(log hclog.Logger, p *Process) {
	st := p.Stop(h.opts.StopGrace)
	if st.Killed {
		log.Warn("plugin still running after SIGTERM and the grace period; killing its process group", "pid", p.run.pid, "grace", h.opts.StopGrace)
	}
}

// openVerified opens the file at path and compares the SHA-256 of the
// bytes read from that descriptor with want (hex). The caller execs the
// returned file itself (execPath), not the path again, so the bytes that
// run are the bytes that were checked: a file renamed over path after the
// check cannot run in its place. It closes the file on any error.
func openVerified(path, want string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("checksum of %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		f.Close()
		return nil, fmt.Errorf("checksum of %s is %s, the configured sha256 is %s", path, got, want)
	}
	return f, nil
}

// execPath is the path that execs an open file: /proc/self/fd/N names the
// descriptor's file in the child as in the parent (the child is forked with
// the parent's descriptors; close-on-exec closes it only once the exec
// opened the file).
func execPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }

// launch execs and handshakes the plugin.
func (i *Instance) launch() (*Process, *pluginclient.Plugin, error) {
	if i.reattach != nil {
		return i.attachChecked()
	}
	path := i.spec.Path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &runError{StateMissing, fmt.Errorf("start plugin %s: binary %s not found: build it (make build) or set path in its plugin block, then reload", i.spec.Instance, path)}
	} else if err != nil {
		return nil, nil, fmt.Errorf("start plugin %s: binary %s: %w", i.spec.Instance, path, err)
	}
	exe := path
	var verified *os.File
	if i.spec.SHA256 != "" {
		f, err := openVerified(path, i.spec.SHA256)
		if err != nil {
			return nil, nil, &runError{StateMisconfigured, fmt.Errorf("start plugin %s: refused: %w", i.spec.Instance, err)}
		}
		// Held open until the process has started (and exec'd it).
		defer f.Close()
		exe, verified = execPath(f), f
		if i.h.opts.afterVerify != nil {
			i.h.opts.afterVerify(path)
		}
	}
	timeout := i.startTimeout()
	dir := i.spec.DataDir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
		}
	}
	sock := &plugin.UnixSocketConfig{TempDir: i.h.socketDir()}
	var user *runas.User
	if i.spec.RunAs != "" {
		var err error
		if user, err = runas.Lookup(i.spec.RunAs); err == nil {
			err = i.h.runAs(user, dir, sock)
		}
		if err == nil && exe == path {
			// Exec'd by name (not an open verified file): the user must reach it.
			err = user.Access(path, 1)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("start plugin %s: run_as: %w", i.spec.Instance, err)
		}
	}
	bwrap, err := i.prepareConfinement(user)
	if err != nil {
		return nil, nil, err
	}
	spec := launchSpec{
		ProcessSpec: ProcessSpec{
			Path:         path,
			Dir:          dir,
			LogLevel:     i.h.opts.LogLevel,
			SocketDir:    sock.TempDir,
			StartTimeout: timeout,
			Logger:       i.log,
		},
		exe:         exe,
		env:         i.spec.Env,
		user:        user,
		socketGroup: sock.Group,
		verified:    verified,
		bwrap:       bwrap,
		confined:    confinement{readOnly: i.spec.ReadOnly},
		onPID: func(pid int, alive bool) {
			i.mu.Lock()
			switch {
			case alive:
				i.pid = pid
			case i.pid == pid: // not a newer process's
				i.pid = 0
			}
			i.mu.Unlock()
		},
		onRunner: func(r *procRunner) {
			i.mu.Lock()
			i.tail = r.tail
			i.mu.Unlock()
		},
	}
	proc, plug, err := launch(spec)
	if err != nil {
		var he *HandshakeError
		if errors.As(err, &he) {
			return nil, nil, fmt.Errorf("start plugin %s (%s): %w", i.spec.Instance, path, err)
		}
		return nil, nil, fmt.Errorf("start plugin %s: %w", i.spec.Instance, err)
	}
	return proc, plug, nil
}

// attachChecked attaches to the process started by hand that
// CLAWHOST_REATTACH names for the instance, unless the block asks for what
// such a process cannot give: a binary checked against sha256, or a
// sandbox (untrusted_input).
func (i *Instance) attachChecked() (*Process, *pluginclient.Plugin, error) {
	if i.spec.SHA256 != "" {
		// A process started by hand has no binary the host opened and
		// hashed: attaching would run code the pin never checked.
		return nil, nil, &runError{StateMisconfigured, fmt.Errorf("start plugin %s: refused: %s names it, but its plugin block pins sha256, and a process started by hand cannot be checked against the pin; remove sha256 from the block while debugging, or unset %s", i.spec.Instance, pluginclient.EnvReattach, pluginclient.EnvReattach)}
	}
	if i.spec.Untrusted {
		// Started by hand, outside any sandbox the host could make.
		return nil, nil, &runError{StateMisconfigured, fmt.Errorf("start plugin %s: refused: %s names it, but its plugin block sets untrusted_input, and a process started by hand runs unconfined; remove untrusted_input from the block while debugging, or unset %s", i.spec.Instance, pluginclient.EnvReattach, pluginclient.EnvReattach)}
	}
	return i.attach()
}

// defaultStartTimeout bounds a plugin's handshake when its spec sets none.
const defaultStartTimeout = 10 * time.Second

// startTimeout bounds the instance's handshake and the wait for it to be
// ready.
func (i *Instance) startTimeout() time.Duration {
	if i.spec.StartTimeout > 0 {
		return i.spec.StartTimeout
	}
	return defaultStartTimeout
}

// handshakeError says in plain words why go-plugin's handshake failed when
// its own message would mislead: a line on stdout that is not the
// handshake (stdout belongs to it), or no line at all (the plugin exited
// first; its stderr, added by the supervisor, says why).
func handshakeError(err error) error {
	const marker = "Unrecognized remote plugin message: "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if i < 0 {
		return err
	}
	line, _, _ := strings.Cut(msg[i+len(marker):], "\n")
	if line = strings.TrimSpace(line); line == "" {
		return errors.New("the plugin exited before the handshake")
	}
	return fmt.Errorf("the plugin wrote %q to stdout before the handshake (stdout belongs to the handshake; a plugin logs to stderr)", line)
}
