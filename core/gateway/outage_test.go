package gateway

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/sqlite"
)

// TestStoreLockedThenReleased: another connection holds the database with
// BEGIN EXCLUSIVE for 10 s while messages arrive. Every Accept fails
// (busy timeout 1 s), the host nacks, the loopback plugin (a real process
// with the real sdk) answers each poster 503 at once with the host's
// growing delay, and the posters send again, as a platform does; once the
// lock is released every message is stored and answered exactly once, and
// the plugin process is the same one.
func TestStoreLockedThenReleased(t *testing.T) {
	e := newEnv(t, envOptions{busyTimeout: time.Second, settings: func(s *Settings) {
		s.Access.AllowFrom = append(s.Access.AllowFrom, "lo:u2", "lo:u3")
	}})
	before := e.host.Instance("lo").Status()
	if before.PID <= 0 {
		t.Fatalf("no pid for the plugin: %+v", before)
	}

	lock, err := sql.Open("sqlite", filepath.Join(e.dir, "data", sqlite.DBFile)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	ctx := context.Background()
	conn, err := lock.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	locked := time.Now()

	senders := []string{"u1", "u2", "u3"}
	posted := make(chan error, len(senders))
	for _, u := range senders {
		go func() { posted <- postWait(e.addr, dm(u, "hello from "+u)) }()
	}
	time.Sleep(10*time.Second - time.Since(locked)) // real time on a real lock
	if got := answers(e.records(0)); len(got) != 0 {
		t.Fatalf("answered while the store was locked: %v", got)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	for range senders {
		select {
		case err := <-posted:
			if err != nil {
				t.Fatalf("post: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a message was still not stored 30s after the lock was released")
		}
	}

	got := map[string][]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < len(senders) && time.Now().Before(deadline) {
		for chat, texts := range answers(e.records(time.Second)) {
			got[chat] = append(got[chat], texts...)
		}
	}
	// Anything answered twice would come soon after the first answer.
	for settle := time.Now().Add(1500 * time.Millisecond); time.Now().Before(settle); {
		for chat, texts := range answers(e.records(time.Until(settle))) {
			got[chat] = append(got[chat], texts...)
		}
	}
	for _, u := range senders {
		texts := got["chat-"+u]
		if len(texts) != 1 {
			t.Errorf("chat-%s answered %d times, want once: %q", u, len(texts), texts)
			continue
		}
		contains(t, texts[0], "hello from "+u)
	}

	after := e.host.Instance("lo").Status()
	if after.PID != before.PID || after.Restarts != 0 {
		t.Errorf("the plugin was restarted: pid %d → %d, %d restarts", before.PID, after.PID, after.Restarts)
	}
	log := e.logBuf.String()
	if n := strings.Count(log, "nacked inbound messages"); n < 1 {
		t.Errorf("the host never nacked: the store did not fail during the lock (busy timeout 1s)")
	}
	if n := strings.Count(log, "host could not store inbound messages"); n < 1 {
		t.Errorf("the plugin never logged a nack")
	}
	if n := strings.Count(log, "storing inbound messages failed; nacked"); n != 1 {
		t.Errorf("the failure was logged at error level %d times, want once for the outage", n)
	}
	if n := strings.Count(log, "storing inbound messages works again"); n != 1 {
		t.Errorf("the recovery was logged %d times, want once", n)
	}
}

// postWait posts an inbound message to the loopback plugin until the host
// stored it, as a platform's webhook does: a message the host cannot store
// is answered 503 at once, and sent again (the same message id) after the
// Retry-After it was given.
func postWait(addr string, m in) error {
	if m["message_id"] == nil {
		m["message_id"] = fmt.Sprint(time.Now().UnixNano())
	}
	body, _ := json.Marshal(m)
	c := http.Client{Timeout: 20 * time.Second} // a refusal comes at once
	for {
		resp, err := c.Post("http://"+addr+"/inbound", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusServiceUnavailable:
			n, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(n, 1)) * time.Second) // the delay the host asked for
		default:
			return fmt.Errorf("inbound %s: status %d", m["text"], resp.StatusCode)
		}
	}
}

// answers groups the texts of sends by chat.
func answers(recs []record) map[string][]string {
	out := map[string][]string{}
	for _, r := range recs {
		if r.Op == "send" {
			out[r.ChatID] = append(out[r.ChatID], r.Text)
		}
	}
	return out
}
