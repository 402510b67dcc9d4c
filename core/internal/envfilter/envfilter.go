// Package envfilter keeps the host environment variables a child process
// may inherit: the plugin host and the claude runner both start children
// with an allowlist, never with the host's whole environment (secrets such
// as TELEGRAM_BOT_TOKEN stay in the host).
package envfilter

import "strings"

// Keep returns the "NAME=value" entries of env whose name one of allow
// names: an exact name, or a prefix ending in "*" ("LC_*"). Order is kept.
func Keep(env []string, allow ...string) []string {
	var out []string
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && Allowed(name, allow...) {
			out = append(out, kv)
		}
	}
	return out
}

// Allowed reports whether name is in allow (exact, or by a "PREFIX*").
func Allowed(name string, allow ...string) bool {
	for _, a := range allow {
		if a == name || (strings.HasSuffix(a, "*") && strings.HasPrefix(name, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}
