package core

import (
	"context"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pairing"
)

// pairingAPI is the host's pairing lifecycle; by is recorded as the
// approver of codes it approves.
func (h *Host) pairingAPI(by string) pairing.API {
	return pairing.API{DB: h.db, By: by, Policy: func() access.Policy { return h.gw.Access().Policy() }, Schedules: h.schedules, Log: h.log.Named("pairing"), Trail: h.db,
		OnApproved: func(ctx context.Context, entry string) { h.gw.PairingApproved(ctx, entry) }}
}

// warnUnhonoured logs, under dm_policy "allowlist", how many approvals
// through pairing are set aside (kept, not honoured).
func (h *Host) warnUnhonoured(ctx context.Context, cfg *config.Config) {
	if cfg.Access.DMPolicy != access.PolicyAllowlist {
		return
	}
	list, err := h.db.ApprovedSenders(ctx, "")
	if err != nil {
		h.log.Warn("listing approved senders failed", "error", err)
		return
	}
	if len(list) > 0 {
		h.log.Warn(`dm_policy is "allowlist": senders approved through pairing are not admitted (their approvals are kept, honoured again under "pairing"); `+
			"`clawhost pairing list -approved` lists them, `clawhost pairing revoke INSTANCE:ID` removes one", "not_honoured", len(list))
	}
}
