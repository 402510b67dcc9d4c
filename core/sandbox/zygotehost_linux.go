//go:build linux

package sandbox

// The host's side of the sandbox helper (core/sandbox/helper): starting one, its socket, and
// the claude it runs as a process.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/internal/proctree"
	"github.com/clawhost/clawhost/core/internal/seqpacket"
	"github.com/clawhost/clawhost/core/internal/tail"
	"github.com/clawhost/clawhost/core/sandbox/helper"
	"golang.org/x/sys/unix"
)

// zygoteBwrap is bubblewrap's argv for the helper of a host run as root, before the
// helper's own: the pid namespace with the helper as its init, the read-only root, /dev
// and /proc as bwrap per start makes them, and the capabilities the helper's per-start
// threads use and drop (and a root claude's, zygoteRootCaps).
var zygoteBwrap = []string{"--die-with-parent", "--unshare-pid", "--as-pid-1", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
	"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_SETFCAP",
	"--cap-add", "CAP_DAC_OVERRIDE", "--cap-add", "CAP_DAC_READ_SEARCH", "--"}

// zygoteBwrapUser is the same for a host run as any other user: bwrap's own user
// namespace, the host's user its root, in which the helper holds the capabilities its
// per-start threads use — CAP_SYS_ADMIN for the start's namespaces and mounts, CAP_SETPCAP
// to empty the bounding set, CAP_SETFCAP to map its root into claude's user namespace —
// and claude none, in a user namespace of its own (zygoteuser_linux.go).
var zygoteBwrapUser = []string{"--unshare-user", "--uid", "0", "--gid", "0", "--die-with-parent", "--unshare-pid", "--as-pid-1", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
	"--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_SETFCAP", "--"}

// zygote is the host's side of one helper.
type zygote struct {
	conn      *seqpacket.Conn // the host's end of the socket
	cmd       *exec.Cmd
	replies   chan zygoteReplyFD // start replies and exits, in order
	clean     chan struct{}      // one value each time the sandbox is empty again
	ready     chan struct{}      // closed once the helper made its first start ahead
	dead      chan struct{}      // closed when the socket ended (the helper died or was stopped)
	exited    chan struct{}      // closed when bwrap exited and its stderr is read
	stderr    *tail.Buffer
	wmu       sync.Mutex
	once      sync.Once
	readyOnce sync.Once
	pid       atomic.Int64 // helperPID's answer, once it found the helper
}

type zygoteReplyFD struct {
	helper.Reply
	fd int // the pidfd with a start's reply; -1 without
}

// startZygote starts a helper: bwrap running exe (the clawhost binary, or a test binary
// that calls helper.Main) with helper.Arg, for claudes run as user (agent.run_as; nil: the
// host's user), for whom it prepares its first start (helper.UserEnv), with stage (a
// start's leading mounts, helper.StagePrefix; nil: none) made ahead (helper.StageEnv).
func startZygote(bwrap, exe string, user *helper.User, stage []helper.Mount) (*zygote, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox helper socket: %w", err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "sandbox-helper")
	defer theirs.Close()
	// A host not run as root tells its helper so (hostIDsEnv), and runs it in bwrap's
	// user namespace (zygoteBwrapUser).
	ids, bw := helper.HostIDsEnv(), zygoteBwrap
	if ids != nil {
		bw = zygoteBwrapUser
	}
	args := append(append([]string{}, bw...), exe, helper.Arg)
	cmd := exec.Command(bwrap, args...)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	if user != nil {
		env = append(env, helper.UserEnv+"="+helper.EncodeUser(user))
	}
	if len(stage) > 0 {
		env = append(env, helper.StageEnv+"="+helper.EncodeMounts(stage))
	}
	cmd.Env = append(append(env, ids...), Testing.HelperEnv...)
	cmd.ExtraFiles = []*os.File{theirs} // descriptor 3
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	conn, err := seqpacket.NewConn(pair[0], "sandbox-helper")
	if err != nil {
		_ = unix.Close(pair[0])
		return nil, fmt.Errorf("sandbox helper socket: %w", err)
	}
	z := &zygote{conn: conn, cmd: cmd, replies: make(chan zygoteReplyFD, 4), clean: make(chan struct{}, 1), ready: make(chan struct{}),
		dead: make(chan struct{}), exited: make(chan struct{}), stderr: &tail.Buffer{Max: 4 << 10}}
	cmd.Stderr = z.stderr
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("start the sandbox helper: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		close(z.exited)
	}()
	go z.read()
	return z, nil
}

// read receives the helper's replies until the socket ends.
func (z *zygote) read() {
	defer close(z.dead)
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, err := z.conn.Recv(buf, oob)
		if err != nil || n == 0 {
			return
		}
		fds := seqpacket.ReceivedFDs(oob[:oobn])
		var r zygoteReplyFD
		r.fd = -1
		if err := json.Unmarshal(buf[:n], &r.Reply); err != nil {
			seqpacket.CloseAll(fds)
			return
		}
		if len(fds) > 0 {
			r.fd = fds[0]
			seqpacket.CloseAll(fds[1:])
		}
		if r.Ready {
			z.readyOnce.Do(func() { close(z.ready) })
			continue
		}
		if r.Clean {
			select {
			case z.clean <- struct{}{}:
			default:
			}
			continue
		}
		select {
		case z.replies <- r:
		default:
			// Nobody waits for it (cannot happen: one start at a time).
			if r.fd >= 0 {
				_ = unix.Close(r.fd)
			}
		}
	}
}

