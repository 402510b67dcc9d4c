// Package runas describes a user a child process runs as (agent.run_as,
// plugin run_as): the lookup of a name, the syscall credential, and a check
// of whether that user can reach a path, so the operator is told what to
// chown before a start fails with a bare "permission denied".
package runas

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// User is a user a process runs as.
type User struct {
	// Name is the user name, for messages and USER.
	Name string
	// UID, GID and Groups are the ids claude gets.
	UID, GID uint32
	Groups   []uint32
	// Home is the user's home directory, the process's HOME.
	Home string
}

// Lookup returns the user named name (a name or a
// numeric uid), its primary group and supplementary groups.
func Lookup(name string) (*User, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("user %q: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %q: gid %q: %w", name, u.Gid, err)
	}
	c := &User{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(g) != c.GID {
				c.Groups = append(c.Groups, uint32(g))
			}
		}
	}
	return c, nil
}

// Access reports whether c may use path p the way want says (a mix of
// 4 read, 2 write, 1 search/execute), checking the mode bits of p and the
// search bit of every directory above it, as the kernel would for c
// (without ACLs or capabilities). The error says which path refuses.
func (c *User) Access(p string, want uint32) error {
	p = filepath.Clean(p)
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if err := c.allowed(dir, 1); err != nil {
			return err
		}
		if dir == "/" || dir == "." {
			break
		}
	}
	return c.allowed(p, want)
}

// allowed checks one path's mode bits for c.
func (c *User) allowed(p string, want uint32) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	mode := uint32(fi.Mode().Perm())
	var bits uint32
	switch {
	case st.Uid == c.UID:
		bits = mode >> 6
	case st.Gid == c.GID || containsID(c.Groups, st.Gid):
		bits = mode >> 3
	default:
		bits = mode
	}
	if bits&7&want != want {
		return fmt.Errorf("%s (mode %#o, owner %d:%d) does not let uid %d %s it", p, mode, st.Uid, st.Gid, c.UID, verb(want))
	}
	return nil
}

func verb(want uint32) string {
	switch {
	case want&2 != 0:
		return "write"
	case want&4 != 0:
		return "read"
	default:
		return "enter"
	}
}

func containsID(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Credential is c as a syscall credential; nil for a nil c.
func (c *User) Credential() *syscall.Credential {
	if c == nil {
		return nil
	}
	return &syscall.Credential{Uid: c.UID, Gid: c.GID, Groups: c.Groups}
}

// Env is HOME, USER and LOGNAME for c.
func (c *User) Env() []string {
	return []string{"HOME=" + c.Home, "USER=" + c.Name, "LOGNAME=" + c.Name}
}

// Chown makes each of paths (those not "") c's. It never follows a
// symbolic link (Lchown): clawhost runs as root here, and a link planted
// where a path is expected must not give away what it points to.
func (c *User) Chown(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := os.Lchown(p, int(c.UID), int(c.GID)); err != nil {
			return fmt.Errorf("chown %s to %s: %w", p, c.Name, err)
		}
	}
	return nil
}
