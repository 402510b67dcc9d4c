package runas

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAccess: the mode bits that apply (owner, group, others) decide, and
// every directory above must be searchable.
func TestAccess(t *testing.T) {
	t.Parallel()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Not t.TempDir: its parent is private to the test's user.
	base, err := os.MkdirTemp("", "runas-")
	must(err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	must(os.Chmod(base, 0o755))
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	other := &User{Name: "other", UID: uid + 4242, GID: gid + 4242}
	owner := &User{Name: "owner", UID: uid, GID: gid + 4242}
	group := &User{Name: "member", UID: uid + 4242, GID: gid + 1, Groups: []uint32{gid}}
	open := filepath.Join(base, "open")
	closed := filepath.Join(base, "closed")
	inner := filepath.Join(closed, "inner")
	must(os.Mkdir(open, 0o755))
	must(os.Mkdir(closed, 0o750))
	must(os.Mkdir(inner, 0o777))
	must(os.Chmod(inner, 0o777)) // past the umask
	must(os.Chmod(closed, 0o750))
	for _, tc := range []struct {
		u    *User
		path string
		want uint32
		err  string
	}{
		{other, open, 1 | 4, ""},
		{other, open, 2, "does not let uid"},
		{owner, open, 7, ""},
		{group, closed, 1 | 4, ""},
		{group, closed, 2, "write"},
		{other, inner, 7, filepath.Base(closed) + " (mode 0750"},
		{group, inner, 7, ""},
		{other, filepath.Join(base, "missing"), 1, "no such file"},
	} {
		err := tc.u.Access(tc.path, tc.want)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s %s want %o: %v, want %q", tc.u.Name, tc.path, tc.want, err, tc.err)
		}
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"nobody", "65534"} {
		u, err := Lookup(name)
		if err != nil {
			t.Skipf("no user nobody here: %v", err)
		}
		if u.UID != 65534 || u.Name != "nobody" || len(u.Env()) != 3 || u.Credential().Uid != 65534 {
			t.Errorf("%s: %+v", name, u)
		}
	}
	if _, err := Lookup("no-such-user-here"); err == nil || !strings.Contains(err.Error(), `user "no-such-user-here"`) {
		t.Errorf("unknown user: %v", err)
	}
	if (*User)(nil).Credential() != nil {
		t.Error("nil user has a credential")
	}
}