func (z *zygote) send(req helper.Request, fds ...int) error {
	b := helper.AppendRequest(nil, &req)
	z.wmu.Lock()
	defer z.wmu.Unlock()
	return z.conn.Send(b, fds...)
}

// stop ends the helper: the socket's end makes it exit, and with it, as the namespace's
// init, everything inside. It returns once bwrap exited, which is after the helper's exit
// is complete and so after the kernel killed what was left in the sandbox (the socket
// ends earlier, as the helper starts to exit): a host that stops its runner and exits
// leaves no process of a sandbox still writing to the chat's state. A helper that does
// not go within zygoteStopWait is killed.
func (z *zygote) stop() {
	z.once.Do(func() {
		z.conn.Shutdown()
		<-z.dead
		z.conn.Close()
		t := time.NewTimer(zygoteStopWait)
		defer t.Stop()
		select {
		case <-z.exited:
			return
		case <-t.C:
		}
		if z.cmd.Process != nil {
			_ = z.cmd.Process.Kill()
		}
		<-z.exited
	})
}

// zygoteStopWait bounds the wait for a stopped helper's bwrap to exit before it is killed.
const zygoteStopWait = 5 * time.Second

// isReady reports whether the helper has made its first start ahead: a start sent to it
// now does not wait for its own start-up.
func (z *zygote) isReady() bool {
	select {
	case <-z.ready:
		return true
	default:
		return false
	}
}

// alive reports whether the helper's socket is still open.
func (z *zygote) alive() bool {
	select {
	case <-z.dead:
		return false
	default:
		return true
	}
}

// helperPID is the helper's pid as the host sees it (bwrap's child): tests tell one
// sandbox from another by it. Found once (a read of /proc per process of bwrap's): the
// helper is bwrap's one child for the sandbox's life.
func (z *zygote) helperPID() int {
	if pid := z.pid.Load(); pid != 0 {
		return int(pid)
	}
	if z.cmd.Process == nil {
		return 0
	}
	pid := proctree.FirstChild(z.cmd.Process.Pid)
	if pid != z.cmd.Process.Pid { // bwrap's own until it started the helper
		z.pid.Store(int64(pid))
	}
	return pid
}

// run starts claude in the helper's sandbox: req with stdin, stdout and stderr. The
// caller keeps its own copies of the three and closes them.
func (z *zygote) run(req helper.Request, stdin, stdout, stderr *os.File) (*zygoteProc, error) {
	if err := z.send(req, int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd())); err != nil {
		return nil, z.ended(err)
	}
	var r zygoteReplyFD
	select {
	case r = <-z.replies:
	case <-z.dead:
		return nil, z.ended(nil)
	}
	if r.Err != "" || r.PID == 0 {
		if r.fd >= 0 {
			_ = unix.Close(r.fd)
		}
		return nil, fmt.Errorf("sandbox helper: %s", r.Err)
	}
	p := &zygoteProc{z: z, pidfd: r.fd, hostPID: proctree.OfPidfd(r.fd), prepared: r.Prepared, staged: r.Staged}
	if p.hostPID == 0 {
		p.hostPID = proctree.FirstChild(z.helperPID())
	}
	return p, nil
}

// ended is the error of a start the helper did not answer: what bwrap or the helper wrote
// before they ended (its socket is closed: bwrap exits), else err.
func (z *zygote) ended(err error) error {
	select {
	case <-z.exited:
	case <-time.After(zygoteProbeTimeout):
	}
	if why := strings.TrimSpace(z.stderr.String()); why != "" {
		return fmt.Errorf("sandbox helper ended: %s", why)
	}
	if err != nil {
		return fmt.Errorf("sandbox helper: %w", err)
	}
	return errors.New("sandbox helper ended")
}

// zygoteProc is a claude started by a sandbox helper.
type zygoteProc struct {
	z        *zygote
	hostPID  int
	prepared bool // the helper had made its start ahead (core/sandbox/helper)
	staged   int  // how many of its mounts (helper.StageEnv)

	// mu orders Signal against Release: a closed pidfd's number may be another's, and
	// once released the helper may run another chat's claude, which a signal request
	// (it signals whatever claude the helper runs) would reach.
	mu       sync.Mutex
	pidfd    int // -1 without, or once released
	released bool
}

var _ Process = (*zygoteProc)(nil)

func (p *zygoteProc) PID() int       { return p.hostPID }
func (p *zygoteProc) ClaudePID() int { return p.hostPID }

// Signal asks the helper to signal claude's process group, and signals claude itself
// through its pidfd (no pid-reuse race): the helper may be gone. After Release it does
// nothing: the sandbox may have gone back to its pool and run the next start (a kill
// after an abort can come once claude exited and was reaped).
func (p *zygoteProc) Signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock() // the request is on the socket before Release returns
	if p.released {
		return
	}
	if p.pidfd >= 0 {
		_ = unix.PidfdSendSignal(p.pidfd, sig, nil, 0)
	}
	_ = p.z.send(helper.Request{Signal: int(sig)})
}

// Wait is claude's exit status as the helper reports it; a helper that ended while
// claude ran fails the turn as a crash does (-1).
func (p *zygoteProc) Wait() int {
	select {
	case r := <-p.z.replies:
		if r.fd >= 0 {
			_ = unix.Close(r.fd)
		}
		if r.Exit != nil {
			return *r.Exit
		}
		return -1
	case <-p.z.dead:
		return -1
	}
}

func (p *zygoteProc) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = true
	if p.pidfd >= 0 {
		_ = unix.Close(p.pidfd)
		p.pidfd = -1
	}
}

// KillLeftovers does nothing: the helper ends what claude left before it takes another
// start.
func (p *zygoteProc) KillLeftovers() {}
