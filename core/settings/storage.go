package settings

import (
	"strings"

	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// OpenStore opens the storage engine cfg.Storage names: SQLite in
// cfg.DataDir (the default) or a PostgreSQL server. The error says where,
// never with the url's password.
// host is this host's id, stamped on the journal entries it owns in a
// shared (PostgreSQL) database; a SQLite database has one host (its
// directory lock sees to that), which recovers every entry.
func OpenStore(ctx context.Context, cfg *config.Config, host string, log hclog.Logger) (store.Store, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	switch cfg.Storage.Engine {
	case config.EnginePostgres:
		db, err := postgres.Open(ctx, cfg.Storage.URL, postgres.Options{Logger: log, Host: host})
		if err != nil {
			return nil, fmt.Errorf("open the PostgreSQL database: %w", err)
		}
		return db, nil
	default:
		db, err := sqlite.Open(ctx, cfg.DataDir, sqlite.Options{Logger: log, Synchronous: synchronous(cfg.Storage.Durability)})
		if err != nil {
			return nil, fmt.Errorf("open the database in %s: %w", cfg.DataDir, err)
		}
		return db, nil
	}
}

// synchronous is the sqlite engine's Options.Synchronous for a
// storage.durability: "process" drops the fsyncs (NORMAL), anything else
// keeps them (FULL).
func synchronous(durability string) string {
	if durability == config.DurabilityProcess {
		return "NORMAL"
	}
	return "FULL"
}

// StorageName describes the storage for the status page and logs:
// "sqlite <dir>" (with its durability when it is not the default) or
// "postgres <url without password>".
func StorageName(cfg *config.Config) string {
	if cfg.Storage.Engine == config.EnginePostgres {
		return "postgres " + postgres.Redact(cfg.Storage.URL)
	}
	if cfg.Storage.Durability == config.DurabilityProcess {
		return "sqlite " + cfg.DataDir + ` (durability "process": no fsync; survives kill -9, not a power loss)`
	}
	return "sqlite " + cfg.DataDir
}

// StorageAt is where the file says which database to open, for the error
// of one that does not open: " (storage.url at config.hcl:12)", the
// storage block, or data_dir for the default SQLite; "" when the file
// names none of them.
func StorageAt(cfg *config.Config) string {
	for _, name := range [][]string{{"storage", "url"}, {"storage", "engine"}, {"data_dir"}} {
		if a := cfg.Attribute(name...); a != nil {
			return " (" + strings.Join(name, ".") + " at " + config.Position(a.Expr.Range()) + ")"
		}
	}
	return ""
}
