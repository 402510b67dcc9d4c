package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

// startPostgresDaemon runs clawhost with storage on a fresh PostgreSQL
// database.
func startPostgresDaemon(t *testing.T) (*daemon, string) {
	t.Helper()
	url := pgtest.Cluster(t).NewDatabase(t)
	d := startHost(t, url, "h1")
	d.waitServing()
	return d, url
}

// startHost runs clawhost as host id on the PostgreSQL database url,
// with 2 s leases. Its loopback channel runs only on the host holding the
// channel's lease (waitServing). mods change the host's configuration
// first.
func startHost(t *testing.T, url, id string, mods ...func(*Host)) *daemon {
	t.Helper()
	return startAdminHost(t, url, id, "", mods...)
}

// TestHostsShareAJournal: two hosts on one database. h1 serves the
// loopback channel (h2 keeps it in standby: one holder per channel
// lease). While h1 runs a turn, h2 (which adopts what dead hosts leave,
// every 0.7 s) leaves it alone: no second reply comes through h1. h1 is
// killed with -9; within its lease h2 takes the channel over, adopts the
// turn, runs it again and delivers the reply exactly once. The usage
// ledger in the shared database has that turn once (h1's run of it, cut
// by the kill, left no row), and the audit trail the reloads of both
// hosts, read by `clawhost usage` and `clawhost audit` from either.
func TestHostsShareAJournal(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	h1 := startHost(t, url, "h1")
	h1.waitServing()
	h2 := startHost(t, url, "h2")
	pluginPIDs(h1, 2)
	pluginPIDs(h2, 2)

	h1.post("u1", "one host at a time #sleep=2500ms")
	h1.waitFor(func() bool { return typingSeen(h1) }, "h1's turn to start (typing on)")
	// Three of h2's adoption rounds while h1 lives: nothing is sent
	// (h2's channel is in standby; a turn it ran twice would reply
	// through h1).
	for _, r := range h1.sent(2 * time.Second) {
		h1.after = r.Seq
		if r.Op == "send" && r.ChatID == "chat-u1" {
			t.Fatalf("a reply before h1's turn could end: %+v", r)
		}
	}
	if _, err := os.Stat(h2.addrFile); err == nil {
		t.Fatal("h2 serves the channel h1 holds")
	}
	_ = h1.cmd.Process.Signal(syscall.SIGHUP)
	h1.waitFor(func() bool { return strings.Contains(h1.Log(), "configuration reloaded") }, "h1's reload")
	_ = h1.cmd.Process.Kill()
	_ = h1.cmd.Wait()
	killed := time.Now()
	h2.waitServing()
	t.Logf("h2 serves the channel %s after h1's kill -9", time.Since(killed).Round(time.Millisecond))

	got := h2.sendsTo("chat-u1", time.Now().Add(20*time.Second), nil, func() {
		t.Logf("h2 answered %s after h1's kill -9", time.Since(killed).Round(time.Millisecond))
	})
	if len(got) != 1 || !strings.Contains(got[0], "one host at a time") {
		t.Fatalf("h2's sends to the chat after h1 died: %q; want the reply once", got)
	}
	_ = h2.cmd.Process.Signal(syscall.SIGHUP)
	h2.waitFor(func() bool { return strings.Contains(h2.Log(), "configuration reloaded") }, "h2's reload")
	var ledger struct {
		Rows []struct {
			Key     string  `json:"key"`
			Turns   int     `json:"turns"`
			CostUSD float64 `json:"cost_usd"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(teamCLI(t, h1.ConfigPath(), "usage", "-by", "chat", "-json"), &ledger); err != nil {
		t.Fatal(err)
	}
	if len(ledger.Rows) != 1 || ledger.Rows[0].Key != "lo:chat-u1" || ledger.Rows[0].Turns != 1 || ledger.Rows[0].CostUSD != 0.0125 {
		t.Errorf("the shared ledger: %+v; want the turn once, at the fake claude's $0.0125", ledger.Rows)
	}
	var trail []struct{ Kind, Decision, Subject string }
	if err := json.Unmarshal(teamCLI(t, h2.ConfigPath(), "audit", "-kind", "reload", "-json"), &trail); err != nil {
		t.Fatal(err)
	}
	if len(trail) != 2 || trail[0].Subject != h2.ConfigPath() || trail[1].Subject != h1.ConfigPath() {
		t.Errorf("the shared audit trail's reloads: %+v; want h2's, then h1's", trail)
	}
}

// TestPostgresStorage: the real binary on PostgreSQL answers, keeps its
// sessions and approvals there (no database file in data_dir), and a
// kill -9 mid-turn is recovered from the shared database: the turn runs
// again and its reply is delivered once.
func TestPostgresStorage(t *testing.T) {
	d, _ := startPostgresDaemon(t)
	pluginPIDs(d, 2)
	d.post("u1", "hello postgres")
	if got := d.nextSend("chat-u1"); !strings.Contains(got, "hello postgres") {
		t.Fatalf("reply %q", got)
	}
	if _, err := os.Stat(filepath.Join(d.dir, "data", "clawhost.db")); !os.IsNotExist(err) {
		t.Errorf("a SQLite database was created in data_dir: %v", err)
	}

	d.post("u1", "survive this #sleep=1500ms")
	d.waitFor(func() bool { return typingSeen(d) }, "the turn to start (typing on)")
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.restart()
	got := d.sendsTo("chat-u1", time.Now().Add(30*time.Second), nil, nil)
	if len(got) != 1 || !strings.Contains(got[0], "survive this") {
		t.Fatalf("after kill -9 and restart, sends to the chat: %q; want the reply once", got)
	}
}
