package matrix

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/crypto/backup"
	"maunium.net/go/mautrix/crypto/signatures"
	"maunium.net/go/mautrix/crypto/ssss"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"
)

// backupBatch is how many sessions one upload to the key backup carries.
const backupBatch = 100

// keyBackup is the account's server-side key backup
// (m.megolm_backup.v1.curve25519-aes-sha2) the device's Megolm sessions
// are kept in, its private key in secret storage: a new device restored
// with the recovery key reads what the old one could.
type keyBackup struct {
	key     *backup.MegolmBackupKey
	version id.KeyBackupVersion
	// ssss is the secret storage key the backup key is kept under: a
	// backup deleted meanwhile is made again under it.
	ssss *ssss.Key
}

// startBackup finds the account's key backup whose key secret storage
// holds (or makes one), restores it once into a device that has not read
// it yet, and sets e to back up the device's sessions into it.
func (a *Adapter) startBackup(ctx context.Context, e *e2ee, key *ssss.Key) error {
	mach := e.mach
	kb, err := findBackup(ctx, mach, key)
	if err != nil {
		return err
	}
	if kb == nil {
		if kb, err = makeBackup(ctx, mach, key); err != nil {
			return err
		}
	}
	restored := mach.Client.DeviceID.String() + " " + kb.version.String()
	if a.st.get().Restored != restored {
		if err := mach.GetAndStoreKeyBackup(ctx, kb.version, kb.key); err != nil {
			return fmt.Errorf("restoring the key backup: %w", err)
		}
		if err := a.st.update(func(s *state) { s.Restored = restored }); err != nil {
			return err
		}
	}
	kb.ssss = key
	e.mu.Lock()
	e.backup = kb
	e.mu.Unlock()
	return nil
}

// backUpOrRemake is backUp; when the backup version is gone (deleted, or
// replaced by another client's: the upload fails and the account's latest
// backup is not it — Dendrite answers such an upload with a 500, not
// M_NOT_FOUND), the account's current one whose key secret storage holds
// is taken, or a new one made, and everything is uploaded to it.
func (e *e2ee) backUpOrRemake(ctx context.Context) error {
	err := e.backUp(ctx)
	if err == nil {
		return nil
	}
	e.mu.Lock()
	old := e.backup
	e.mu.Unlock()
	latest, lerr := e.mach.Client.GetKeyBackupLatestVersion(ctx)
	gone := errors.Is(lerr, mautrix.MNotFound) || (lerr == nil && latest.Version != old.version)
	if !gone {
		return err
	}
	kb, ferr := findBackup(ctx, e.mach, old.ssss)
	if ferr == nil && kb == nil {
		kb, ferr = makeBackup(ctx, e.mach, old.ssss)
	}
	if ferr != nil {
		return fmt.Errorf("%w; making the backup again: %w", err, ferr)
	}
	kb.ssss = old.ssss
	e.log.Warn("the key backup was gone; backing the room keys up to the account's current one", "old", old.version, "new", kb.version)
	e.mu.Lock()
	e.backup = kb
	e.mu.Unlock()
	return e.backUp(ctx)
}

