package pairing

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// openTestStore opens a SQLite store in dir, closed at the end.
func openTestStore(t *testing.T, dir string) store.Store {
	t.Helper()
	db, err := sqlite.Open(context.Background(), dir, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// loadTestConfig loads src as data_dir's config.hcl under a fresh
// directory, with data_dir created.
func loadTestConfig(t *testing.T, src string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return cfg
}

const schedulesConfig = "data_dir = \"./data\"\nplugin \"tg\" {\n  source = \"telegram\"\n  enabled = false\n}\nschedule \"file\" {\n  cron = \"0 9 * * *\"\n  chat = \"tg:1\"\n  prompt = \"p\"\n}\n"

// legacySchedulesFile is the file earlier versions kept chat schedules in (core/schedules).
const legacySchedulesFile = "schedules.json"
