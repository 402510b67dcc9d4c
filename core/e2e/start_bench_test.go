package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// startTelegramAndWeb writes the config into dir and starts clawhost; it
// returns the command (started) and its log.
func startTelegramAndWeb(tb testing.TB, dir string, srv *telegramtest.Server) (*exec.Cmd, *sdktest.Log, time.Time) {
	tb.Helper()
	// What a user of the README runs: the telegram plugin (against the
	// fake Bot API) and the web chat, the fake claude as agent, info
	// logging, the admin endpoint on.
	tg := tgPlugin(srv.APIEndpoint())
	delete(tg.Config, "poll_timeout")
	h := Host{
		Dir:      dir,
		LogLevel: "info",
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"web:*", "tg:1001"}},
		Admin:    Attrs{"listen": "127.0.0.1:0"},
		Plugins:  []Plugin{tg, {Name: "web", Source: "webchat", Config: Attrs{"listen": sdktest.FreeAddr(tb)}}},
	}
	log := &sdktest.Log{}
	cmd := Command(tb, h.Write(tb))
	cmd.Stderr = log
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return cmd, log, t0
}

func stopDaemon(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// BenchmarkStartupTelegram measures a start the way a user makes one:
// exec of clawhost with the telegram plugin and the web chat enabled (a
// fresh data directory each time) until the fake Bot API sees the
// plugin's first getUpdates (p50-first-poll-ms) and until both plugins
// logged ready (p50-ready-ms). Medians over b.N starts (-benchtime 20x).
func BenchmarkStartupTelegram(b *testing.B) {
	var poll, ready []time.Duration
	for range b.N {
		srv := telegramtest.NewServer(tgToken)
		cmd, log, t0 := startTelegramAndWeb(b, b.TempDir(), srv)
		var first, both time.Duration
		for first == 0 || both == 0 {
			if first == 0 {
				if rs := srv.Requests("getUpdates"); len(rs) > 0 {
					first = rs[0].Time.Sub(t0)
				}
			}
			if both == 0 && strings.Count(log.String(), "state=ready") >= 2 {
				both = time.Since(t0)
			}
			if time.Since(t0) > 20*time.Second {
				stopDaemon(cmd)
				b.Fatalf("not started after 20s (first poll %v):\n%s", first, log.String())
			}
			time.Sleep(100 * time.Microsecond)
		}
		poll, ready = append(poll, first), append(ready, both)
		stopDaemon(cmd)
		srv.Close()
	}
	slices.Sort(poll)
	slices.Sort(ready)
	b.ReportMetric(float64(poll[len(poll)/2].Microseconds())/1000, "p50-first-poll-ms")
	b.ReportMetric(float64(ready[len(ready)/2].Microseconds())/1000, "p50-ready-ms")
	b.ReportMetric(0, "ns/op")
}

// anonMB is the private anonymous memory of a process (heap, stacks, the
// runtime's own), from /proc/PID/smaps_rollup: the resident set without
// the mapped pages of its binary and libraries, which the page cache
// shares.
func anonMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Anonymous:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
