package core

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/atomicfile"
)

// RuntimeFile is written to data_dir by a running host: where its admin
// endpoint listens, so that `clawhost status`, `pairing` and `reload`
// reach it even while the configuration file on disk does not load.
const RuntimeFile = "admin.json"

// Runtime is RuntimeFile's content.
type Runtime struct {
	// Listen is the admin endpoint's address as bound; TLSCert its
	// certificate ("" plain HTTP).
	Listen  string `json:"listen"`
	TLSCert string `json:"tls_cert,omitempty"`
	PID     int    `json:"pid"`
}

// writeRuntime records where the admin endpoint listens (0600).
func writeRuntime(dataDir string, r Runtime) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dataDir, RuntimeFile), b)
}

// ReadRuntime reads what a running (or the last) host of dataDir wrote.
func ReadRuntime(dataDir string) (Runtime, error) {
	var r Runtime
	b, err := os.ReadFile(filepath.Join(dataDir, RuntimeFile))
	if err != nil {
		return r, err
	}
	return r, json.Unmarshal(b, &r)
}

// removeRuntime removes RuntimeFile at a clean stop, when it is this
// process's (another host of the same data_dir may have written it since).
func removeRuntime(dataDir string) {
	if r, err := ReadRuntime(dataDir); err == nil && r.PID == os.Getpid() {
		_ = os.Remove(filepath.Join(dataDir, RuntimeFile))
	}
}

// checkDataDir runs before any plugin starts: one error at data_dir, not
// one per plugin whose state directory could not be made.
func checkDataDir(cfg *config.Config) error {
	if err := writable(cfg.DataDir); err != nil {
		at := ""
		if a := cfg.Attribute("data_dir"); a != nil {
			at = " (data_dir at " + config.Position(a.Expr.Range()) + ")"
		}
		return fmt.Errorf("data_dir %s is not writable%s: %w. clawhost keeps its database, the plugins' state and its tokens there: give the user clawhost runs as write access, or point data_dir elsewhere", cfg.DataDir, at, err)
	}
	return nil
}

// writable checks that a file can be made in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