// findBackup is the account's latest key backup when secret storage holds
// its key; nil when there is none or it is another key's.
func findBackup(ctx context.Context, mach *crypto.OlmMachine, key *ssss.Key) (*keyBackup, error) {
	b, err := mach.SSSS.GetDecryptedAccountData(ctx, event.AccountDataMegolmBackupKey, key)
	if errors.Is(err, mautrix.MNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the backup key from secret storage: %w", err)
	}
	bk, err := backup.MegolmBackupKeyFromBytes(b)
	if err != nil {
		return nil, fmt.Errorf("the backup key in secret storage: %w", err)
	}
	v, err := mach.Client.GetKeyBackupLatestVersion(ctx)
	if errors.Is(err, mautrix.MNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if v.Algorithm != id.KeyBackupAlgorithmMegolmBackupV1 || v.AuthData.PublicKey != backupPublicKey(bk) {
		return nil, nil // another client's backup, whose key we lack: a new one replaces it
	}
	return &keyBackup{key: bk, version: v.Version}, nil
}

// makeBackup makes a backup key, keeps it in secret storage (first: a
// crash leaves no backup without its key), and creates the backup
// version, its auth_data signed by the master key and the device.
func makeBackup(ctx context.Context, mach *crypto.OlmMachine, key *ssss.Key) (*keyBackup, error) {
	bk, err := backup.NewMegolmBackupKey()
	if err != nil {
		return nil, err
	}
	if err := mach.SSSS.SetEncryptedAccountData(ctx, event.AccountDataMegolmBackupKey, bk.Bytes(), key); err != nil {
		return nil, fmt.Errorf("storing the backup key in secret storage: %w", err)
	}
	auth := backup.MegolmAuthData{PublicKey: backupPublicKey(bk)}
	user := mach.Client.UserID
	master := mach.CrossSigningKeys.MasterKey
	msig, err := master.SignJSON(auth)
	if err != nil {
		return nil, err
	}
	dsig, err := mach.GetAccount().SignJSON(auth)
	if err != nil {
		return nil, err
	}
	auth.Signatures = signatures.NewSingleSignature(user, id.KeyAlgorithmEd25519, master.PublicKey().String(), msig)
	auth.Signatures[user][id.NewKeyID(id.KeyAlgorithmEd25519, mach.Client.DeviceID.String())] = dsig
	resp, err := mach.Client.CreateKeyBackupVersion(ctx, &mautrix.ReqRoomKeysVersionCreate[backup.MegolmAuthData]{
		Algorithm: id.KeyBackupAlgorithmMegolmBackupV1, AuthData: auth})
	if err != nil {
		return nil, fmt.Errorf("creating the key backup: %w", err)
	}
	return &keyBackup{key: bk, version: resp.Version}, nil
}

func backupPublicKey(bk *backup.MegolmBackupKey) id.Ed25519 {
	return id.Ed25519(base64.RawStdEncoding.EncodeToString(bk.PublicKey().Bytes()))
}

// backUp uploads the device's Megolm sessions not in the backup yet and
// marks them backed up; run after each sync (received keys) so that what
// the device can read, a restored device can too.
func (e *e2ee) backUp(ctx context.Context) error {
	e.mu.Lock()
	kb := e.backup
	e.mu.Unlock()
	if kb == nil {
		return nil
	}
	store, ok := e.mach.CryptoStore.(*crypto.SQLCryptoStore)
	if !ok {
		return nil
	}
	sessions, err := store.GetGroupSessionsWithoutKeyBackupVersion(ctx, kb.version).AsList()
	if err != nil {
		return err
	}
	for len(sessions) > 0 {
		n := min(len(sessions), backupBatch)
		req := &mautrix.ReqKeyBackup{Rooms: map[id.RoomID]mautrix.ReqRoomKeyBackup{}}
		for _, s := range sessions[:n] {
			data, err := backupData(kb, s)
			if err != nil {
				return err
			}
			r, ok := req.Rooms[s.RoomID]
			if !ok {
				r = mautrix.ReqRoomKeyBackup{Sessions: map[id.SessionID]mautrix.ReqKeyBackupData{}}
				req.Rooms[s.RoomID] = r
			}
			r.Sessions[s.ID()] = data
		}
		if _, err := e.mach.Client.PutKeysInBackup(ctx, kb.version, req); err != nil {
			return fmt.Errorf("uploading %d session keys to the key backup: %w", n, err)
		}
		for _, s := range sessions[:n] {
			if err := store.SetGroupSessionKeyBackupVersion(ctx, s.ID(), kb.version); err != nil {
				return err
			}
		}
		sessions = sessions[n:]
	}
	return nil
}

// backupData is session s encrypted for the backup.
func backupData(kb *keyBackup, s *crypto.InboundGroupSession) (mautrix.ReqKeyBackupData, error) {
	first := s.Internal.FirstKnownIndex()
	exported, err := s.Internal.Export(first)
	if err != nil {
		return mautrix.ReqKeyBackupData{}, err
	}
	enc, err := backup.EncryptSessionData(kb.key, backup.MegolmSessionData{
		Algorithm:          id.AlgorithmMegolmV1,
		ForwardingKeyChain: s.ForwardingChains,
		SenderClaimedKeys:  backup.SenderClaimedKeys{Ed25519: s.SigningKey},
		SenderKey:          s.SenderKey,
		SessionKey:         string(exported),
		SharedHistory:      s.SharedHistory,
	})
	if err != nil {
		return mautrix.ReqKeyBackupData{}, err
	}
	js, err := json.Marshal(enc)
	if err != nil {
		return mautrix.ReqKeyBackupData{}, err
	}
	return mautrix.ReqKeyBackupData{FirstMessageIndex: int(first), ForwardedCount: len(s.ForwardingChains), SessionData: js}, nil
}
