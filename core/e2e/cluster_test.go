package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// cluster is several real clawhost hosts serving one Telegram bot from
// one PostgreSQL database.
type cluster struct {
	t     *testing.T
	url   string
	tg    *telegramtest.Server
	db    *postgres.DB
	hosts map[string]*daemon
}

func startCluster(t *testing.T, ids ...string) *cluster {
	t.Helper()
	return startClusterWith(t, nil, ids...)
}

// startClusterWith is startCluster with each host's configuration changed
// by mod first (nil: none).
func startClusterWith(t *testing.T, mod func(*Host), ids ...string) *cluster {
	t.Helper()
	c := &cluster{t: t, url: pgtest.Cluster(t).NewDatabase(t), tg: telegramtest.NewServer(tgToken), hosts: map[string]*daemon{}}
	t.Cleanup(c.tg.Close)
	for _, id := range ids {
		h := clusterHost(c.tg.APIEndpoint(), c.url, id)
		if mod != nil {
			mod(&h)
		}
		c.hosts[id] = Start(t, h)
	}
	var err error
	c.db, err = postgres.Open(context.Background(), c.url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.db.Close() })
	t.Cleanup(func() {
		if t.Failed() {
			for id, d := range c.hosts {
				t.Logf("host %s log (tail):\n%s", id, tail(d.log.String(), 60))
			}
		}
	})
	return c
}

