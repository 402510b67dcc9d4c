package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

// startPostgresDaemon runs clawhost with storage on a fresh PostgreSQL
// database.
func startPostgresDaemon(t *testing.T) (*daemon, string) {
	t.Helper()
	url := pgtest.Cluster(t).NewDatabase(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, false)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "storage {\n  engine = \"postgres\"\n  url    = %q\n}\n", url)
	f.Close()
	d := launch(t, dir, path)
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback address file")
	return d, url
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
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range d.sent(time.Second) {
			d.after = r.Seq
			if r.Op == "send" && r.ChatID == "chat-u1" {
				if len(got) == 0 {
					deadline = time.Now().Add(3 * time.Second) // then watch for a second copy
				}
				got = append(got, r.Text)
			}
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "survive this") {
		t.Fatalf("after kill -9 and restart, sends to the chat: %q; want the reply once", got)
	}
}
