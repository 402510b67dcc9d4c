//go:build linux

package seqpacket

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Conn is one end of a SOCK_SEQPACKET socket (a message per call; the host's socket to a
// sandbox helper), read and written through Go's poller. A read that waits parks its goroutine
// instead of holding a thread in recvmsg: the runtime then has nothing to take back from a
// blocked system call, and its monitor thread, which would otherwise wake every 20 µs for a
// while after each such wait (a tenth of a helper's CPU per start, perf on
// BenchmarkLoadTelegramSandbox), goes to sleep with the process.
type Conn struct {
	f  *os.File
	rc syscall.RawConn
}

// NewConn takes fd over (made non-blocking; closed by close).
func NewConn(fd int, name string) (*Conn, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Conn{f: f, rc: rc}, nil
}

// Recv reads one message into buf and its descriptors' control message into oob; n is 0
// once the other end closed (or shut down) its end. Descriptors arrive close-on-exec.
func (c *Conn) Recv(buf, oob []byte) (n, oobn int, err error) {
	var rerr error
	err = c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC|unix.MSG_DONTWAIT)
		return rerr != unix.EAGAIN && rerr != unix.EINTR
	})
	return n, oobn, errors.Join(err, rerr)
}

// Send writes one message carrying fds (as SCM_RIGHTS; none: a plain message), waiting
// while the socket's buffer is full.
func (c *Conn) Send(b []byte, fds ...int) error {
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	var serr error
	err := c.rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), b, oob, nil, unix.MSG_DONTWAIT)
		return serr != unix.EAGAIN && serr != unix.EINTR
	})
	return errors.Join(err, serr)
}

// Shutdown ends both directions: the other end reads its end, and so does a Recv waiting
// here.
func (c *Conn) Shutdown() {
	_ = c.rc.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RDWR) })
}

// Close closes the socket.
func (c *Conn) Close() { _ = c.f.Close() }

// ReceivedFDs are the descriptors an SCM_RIGHTS message carried.
func ReceivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if r, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, r...)
		}
	}
	return fds
}

// CloseAll closes fds.
func CloseAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}
