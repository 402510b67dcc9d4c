package boundary

import (
	"strings"
	"testing"
)

// TestAssess: the verdict for each machine a host meets, from the facts
// alone: whether the boundary holds, each part's status, and the words a
// reader needs (the fix for what is missing, root's pass, the ABI in use).
func TestAssess(t *testing.T) {
	t.Parallel()
	const works = "bubblewrap"
	for _, tc := range []struct {
		name   string
		facts  Facts
		holds  bool
		status [3]Status // user namespace, seccomp, Landlock
		says   []string  // in the parts' found and fix
	}{
		{"everything, as root", Facts{Sandbox: works, Seccomp: true, LandlockABI: 7, Root: true}, true,
			[3]Status{Holds, Holds, Holds}, []string{"claude's root holds no capability in the host's user namespace", "Landlock ABI 7 in use", "open_by_handle_at"}},
		{"everything, unprivileged", Facts{Sandbox: works, Seccomp: true, LandlockABI: 3}, true,
			[3]Status{Holds, Holds, Holds}, []string{"no capability (bubblewrap --unshare-user --cap-drop ALL works here)", "Landlock ABI 3 in use"}},
		{"no landlock", Facts{Sandbox: works, Seccomp: true}, true,
			[3]Status{Holds, Holds, Weaker}, []string{"not available (ABI 0)", "still holds by its mounts", "kernel 5.13 or later with landlock in the lsm= boot list"}},
		{"landlock, made per start", Facts{Sandbox: works, Seccomp: true, LandlockABI: 7, PerStart: "CLAWHOST_SANDBOX_HELPER=0"}, true,
			[3]Status{Holds, Holds, Weaker}, []string{"not in use", "per start (CLAWHOST_SANDBOX_HELPER=0)", "recycled"}},
		{"no seccomp", Facts{Sandbox: works, LandlockABI: 7}, false,
			[3]Status{Holds, Missing, Holds}, []string{"loads no seccomp filter", "CONFIG_SECCOMP_FILTER"}},
		{"no bubblewrap", Facts{Sandbox: "unavailable (bubblewrap not installed)", Seccomp: true, LandlockABI: 7, GetBubblewrap: "install bubblewrap: apt-get install bubblewrap"}, false,
			[3]Status{Missing, Missing, Missing}, []string{"bubblewrap is not installed", "install bubblewrap: apt-get install bubblewrap", "no sandbox to run it in"}},
		{"user namespaces off", Facts{Sandbox: "unavailable (bubblewrap failed: bwrap: No permissions to create new namespace)", UsernsOff: "user.max_user_namespaces", Seccomp: true}, false,
			[3]Status{Missing, Missing, Weaker}, []string{"cannot make claude's user namespace here: bubblewrap failed: bwrap: No permissions", "sysctl -w user.max_user_namespaces=15000"}},
		{"ubuntu's apparmor", Facts{Sandbox: "unavailable (bubblewrap failed: setting up uid map: Permission denied)", UsernsOff: "kernel.apparmor_restrict_unprivileged_userns", Seccomp: true, LandlockABI: 4}, false,
			[3]Status{Missing, Missing, Missing}, []string{"sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"}},
		{"a container, setting unknown", Facts{Sandbox: "unavailable (bubblewrap failed: Operation not permitted)", Seccomp: true, LandlockABI: 4}, false,
			[3]Status{Missing, Missing, Missing}, []string{"allow unprivileged user namespaces", "in a container"}},
		{"sandbox off", Facts{Sandbox: "off", Seccomp: true, LandlockABI: 7, Root: true}, false,
			[3]Status{Missing, Missing, Missing}, []string{`agent.sandbox = "off"`, `set sandbox = "auto"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := Assess(tc.facts)
			if v.Holds != tc.holds || len(v.Parts) != 3 {
				t.Fatalf("holds %v, want %v: %+v", v.Holds, tc.holds, v)
			}
			var text strings.Builder
			for i, p := range v.Parts {
				if p.Name != []string{PartUserNamespace, PartSeccomp, PartLandlock}[i] || p.Status != tc.status[i] || p.Found == "" || (p.Status == Holds) != (p.Fix == "") {
					t.Errorf("part %d: %+v, want status %s", i, p, tc.status[i])
				}
				text.WriteString(p.Found + "\n" + p.Fix + "\n")
			}
			for _, s := range tc.says {
				if !strings.Contains(text.String(), s) {
					t.Errorf("the parts do not say %q:\n%s", s, text.String())
				}
			}
			if got := v.Summary(); strings.HasPrefix(got, "holds") != tc.holds {
				t.Errorf("summary %q", got)
			}
		})
	}
}
