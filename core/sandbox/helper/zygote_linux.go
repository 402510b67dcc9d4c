//go:build linux

package helper

// The sandbox helper ("zygote", issue 58): one bubblewrap per agent started once, off the
// turn's path, whose init is this package's helper (Main, the clawhost binary run
// with Arg). Per claude start the host sends it the chat's whole mount list (the
// one bubblewrap per start gets: prune(mountOrder(sandboxSpecFor))), claude's argv,
// environment and directory, and claude's stdin, stdout and stderr as file descriptors.
// The helper, on a thread it discards afterwards, unshares a mount namespace, makes the
// mounts, drops every capability and starts claude; it replies with claude's pid and a
// pidfd, later with claude's exit status, and once everything claude left is gone (it
// kills all the namespace holds, as its init, and reaps it) that it takes the next start.
// One claude per sandbox at a time: concurrent claudes of an agent run in separate
// sandboxes (core/sandbox's Pool). While a sandbox is idle the part of its next start that
// does not depend on the start is made ahead (zygoteprep_linux.go).
//
// What keeps claude from its helper (TestZygoteBoundary holds each):
//   - the helper is the pid namespace's init: the kernel drops a SIGKILL or SIGSTOP sent
//     to it from inside, and it ignores every signal it can (a handled one reaches init);
//   - it is not dumpable and claude has no capability: /proc/1/{environ,root,fd,mem}
//     are closed to claude and so is ptrace;
//   - its socket to the host is close-on-exec and claude's start passes only its three
//     descriptors: the one way to it is /proc/1/fd, closed above;
//   - /dev, shared by every start, is read-only for claude, /dev/shm a fresh tmpfs, and
//     every hidden tree a fresh tmpfs per start: nothing one chat writes stays for the next.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/internal/seqpacket"
	"golang.org/x/sys/unix"
)

// Arg is the argument that makes the clawhost binary the sandbox helper
// (core/cmd/clawhost's main calls Main); the runner starts it inside bubblewrap.
const Arg = "__sandbox-helper"

// zygoteSocketFD is the helper's end of its socket to the host (bwrap passes it on).
const zygoteSocketFD = 3

// Mount is one mount of a start, as the host sends it (mount).
type Mount struct {
	Path string
	Src  string
	Op   int
	Dir  bool
}

// Request is one message from the host: a start (Argv set, with claude's stdin,
// stdout and stderr as descriptors) or a signal for the running claude and its group. Its
// wire form: zygotewire_linux.go.
type Request struct {
	Argv   []string
	Env    []string
	Dir    string
	Mounts []Mount
	// User, when set, is the user claude runs as (agent.run_as).
	User *User
	// Signal, without Argv, is sent to the running claude's process group.
	Signal int
}

// User is agent.run_as's credential.
type User struct {
	UID    uint32
	GID    uint32
	Groups []uint32
}

// Reply is one message from the helper: a start's result (PID, with a pidfd; or
// Err), claude's exit (Exit), or that the sandbox is empty again (Clean).
type Reply struct {
	PID   int    `json:"pid,omitempty"`
	Err   string `json:"err,omitempty"`
	Exit  *int   `json:"exit,omitempty"`
	Clean bool   `json:"clean,omitempty"`
	// Prepared, with a start's result: the start was made ahead (zygoteprep_linux.go);
	// Staged, how many of its mounts were (zygotestage_linux.go).
	Prepared bool `json:"prepared,omitempty"`
	Staged   int  `json:"staged,omitempty"`
	// Ready, the helper's first message: it has made its first start ahead.
	Ready bool `json:"ready,omitempty"`
}

// weakened reports whether the helper leaves the defence what out (Testing.Weaken).
func weakened(what string) bool { return strings.Contains(Testing.Weaken, what) }

// A start runs on a thread locked for it and never unlocked, so that the thread, in
// claude's mount namespace, ends with the start. The main thread cannot end: a locked
// goroutine that exits on it leaves it parked for good, still in that namespace
// (TestZygoteOneClaudeAtATime saw the helper's main thread in claude's namespace about
// once in a hundred starts on a busy machine). Locked to the main goroutine from init,
// the main thread never runs a start.
func init() {
	if len(os.Args) >= 2 && os.Args[1] == Arg {
		runtime.LockOSThread()
	}
}

