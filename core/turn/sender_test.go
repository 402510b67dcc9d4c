package turn

import (
	"testing"

	"github.com/clawhost/clawhost/core/message"
)

// TestSenderOf pins how the usage ledger and the budgets name who started a
// turn: the person, the heartbeat, or the schedule by its name.
func TestSenderOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		m    message.Message
		want string
	}{
		{"a person", message.Message{From: "tg:42"}, "tg:42"},
		{"the heartbeat", message.Message{From: "tg:42", Scheduled: HeartbeatJob}, "heartbeat"},
		{"a schedule", message.Message{From: "tg:42", Scheduled: "standup"}, "schedule:standup"},
		{"a schedule without a sender", message.Message{Scheduled: "digest"}, "schedule:digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := SenderOf(&tc.m); got != tc.want {
				t.Errorf("SenderOf = %q, want %q", got, tc.want)
			}
		})
	}
}
