package discord

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// TestReconnectOp7: after op 7 the plugin resumes (no new IDENTIFY) and a
// message dispatched during the gap arrives exactly once.
func TestReconnectOp7(t *testing.T) {
	srv, dm, a := aliceDM(t)
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "before"})
	inbox.Wait(t, 1)
	start := time.Now()
	srv.Reconnect()
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "during the gap"})
	waitLive(t, srv, 2)
	t.Logf("op 7 → resumed in %v", time.Since(start))
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "after"})
	// Delivery is in order: a duplicate would come before "after".
	inbox.Wait(t, 3)
	if got := strings.Join(text(inbox.Stored()), ","); got != "before,during the gap,after" {
		t.Errorf("delivered %q", got)
	}
	if srv.Identifies() != 1 || srv.Resumes() != 1 {
		t.Errorf("%d identifies, %d resumes; want 1 and 1", srv.Identifies(), srv.Resumes())
	}
}

// TestInvalidSession: op 9 resumable → RESUME; not resumable → a new
// IDENTIFY, and messages written meanwhile are read back from history.
func TestInvalidSession(t *testing.T) {
	srv, dm, a := aliceDM(t)
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "one"})
	inbox.Wait(t, 1)
	srv.InvalidSession(true)
	waitLive(t, srv, 2)
	if srv.Resumes() != 1 {
		t.Fatalf("resumable op 9: %d resumes", srv.Resumes())
	}
	srv.InvalidSession(false)
	// Lost: no session to dispatch into; only the history has it.
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "two"})
	waitLive(t, srv, 3)
	if srv.Identifies() != 2 {
		t.Fatalf("non-resumable op 9: %d identifies, want 2", srv.Identifies())
	}
	inbox.Wait(t, 2)
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "three"})
	inbox.Wait(t, 3)
	if got := strings.Join(text(inbox.Stored()), ","); got != "one,two,three" {
		t.Errorf("delivered %q", got)
	}
}

// TestRestart: a stopped plugin (its state in the data dir) resumes the
// session on start, so a message sent while it was down arrives; a message
// the host had not stored is delivered by the next process; when Discord
// forgot the session, the channel is read back from its history.
func TestRestart(t *testing.T) {
	srv := newServer(t)
	dm := srv.AddDM(alice)
	dir := t.TempDir()

	// 1. The host never stores "unstored": the plugin stops with it pending.
	a := newAdapter(t, srv, dir, nil)
	inbox := &sdktest.Inbox{}
	inbox.Decide = func(ctx context.Context, call int, msgs []channel.InboundMessage) error {
		if msgs[len(msgs)-1].Text == "unstored" {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	stop := a.runLive(t, inbox)
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "stored"})
	inbox.Wait(t, 1)
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "unstored"})
	sdktest.WaitFor(t, "the delivery attempt", func() bool { return inbox.Calls() >= 2 })
	stop()
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "while down"})

	// 2. A new process with the same data dir resumes.
	b := newAdapter(t, srv, dir, nil)
	inbox2 := &sdktest.Inbox{}
	stop2 := b.run(t, inbox2)
	inbox2.Wait(t, 2)
	if got := strings.Join(text(inbox2.Stored()), ","); got != "unstored,while down" {
		t.Errorf("after restart delivered %q", got)
	}
	if srv.Identifies() != 1 || srv.Resumes() != 1 {
		t.Errorf("%d identifies, %d resumes; want the session resumed", srv.Identifies(), srv.Resumes())
	}
	stop2()

	// 3. Discord forgot the session while the plugin was down.
	srv.DropSession()
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "forgotten session"})
	c := newAdapter(t, srv, dir, nil)
	inbox3 := &sdktest.Inbox{}
	c.run(t, inbox3)
	inbox3.Wait(t, 1)
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "live again"})
	inbox3.Wait(t, 2)
	if got := strings.Join(text(inbox3.Stored()), ","); got != "forgotten session,live again" {
		t.Errorf("after a lost session delivered %q, want the read-back message only", got)
	}
}

