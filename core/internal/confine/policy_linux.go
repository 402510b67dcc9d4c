//go:build linux && (!amd64 || seccompasm)

package confine

// The filter compiled from its policy by go-seccomp-bpf. On amd64 the program is
// compiled ahead (filter_linux_amd64.go, from this file: make check compares them
// with -tags seccompasm), so that neither clawhost nor the sandbox helper links the
// compiler: its syscall tables' initialiser took 0.3 ms and 165 KB in every process,
// and every claude start in a recycled sandbox is one (issue 84).

import (
	"fmt"
	"slices"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// policy is the filter as go-seccomp-bpf's policy for this machine's
// architecture; a name the architecture lacks is left out (it cannot be called).
func policy() (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, fmt.Errorf("seccomp: %w", err)
	}
	var names []string
	for _, d := range Denied {
		for _, n := range d.Names {
			if _, ok := info.SyscallNames[n]; ok && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, Action: seccomp.ActionErrno},
			{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
			{NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: seccomp.ArgumentConditions{
				{Argument: 0, Operation: seccomp.BitsSet, Value: nsFlags}}}}, Action: seccomp.ActionErrno},
		},
	}, nil
}

// assemble is the filter's BPF, compiled by go-seccomp-bpf: a call of any architecture but the machine's own
// (the 32-bit ABI through int 0x80, whose numbers differ) answers ENOSYS first —
// go-seccomp-bpf lets another architecture's calls through to its default action.
func assemble() ([]bpf.RawInstruction, error) {
	p, err := policy()
	if err != nil {
		return nil, err
	}
	insts, err := p.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	info, _ := arch.GetInfo("")
	own := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)},
	}
	raw, err := bpf.Assemble(append(own, insts...))
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	return raw, nil
}