// clusterHost is one host of a cluster: the telegram plugin against the
// fake Bot API (short polls), the fake claude, storage on the shared
// PostgreSQL database with 2 s leases.
func clusterHost(endpoint, url, id string) Host {
	tg := tgPlugin(endpoint)
	tg.Config["poll_timeout"] = 1
	return Host{
		Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:*"}},
		Admin:   Attrs{"listen": ""},
		Plugins: []Plugin{tg},
		Storage: Attrs{"engine": "postgres", "url": url, "host_id": id, "lease_ttl": "2s"},
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// holder returns the host holding the channel lease of tg, waiting for
// one (bounded).
func (c *cluster) holder() string {
	c.t.Helper()
	var h string
	sdktest.WaitFor(c.t, "a host to hold the channel lease", func() bool {
		ls, err := c.db.ListLeases(context.Background(), "channel/tg")
		if err != nil || len(ls) == 0 || !ls[0].Live(time.Now()) {
			return false
		}
		if d := c.hosts[ls[0].Holder]; d == nil || d.cmd.ProcessState != nil {
			return false // a dead host's lease, not expired yet
		}
		h = ls[0].Holder
		return true
	})
	return h
}

// placements counts the sessions placed on each host.
func (c *cluster) placements() map[string]int {
	c.t.Helper()
	n, err := c.db.PlacementCounts(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// kill9 kills a host at once.
func (c *cluster) kill9(id string) {
	d := c.hosts[id]
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
}

var markRE = regexp.MustCompile(`c(\d+) m(\d+)`)

// replies reads what the bot sent, per chat: the message numbers of the
// replies in the order their messages were first sent, each message by
// its last content (a turn card becomes its answer by an edit), and the
// notices that part of a reply may be missing.
func (c *cluster) replies() (got map[int64][]int, told map[int64]int) {
	got, told = map[int64][]int{}, map[int64]int{}
	type msg struct {
		chat    int64
		visible string
	}
	var order []string
	last := map[string]*msg{}
	for _, s := range c.tg.Sent() {
		key := s.ChatID + "/" + strconv.Itoa(s.MessageID)
		if s.Method != "sendMessage" && s.Method != "editMessageText" {
			continue
		}
		chat, _ := strconv.ParseInt(s.ChatID, 10, 64)
		if m, ok := last[key]; ok {
			m.visible = s.Visible
			continue
		}
		last[key] = &msg{chat: chat, visible: s.Visible}
		order = append(order, key)
	}
	for _, key := range order {
		m := last[key]
		if strings.Contains(m.visible, "may be missing") {
			told[m.chat]++
			continue
		}
		if mm := markRE.FindStringSubmatch(m.visible); mm != nil {
			n, _ := strconv.Atoi(mm[2])
			got[m.chat] = append(got[m.chat], n)
		}
	}
	return got, told
}

// push sends message m of every chat.
func (c *cluster) push(chats []int64, m int, extra string) {
	for _, chat := range chats {
		c.tg.PushText(telegramtest.PrivateChat(chat), tgUser(chat, "u"), fmt.Sprintf("c%d m%d %s", chat, m, extra))
	}
}

// waitAnswered waits until every chat has answers to messages 1..n (or
// was told one may be missing), then a little longer for duplicates, and
// checks: each message answered at most once, in order, none lost.
func (c *cluster) waitAnswered(chats []int64, n int) {
	c.t.Helper()
	sdktest.WaitFor(c.t, fmt.Sprintf("answers to messages 1..%d in every chat", n), func() error {
		got, told := c.replies()
		done := true
		for _, chat := range chats {
			if len(got[chat])+told[chat] < n {
				done = false
			}
		}
		return sdktest.Saw(done, "answers %v (told %v)", got, told)
	})
	time.Sleep(1500 * time.Millisecond) // on purpose: a second copy would come now
	got, told := c.replies()
	for _, chat := range chats {
		g := got[chat]
		if !slices.IsSorted(g) || len(slices.Compact(slices.Clone(g))) != len(g) {
			c.t.Errorf("chat %d: replies %v: out of order or doubled", chat, g)
		}
		for m := 1; m <= n; m++ {
			if !slices.Contains(g, m) && told[chat] == 0 {
				c.t.Errorf("chat %d: message %d lost (replies %v)", chat, m, g)
			}
		}
	}
}

// TestThreeHostsServeOneBot: three real hosts on one PostgreSQL serve one
// Telegram bot. One host polls it (one poller per token: the fake answers
// a second poller's request with 409, as Telegram does), the sessions
// spread over all three, replies of sessions on the other hosts go out
// through the poller's host, every message is answered once and in order.
// Then the polling host is killed with -9 while turns run, then a host
// running turns: another host takes the channel and the sessions over
// within the lease time, and nothing is lost or doubled.
func TestThreeHostsServeOneBot(t *testing.T) {
	c := startCluster(t, "h1", "h2", "h3")
	holder := c.holder()
	t.Logf("%s polls the bot", holder)
	sdktest.WaitFor(t, "three live hosts", func() bool {
		ls, _ := c.db.ListLeases(context.Background(), store.HostLeasePrefix)
		n := 0
		for _, l := range ls {
			if l.Live(time.Now()) {
				n++
			}
		}
		return n == 3
	})
	time.Sleep(time.Second) // on purpose: each host reads the leases every 0.67 s, so each sees the others
	var chats []int64
	for i := range 12 {
		chats = append(chats, int64(5001+i))
	}
	for m := 1; m <= 3; m++ {
		c.push(chats, m, "")
	}
	c.waitAnswered(chats, 3)
	pl := c.placements()
	t.Logf("sessions per host: %v", pl)
	if len(pl) < 2 {
		t.Errorf("12 sessions all on one host: %v", pl)
	}
	if n := c.tg.Conflicts(); n > 0 {
		t.Errorf("%d long polls ended by a second poller: two hosts polled the bot", n)
	}

	// kill -9 of the polling host while every session runs a turn.
	c.push(chats, 4, "#sleep=1500ms")
	time.Sleep(700 * time.Millisecond) // on purpose: the kill comes mid-turn
	c.kill9(holder)
	killed := time.Now()
	next := c.holder()
	t.Logf("%s killed; %s polls the bot %s later", holder, next, time.Since(killed).Round(time.Millisecond))
	if next == holder {
		t.Fatal("the killed host still holds the channel")
	}
	c.push(chats, 5, "")
	c.waitAnswered(chats, 5)

	// kill -9 of a host that runs turns but does not poll.
	var victim string
	for id, d := range c.hosts {
		if id != next && d.cmd.ProcessState == nil {
			victim = id
		}
	}
	c.push(chats, 6, "#sleep=1500ms")
	time.Sleep(700 * time.Millisecond) // on purpose: the kill comes mid-turn
	c.kill9(victim)
	t.Logf("%s (running turns) killed", victim)
	c.push(chats, 7, "")
	c.waitAnswered(chats, 7)
	if n := c.tg.Conflicts(); n > 0 {
		t.Errorf("%d long polls ended by a second poller", n)
	}
	_, told := c.replies()
	t.Logf("chats told a reply part may be missing (a send in flight on a killed host): %v", told)
}
