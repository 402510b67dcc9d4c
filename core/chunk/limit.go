package chunk

import "strings"

// ChannelLimits is the chunk-limit configuration of one channel instance.
// Values <= 0 mean "not set".
type ChannelLimits struct {
	// TextChunkLimit applies to every account of the channel.
	TextChunkLimit int
	// Accounts holds per-account overrides keyed by account id; keys match
	// case-insensitively.
	Accounts map[string]int
}

// DefaultAccountID is the account id assumed when none is given.
const DefaultAccountID = "default"

// ResolveLimit returns the configured chunk limit (OpenClaw's
// resolveTextChunkLimit): the account override, else the channel value, else
// fallback, else [DefaultLimit]. cfg may be nil (nothing configured; OpenClaw
// also ignores configuration for the internal webchat surface, which callers
// express by passing nil). An empty accountID means [DefaultAccountID].
func ResolveLimit(cfg *ChannelLimits, accountID string, fallback int) int {
	if fallback <= 0 {
		fallback = DefaultLimit
	}
	if cfg == nil {
		return fallback
	}
	id := strings.ToLower(strings.TrimSpace(accountID))
	if id == "" {
		id = DefaultAccountID
	}
	configured, found := 0, false
	if v, ok := cfg.Accounts[id]; ok {
		configured, found = v, true
	} else {
		for k, v := range cfg.Accounts {
			if strings.EqualFold(k, id) {
				configured, found = v, true
				break
			}
		}
	}
	if !found {
		configured = cfg.TextChunkLimit
	}
	if configured > 0 {
		return configured
	}
	return fallback
}

// CapLimit returns the effective chunk limit for a channel: the configured
// limit, but never more than the channel's platform capability (for example
// Telegram's 4000, Discord's 2000). A capability <= 0 means "no cap"; a
// configured value <= 0 means "use the capability".
func CapLimit(configured, capability int) int {
	switch {
	case capability <= 0:
		return configured
	case configured <= 0:
		return capability
	default:
		return min(configured, capability)
	}
}
