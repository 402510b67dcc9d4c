package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"maunium.net/go/mautrix/crypto"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/core/anthropictest"
	ce2e "github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/plugins/matrix"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// botTrust is how Alice's device (mach) sees the bot's devices with keys
// after fetching them afresh, and the master key it sees.
func botTrust(t *testing.T, mach *crypto.OlmMachine, bot id.UserID) (map[id.DeviceID]id.TrustState, id.Ed25519) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	devs, err := mach.FetchKeys(ctx, []id.UserID{bot}, true)
	if err != nil {
		t.Fatal(err)
	}
	out := map[id.DeviceID]id.TrustState{}
	for dev, d := range devs[bot] {
		if out[dev], err = mach.ResolveTrustContext(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := mach.CryptoStore.GetCrossSigningKeys(ctx, bot)
	if err != nil {
		t.Fatal(err)
	}
	return out, keys[id.XSUsageMaster].Key
}

// TestMatrixDeviceCrossSigned: through the real binary, the bot's device
// is cross-signed (Alice's client sees it signed by the bot's
// self-signing key), the recovery key it was made with is a 0600 file in
// the plugin's data directory, and after a kill -9 and a restart the
// device and its cross-signing identity are the same.
func TestMatrixDeviceCrossSigned(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, mach := aliceDevice(t, ctx, e)
	var before map[id.DeviceID]id.TrustState
	var master id.Ed25519
	sdktest.WaitFor(t, "Alice to see the bot's device cross-signed", func() bool {
		before, master = botTrust(t, mach, e.bot.UserID)
		return len(before) == 1 && master != "" && func() bool {
			for _, tr := range before {
				return tr == id.TrustStateCrossSignedTOFU
			}
			return false
		}()
	})
	keyFiles, _ := filepath.Glob(filepath.Join(e.d.Dir(), "data", "plugins", "*", matrix.RecoveryKeyFile))
	if len(keyFiles) != 1 {
		t.Fatalf("recovery key files: %v", keyFiles)
	}
	if fi, err := os.Stat(keyFiles[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, want mode 0600", keyFiles[0], err)
	}

	p := e.d.Process()
	_ = p.Kill()
	_, _ = p.Wait()
	e.d = ce2e.Launch(t, e.cfgPath)
	// An answer after the restart: the plugin logged in again (its
	// cross-signing set up before its first sync).
	e.fake.Enqueue(anthropictest.Reply{Text: "Back again."})
	send(t, e.alice, e.dm, text("are you back?"))
	e.waitBot(t, e.aw, e.dm, "the answer after the restart", contains("Back again."))
	after, master2 := botTrust(t, mach, e.bot.UserID)
	if master2 != master {
		t.Errorf("the restart changed the bot's master key: %s, was %s", master2, master)
	}
	for dev, tr := range after {
		if _, ok := before[dev]; !ok || tr != id.TrustStateCrossSignedTOFU {
			t.Errorf("after the restart the bot's device %s is %s (devices before: %v)", dev, tr, before)
		}
	}
}
