// Package configtest loads configuration files for tests: the source is
// written as config.hcl in a directory of the test's own and loaded the
// way the daemon loads it, so a test states its configuration as HCL.
package configtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/config"
)

// Load loads src as config.hcl in a fresh directory that also holds the
// default agent's workspace ("workspace"); a file that does not load
// fails the test.
func Load(tb testing.TB, src string) *config.Config {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o700); err != nil {
		tb.Fatal(err)
	}
	return load(tb, dir, src)
}

// LoadWithDataDir loads src as config.hcl in a fresh directory and
// creates the data_dir it names.
func LoadWithDataDir(tb testing.TB, src string) *config.Config {
	tb.Helper()
	cfg := load(tb, tb.TempDir(), src)
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	return cfg
}

func load(tb testing.TB, dir, src string) *config.Config {
	tb.Helper()
	path := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		tb.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		tb.Fatalf("load: %v", diags)
	}
	return cfg
}
