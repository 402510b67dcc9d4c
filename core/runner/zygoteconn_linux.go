//go:build linux

package runner

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// seqConn is one end of the host's socket to a sandbox helper (SOCK_SEQPACKET: a message
// per call), read and written through Go's poller. A read that waits parks its goroutine
// instead of holding a thread in recvmsg: the runtime then has nothing to take back from a
// blocked system call, and its monitor thread, which would otherwise wake every 20 µs for a
// while after each such wait (a tenth of a helper's CPU per start, perf on
// BenchmarkLoadTelegramSandbox), goes to sleep with the process.
type seqConn struct {
	f  *os.File
	rc syscall.RawConn
}

// newSeqConn takes fd over (made non-blocking; closed by close).
func newSeqConn(fd int, name string) (*seqConn, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &seqConn{f: f, rc: rc}, nil
}

// recv reads one message into buf and its descriptors' control message into oob; n is 0
// once the other end closed (or shut down) its end. Descriptors arrive close-on-exec.
func (c *seqConn) recv(buf, oob []byte) (n, oobn int, err error) {
	var rerr error
	err = c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
		return rerr != unix.EAGAIN && rerr != unix.EINTR
	})
	return n, oobn, errors.Join(err, rerr)
}

// send writes one message with oob (descriptors, or nil), waiting while the socket's
// buffer is full.
func (c *seqConn) send(b, oob []byte) error {
	var serr error
	err := c.rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, oob, nil, unix.MSG_DONTWAIT)
		return serr != unix.EAGAIN && serr != unix.EINTR
	})
	return errors.Join(err, serr)
}

// shutdown ends both directions: the other end reads its end, and so does a recv waiting
// here.
func (c *seqConn) shutdown() {
	_ = c.rc.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RDWR) })
}

func (c *seqConn) close() { _ = c.f.Close() }
