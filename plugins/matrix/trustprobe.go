package matrix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/ssss"
	"maunium.net/go/mautrix/crypto/utils"

	"github.com/clawhost/clawhost/sdk/probe"
)

// trustCheck is the probe's cross-signing check, read only: with
// cross-signing keys on the account, whether the recovery key
// (recovery_key, else the file the plugin wrote in dataDir) opens their
// secret storage; without, where the recovery key the plugin makes on its
// first start will be.
func trustCheck(ctx context.Context, cli *mautrix.Client, c Config, dataDir string) probe.Check {
	const name = "cross-signing"
	rk, from := c.RecoveryKey, "recovery_key"
	file := RecoveryKeyFile + " in the plugin's state directory"
	if dataDir != "" {
		file = filepath.Join(dataDir, RecoveryKeyFile)
		if b, err := os.ReadFile(file); rk == "" && err == nil {
			rk, from = strings.TrimSpace(string(b)), file
		}
	}
	master, err := ownMasterKey(ctx, cli)
	if err != nil {
		return probe.Check{Name: name, Verdict: probe.Warn, Found: "the account's cross-signing keys could not be read: " + probeErr(err),
			Do: "check the homeserver and the network, and try again"}
	}
	if master == "" {
		if c.RecoveryKey != "" && utils.DecodeBase58RecoveryKey(c.RecoveryKey) == nil {
			return probe.Check{Name: name, Verdict: probe.Fail, Found: "recovery_key is not a recovery key",
				Do: "give a recovery key (48 base58 letters in groups of four, as Element shows a Security Key), or leave recovery_key empty for the plugin to make one"}
		}
		found := "the account has no cross-signing keys yet: on its first start the plugin makes them and keeps them in secret storage under the recovery key in " + from
		if c.RecoveryKey == "" {
			found = "the account has no cross-signing keys yet: on its first start the plugin makes them, with a recovery key written to " + file + " (0600)"
		}
		if c.Password == "" {
			return probe.Check{Name: name, Verdict: probe.Warn, Found: found,
				Do: "set password too (used for that only): most homeservers ask for the account's password before publishing cross-signing keys, and without them the bot's device stays unverified"}
		}
		return probe.Check{Name: name, Verdict: probe.OK, Found: found + "; keep a copy of it elsewhere"}
	}
	if rk == "" {
		return probe.Check{Name: name, Verdict: probe.Fail, Found: "the account has cross-signing keys and no recovery key is set",
			Do: "set recovery_key to the account's recovery key (Element calls it the Security Key); if it is lost, see docs/matrix.md"}
	}
	if _, err := unlock(ctx, ssss.NewSSSSMachine(cli), rk, from); err != nil {
		var re *recoveryError
		if errors.As(err, &re) {
			return probe.Check{Name: name, Verdict: probe.Fail, Found: re.msg, Do: "set recovery_key to the account's recovery key; if it is lost, see docs/matrix.md"}
		}
		return probe.Check{Name: name, Verdict: probe.Warn, Found: "the account's secret storage could not be read: " + probeErr(err),
			Do: "check the homeserver and the network, and try again"}
	}
	return probe.Check{Name: name, Verdict: probe.OK, Found: "the recovery key in " + from + " opens the account's cross-signing keys (master key " + master.String() + ")"}
}