// TestFatalClose: a close code only a person can fix reports
// needs_attention with what to do, and the plugin does not identify again
// until Retry.
func TestFatalClose(t *testing.T) {
	cases := []struct {
		name  string
		setup func(srv *discordtest.Server)
		token string
		want  string
		retry bool
	}{
		{name: "4014 message content", setup: func(srv *discordtest.Server) { srv.SetMessageContentAllowed(false) },
			want: "enable it in the Developer Portal (Bot → Privileged Gateway Intents → Message Content Intent), or set message_content = false", retry: true},
		{name: "bad token", token: "WRONG.token.x", want: "rejected the bot token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			if c.setup != nil {
				c.setup(srv)
			}
			extra := map[string]any{}
			if c.token != "" {
				extra["token"] = c.token
			}
			a := newAdapter(t, srv, "", extra)
			// Backoff without waiting: a plugin that reconnected after a
			// fatal code would identify many times in the window below.
			a.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
			a.run(t, &sdktest.Inbox{})
			sdktest.WaitFor(t, "needs_attention", func() bool { return a.reports.Last().State == status.NeedsAttention })
			st := a.reports.Last()
			if !strings.Contains(st.Message, c.want) || st.Attention == nil || st.Attention.Kind != status.Link {
				t.Errorf("status %+v, want a link and %q", st, c.want)
			}
			if strings.Contains(st.Message, testToken) || strings.Contains(a.logs.String(), testToken) {
				t.Errorf("the token leaked into the status or log")
			}
			n := srv.Identifies()
			time.Sleep(100 * time.Millisecond) // a process-level observation window
			if srv.Identifies() != n || len(srv.Requests(discordtest.RouteGateway)) > 1 {
				t.Errorf("connected again without Retry: %d identifies, %d gateway lookups", srv.Identifies(), len(srv.Requests(discordtest.RouteGateway)))
			}
			if c.retry {
				if st.Attention.Retry == "" {
					t.Errorf("no retry offered")
				}
				srv.SetMessageContentAllowed(true)
				if err := a.Retry(context.Background()); err != nil {
					t.Fatal(err)
				}
				sdktest.WaitFor(t, "ready after retry", func() bool { return a.reports.Last().State == status.Ready })
			}
		})
	}
}

// TestFatalCloseDuringSession: 4004 on a live connection (token reset in
// the portal) is fatal too.
func TestFatalCloseDuringSession(t *testing.T) {
	srv := newServer(t)
	a := newAdapter(t, srv, "", nil)
	a.runLive(t, &sdktest.Inbox{})
	srv.CloseGateway(4004, "Authentication failed.")
	sdktest.WaitFor(t, "needs_attention", func() bool { return a.reports.Last().State == status.NeedsAttention })
	if hs := srv.Identifies() + srv.Resumes(); hs != 1 {
		t.Errorf("%d handshakes after 4004, want no new one", hs)
	}
}

// TestFatalCloseCodes: every other close code Discord documents as "do
// not reconnect" (4010–4013) ends the same way as 4004: needs_attention
// with the reason, and no new handshake.
func TestFatalCloseCodes(t *testing.T) {
	for code, want := range map[int]string{
		4010: "4010 Invalid shard",
		4011: "4011 Sharding required",
		4012: "4012 Invalid API version",
		4013: "4013 Invalid intent(s)",
	} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			a := newAdapter(t, srv, "", nil)
			a.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
			a.runLive(t, &sdktest.Inbox{})
			srv.CloseGateway(code, "closed by the test")
			sdktest.WaitFor(t, "needs_attention", func() bool { return a.reports.Last().State == status.NeedsAttention })
			if st := a.reports.Last(); !strings.Contains(st.Message, want) {
				t.Errorf("status %q, want %q", st.Message, want)
			}
			n := srv.Identifies() + srv.Resumes()
			time.Sleep(100 * time.Millisecond) // a process-level observation window
			if hs := srv.Identifies() + srv.Resumes(); hs != 1 || hs != n {
				t.Errorf("%d handshakes after %d, want no new one", hs, code)
			}
		})
	}
}

// TestHeartbeat: heartbeats are sent at the interval; a connection whose
// beats are not acknowledged is left and resumed.
func TestHeartbeat(t *testing.T) {
	srv := newServer(t)
	srv.SetHeartbeatInterval(30 * time.Millisecond)
	a := newAdapter(t, srv, "", nil)
	a.runLive(t, &sdktest.Inbox{})
	sdktest.WaitFor(t, "heartbeats", func() bool { return srv.Heartbeats() >= 3 })
	srv.SetHeartbeatAcks(false)
	sdktest.WaitFor(t, "a resume after missing acks", func() bool { return srv.Resumes() >= 1 })
	if srv.Identifies() != 1 {
		t.Errorf("%d identifies", srv.Identifies())
	}
}

// TestIdentifySpaced: a session Discord invalidates twice in a row is
// identified anew each time no sooner than identifyGap after the previous
// IDENTIFY (Discord allows one per 5 s and 1000 a day); the wait is asked
// of the injected clock, which the fake sleep advances.
func TestIdentifySpaced(t *testing.T) {
	srv := newServer(t)
	a := newAdapter(t, srv, "", nil)
	a.identifyGap = 5 * time.Second
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	var waits []time.Duration
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		now = now.Add(d)
		mu.Unlock()
		return ctx.Err()
	}
	a.runLive(t, &sdktest.Inbox{})
	for i := 2; i <= 3; i++ {
		srv.InvalidSession(false)
		waitLive(t, srv, i)
	}
	if srv.Identifies() != 3 {
		t.Fatalf("%d identifies, want 3", srv.Identifies())
	}
	mu.Lock()
	defer mu.Unlock()
	spaced := 0
	for _, d := range waits {
		if d >= a.identifyGap-time.Second && d <= a.identifyGap {
			spaced++
		}
	}
	if spaced != 2 {
		t.Errorf("waits %v: want one of about %v before each of the 2 new IDENTIFYs", waits, a.identifyGap)
	}
}
