package sdk

import (
	"syscall"
	"unsafe"
)

// parentDeathSignal is the signal the kernel sends this process when its
// parent dies (prctl PR_GET_PDEATHSIG; the host sets it for every plugin
// it starts, and it survives the exec); 0 when none is set. The setting
// is the calling thread's — the main thread has it, threads the runtime
// makes later do not — so it is read once, during package
// initialisation, which runs on the main thread (hostDeathSignal).
func parentDeathSignal() syscall.Signal {
	var sig int32
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0); errno != 0 {
		return 0
	}
	return syscall.Signal(sig)
}
