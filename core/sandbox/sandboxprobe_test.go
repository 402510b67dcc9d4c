package sandbox

import (
	"os"
	"testing"
)

// TestUsernsOff: the setting named is the one that forbids claude's user
// namespace to its user: max_user_namespaces = 0 to everyone, Debian's and
// Ubuntu's switches to users other than root only; a kernel without a
// switch forbids nothing.
func TestUsernsOff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		sysfs map[string]string
		root  bool
		want  string
	}{
		{"allowed", map[string]string{"user/max_user_namespaces": "63000\n", "kernel/unprivileged_userns_clone": "1\n", "kernel/apparmor_restrict_unprivileged_userns": "0\n"}, false, ""},
		{"none at all", map[string]string{"user/max_user_namespaces": "0\n"}, true, "user.max_user_namespaces"},
		{"debian's switch", map[string]string{"user/max_user_namespaces": "63000\n", "kernel/unprivileged_userns_clone": "0\n"}, false, "kernel.unprivileged_userns_clone"},
		{"debian's switch, root", map[string]string{"user/max_user_namespaces": "63000\n", "kernel/unprivileged_userns_clone": "0\n"}, true, ""},
		{"ubuntu's apparmor", map[string]string{"user/max_user_namespaces": "63000\n", "kernel/apparmor_restrict_unprivileged_userns": "1\n"}, false, "kernel.apparmor_restrict_unprivileged_userns"},
		{"no switches", map[string]string{}, false, ""},
	} {
		read := func(p string) ([]byte, error) {
			if v, ok := tc.sysfs[p[len("/proc/sys/"):]]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
		if got := usernsOff(tc.root, read); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
