package runner

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Credential is a user claude runs as (Config.RunAs).
type Credential struct {
	// Name is the user name (agent.run_as), for messages and USER.
	Name string
	// UID, GID and Groups are the ids claude gets.
	UID, GID uint32
	Groups   []uint32
	// Home is the user's home directory, claude's HOME.
	Home string
}

// LookupUser returns the Credential of the user named name (a name or a
// numeric uid), its primary group and supplementary groups.
func LookupUser(name string) (*Credential, error) {
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
	c := &Credential{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(g) != c.GID {
				c.Groups = append(c.Groups, uint32(g))
			}
		}
	}
	return c, nil
}

// access reports whether c may use path p the way want says (a mix of
// 4 read, 2 write, 1 search/execute), checking the mode bits of p and the
// search bit of every directory above it, as the kernel would for c
// (without ACLs or capabilities). The error says which path refuses.
func (c *Credential) access(p string, want uint32) error {
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
func (c *Credential) allowed(p string, want uint32) error {
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

// checkRunAs reports what keeps c from running claude in cfg: the
// workspace must be writable, the state and config directories reachable
// (the runner makes its own subdirectories the user's).
func checkRunAs(cfg Config) error {
	c := cfg.RunAs
	if err := c.access(cfg.Workspace, 7); err != nil {
		return fmt.Errorf("agent.run_as %q: the workspace: %w; chown -R %s %s", c.Name, err, c.Name, cfg.Workspace)
	}
	for _, d := range []string{filepath.Join(cfg.StateDir, "t"), cfg.ConfigDir} {
		if d == "" {
			continue
		}
		if err := c.access(filepath.Dir(d), 1); err != nil {
			return fmt.Errorf("agent.run_as %q: %w; let it enter the directories above %s (chmod o+x, or chgrp to its group and chmod g+x)", c.Name, err, d)
		}
	}
	return nil
}

// chownRunAs makes dirs (those that are set) c's, so claude can write its
// TMPDIRs and its config directory.
func chownRunAs(c *Credential, dirs ...string) error {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := os.Chown(d, int(c.UID), int(c.GID)); err != nil {
			return fmt.Errorf("agent.run_as %q: chown %s: %w", c.Name, d, err)
		}
	}
	return nil
}
