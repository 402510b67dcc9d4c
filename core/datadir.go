package core

import (
	"fmt"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/doctor"
)

// checkDataDir runs before any plugin starts: one error at data_dir, not
// one per plugin whose state directory could not be made.
func checkDataDir(cfg *config.Config) error {
	if err := doctor.Writable(cfg.DataDir); err != nil {
		at := ""
		if a := cfg.Attribute("data_dir"); a != nil {
			at = " (data_dir at " + config.Position(a.Expr.Range()) + ")"
		}
		return fmt.Errorf("data_dir %s is not writable%s: %w. clawhost keeps its database, the plugins' state and its tokens there: give the user clawhost runs as write access, or point data_dir elsewhere", cfg.DataDir, at, err)
	}
	return nil
}
