package core

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/store/sqlite/sqlitetest"
	"github.com/hashicorp/go-hclog"
)

// TestAllowlistWarnsAboutApprovals: under dm_policy "allowlist" the start
// says, once, how many approvals are not honoured; under "pairing" it is
// silent.
func TestAllowlistWarnsAboutApprovals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := sqlitetest.Open(t, filepath.Join(dir, "db"), sqlite.Options{})
	ctx := context.Background()
	for _, id := range []string{"5", "6"} {
		r, _ := db.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: id})
		if _, err := db.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code}); err != nil {
			t.Fatal(err)
		}
	}
	for policy, want := range map[string]string{"allowlist": "[WARN]  dm_policy is \"allowlist\"", "pairing": ""} {
		var logs strings.Builder
		h := &Host{db: db, log: hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: &logs})}
		h.warnUnhonoured(ctx, &config.Config{Access: &config.Access{DMPolicy: policy}})
		if want == "" && logs.Len() > 0 || want != "" && (!strings.Contains(logs.String(), want) || !strings.Contains(logs.String(), "not_honoured=2")) {
			t.Errorf("%s: log %q", policy, logs.String())
		}
	}
}
