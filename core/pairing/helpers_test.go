package pairing

import (
	"testing"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
)

// openTestStore opens a SQLite store in dir, closed at the end.
func openTestStore(t *testing.T, dir string) store.Store {
	t.Helper()
	return sqlitetest.Open(t, dir, sqlite.Options{})
}

const schedulesConfig = "data_dir = \"./data\"\nplugin \"tg\" {\n  source = \"telegram\"\n  enabled = false\n}\nschedule \"file\" {\n  cron = \"0 9 * * *\"\n  chat = \"tg:1\"\n  prompt = \"p\"\n}\n"

// legacySchedulesFile is the file earlier versions kept chat schedules in (core/schedules).
const legacySchedulesFile = "schedules.json"
