package chunk

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
