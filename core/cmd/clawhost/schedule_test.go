package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScheduleAndHeartbeat: through the real binary, a schedule block (every
// minute, cron) and a heartbeat (every 2 s) start turns in their chats
// without anybody writing; the heartbeat's HEARTBEAT_OK is not delivered;
// the state file records the runs, 0600.
func TestScheduleAndHeartbeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, false)
	b, _ := os.ReadFile(cfg)
	extra := `
schedule "minutely" {
  cron   = "* * * * *"
  chat   = "lo:chat-u2"
  prompt = "scheduled hello"
}
heartbeat {
  every  = "2s"
  chat   = "lo:chat-u3"
  prompt = "beat #heartbeat-ok"
}
`
	if err := os.WriteFile(cfg, append(b, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	d := launch(t, dir, cfg)
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback address file")
	state := filepath.Join(dir, "data", "schedule.json")
	// The heartbeat runs (its run is recorded) and says nothing.
	d.waitFor(func() bool {
		b, err := os.ReadFile(state)
		var last map[string]time.Time
		return err == nil && json.Unmarshal(b, &last) == nil && !last["heartbeat"].IsZero() && strings.Contains(d.log.String(), "schedule=heartbeat")
	}, "a heartbeat run")
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file %v %v", fi, err)
	}
	// The cron schedule comes at the next minute (at most ~60 s).
	deadline := time.Now().Add(75 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range d.sent(2 * time.Second) {
			d.after = r.Seq
			if r.Op == "send" && r.ChatID == "chat-u3" {
				t.Fatalf("the heartbeat's HEARTBEAT_OK was delivered: %q", r.Text)
			}
			if r.Op == "send" && r.ChatID == "chat-u2" {
				if !strings.Contains(r.Text, "scheduled hello") {
					t.Fatalf("scheduled reply %q", r.Text)
				}
				return
			}
		}
	}
	t.Fatal("the minutely schedule did not run")
}
