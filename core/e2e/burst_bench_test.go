package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

const (
	// burstChats is how many new chats write one message each at once in
	// BenchmarkBurstRSS.
	burstChats = 300
	// burstAfter is when BenchmarkBurstRSS reads the memory again after
	// the last reply: long enough for the host to see the burst end (the
	// load under procpace.Lower for procpace.Quiet, a look every
	// procpace.HoldCheck) and short of the idle collection that comes
	// two minutes after the last (memtrim.Idle).
	burstAfter = 10 * time.Second
)

// BenchmarkBurstRSS is what a burst leaves resident: clawhost with the
// Telegram plugin and the fake claude (loadHost, max_warm 4) answers
// burstChats new chats one message each, and the host's and the plugin's
// anonymous memory are read before, at the last reply and burstAfter
// later. At the host's GOGC=400 the burst's garbage stays resident up to
// the heap goal it raised until something gives it back (memtrim.Settle,
// when the host goes back to one processor).
func BenchmarkBurstRSS(b *testing.B) {
	claude := fakeClaudeBin(b, b.TempDir())
	for b.Loop() {
		srv := telegramtest.NewServer(tgToken)
		defer srv.Close()
		dir := filepath.Join(b.TempDir(), "burst")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		runLog := filepath.Join(dir, "workspace", "claude-runs.jsonl")
		h := loadHost(dir, claude, runLog, nil, srv.APIEndpoint())
		d := LaunchAs(b, h.Write(b), nil)
		defer d.stop()
		deadline := time.Now().Add(tgWait)
		for len(srv.Requests("getUpdates")) == 0 || len(srv.Commands()) == 0 {
			if time.Now().After(deadline) {
				b.Fatalf("clawhost not ready after %v:\n%s", tgWait, d.log.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		host := d.Process().Pid
		plugin := telegramPID(b, host)
		before := anonMB(host)
		loadRunN(b, srv, "clawhost", burstChats, 1)
		peak := anonMB(host)
		time.Sleep(burstAfter)
		b.ReportMetric(before, "host-anon-before-MB")
		b.ReportMetric(peak, "host-anon-last-reply-MB")
		b.ReportMetric(anonMB(host), "host-anon-after-MB")
		b.ReportMetric(anonMB(plugin), "telegram-anon-after-MB")
	}
	b.ReportMetric(0, "ns/op")
}

// telegramPID is the Telegram plugin's process under host.
func telegramPID(b *testing.B, host int) int {
	b.Helper()
	for _, c := range children(host) {
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(c) + "/exe"); filepath.Base(exe) == "clawhost-telegram" {
			return c
		}
	}
	b.Fatalf("no clawhost-telegram under the host (pid %d)", host)
	return 0
}
