package runner

import (
	"fmt"
	"path/filepath"
)

// checkRunAs reports what keeps c from running claude in cfg: the
// workspace must be writable, the state and config directories reachable
// (the runner makes its own subdirectories the user's).
func checkRunAs(cfg Config) error {
	c := cfg.RunAs
	if err := c.Access(cfg.Workspace, 7); err != nil {
		return fmt.Errorf("agent.run_as %q: the workspace: %w; chown -R %s %s", c.Name, err, c.Name, cfg.Workspace)
	}
	for _, d := range []string{filepath.Join(cfg.StateDir, "t"), cfg.ConfigDir} {
		if d == "" {
			continue
		}
		if err := c.Access(filepath.Dir(d), 1); err != nil {
			return fmt.Errorf("agent.run_as %q: %w; let it enter the directories above %s (chmod o+x, or chgrp to its group and chmod g+x)", c.Name, err, d)
		}
	}
	return nil
}
