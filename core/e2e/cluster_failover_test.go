package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// Issue 85: what a failover campaign against docs/cluster.md found. Three
// real hosts on the real PostgreSQL, the fake Bot API, the fake claude
// logging when it reads its prompt.

// waitHosts waits until n host leases are live.
func (c *cluster) waitHosts(n int) {
	c.t.Helper()
	sdktest.WaitFor(c.t, fmt.Sprintf("%d live hosts", n), func() error {
		ls, err := c.db.ListLeases(context.Background(), store.HostLeasePrefix)
		live := 0
		for _, l := range ls {
			if l.Live(time.Now()) {
				live++
			}
		}
		return sdktest.Saw(err == nil && live == n, "%d live host leases (%v)", live, err)
	})
}

// shown counts the bot's messages in chat whose last content contains s.
func (c *cluster) shown(chat int64, s string) int {
	last := map[int]string{}
	for _, m := range c.tg.Sent() {
		if m.ChatID == strconv.FormatInt(chat, 10) && (m.Method == "sendMessage" || m.Method == "editMessageText") {
			last[m.MessageID] = m.Visible
		}
	}
	n := 0
	for _, v := range last {
		if strings.Contains(v, s) {
			n++
		}
	}
	return n
}

// promptReads counts the turns the fake claude started (read the prompt
// of) for mark, from its run log.
func promptReads(t *testing.T, runLog, mark string) int {
	t.Helper()
	b, err := os.ReadFile(runLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		var ev fakeclaude.RunEvent
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Event == "start" && strings.Contains(strings.Join(ev.Marks, " "), mark) {
			n++
		}
	}
	return n
}

// TestClusterLaunchKilledBeforeThePromptIsNotARun: a message's turn is
// started and its claude launched twice, each time on a host killed with
// -9 before claude read the prompt (the fake waits on a file before it
// reads stdin). Neither launch ran anything: the message is not given up
// ("the gateway restarted twice"), its third launch answers it, and
// claude read its prompt once.
func TestClusterLaunchKilledBeforeThePromptIsNotARun(t *testing.T) {
	dir := t.TempDir()
	runLog, hold := filepath.Join(dir, "runs.jsonl"), filepath.Join(dir, "hold")
	c := startClusterWith(t, func(h *Host) {
		h.Agent = Agent{Env: map[string]string{fakeclaude.RunLogEnvVar: runLog, fakeclaude.HoldEnvVar: hold}, Attrs: Attrs{"sandbox": "off"}}
	}, "h1", "h2", "h3")
	c.holder()
	c.waitHosts(3)
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	const chat = 5001
	c.tg.PushText(telegramtest.PrivateChat(chat), tgUser(chat, "u"), "c5001 m1 #mark=g1")
	ctx := context.Background()
	var since time.Time
	for kill := 1; kill <= 2; kill++ {
		var e store.Entry
		sdktest.WaitFor(t, fmt.Sprintf("launch %d of the message's turn", kill), func() error {
			es, err := c.db.ListUnfinished(ctx, 0, 0)
			for _, x := range es {
				if x.State == store.StateProcessing && x.UpdatedAt.After(since) {
					e = x
					return nil
				}
			}
			return fmt.Errorf("open entries %+v (%v)", es, err)
		})
		if n := promptReads(t, runLog, "g1"); n != 0 {
			t.Fatalf("claude read the prompt %d times while held", n)
		}
		t.Logf("launch %d on %s (attempts %d); killing it", kill, e.Owner, e.Attempts)
		c.kill9(e.Owner)
		since = time.Now()
		c.hosts[e.Owner].spawn()
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the answer or a notice", func() error {
		a, g := c.shown(chat, "echo:"), c.shown(chat, "could not be answered")
		return sdktest.Saw(a+g > 0, "answers %d, given-up notices %d", a, g)
	})
	if n := c.shown(chat, "could not be answered"); n != 0 {
		t.Errorf("the message was given up (%d notices) after two launches that never read the prompt", n)
	}
	if n := c.shown(chat, "echo:"); n != 1 {
		t.Errorf("%d answers, want 1", n)
	}
	if n := promptReads(t, runLog, "g1"); n != 1 {
		t.Errorf("claude read the prompt %d times, want once", n)
	}
}

