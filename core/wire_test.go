package core

import (
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/queue"
)

// TestQueueEnumsMatch: every queue mode and drop policy the configuration
// accepts is one the queue knows.
func TestQueueEnumsMatch(t *testing.T) {
	t.Parallel()
	for _, m := range config.QueueModes {
		if _, err := queue.ParseMode(m); err != nil {
			t.Errorf("config accepts queue mode %q: %v", m, err)
		}
	}
	for _, d := range config.QueueDrops {
		if _, err := queue.ParseDrop(d); err != nil {
			t.Errorf("config accepts drop policy %q: %v", d, err)
		}
	}
}
