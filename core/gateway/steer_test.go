package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestSteeredMessageEndsWithTheReply: a message steered into the running
// turn is answered by its reply, and the journal says so once the reply
// is out; left in processing, a restart would recover it and answer it a
// second time.
func TestSteeredMessageEndsWithTheReply(t *testing.T) {
	t.Parallel()
	g, ports, agent := inproc(t, func(s *Settings) { s.QueuedNotice, s.Queue.Mode = true, queue.Steer })
	agent.mu.Lock()
	agent.steer = true
	agent.mu.Unlock()
	ctx := context.Background()
	if err := g.Inbound(ctx, "tg", []channel.InboundMessage{dmFrom("5", "first hold")}); err != nil {
		t.Fatal(err)
	}
	<-agent.held
	if err := g.Inbound(ctx, "tg", []channel.InboundMessage{dmFrom("5", "also this")}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	if got := ports.next(t, "5", &seen); got != "Seen: added to the answer being written." {
		t.Fatalf("notice %q, want the message steered", got)
	}
	close(agent.release)
	if got := ports.next(t, "5", &seen); !strings.Contains(got, "first hold") {
		t.Fatalf("reply %q", got)
	}
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
