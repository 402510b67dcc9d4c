package session

import (
	"strings"
	"unicode"
)

// PlanFeedback is a plan sent back to claude with Keep planning.
//
// The next message of From in the chat — of a journal entry after Entry,
// the entry whose turn asked — is the feedback on the plan: its turn runs
// in plan mode and claude reads it labelled as that feedback. The turn
// that carried it clears it in its session update (the one that records
// the reply), so a crash before then runs it again as feedback, and a
// crash after never labels a later message.
type PlanFeedback struct {
	// From is who sent the plan back ("<instance>:<sender id>").
	From string `json:"from"`
	// Entry is the journal entry of the turn whose plan was sent back.
	Entry int64 `json:"entry"`
}

// FeedbackOf reports whether the message from, of journal entry entry, is
// the feedback on a plan sent back.
func (m *Meta) FeedbackOf(entry int64, from string) bool {
	f := m.PlanFeedback
	return f != nil && from != "" && f.From == from && entry > f.Entry
}

// PlanCommand is the built-in that runs its text as a turn in plan mode.
const PlanCommand = "plan"

// SplitPlan cuts "/plan <text>" (the /plan built-in, or the same at the
// start of a message as an inline directive) into the text that runs as a
// turn in plan mode. ok is false for any other message and for /plan
// alone (answered without claude).
func SplitPlan(text string) (rest string, ok bool) {
	t := strings.TrimSpace(text)
	if len(t) < 5 || !strings.EqualFold(t[:5], "/"+PlanCommand) {
		return "", false
	}
	after := t[5:]
	if after == "" {
		return "", false
	}
	if after[0] == ':' {
		after = after[1:]
	} else if r := rune(after[0]); !unicode.IsSpace(r) {
		return "", false // "/planets", "/plan@bot…" is the channel's to strip
	}
	rest = strings.TrimSpace(after)
	return rest, rest != ""
}
