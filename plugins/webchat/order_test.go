package webchat_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestLongReplyPartsArriveInOrder: a long reply the host split into parts
// at MaxTextLength reaches the page part by part in the order sent, with
// consecutive sequence numbers, and a reconnect replays it in that order.
func TestLongReplyPartsArriveInOrder(t *testing.T) {
	t.Parallel()
	r := start(t, setup{dataDir: t.TempDir()})
	ctx := testCtx(t)
	c, hello := connect(t, ctx, r.Link())
	const parts = 8
	var ids []string
	for i := range parts {
		head := fmt.Sprintf("part %d ", i)
		text := head + strings.Repeat("x", webchat.MaxTextLength-len(head))
		res, err := r.Send(ctx, channel.SendRequest{ChatID: c.SenderID(), Text: text, Format: channel.FormatMarkdown})
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		ids = append(ids, res.MessageIDs[0])
	}
	seq := hello.Seq
	for i := range parts {
		ev := nextOf(t, ctx, c, webchat.EventMessage)
		if ev.Seq != seq+1 || ev.Message.ID != ids[i] || !strings.Contains(ev.Message.HTML, fmt.Sprintf("part %d ", i)) {
			t.Fatalf("event %d: seq %d (want %d), id %s (want %s)", i, ev.Seq, seq+1, ev.Message.ID, ids[i])
		}
		seq = ev.Seq
	}
	again, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.History) != parts || again.Seq != seq {
		t.Fatalf("replay: %d messages, seq %d; want %d, %d", len(again.History), again.Seq, parts, seq)
	}
	for i, m := range again.History {
		if m.ID != ids[i] || (i > 0 && m.Seq <= again.History[i-1].Seq) {
			t.Fatalf("replay out of order at %d: %+v", i, m)
		}
	}
}

// TestReplyAfterRestartBeforeReconnect: a reply to a conversation the
// restarted plugin does not know yet (its history was not written before a
// kill -9) is kept and shown when the page reconnects; ids that are not
// webchat sender ids are still refused.
func TestReplyAfterRestartBeforeReconnect(t *testing.T) {
	t.Parallel()
	r := start(t, setup{dataDir: t.TempDir()})
	ctx := testCtx(t)
	const cookie = "00112233445566778899aabbccddeeff"
	chat := webchat.SenderID(cookie)
	res, err := r.Send(ctx, channel.SendRequest{ChatID: chat, Text: "kept for you"})
	if err != nil {
		t.Fatalf("send to a well-formed id not yet connected: %v", err)
	}
	for _, bad := range []string{"web-nobody", "web-0011223344556677x", "web-00112233445566GG", "tg-0011223344556677", ""} {
		if _, err := r.Send(ctx, channel.SendRequest{ChatID: bad, Text: "x"}); channel.CodeOf(err) != channel.CodeChatNotFound {
			t.Errorf("send to %q: %v, want chat not found", bad, err)
		}
	}
	c, hello := connectAs(t, ctx, r.Link(), cookie)
	if c.SenderID() != chat {
		t.Fatalf("sender id %s, want %s", c.SenderID(), chat)
	}
	if len(hello.History) != 1 || hello.History[0].ID != res.MessageIDs[0] || !strings.Contains(hello.History[0].HTML, "kept for you") {
		t.Fatalf("hello history %+v", hello.History)
	}
}

// connectAs is a browser whose identity cookie is cookie, with an open
// socket.
func connectAs(t *testing.T, ctx context.Context, pageURL, cookie string) (*webchattest.Client, webchat.Event) {
	t.Helper()
	c, err := webchattest.NewClient(ctx, pageURL)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	c.HTTP.Jar.SetCookies(u, []*http.Cookie{{Name: webchat.IdentityCookie, Value: cookie, Path: "/"}})
	hello, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, hello
}
