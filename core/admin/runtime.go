package admin

import (
	"encoding/json"
	"os"
	"path/filepath"

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

// WriteRuntime records where the admin endpoint listens (0600).
func WriteRuntime(dataDir string, r Runtime) error {
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

// RemoveRuntime removes RuntimeFile at a clean stop, when it is this
// process's (another host of the same data_dir may have written it since).
func RemoveRuntime(dataDir string) {
	if r, err := ReadRuntime(dataDir); err == nil && r.PID == os.Getpid() {
		_ = os.Remove(filepath.Join(dataDir, RuntimeFile))
	}
}
