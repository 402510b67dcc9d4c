// Package boundary says whether claude's sandbox holds on this machine. It
// needs three things of the kernel: a user namespace of its own (claude holds
// no capability in the host's, as root too), the seccomp filter mode (the
// syscall filter that closes open_by_handle_at, the keyring, bpf, …), and
// Landlock (a second, kernel-kept allow-list behind the mounts). Assess turns
// what the runner found (runner.ProbeBoundary) into one part per thing, each
// with what was found and, when it is missing, the fix; `clawhost doctor` and
// `clawhost security audit` both say it, so the two never disagree.
package boundary

import (
	"cmp"
	"fmt"
	"strings"
)

// Facts are what this machine gives claude's sandbox, as the runner finds them.
type Facts struct {
	// Sandbox is the runner's probe of bubblewrap (runner.ProbeSandbox):
	// "bubblewrap" when it made a sandbox with a user namespace of its own and
	// no capability (--unshare-user --cap-drop ALL); "off" (agent.sandbox); or
	// "unavailable (why)".
	Sandbox string
	// UsernsOff names the kernel setting that forbids user namespaces here
	// ("user.max_user_namespaces"), "" when none was found.
	UsernsOff string
	// Seccomp is whether the syscall filter loads here (confine.State).
	Seccomp bool
	// LandlockABI is the kernel's Landlock ABI version; 0: none.
	LandlockABI int
	// PerStart says why claude's sandbox is made by a bubblewrap per start,
	// which applies no Landlock; "": recycled sandboxes, which apply it.
	PerStart string
	// Root is whether clawhost runs as root.
	Root bool
	// GetBubblewrap says how to get bubblewrap here ("install bubblewrap:
	// apt-get install bubblewrap"); "": unknown.
	GetBubblewrap string
}

// Status is how a part of the boundary stands.
type Status string

// A part holds, is missing while the sandbox still holds without it, or is
// missing and the boundary does not hold.
const (
	Holds   Status = "holds"
	Weaker  Status = "weaker"
	Missing Status = "missing"
)

// Names of the parts, in the order Assess gives them.
const (
	PartUserNamespace = "user namespace"
	PartSeccomp       = "seccomp"
	PartLandlock      = "Landlock"
)

// Part is one thing the boundary needs of the machine.
type Part struct {
	// Name is one of PartUserNamespace, PartSeccomp, PartLandlock.
	Name string `json:"name"`
	// Status is how it stands on this machine.
	Status Status `json:"status"`
	// Found says what the machine gives; Fix what to change ("" when it holds).
	Found string `json:"found"`
	Fix   string `json:"fix,omitempty"`
}

// Verdict is whether claude's boundary holds on this machine, and why.
type Verdict struct {
	// Holds: claude runs in a user namespace of its own with no capability,
	// under the syscall filter. A missing Landlock weakens it (Weaker) but
	// does not break it.
	Holds bool `json:"holds"`
	// Sandbox is Facts.Sandbox.
	Sandbox string `json:"sandbox"`
	Parts   []Part `json:"parts"`
}

// Summary is the verdict in one line: "holds (user namespace, seccomp,
// Landlock ABI 7)", "holds, weaker: …", "does not hold: …".
func (v Verdict) Summary() string {
	var held, weaker, missing []string
	for _, p := range v.Parts {
		name := p.Name
		switch p.Status {
		case Holds:
			held = append(held, name)
		case Weaker:
			weaker = append(weaker, name)
		default:
			missing = append(missing, name)
		}
	}
	switch {
	case !v.Holds:
		return "does not hold: " + strings.Join(missing, ", ") + " missing"
	case len(weaker) > 0:
		return "holds (" + strings.Join(held, ", ") + "), weaker without " + strings.Join(weaker, ", ")
	}
	return "holds (" + strings.Join(held, ", ") + ")"
}

// usernsFixes are the values that allow user namespaces again, by setting.
var usernsFixes = map[string]string{
	"user.max_user_namespaces":                     "15000",
	"kernel.unprivileged_userns_clone":             "1",
	"kernel.apparmor_restrict_unprivileged_userns": "0",
}

// Assess is the verdict for f: one part per thing the boundary needs.
func Assess(f Facts) Verdict {
	v := Verdict{Sandbox: f.Sandbox}
	running := f.Sandbox == "bubblewrap"
	v.Parts = []Part{userNamespace(f), seccomp(f, running), landlock(f, running)}
	v.Holds = v.Parts[0].Status == Holds && v.Parts[1].Status == Holds
	return v
}

