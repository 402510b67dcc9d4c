package whatsapp

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver: pure Go, no cgo

	"go.mau.fi/whatsmeow/store/sqlstore"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// dbFile is the plugin's database in its data dir: whatsmeow's device
// store (the link to the phone, Signal sessions and keys, the LID map) and
// the ids of the messages the plugin sent.
const dbFile = "whatsapp.db"

// sentRetention is how long the ids of sent messages are remembered: a
// reply quoting one of them counts as a mention of the bot, and an echo of
// one is never delivered as inbound.
const sentRetention = 7 * 24 * time.Hour

// openStore opens (creating it 0600) the database in dir with what
// whatsmeow needs of SQLite: foreign keys on (it refuses to run without),
// WAL (the first login writes ~800 prekeys: 0.2 s instead of seconds),
// synchronous=NORMAL, and immediate write transactions, without which
// concurrent decryptions fail with "database is locked" and the message
// becomes undecryptable.
func openStore(ctx context.Context, dir string, log waLog.Logger) (*sql.DB, *sqlstore.Container, error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("open whatsapp store: no data dir")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("open whatsapp store: %w", err)
	}
	path := filepath.Join(dir, dbFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open whatsapp store: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, nil, fmt.Errorf("open whatsapp store: %w", err)
	}
	dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("open whatsapp store: %w", err)
	}
	container := sqlstore.NewWithDB(db, "sqlite", log)
	if err := container.Upgrade(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open whatsapp store %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS clawhost_sent (id TEXT PRIMARY KEY, at INTEGER NOT NULL)`); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("open whatsapp store %s: %w", path, err)
	}
	return db, container, nil
}

// sentLog remembers the ids of the messages the plugin sent, in memory and
// in the database, so that they survive a restart.
type sentLog struct {
	db  *sql.DB // nil: memory only (tests)
	now func() time.Time

	mu  sync.Mutex
	ids map[string]time.Time
}

// loadSent reads the ids sent within sentRetention and forgets older ones.
func loadSent(ctx context.Context, db *sql.DB, now func() time.Time) (*sentLog, error) {
	s := &sentLog{db: db, now: now, ids: map[string]time.Time{}}
	if db == nil {
		return s, nil
	}
	cut := now().Add(-sentRetention).UnixNano()
	if _, err := db.ExecContext(ctx, `DELETE FROM clawhost_sent WHERE at < ?`, cut); err != nil {
		return nil, fmt.Errorf("load sent ids: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, at FROM clawhost_sent`)
	if err != nil {
		return nil, fmt.Errorf("load sent ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("load sent ids: %w", err)
		}
		s.ids[id] = time.Unix(0, at)
	}
	return s, rows.Err()
}

// add records id before the message is sent, so that an echo arriving
// before SendMessage returned is recognized.
func (s *sentLog) add(ctx context.Context, id string) error {
	now := s.now()
	s.mu.Lock()
	s.ids[id] = now
	if len(s.ids)%1000 == 0 {
		for k, at := range s.ids {
			if now.Sub(at) > sentRetention {
				delete(s.ids, k)
			}
		}
	}
	s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `INSERT OR REPLACE INTO clawhost_sent (id, at) VALUES (?, ?)`, id, now.UnixNano())
	return err
}

// has reports whether the plugin sent the message id.
func (s *sentLog) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}