// Main is the sandbox helper; it returns the process's exit status. It must run as
// the init of bubblewrap's pid namespace with the host's socket at descriptor 3.
func Main() int {
	if len(os.Args) == 3 && os.Args[2] == preparedArg {
		return preparedExec()
	}
	if len(os.Args) > 2 {
		return confinedExec(os.Args[2:])
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "sandbox helper: not the init of a pid namespace")
		return 2
	}
	if !weakened("dumpable") {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox helper: not dumpable:", err)
			return 2
		}
	}
	if !weakened("signals") {
		// Every signal a process inside could send: the kernel drops only those init
		// leaves at their default, and Go's runtime handles (and dies of) most. Caught
		// and dropped, not ignored: an ignored signal stays ignored across exec, and
		// claude would inherit it (SIGTERM, SIGINT, SIGPIPE...). SIGCHLD is exitOf's
		// (below; set to ignore, the kernel would reap for the helper).
		var sigs []os.Signal
		for s := syscall.Signal(1); s <= 64; s++ {
			switch s {
			case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCHLD:
				continue
			}
			sigs = append(sigs, s)
		}
		caught := make(chan os.Signal, 16)
		signal.Notify(caught, sigs...)
		go func() {
			for range caught {
			}
		}()
	}
	if !weakened("cloexec") {
		// The socket, and whatever else the helper inherited open (bwrap and the
		// host pass on descriptors their own parents left without close-on-exec):
		// claude's start passes only its three.
		if err := unix.CloseRange(zygoteSocketFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
			fmt.Fprintln(os.Stderr, "sandbox helper: close-on-exec:", err)
			return 2
		}
	}
	if !weakened("caps") {
		narrowBounding()
	}
	zygoteDevFlags = devFlags()
	ids, err := parseHostIDs(os.Getenv(zygoteIDsEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return 2
	}
	zygoteIDs = ids
	conn, err := seqpacket.NewConn(zygoteSocketFD, "host")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: the host's socket:", err)
		return 2
	}
	user, err := parseZygoteUser(os.Getenv(UserEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return 2
	}
	z := &zygoteServer{conn: conn, child: make(chan os.Signal, 1), user: user}
	z.noStage = !canStage()
	if v := os.Getenv(StageEnv); v != "" {
		// A list that is not one stages nothing.
		z.stage, _ = decodeMounts(v)
		z.stage = StagePrefix(z.stage)
	}
	signal.Notify(z.child, syscall.SIGCHLD)
	z.prepareNext()
	if err := z.reply(Reply{Ready: true}); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: the host's socket:", err)
		return 1
	}
	// Served off the main thread, which stays parked here (see init).
	served := make(chan error, 1)
	go func() { served <- z.serve() }()
	if err := <-served; err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return 1
	}
	return 0
}

// zygoteServer is the helper's side of the socket.
type zygoteServer struct {
	conn  *seqpacket.Conn
	wmu   sync.Mutex     // one reply at a time
	child chan os.Signal // SIGCHLD: a process of the namespace ended (exitOf)

	mu      sync.Mutex
	running int            // claude's pid while it runs or its leftovers are being ended (startingPID while it starts); 0 when clean
	next    *preparedStart // the next start, made ahead (zygoteprep_linux.go); nil: none
	user    *User          // the last start's (or UserEnv's) user, whom the next is prepared for
	// stage is what of the last start's list (or StageEnv's) the next makes ahead
	// (StagePrefix); noStage, once that failed, makes none again.
	stage   []Mount
	noStage bool
}

// startingPID is zygoteServer.running while a start is being made.
const startingPID = -1

// prepareNext makes the next start ahead, for the last start's user, unless one is made.
func (z *zygoteServer) prepareNext() {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.prepareLocked()
}

// prepareLocked is prepareNext with z.mu held.
func (z *zygoteServer) prepareLocked() {
	if !weakened("prepare") && z.next == nil && z.running == 0 {
		var tmpl []Mount
		if !z.noStage && !weakened("stage") {
			tmpl = z.stage
		}
		z.next = prepare(z.user, tmpl)
		z.noStage = z.noStage || len(tmpl) > 0 && z.next != nil && z.next.stage == nil
	}
}

// idle makes the next start ahead, then says r (a start's error, or Clean), both under
// the lock a start takes first: once the host has r, the sandbox is ready for its next
// start, made ahead from what was on the host's disk then.
func (z *zygoteServer) idle(r Reply) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.running = 0
	z.prepareLocked()
	_ = z.reply(r)
}

func (z *zygoteServer) reply(r Reply, fds ...int) error {
	b, _ := json.Marshal(r)
	z.wmu.Lock()
	defer z.wmu.Unlock()
	return z.conn.Send(b, fds...)
}

