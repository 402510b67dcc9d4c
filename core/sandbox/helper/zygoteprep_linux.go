//go:build linux

package helper

// A start prepared ahead (issue 84). Without it a recycled sandbox's start forks from its
// thread the helper's own binary in claude's user namespace (confinedExec), which
// confines itself and execs claude: a Go program's start on every claude's path, 1.2 ms
// on a quiet machine and about 3.5 ms of a chat's first turn end to end on a busy one.
// What of that does not depend on the start is now done while the sandbox is idle: a
// thread of its own in a fresh mount namespace, and from it the helper's binary in
// claude's user namespace, started and waiting (preparedExec). The start then makes the
// mounts in that namespace, which the waiting process shares, pivots its root (which
// moves the waiting process's root and directory too), and hands it the start: claude's
// stdin, stdout and stderr, its directory, environment and argv, and what to confine
// (confineSpec). It confines itself as confinedExec does and execs claude; its pid is
// claude's. A prepared process that is gone when its start comes (killed from outside)
// is replaced by the unprepared start, from the same thread and view.
//
// While it waits, the prepared process has done nothing but start: it holds no
// descriptor but its socket to the helper and /dev/null, is not dumpable, and nothing
// else runs in the sandbox (it is made after the last claude's leftovers are killed and
// reaped). What claude gets is the same as an unprepared start gives it, which the
// boundary and manifest tests hold for both.

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/clawhost/clawhost/core/internal/confine"
	"github.com/clawhost/clawhost/core/internal/seqpacket"
	"golang.org/x/sys/unix"
)

// preparedArg, after Arg, runs the helper's binary as a prepared start.
const preparedArg = "--prepared"

// preparedFD is a prepared start's socket to its helper.
const preparedFD = 3

// UserEnv tells a helper the user its sandbox runs claude as (agent.run_as;
// absent: the host's or root), as "uid:gid:group,group", so that it can prepare its
// first start before it is asked (EncodeUser). Later starts are prepared for the
// user of the one before.
const UserEnv = "CLAWHOST_SANDBOX_RUN_AS"

// preparedEnv is a prepared process's own environment while it waits (claude's comes
// with its start): one processor, no collection.
var preparedEnv = []string{"GOMAXPROCS=1", "GOGC=off"}

// started is a start's result on its thread: claude's pid and pidfd, and the thread.
type started struct {
	pid, pidfd, tid int
	prepared        bool // by a prepared process
	staged          int  // the mounts it found made ahead (zygotestage_linux.go)
	err             error
	// unprepared: the prepared start could not take it (its mounts made ahead are
	// not the start's); it is to be made without (zygoteStart).
	unprepared bool
}

// startOrder is what a prepared start waits for: the request and claude's descriptors.
type startOrder struct {
	req Request
	fds []int
}

// preparedOrder is the start as the helper hands it to the prepared process.
// Its wire form: appendOrder.
type preparedOrder struct {
	Spec confine.Spec
	Path string
	Argv []string
	Env  []string
	Dir  string
}

// preparedStart is a start made ahead, on a locked thread that waits for it (take) and
// ends with it.
type preparedStart struct {
	user  *User
	stage *stage          // the mounts made ahead; nil: none
	take  chan startOrder // closed: not wanted (discard)
	done  chan started
	pid   int // the prepared process
	pidfd int
	ctl   int // the helper's end of its socket
}

// prepare makes the next start ahead for user, with tmpl (its list's leading mounts,
// StagePrefix) made ahead; nil when it could not (the start then does it all). When
// tmpl could not be made, the start is prepared without (p.stage nil).
func prepare(user *User, tmpl []Mount) *preparedStart {
	p := &preparedStart{user: user, take: make(chan startOrder), done: make(chan started, 1), pidfd: -1, ctl: -1}
	ready := make(chan error, 1)
	go func() {
		// Never unlocked (start's thread, the same): the thread, in claude's mount
		// namespace, ends with this goroutine.
		runtime.LockOSThread()
		if err := p.fork(); err != nil {
			ready <- err
			return
		}
		if len(tmpl) > 0 {
			st, err := stageAhead(tmpl)
			if err != nil {
				p.discard()
				ready <- errStaged{err}
				return
			}
			p.stage = st
		}
		ready <- nil
		o, ok := <-p.take
		if !ok {
			p.discard()
			return
		}
		s := p.finish(o.req, o.fds)
		s.tid = unix.Gettid()
		p.done <- s
	}()
	if err := <-ready; err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: prepare a start:", err)
		if _, ok := err.(errStaged); ok {
			return prepare(user, nil)
		}
		return nil
	}
	return p
}

// errStaged is a prepared start's failure to make its mounts ahead.
type errStaged struct{ error }

func (e errStaged) Error() string { return "the mounts made ahead: " + e.error.Error() }

// fork is the start's part that does not depend on it: the thread's mount namespace, its
// limits, and the helper's binary forked from it into claude's user namespace.
func (p *preparedStart) fork() error {
	if err := zygoteUnshare(); err != nil {
		return err
	}
	attr, err := zygoteLimit(p.user)
	if err != nil {
		return err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(pair[1])
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(pair[0])
		return err
	}
	defer unix.Close(null)
	attr.PidFD = &p.pidfd
	// Its stderr is the helper's until its start gives it claude's.
	pid, err := syscall.ForkExec("/proc/self/exe", []string{os.Args[0], Arg, preparedArg}, &syscall.ProcAttr{
		Dir: "/", Env: preparedEnv, Files: []uintptr{uintptr(null), uintptr(null), 2, uintptr(pair[1])}, Sys: attr})
	if err != nil {
		_ = unix.Close(pair[0])
		return fmt.Errorf("fork/exec: %w", err)
	}
	p.pid, p.ctl = pid, pair[0]
	return nil
}

