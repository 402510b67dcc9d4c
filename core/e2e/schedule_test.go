package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store/sqlite"
)

// TestScheduleAndHeartbeat: through the real binary, a schedule block (every
// minute, cron) and a heartbeat (every 2 s) start turns in their chats
// without anybody writing; the heartbeat costs no turn while the new
// workspace's HEARTBEAT.md asks for nothing, then runs; its HEARTBEAT_OK
// is not delivered;
// the store records the runs (no state file in data_dir).
func TestScheduleAndHeartbeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := loopbackHost(dir, false)
	h.Blocks = []Block{
		{Type: "schedule", Labels: []string{"minutely"}, Attrs: Attrs{"cron": "* * * * *", "chat": "lo:chat-u2", "prompt": "scheduled hello"}},
		{Type: "heartbeat", Attrs: Attrs{"every": "2s", "chat": "lo:chat-u3", "prompt": "beat #heartbeat-ok"}},
	}
	cfg := h.Write(t)
	d := Launch(t, cfg)
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	// The new workspace's HEARTBEAT.md asks for nothing: no turn runs.
	d.waitFor(func() bool {
		return strings.Contains(d.log.String(), "heartbeat skipped: HEARTBEAT.md asks for nothing")
	}, "a skipped heartbeat")
	if strings.Contains(d.log.String(), "schedule=heartbeat") {
		t.Fatal("a heartbeat turn ran with an empty HEARTBEAT.md")
	}
	if err := os.WriteFile(filepath.Join(dir, "workspace", "HEARTBEAT.md"), []byte("# Heartbeat\n- is the oven off?\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Now the heartbeat runs and says nothing.
	d.waitFor(func() bool { return strings.Contains(d.log.String(), "schedule=heartbeat") }, "a heartbeat run")
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
				checkRunsStored(t, d, "heartbeat", "minutely")
				return
			}
		}
	}
	t.Fatal("the minutely schedule did not run")
}

// checkRunsStored stops d and checks that its store recorded a run of
// each job, and that no schedule file was written in data_dir.
func checkRunsStored(t *testing.T, d *daemon, jobs ...string) {
	t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	data := filepath.Join(d.dir, "data")
	for _, f := range []string{"schedule.json", "schedules.json"} {
		if _, err := os.Stat(filepath.Join(data, f)); !os.IsNotExist(err) {
			t.Errorf("%s written in data_dir: %v", f, err)
		}
	}
	db, err := sqlite.Open(context.Background(), data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.ScheduleRuns(context.Background())
	for _, job := range jobs {
		if err != nil || runs[job].IsZero() {
			t.Errorf("no run of %s stored: %v, %v", job, runs, err)
		}
	}
}
