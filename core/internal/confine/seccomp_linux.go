package confine

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Denied are the system calls the filter refuses (EPERM), each with why. The
// model is Docker's default profile: what it refuses to a container without
// added capabilities, less what claude's tools use (ptrace: the sandbox's pid
// namespace holds only this chat's processes, and the sandbox's init is not
// dumpable).
var Denied = []struct {
	Names []string
	Why   string
}{
	{[]string{"open_by_handle_at", "name_to_handle_at"}, "open a file by its handle, beneath every mount that hides it (the shocker escape)"},
	{[]string{"add_key", "request_key", "keyctl"}, "the kernel keyring, which no namespace confines: another chat's or the host's keys"},
	{[]string{"bpf", "perf_event_open", "userfaultfd"}, "kernel attack surface no tool needs (and userfaultfd's use in exploits)"},
	{[]string{"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms", "query_module"}, "load a kernel or a module"},
	{[]string{"mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr"}, "change the mounts that make the sandbox"},
	{[]string{"unshare", "setns"}, "leave or make namespaces (a user namespace of one's own gives capabilities there)"},
	{[]string{"swapon", "swapoff", "reboot", "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "syslog", "quotactl", "lookup_dcookie", "vhangup", "iopl", "ioperm", "uselib", "nfsservctl", "_sysctl"}, "the machine's, not a chat's"},
	{[]string{"process_vm_readv", "process_vm_writev", "kcmp"}, "another process's memory and files (Docker: only with CAP_SYS_PTRACE)"},
	{[]string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, "a second way to make system calls, which the filter does not see"},
}

// nsFlags are clone's flags that make namespaces: clone with any of them is
// refused, as unshare is; clone3, whose flags the filter cannot read, answers
// ENOSYS, and the C library falls back to clone (Docker does the same).
const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWTIME

// Filter is the compiled filter as struct sock_filter records in the machine's byte
// order, what bubblewrap's --seccomp reads from a descriptor.
func Filter() ([]byte, error) {
	raw, err := program()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		b = binary.NativeEndian.AppendUint16(b, r.Op)
		b = append(b, r.Jt, r.Jf)
		b = binary.NativeEndian.AppendUint32(b, r.K)
	}
	return b, nil
}

// FilterFile is a pipe's read end holding Filter, for bubblewrap's --seccomp
// (hand it to the child in exec.Cmd.ExtraFiles; the filter is smaller than a
// pipe's buffer, so the write does not wait for a reader). The caller closes it.
func FilterFile() (*os.File, error) {
	b, err := Filter()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	defer w.Close()
	if _, err := w.Write(b); err != nil {
		r.Close()
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	return r, nil
}