// TestClusterGracefulStopTellsNoFalseNotice: the host polling the bot
// gets SIGTERM while it makes, for the other hosts, the sends of their
// sessions' replies (the fake Bot API answers sendMessage after 1.5 s).
// It finishes them before its plugins stop: every reply reaches its chat
// once and no chat is told a part "may be missing".
func TestClusterGracefulStopTellsNoFalseNotice(t *testing.T) {
	c := startCluster(t, "h1", "h2", "h3")
	holder := c.holder()
	c.waitHosts(3)
	// A host places a new session on the live hosts it saw at its last
	// read of the leases (every third of lease_ttl): the first chats may
	// all stay on the poller. New chats write until some run elsewhere,
	// for several lease reads (not a count of batches: a brand-new chat
	// answered on a spare claude takes a few milliseconds, and five
	// batches fit between two reads).
	var relayed []int64
	deadline := time.Now().Add(15 * time.Second)
	for batch := 0; len(relayed) == 0; batch++ {
		if time.Now().After(deadline) {
			t.Fatalf("every session of %d batches was placed on the polling host", batch)
		}
		var chats []int64
		for i := range 5 {
			chats = append(chats, int64(5101+10*batch+i))
		}
		c.push(chats, 1, "")
		sdktest.WaitFor(t, "the first answers", func() error {
			got, _ := c.replies()
			n := 0
			for _, chat := range chats {
				n += len(got[chat])
			}
			return sdktest.Saw(n == len(chats), "answers %v", got)
		})
		relayed = c.sessionsOff(holder, chats)
	}
	t.Logf("%s polls; chats %v run on the other hosts", holder, relayed)
	before := len(c.tg.Requests("sendMessage"))
	c.tg.Fail("sendMessage", len(relayed), telegramtest.Slow(1500*time.Millisecond))
	c.push(relayed, 2, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.tg.WaitRequests(ctx, "sendMessage", before+1); err != nil {
		t.Fatalf("no relayed send reached the Bot API: %v", err)
	}
	d := c.hosts[holder]
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = d.cmd.Wait()
	sdktest.WaitFor(t, "the second answers (or notices)", func() error {
		got, told := c.replies()
		done := true
		for _, chat := range relayed {
			if len(got[chat])+told[chat] < 2 {
				done = false
			}
		}
		return sdktest.Saw(done, "answers %v, told %v", got, told)
	})
	got, told := c.replies()
	for _, chat := range relayed {
		if told[chat] != 0 {
			t.Errorf("chat %d was told %d times a part may be missing (answers %v)", chat, told[chat], got[chat])
		}
		if fmt.Sprint(got[chat]) != "[1 2]" {
			t.Errorf("chat %d: answers %v, want [1 2]", chat, got[chat])
		}
	}
}

// sessionsOff returns the chats whose sessions run on a host other than
// host.
func (c *cluster) sessionsOff(host string, chats []int64) []int64 {
	c.t.Helper()
	conn, err := pgx.Connect(context.Background(), c.url)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT session_key, host FROM placements`)
	if err != nil {
		c.t.Fatal(err)
	}
	placed, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var kh [2]string
		return kh, r.Scan(&kh[0], &kh[1])
	})
	if err != nil {
		c.t.Fatal(err)
	}
	var out []int64
	for _, chat := range chats {
		for _, kh := range placed {
			if strings.HasSuffix(kh[0], ":"+strconv.FormatInt(chat, 10)) && kh[1] != host {
				out = append(out, chat)
			}
		}
	}
	return out
}
