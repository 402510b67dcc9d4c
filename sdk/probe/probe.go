// Package probe is what a plugin's live check reports (sdk.Plugin.Probe):
// who the bot is on the platform and, check by check, what was found and
// what the operator should do about it. `clawhost doctor`, `clawhost init`
// and `clawhost validate -probe` show the report; a plugin written by
// anyone gets the same treatment as the bundled ones.
package probe

import "strings"

// Verdict is the outcome of one Check.
type Verdict string

// The verdicts, from good to bad.
const (
	// OK: nothing to do.
	OK Verdict = "ok"
	// Warn: the channel works, but not fully (a missing optional scope);
	// Do says how to fix it.
	Warn Verdict = "warn"
	// Fail: the channel cannot work until the operator acts (a rejected
	// token, a device not linked); Do says what to do.
	Fail Verdict = "fail"
)

// ParseVerdict reads a verdict from its name. An unknown name is read as
// Warn: something was found that this side cannot judge.
func ParseVerdict(s string) Verdict {
	switch v := Verdict(s); v {
	case OK, Warn, Fail:
		return v
	}
	return Warn
}

// Check is one thing the plugin checked live (credentials, scopes,
// intents, a linked device…).
type Check struct {
	// Name is short, e.g. "token", "scopes", "message content intent".
	Name string
	// Verdict is the outcome.
	Verdict Verdict
	// Found is what was found, one sentence, never a secret.
	Found string
	// Do is what the operator should do when Verdict is not OK.
	Do string
}

// Identity is who the bot is on the platform.
type Identity struct {
	// ID is the platform id of the bot account.
	ID string
	// Handle is the @username or equivalent, "" when none.
	Handle string
	// Name is the display name.
	Name string
	// Link is a link a person uses to reach or add the bot (a Discord
	// invite URL, a t.me link), "" when none.
	Link string
}

// String says who the bot is in a few words, for a person: its handle (else
// its name, else its id) and its link, "@clawbot, https://t.me/clawbot";
// "" when nothing is known.
func (id Identity) String() string {
	var parts []string
	switch {
	case id.Handle != "":
		parts = append(parts, id.Handle)
	case id.Name != "":
		parts = append(parts, id.Name)
	case id.ID != "":
		parts = append(parts, id.ID)
	}
	if id.Link != "" {
		parts = append(parts, id.Link)
	}
	return strings.Join(parts, ", ")
}

// Report is the outcome of a probe.
type Report struct {
	// Identity is who the bot is; zero when the plugin could not learn it
	// (the token was rejected) or the platform has no such notion.
	Identity Identity
	// Checks are the things checked, in the order they were checked.
	Checks []Check
}

// Worst is the worst verdict of the report's checks: OK when it has none.
func (r Report) Worst() Verdict {
	worst := OK
	for _, c := range r.Checks {
		switch c.Verdict {
		case Fail:
			return Fail
		case Warn:
			worst = Warn
		}
	}
	return worst
}
