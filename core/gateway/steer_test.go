package gateway

import (
	"context"
	"testing"

	"github.com/clawhost/clawhost/core/message"
)

// TestSteeredMessageEndsWithTheReply: a message steered into the running
// turn is answered by its reply, and the journal says so once the reply
// is out; left in processing, a restart would recover it and answer it a
// second time.
func TestSteeredMessageEndsWithTheReply(t *testing.T) {
	t.Parallel()
	g, _ := steerOne(t)
	ctx := context.Background()
	open, err := g.store.ListUnfinished(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range open {
		m, _ := message.Decode(e.Message)
		if m.Body == "also this" {
			t.Errorf("the steered message is %s after the reply that answers it", e.State)
		}
	}
}
