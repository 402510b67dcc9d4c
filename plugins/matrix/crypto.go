package matrix

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/rs/zerolog"
	"go.mau.fi/util/dbutil"
	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	// The pure-Go SQLite the crypto store is kept in (no cgo: the release
	// is static).
	_ "modernc.org/sqlite"
)

// cryptoDB is the crypto store in the state directory (0600): the
// device's Olm account and the Megolm sessions, pickled with a key kept
// beside it.
const cryptoDB = "matrix-crypto.db"

// e2ee is the device's end-to-end encryption: an Olm machine (goolm,
// pure Go) with its store, and the room state it needs.
type e2ee struct {
	mach  *crypto.OlmMachine
	state mautrix.StateStore
	db    *sql.DB
	log   *slog.Logger
	mu    sync.Mutex
	// backup is the key backup the sessions go to (backup.go); nil
	// before the device is cross-signed or without one.
	backup *keyBackup
	// onBackup is told how each backup after a sync went.
	onBackup func(error)
}

// startCrypto opens the device's crypto store in dir and uploads its keys.
// Without a state directory (tests of other things) there is none.
func (a *Adapter) startCrypto(ctx context.Context, cli *mautrix.Client, dir string) (*e2ee, error) {
	if dir == "" {
		return nil, nil
	}
	key, err := pickleKey(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, cryptoDB)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	dbu, err := dbutil.NewWithDB(db, "sqlite3")
	if err != nil {
		db.Close()
		return nil, err
	}
	nop := zerolog.Nop()
	store := crypto.NewSQLCryptoStore(dbu, dbutil.ZeroLogger(nop), cli.UserID.String(), cli.DeviceID, key)
	if err := store.DB.Upgrade(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the crypto store %s: %w", path, err)
	}
	_ = os.Chmod(path, 0o600)
	e := &e2ee{state: mautrix.NewMemoryStateStore(), db: db, log: a.log, onBackup: a.noteBackup}
	e.mach = crypto.NewOlmMachine(cli, &nop, store, e.state.(crypto.StateStore))
	if err := e.mach.Load(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("loading the device's keys: %w", err)
	}
	if err := e.mach.ShareKeys(ctx, -1); err != nil {
		db.Close()
		return nil, fmt.Errorf("uploading the device's keys: %w", err)
	}
	return e, nil
}

// pickleKey is the key the crypto store's secrets are pickled with: 32
// random bytes in matrix-crypto.key (0600), made once.
func pickleKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, "matrix-crypto.key")
	b, err := os.ReadFile(path)
	if err == nil && len(b) == 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	b = make([]byte, 32)
	if _, err := crand.Read(b); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	return b, nil
}

// noteSync feeds a sync response to the Olm machine (to-device keys,
// device lists, one-time key counts) and the room state it reads.
func (e *e2ee) noteSync(ctx context.Context, resp *mautrix.RespSync, since string) {
	for room, jr := range resp.Rooms.Join {
		for _, evt := range append(append([]*event.Event{}, jr.State.Events...), jr.Timeline.Events...) {
			if evt.StateKey == nil {
				continue
			}
			evt.RoomID = room
			_ = evt.Content.ParseRaw(evt.Type)
			mautrix.UpdateStateStore(ctx, e.state, evt)
		}
	}
	e.mach.ProcessSyncResponse(ctx, resp, since)
	bctx, cancel := context.WithTimeout(ctx, callTimeout)
	err := e.backUpOrRemake(bctx)
	cancel()
	if err != nil {
		// Kept for the next sync: the sessions stay marked not backed up.
		e.log.Warn("could not back up the room keys; trying again after the next sync", "err", err)
	}
	if e.onBackup != nil {
		e.onBackup(err)
	}
}

// decrypt is the decrypted event of an m.room.encrypted evt.
func (e *e2ee) decrypt(ctx context.Context, evt *event.Event) (*event.Event, error) {
	if err := evt.Content.ParseRaw(evt.Type); err != nil {
		return nil, err
	}
	return e.mach.DecryptMegolmEvent(ctx, evt)
}

// encrypted is content encrypted for room when the room is encrypted (its
// members' devices given the session first); ok false for a clear room.
func (e *e2ee) encrypted(ctx context.Context, cli *mautrix.Client, room id.RoomID, t event.Type, content any) (*event.EncryptedEventContent, bool, error) {
	if on, _ := e.state.IsEncrypted(ctx, room); !on {
		return nil, false, nil
	}
	enc, err := e.mach.EncryptMegolmEvent(ctx, room, t, content)
	if errors.Is(err, crypto.ErrSessionExpired) || errors.Is(err, crypto.ErrNoGroupSession) || errors.Is(err, crypto.ErrSessionNotShared) {
		members, merr := cli.JoinedMembers(ctx, room)
		if merr != nil {
			return nil, true, merr
		}
		users := make([]id.UserID, 0, len(members.Joined))
		for u := range members.Joined {
			users = append(users, u)
		}
		if err := e.mach.ShareGroupSession(ctx, room, users); err != nil {
			return nil, true, err
		}
		enc, err = e.mach.EncryptMegolmEvent(ctx, room, t, content)
	}
	return enc, true, err
}