// serve handles requests until the host closes the socket.
func (z *zygoteServer) serve() error {
	buf := make([]byte, 1<<20)
	oob := make([]byte, unix.CmsgSpace(3*4))
	for {
		n, oobn, err := z.conn.Recv(buf, oob)
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if n == 0 {
			return nil // the host closed its end
		}
		fds := seqpacket.ReceivedFDs(oob[:oobn])
		req, err := decodeZygoteRequest(buf[:n])
		if err != nil {
			seqpacket.CloseAll(fds)
			return fmt.Errorf("request: %w", err)
		}
		if len(req.Argv) == 0 {
			seqpacket.CloseAll(fds)
			z.mu.Lock()
			if pid := z.running; pid > 0 && req.Signal > 0 {
				_ = unix.Kill(-pid, syscall.Signal(req.Signal))
				_ = unix.Kill(pid, syscall.Signal(req.Signal))
			}
			z.mu.Unlock()
			continue
		}
		z.start(req, fds)
	}
}

// start runs one claude for req with fds as its stdin, stdout and stderr, and replies.
func (z *zygoteServer) start(req Request, fds []int) {
	defer seqpacket.CloseAll(fds)
	z.mu.Lock()
	busy := z.running != 0
	var p *preparedStart
	if !busy && len(fds) == 3 {
		// Taken under the lock prepareNext holds while it prepares: a start waits for
		// the one being made, and none is made while this one starts.
		z.running = startingPID
		p, z.next, z.user, z.stage = z.next, nil, req.User, StagePrefix(req.Mounts)
	}
	z.mu.Unlock()
	if busy {
		_ = z.reply(Reply{Err: "the sandbox runs a claude already"})
		return
	}
	if len(fds) != 3 {
		_ = z.reply(Reply{Err: fmt.Sprintf("a start needs 3 descriptors, got %d", len(fds))})
		return
	}
	if p != nil && !sameUser(p.user, req.User) {
		close(p.take)
		p = nil
	}
	var s started
	if p != nil {
		p.take <- startOrder{req, fds}
		s = <-p.done
	}
	if p == nil || s.unprepared {
		done := make(chan started, 1)
		go func() {
			// Never unlocked: the thread, with its mount namespace and its dropped
			// capabilities, ends with this goroutine.
			runtime.LockOSThread()
			tid := unix.Gettid()
			pid, pidfd, err := zygoteStart(req, fds)
			done <- started{pid: pid, pidfd: pidfd, tid: tid, err: err}
		}()
		s = <-done
	}
	if s.err != nil {
		z.idle(Reply{Err: s.err.Error()})
		return
	}
	z.mu.Lock()
	z.running = s.pid
	z.mu.Unlock()
	_ = z.reply(Reply{PID: s.pid, Prepared: s.prepared, Staged: s.staged}, s.pidfd)
	_ = unix.Close(s.pidfd)
	go z.reap(s.pid, s.tid)
}

// reap waits for claude, reports its exit, then, as init, kills everything left in the
// namespace, reaps it, and reports the sandbox clean.
func (z *zygoteServer) reap(pid, tid int) {
	code := z.exitOf(pid)
	_ = z.reply(Reply{Exit: &code})
	// Whatever claude left: kill(-1) from init reaches every process of the namespace
	// but init itself.
	for !weakened("reap") {
		_ = unix.Kill(-1, unix.SIGKILL)
		_, err := unix.Wait4(-1, nil, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: none left
		}
	}
	threadGone(tid)
	z.idle(Reply{Clean: true})
}

// exitOf waits until claude (pid) has exited and is reaped, reaping whatever else of the
// namespace ended meanwhile (orphans claude left), and returns its exit status (-1 if it
// was gone already: cannot happen, it is the helper's child). It waits for SIGCHLD on a
// channel rather than in wait4, for the reason seqpacket.Conn reads through the poller: a
// goroutine parked for a claude's whole life leaves the runtime nothing to take back.
func (z *zygoteServer) exitOf(pid int) int {
	for {
		for {
			var ws unix.WaitStatus
			got, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return -1 // ECHILD
			}
			if got <= 0 {
				break // none of them ended: wait for the next SIGCHLD
			}
			if got == pid {
				if ws.Signaled() {
					return 128 + int(ws.Signal())
				}
				return ws.ExitStatus()
			}
		}
		<-z.child
	}
}

// threadGone waits, up to a second, until the helper's thread tid ended: the thread a
// start ran on ends after it handed claude's pid over, and until then it holds claude's
// mount namespace. Clean is reported once nothing of the helper is left in it. The
// kernel tells no one of a thread's end; /proc/self/task is polled.
func threadGone(tid int) {
	path := "/proc/self/task/" + strconv.Itoa(tid)
	for range 2000 {
		if _, err := os.Stat(path); err != nil {
			return
		}
		time.Sleep(500 * time.Microsecond)
	}
}
