package matrix

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/crypto/ssss"
	"maunium.net/go/mautrix/crypto/utils"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/status"
)

// RecoveryKeyFile is where, in the plugin's state directory, the recovery
// key the plugin made is written (0600) when the account had no
// cross-signing keys and recovery_key was not set.
const RecoveryKeyFile = "matrix-recovery-key.txt"

// trustTimeout bounds the cross-signing set-up of a login: some twenty
// requests, and a key backup restored (its download) on a new device.
const trustTimeout = 5 * time.Minute

// recoveryError is a recovery key problem only the operator can fix: the
// channel is needs_attention with Error as what to do (like a refused
// token), until Retry.
type recoveryError struct{ msg string }

func (e *recoveryError) Error() string { return e.msg }

// recoveryKey is the configured recovery_key, else the one the plugin
// made before (RecoveryKeyFile), else "". from says which it was.
func (a *Adapter) recoveryKey(dir string) (key, from string, err error) {
	if a.cfg.RecoveryKey != "" {
		return a.cfg.RecoveryKey, "recovery_key", nil
	}
	path := filepath.Join(dir, RecoveryKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	return strings.TrimSpace(string(b)), path, nil
}

// trust gives the device the account's cross-signing identity and signs
// the device with it, so that other users' clients see it verified by its
// owner; it also sets up the key backup (backup.go). With cross-signing
// keys on the account, their private halves are fetched from secret
// storage with the recovery key; without, the plugin makes them, keeps
// them in secret storage under the recovery key (recovery_key, else a new
// one written to RecoveryKeyFile first), and publishes them.
//
// note is a problem that leaves the device working but not cross-signed
// (told in the status); a *recoveryError is one the operator must fix.
func (a *Adapter) trust(ctx context.Context, e *e2ee, dir string) (note string, err error) {
	mach := e.mach
	rk, from, err := a.recoveryKey(dir)
	if err != nil {
		return "", err
	}
	a.keyFile = ""
	published, err := ownMasterKey(ctx, mach.Client)
	if err != nil {
		return "", fmt.Errorf("reading the account's cross-signing keys: %w", err)
	}
	var key *ssss.Key
	if published == "" {
		key, note, err = a.makeCrossSigning(ctx, mach, rk, dir)
		if err != nil || note != "" {
			return note, err
		}
	} else {
		if rk == "" {
			return "", &recoveryError{"the bot's account has cross-signing keys but the plugin has no recovery key to unlock them: set recovery_key = env(\"MATRIX_RECOVERY_KEY\") to the account's recovery key (the plugin wrote the one it made to " + RecoveryKeyFile + " in its state directory; one made in Element is its Security Key), then reload; see docs/matrix.md if it is lost"}
		}
		key, err = unlock(ctx, mach.SSSS, rk, from)
		if err != nil {
			return "", err
		}
		if err := mach.FetchCrossSigningKeysFromSSSS(ctx, key); err != nil {
			return "", &recoveryError{"the cross-signing keys in the account's secret storage cannot be read with the recovery key in " + from + " (" + err.Error() + "): set recovery_key to the account's current recovery key, then reload"}
		}
		if got := mach.CrossSigningKeys.MasterKey.PublicKey(); got != published {
			return "", &recoveryError{"the account's secret storage holds other cross-signing keys than the ones it publishes (reset elsewhere?): set recovery_key to the account's current recovery key, or reset cross-signing (docs/matrix.md), then reload"}
		}
	}
	if err := mach.SignOwnDevice(ctx, mach.OwnIdentity()); err != nil {
		return "", fmt.Errorf("signing the device with the self-signing key: %w", err)
	}
	if err := mach.SignOwnMasterKey(ctx); err != nil {
		return "", fmt.Errorf("signing the master key with the device: %w", err)
	}
	if err := a.startBackup(ctx, e, key); err != nil {
		return "", fmt.Errorf("the key backup: %w", err)
	}
	if a.cfg.RecoveryKey == "" {
		a.keyFile = filepath.Join(dir, RecoveryKeyFile)
	}
	return "", nil
}

// ownMasterKey is the master cross-signing key the homeserver publishes
// for the account; "" when it has none.
func ownMasterKey(ctx context.Context, cli *mautrix.Client) (id.Ed25519, error) {
	resp, err := cli.QueryKeys(ctx, &mautrix.ReqQueryKeys{DeviceKeys: mautrix.DeviceKeysRequest{cli.UserID: {}}})
	if err != nil {
		return "", err
	}
	mk, ok := resp.MasterKeys[cli.UserID]
	if !ok {
		return "", nil
	}
	return mk.FirstKey(), nil
}

// unlock is the secret storage key the recovery key rk (from says where
// it was set) opens: the account's default key, checked against rk.
func unlock(ctx context.Context, sm *ssss.Machine, rk, from string) (*ssss.Key, error) {
	keyID, data, err := sm.GetDefaultKeyData(ctx)
	if errors.Is(err, mautrix.MNotFound) {
		return nil, &recoveryError{"the bot's account has cross-signing keys but no secret storage to fetch them from (set up by a client that did not keep them there): reset cross-signing (docs/matrix.md), then reload"}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the account's secret storage: %w", err)
	}
	key, err := data.VerifyRecoveryKey(keyID, rk)
	switch {
	case errors.Is(err, ssss.ErrInvalidRecoveryKey):
		return nil, &recoveryError{"the recovery key in " + from + " is not a recovery key (48 base58 letters in groups of four, as Element shows a Security Key): set recovery_key to the account's recovery key, then reload"}
	case errors.Is(err, ssss.ErrUnverifiableKey):
		return key, nil // the secrets' own MACs check it
	case err != nil:
		return nil, &recoveryError{"the recovery key in " + from + " is not the account's: it does not open its secret storage (" + err.Error() + "); set recovery_key to the account's current recovery key, then reload"}
	}
	return key, nil
}

// makeCrossSigning makes the account's cross-signing keys and its secret
// storage key (from rk when set, else a new one written to
// RecoveryKeyFile before anything is uploaded: a crash leaves no key only
// the server has), stores the keys in secret storage and publishes them.
func (a *Adapter) makeCrossSigning(ctx context.Context, mach *crypto.OlmMachine, rk, dir string) (*ssss.Key, string, error) {
	var key *ssss.Key
	var err error
	if rk != "" {
		b := utils.DecodeBase58RecoveryKey(rk)
		if b == nil {
			return nil, "", &recoveryError{"recovery_key is not a recovery key (48 base58 letters in groups of four, as Element shows a Security Key): set it to a recovery key, or leave it empty for the plugin to make one, then reload"}
		}
		key, err = ssss.WrapKey(b, nil)
	} else {
		key, err = ssss.NewKey("")
		if err == nil {
			err = writeDurable(filepath.Join(dir, RecoveryKeyFile), []byte(key.RecoveryKey()+"\n"))
		}
	}
	if err != nil {
		return nil, "", err
	}
	if err := mach.SSSS.SetKeyData(ctx, key.ID, key.Metadata); err != nil {
		return nil, "", fmt.Errorf("storing the secret storage key: %w", err)
	}
	keys, err := mach.GenerateCrossSigningKeys()
	if err != nil {
		return nil, "", err
	}
	if err := mach.UploadCrossSigningKeysToSSSS(ctx, key, keys); err != nil {
		return nil, "", fmt.Errorf("storing the cross-signing keys in secret storage: %w", err)
	}
	var uia mautrix.UIACallback
	if a.cfg.Password != "" {
		uia = func(r *mautrix.RespUserInteractive) any {
			return &mautrix.ReqUIAuthLogin{BaseAuthData: mautrix.BaseAuthData{Type: mautrix.AuthTypePassword, Session: r.Session},
				User: a.cfg.UserID, Password: a.cfg.Password}
		}
	}
	if err := mach.PublishCrossSigningKeys(ctx, keys, uia); err != nil {
		var he mautrix.HTTPError
		if errors.As(err, &he) && he.IsStatus(401) && a.cfg.Password == "" {
			return nil, "the device is not cross-signed: the homeserver wants the account's password to publish cross-signing keys; set password = env(\"MATRIX_PASSWORD\") beside access_token (it is used for that only), or set up cross-signing in Element as the bot and set recovery_key to its Security Key", nil
		}
		return nil, "", fmt.Errorf("publishing the cross-signing keys: %w", err)
	}
	if err := mach.SSSS.SetDefaultKeyID(ctx, key.ID); err != nil {
		return nil, "", fmt.Errorf("marking the secret storage key as the default: %w", err)
	}
	if rk == "" {
		a.log.Info("made the bot's cross-signing keys; keep a copy of the recovery key the plugin wrote and set it as recovery_key", "file", filepath.Join(dir, RecoveryKeyFile))
	} else {
		a.log.Info("made the bot's cross-signing keys under the configured recovery_key")
	}
	return key, "", nil
}

// writeDurable writes b to path (0600) durably: a temporary file, fsynced,
// renamed over path. The state file and the recovery key are written so.
func writeDurable(path string, b []byte) error {
	tmp := path + ".tmp"
	fh, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := fh.Write(b); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return err
	}
	if err := fh.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// crossSign runs trust on the device just started: a recovery key problem
// closes it and is returned (needs_attention); another failure leaves the
// device working, not cross-signed, and is told in the status until the
// next login tries again.
func (a *Adapter) crossSign(ctx context.Context, e *e2ee) error {
	tctx, cancel := context.WithTimeout(ctx, trustTimeout)
	note, err := a.trust(tctx, e, a.st.dir)
	cancel()
	var re *recoveryError
	if errors.As(err, &re) || (err != nil && ctx.Err() != nil) {
		e.db.Close()
		return err
	}
	a.noTrust, a.trustFailed = note, err != nil
	if err != nil {
		a.log.Error("the device is not cross-signed", "err", err)
		a.noTrust = "the device is not cross-signed (" + err.Error() + "); tried again at the next reconnect"
	}
	return nil
}

// reportSyncing is the status once logged in: ready, or degraded when
// encryption is off or cross-signing failed; a device not cross-signed
// for want of a setting is ready with what to set.
func (a *Adapter) reportSyncing() {
	msg, state := "syncing as "+a.cfg.UserID, status.Ready
	if a.noCrypto != "" {
		msg, state = msg+"; "+a.noCrypto, status.Degraded
	} else if a.noTrust != "" {
		msg += "; " + a.noTrust
		if a.trustFailed {
			state = status.Degraded
		}
	} else if a.backupErr != "" {
		msg, state = msg+"; the room keys could not be backed up ("+a.backupErr+"): a new device of the bot could not read the messages they open; tried again after each sync", status.Degraded
	} else if a.keyFile != "" {
		msg += "; the device is cross-signed with the recovery key in " + a.keyFile + ": keep a copy elsewhere (with it a new device verifies itself and reads the key backup)"
	}
	a.status.Report(status.Status{State: state, Message: msg})
}

// noteBackup is told how the key backup after a sync went: the status
// turns degraded when it starts failing and ready again when it works.
func (a *Adapter) noteBackup(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if (msg == "") == (a.backupErr == "") {
		a.backupErr = msg
		return
	}
	a.backupErr = msg
	a.reportSyncing()
}
