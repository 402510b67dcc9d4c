package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestUpgradeKeepsConversations: a database made by the release before
// session keys carried the agent (testdata/upgrade/clawhost.db, schema 9:
// one finished turn of lo:u1, one turn killed while it ran and a message
// queued behind it) is upgraded at start: the interrupted turn and the
// queued message are answered once each, and the chat's conversation goes
// on in the same claude session, now the default agent's.
func TestUpgradeKeepsConversations(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("testdata/upgrade/clawhost.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "clawhost.db"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	const claudeSession = "1aff9ccf-17d4-458a-ab69-38101963bee1" // the fixture's
	d := Launch(t, writeConfig(t, dir, false))
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	// Every reply is awaited as an event (bounded by the test's deadline,
	// not a time a fast machine needs); the session answers in order, so
	// anything sent twice comes before the answer to the message posted
	// after the upgrade.
	got := map[string]int{}
	deadline := sdktest.WaitDeadline(t)
	count := func(r record) {
		for _, w := range []string{"before the upgrade", "interrupted by the upgrade", "queued behind it"} {
			if r.Op == "send" && strings.Contains(r.Text, "echo: ") && strings.Contains(r.Text, w) {
				got[w]++
			}
		}
	}
	for got["interrupted by the upgrade"] == 0 || got["queued behind it"] == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("replies after the upgrade: %v", got)
		}
		for _, r := range d.sent(time.Second) {
			d.after = r.Seq
			count(r)
		}
	}
	d.post("u1", "after the upgrade")
	for answered := false; !answered; {
		if time.Now().After(deadline) {
			t.Fatal("no answer to the message after the upgrade")
		}
		for _, r := range d.sent(time.Second) {
			d.after = r.Seq
			count(r)
			answered = answered || (r.Op == "send" && strings.Contains(r.Text, "after the upgrade"))
		}
	}
	for _, r := range d.sent(500 * time.Millisecond) { // anything sent twice
		for w := range got {
			if r.Op == "send" && strings.Contains(r.Text, w) {
				got[w]++
			}
		}
	}
	if got["before the upgrade"] != 0 || got["interrupted by the upgrade"] != 1 || got["queued behind it"] != 1 {
		t.Errorf("replies after the upgrade %v: want the interrupted and the queued message answered once each, the finished one not again", got)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	db, err := sqlite.Open(context.Background(), data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.Session(context.Background(), "agent:main:lo:direct:u1")
	if err != nil || s.ClaudeSessionID != claudeSession || s.Turns < 3 {
		t.Errorf("the chat's session after the upgrade: %+v, %v; want claude session %s going on", s, err, claudeSession)
	}
	if _, err := db.Session(context.Background(), "lo:direct:u1"); err == nil {
		t.Error("a session is left under the key without the agent")
	}
}

// TestDowngradeIsRefused: a clawhost older than its database (the schema
// one step newer than this binary's) does not start: it exits 1 with the
// two versions and what to do, and leaves the database as it was.
func TestDowngradeIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	newer := sqlite.SchemaVersion() + 1
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "clawhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// No admin endpoint: the default port is the other tests'.
	cfg := (&Host{Dir: dir, Admin: Attrs{"listen": ""}}).Write(t)
	cmd := Command(t, cfg)
	var out sdktest.Log
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("clawhost started on a newer database:\n%s", out.String())
	}
	want := fmt.Sprintf("database schema version %d is newer than this binary's %d", newer, sqlite.SchemaVersion())
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "run that version") {
		t.Fatalf("exit %v, want 1 with %q and what to do:\n%s", err, want, out.String())
	}
	db, err = sql.Open("sqlite", "file:"+filepath.Join(data, "clawhost.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != newer {
		t.Fatalf("user_version after the refused start: %d %v", v, err)
	}
}
