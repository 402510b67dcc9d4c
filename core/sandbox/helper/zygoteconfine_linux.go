package helper

import (
	"fmt"
	"os"

	"github.com/clawhost/clawhost/core/internal/confine"
)

// confineSpec is what claude's start gives up (confine.Exec) for req: Landlock lets it
// read beneath what the mounts grant and write beneath what they grant writable (the
// chat's places, its scratch and hidden trees' fresh tmpfs, /dev's devices) — the same
// list again, kept by the kernel: a mount the list forgot is still closed.
func confineSpec(req Request) confine.Spec {
	s := confine.Spec{ReadOnly: []string{"/proc"}, Writable: []string{"/dev", "/dev/shm"}}
	for _, m := range req.Mounts {
		switch {
		case m.Op == OpBind, m.Op == OpScratch, m.Op == OpHide && m.Dir:
			s.Writable = append(s.Writable, m.Path)
		default:
			s.ReadOnly = append(s.ReadOnly, m.Path)
		}
		if !m.Dir && m.Op != OpScratch { // a scratch is a tmpfs, a directory
			s.Files = append(s.Files, m.Path)
		}
	}
	// "cloexec" for a prepared start (preparedExec), which closes its own descriptors.
	for _, w := range []string{"seccomp", "landlock", "caps", "keyring", "cloexec"} {
		if weakened(w) {
			s.Weaken = append(s.Weaken, w)
		}
	}
	return s
}

// confinedExec is the helper's binary run as claude's start (zygoteStart), in claude's
// user namespace: it gives up what confine.Exec takes and execs claude. args: the
// encoded confine.Spec, claude's path, claude's argv. It returns only on failure.
func confinedExec(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "sandbox helper: a start needs a spec, a path and an argv")
		return 2
	}
	s, err := confine.DecodeSpec(args[0])
	if err == nil {
		err = confine.Exec(s, args[1], args[2:], os.Environ())
	}
	fmt.Fprintln(os.Stderr, "sandbox helper: start claude:", err)
	return 127
}
