package configaudit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/pluginprobe/pluginprobetest"

	"github.com/clawhost/clawhost/core/internal/golden"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/securityaudit"
)

// TestAuditGolden: `clawhost security audit`'s report of the default
// config.hcl (data_dir private, bubblewrap present, not root) and of a
// deliberately unsafe file on an unsafe machine (config file and data_dir
// open to others, no bubblewrap, root). Temporary paths show as $DIR.
func TestAuditGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src  string
		cfgMode    os.FileMode
		dataMode   os.FileMode
		openFile   bool
		machine    securityaudit.Machine
		wantStatus int
	}{
		{"default", "../../config.hcl", 0o600, 0o700, false,
			securityaudit.Machine{LookPath: func(string) (string, error) { return "/usr/bin/bwrap", nil }, UID: 1000}, 0},
		{"bad", "testdata/audit/bad.hcl", 0o644, 0o755, true,
			securityaudit.Machine{LookPath: func(string) (string, error) { return "", errors.New("not found") }, UID: 0}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "config.hcl")
			if err := os.WriteFile(path, src, tc.cfgMode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.cfgMode); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(dir, "data")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(data, tc.dataMode); err != nil {
				t.Fatal(err)
			}
			if tc.openFile {
				if err := os.WriteFile(filepath.Join(data, "clawhost.db"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(data, "clawhost.db"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, diags := config.Load(path)
			if diags.HasErrors() {
				t.Fatalf("load: %v", diags)
			}
			findings := Run(cfg, tc.machine, pluginprobetest.Declarations(cfg))
			var buf bytes.Buffer
			if err := securityaudit.WriteText(&buf, path, findings, nil); err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(buf.String(), dir, "$DIR")
			for _, secret := range []string{"ghp_written_in_the_file", "hunter2-in-file", "webchat-token-in-file", "AAH-token-in-file", `"short"`} {
				if strings.Contains(got, secret) {
					t.Errorf("the report shows a secret, %s", secret)
				}
			}
			if code := securityaudit.ExitCode(findings); code != tc.wantStatus {
				t.Errorf("exit status %d, want %d", code, tc.wantStatus)
			}
			golden.Check(t, filepath.Join("testdata", "audit", tc.name+".golden"), []byte(got))
		})
	}
}