// userNamespace is the part the bubblewrap probe answers.
func userNamespace(f Facts) Part {
	p := Part{Name: PartUserNamespace}
	why, _ := strings.CutPrefix(f.Sandbox, "unavailable ")
	why = strings.Trim(why, "()")
	switch {
	case f.Sandbox == "bubblewrap":
		p.Status, p.Found = Holds, "claude runs in a user namespace of its own with no capability (bubblewrap --unshare-user --cap-drop ALL works here)"
		if f.Root {
			p.Found += "; clawhost runs as root, and claude's root holds no capability in the host's user namespace"
		}
	case f.Sandbox == "off":
		p.Status, p.Found = Missing, `agent.sandbox = "off": claude runs in the host's user namespace with all of its user's access`
		p.Fix = `set sandbox = "auto" in the agent block`
	case strings.Contains(why, "not installed"):
		p.Status, p.Found = Missing, "bubblewrap is not installed: claude gets no user namespace of its own and no sandbox"
		p.Fix = cmp.Or(f.GetBubblewrap, "install bubblewrap")
	default:
		p.Status, p.Found = Missing, "bubblewrap cannot make claude's user namespace here: "+why
		if val, ok := usernsFixes[f.UsernsOff]; ok {
			p.Fix = fmt.Sprintf("allow user namespaces: sysctl -w %s=%s (and the same in /etc/sysctl.d/ to keep it)", f.UsernsOff, val)
		} else {
			p.Fix = "allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0; on Ubuntu 23.10 and later kernel.apparmor_restrict_unprivileged_userns = 0, or an AppArmor profile for bwrap); in a container, one that allows them"
		}
	}
	return p
}

// seccomp is the part confine.State answers: whether the filter loads.
func seccomp(f Facts, running bool) Part {
	p := Part{Name: PartSeccomp}
	switch {
	case !f.Seccomp:
		p.Status, p.Found = Missing, "this kernel loads no seccomp filter: a sandboxed claude does not start without its syscall filter"
		p.Fix = "a kernel with seccomp filter mode (CONFIG_SECCOMP_FILTER, in every common distribution's kernel); in a container, one that lets processes load a filter"
	case !running:
		p.Status, p.Found = Missing, "the syscall filter loads here, but claude has no sandbox to run it in"
		p.Fix = "make the sandbox work (" + PartUserNamespace + ")"
	default:
		p.Status, p.Found = Holds, "the syscall filter is on every sandboxed process (seccomp filter mode): open_by_handle_at, the keyring, bpf, ptrace, mount and namespace calls are denied"
	}
	return p
}

// landlock is the part the kernel's Landlock ABI and the way sandboxes are
// made answer.
func landlock(f Facts, running bool) Part {
	p := Part{Name: PartLandlock}
	switch {
	case f.LandlockABI <= 0:
		p.Status, p.Found = Weaker, "Landlock is not available (ABI 0): the sandbox still holds by its mounts, but without the second, kernel-kept allow-list that closes a path a mount forgot"
		p.Fix = "a kernel 5.13 or later with landlock in the lsm= boot list (CONFIG_SECURITY_LANDLOCK; for example lsm=landlock,lockdown,yama,integrity,apparmor in GRUB_CMDLINE_LINUX, then update-grub and reboot)"
	case !running:
		p.Status, p.Found = Missing, fmt.Sprintf("Landlock ABI %d is available, but claude has no sandbox to use it in", f.LandlockABI)
		p.Fix = "make the sandbox work (" + PartUserNamespace + ")"
	case f.PerStart != "":
		p.Status, p.Found = Weaker, fmt.Sprintf("Landlock ABI %d is available but not in use: claude's sandbox is made per start (%s), which has the mounts and the syscall filter only", f.LandlockABI, f.PerStart)
		p.Fix = "let claude's sandboxes be recycled (the sandbox helper; unset CLAWHOST_SANDBOX_HELPER=0)"
	default:
		p.Status, p.Found = Holds, fmt.Sprintf("Landlock ABI %d in use: every recycled sandbox's claude has a kernel-kept allow-list of what its mounts show", f.LandlockABI)
	}
	return p
}
