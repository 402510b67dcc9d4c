package gateway

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestStaleRepliesAreToldOncePerChat: replies produced before a restart
// and now older than the stale bound are not sent, and each chat is told
// so in one message, however many there were.
func TestStaleRepliesAreToldOncePerChat(t *testing.T) {
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "data"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, body := range []string{"first", "second"} {
		m := message.Message{Instance: "lo", Channel: "loopback", ChatType: channel.ChatDirect, ChatID: "chat-u1", MessageID: body,
			Sender: channel.Sender{ID: "u1"}, From: "lo:u1", Body: body}
		res, err := db.Accept(ctx, store.Inbound{Instance: "lo", ChatID: "chat-u1", MessageID: m.MessageID, Message: message.Encode(&m)})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Start(ctx, res.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordReply(ctx, store.Reply{JournalID: res.ID, Text: "old answer", Chunks: []string{"old answer"}, ProducedAt: time.Now().Add(-time.Hour - time.Duration(i)*time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	_ = db.Close()
	e := newLo(t, loOptions{dir: dir})
	if got := e.text("chat-u1"); got != noticeStale {
		t.Fatalf("got %q, want the stale notice", got)
	}
	e.quiet("chat-u1", dm("u1", "after the restart"))
	e.ports.mu.Lock()
	defer e.ports.mu.Unlock()
	for _, r := range e.ports.sent {
		if strings.Contains(r.Text, "old answer") {
			t.Fatalf("a stale reply was sent: %+v", r)
		}
	}
}
