package pairing

import (
	"context"
	"testing"

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

const schedulesConfig = "data_dir = \"./data\"\nplugin \"tg\" {\n  source = \"telegram\"\n  enabled = false\n}\nschedule \"file\" {\n  cron = \"0 9 * * *\"\n  chat = \"tg:1\"\n  prompt = \"p\"\n}\n"

// legacySchedulesFile is the file earlier versions kept chat schedules in (core/schedules).
const legacySchedulesFile = "schedules.json"