// finish makes req's view in the prepared namespace and hands the start over.
func (p *preparedStart) finish(req Request, fds []int) started {
	staged := 0
	if p.stage != nil {
		if err := p.stage.finish(req); err != nil {
			p.discard()
			return started{unprepared: true}
		}
		staged = len(p.stage.mounts)
	} else if err := zygoteView(req); err != nil {
		p.discard()
		return started{err: err}
	}
	path, err := claudePath(req)
	if err != nil {
		p.discard()
		return started{err: err}
	}
	b := appendOrder(nil, &preparedOrder{Spec: confineSpec(req), Path: path, Argv: req.Argv, Env: lastWins(req.Env), Dir: req.Dir})
	if err := unix.Sendmsg(p.ctl, b, unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL); err != nil {
		// Gone while it waited: the unprepared start, from this thread and view.
		p.discard()
		attr, err := zygoteLimit(req.User)
		if err != nil {
			return started{err: err}
		}
		pid, pidfd, err := zygoteFork(req, fds, attr)
		return started{pid: pid, pidfd: pidfd, err: err}
	}
	_ = unix.Close(p.ctl)
	return started{pid: p.pid, pidfd: p.pidfd, prepared: true, staged: staged}
}

// discard ends the prepared process and reaps it.
func (p *preparedStart) discard() {
	// By its pidfd, killed and waited for: once reaped elsewhere (the helper's own wait,
	// when it ended while another start's claude ran) its pid could be another process's.
	_ = unix.PidfdSendSignal(p.pidfd, unix.SIGKILL, nil, 0)
	var info unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PIDFD, p.pidfd, &info, unix.WEXITED, nil); err != unix.EINTR {
			break // reaped, or by the helper's own wait (ECHILD)
		}
	}
	_ = unix.Close(p.ctl)
	_ = unix.Close(p.pidfd)
	if p.stage != nil {
		p.stage.close()
	}
}

// preparedExec is the helper's binary run as a prepared start (fork): it waits for its
// start, takes claude's descriptors and directory, confines itself (confine.Exec) and
// execs claude. It returns only on failure, or 0 when its helper discarded it.
func preparedExec() int {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	confine.Warm()
	buf := make([]byte, 1<<20)
	oob := make([]byte, unix.CmsgSpace(3*4))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(preparedFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil || n == 0 {
		return 0 // the helper closed its end: not wanted
	}
	fds := seqpacket.ReceivedFDs(oob[:oobn])
	o, err := decodeOrder(buf[:n])
	if err != nil || len(fds) != 3 {
		fmt.Fprintf(os.Stderr, "sandbox helper: a prepared start got %d descriptors and %v\n", len(fds), err)
		return 2
	}
	for i, fd := range fds { // each above preparedFD: 0 to 3 are taken
		if err := unix.Dup3(fd, i, 0); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox helper: start claude:", err)
			return 127
		}
	}
	seqpacket.CloseAll(fds)
	s := o.Spec
	err = unix.Chdir(o.Dir)
	if err == nil && !slices.Contains(s.Weaken, "cloexec") {
		// Its socket to the helper, and anything else, stays here.
		err = unix.CloseRange(preparedFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	}
	if err == nil {
		err = confine.Exec(s, o.Path, o.Argv, o.Env)
	}
	fmt.Fprintln(os.Stderr, "sandbox helper: start claude:", err)
	return 127
}

// sameUser reports whether a start for b may take a start prepared for a.
func sameUser(a, b *User) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.UID == b.UID && a.GID == b.GID && slices.Equal(a.Groups, b.Groups)
}

// EncodeUser is u as UserEnv has it; "" for nil.
func EncodeUser(u *User) string {
	if u == nil {
		return ""
	}
	gs := make([]string, len(u.Groups))
	for i, g := range u.Groups {
		gs[i] = strconv.FormatUint(uint64(g), 10)
	}
	return fmt.Sprintf("%d:%d:%s", u.UID, u.GID, strings.Join(gs, ","))
}

// parseZygoteUser is EncodeUser's inverse; nil for "".
func parseZygoteUser(v string) (*User, error) {
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ":")
	bad := fmt.Errorf("%s=%q is no uid:gid:groups", UserEnv, v)
	if len(parts) != 3 {
		return nil, bad
	}
	num := func(s string) (uint32, bool) {
		n, err := strconv.ParseUint(s, 10, 32)
		return uint32(n), err == nil
	}
	uid, ok1 := num(parts[0])
	gid, ok2 := num(parts[1])
	if !ok1 || !ok2 {
		return nil, bad
	}
	u := &User{UID: uid, GID: gid}
	if parts[2] != "" {
		for _, g := range strings.Split(parts[2], ",") {
			n, ok := num(g)
			if !ok {
				return nil, bad
			}
			u.Groups = append(u.Groups, n)
		}
	}
	return u, nil
}
