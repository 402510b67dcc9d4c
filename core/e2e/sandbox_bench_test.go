package e2e

// What claude's sandbox costs the whole path: the same host, the same
// fake claude, with sandbox = "off" and with the default (bubblewrap), in
// one run, interleaved. core/runner's BenchmarkSandboxStart breaks a
// sandboxed start down; these show what is left of it end to end.
//
//	make build && go test ./core/e2e -run '^$' -bench 'LoadTelegramSandbox|FirstTurnSandbox' -benchtime 1x
//
// A host with dm_policy = "open" refuses to start when bubblewrap does not
// work, so the sandboxed rounds are sandboxed: without bwrap the benchmarks
// skip.
//
// -sandbox.user=NAME (e.g. -args -sandbox.user=nobody; the benchmark runs
// as root) runs every clawhost they start as that user, as
// docs/security.md's "As a user other than root" has it; the metrics keep
// their names and each host's sandbox is logged ("bubblewrap (recycled)"
// for the third).

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// sandboxUser is the user the sandbox benchmarks run clawhost as; "": the
// test's.
var sandboxUser = flag.String("sandbox.user", "", "the user BenchmarkLoadTelegramSandbox and BenchmarkFirstTurnSandbox run clawhost as, e.g. nobody (the benchmark runs as root); empty: the test's user")

// sandboxBench is what the sandbox benchmarks share: the user clawhost runs
// as (-sandbox.user; nil: the test's) and the fake claude, built where that
// user can run it.
func sandboxBench(b *testing.B) (*hostUser, string) {
	b.Helper()
	needBwrapBench(b)
	var as *hostUser
	if *sandboxUser != "" {
		as = lookupHostUser(b, *sandboxUser)
	}
	dir := b.TempDir()
	claude := fakeClaudeBin(b, dir)
	if as != nil {
		// The binary is 0755; the temporary directories above it are
		// root's 0700.
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o711); err != nil {
				b.Fatal(err)
			}
		}
	}
	return as, claude
}

// sandboxOff is the agent setting of the unsandboxed rounds.
var sandboxOff = Attrs{"sandbox": "off"}

// helperEnv is runner.ZygoteEnv: set to "1" in clawhost's environment, its sandboxed
// claudes start in the agent's recycled sandboxes (the sandbox helper; the default as
// root), set to "0" in a bubblewrap each.
const helperEnv = "CLAWHOST_SANDBOX_HELPER"

// withHelper runs launch (which starts clawhost) with the sandbox helper on or off in
// the environment clawhost inherits.
func withHelper[T any](b *testing.B, on bool, launch func() T) T {
	b.Helper()
	old, had := os.LookupEnv(helperEnv)
	v := "0"
	if on {
		v = "1"
	}
	if err := os.Setenv(helperEnv, v); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if had {
			_ = os.Setenv(helperEnv, old)
		} else {
			_ = os.Unsetenv(helperEnv)
		}
	}()
	return launch()
}

// needBwrapBench skips a benchmark without bubblewrap.
func needBwrapBench(b *testing.B) {
	b.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("bwrap not installed (make bubblewrap)")
	}
}

// BenchmarkLoadTelegramSandbox is BenchmarkLoadTelegram's load (2,000
// messages in 200 chats, the default max_warm, so nearly every turn starts
// claude) run loadRounds times with sandbox = "off" and as often
// sandboxed, alternating; it reports the medians and their ratio
// (sandboxed-ratio-%, the goal: ≥ 90). -sandbox.user=nobody runs its
// hosts as nobody, under the same metric names.
func BenchmarkLoadTelegramSandbox(b *testing.B) {
	as, claude := sandboxBench(b)
	o := loadRoundOptions{as: as, sandbox: true}
	for b.Loop() {
		var off, on, rec []loadResult
		for r := range loadRounds {
			off = append(off, withHelper(b, false, func() loadResult { return loadClawhostRoundWith(b, 3*r, claude, sandboxOff, o) }))
			on = append(on, withHelper(b, false, func() loadResult { return loadClawhostRoundWith(b, 3*r+1, claude, nil, o) }))
			rec = append(rec, withHelper(b, true, func() loadResult { return loadClawhostRoundWith(b, 3*r+2, claude, nil, o) }))
			b.Logf("round %d: sandbox off %.0f msg/s, sandboxed %.0f msg/s, recycled sandboxes %.0f msg/s (%d, %d, %d claude starts)",
				r+1, off[r].rate(), on[r].rate(), rec[r].rate(), off[r].starts, on[r].starts, rec[r].starts)
			b.Logf("round %d, clawhost as %s: sandbox %q, %q, %q",
				r+1, hostUserName(as), off[r].sandbox, on[r].sandbox, rec[r].sandbox)
		}
		o, s, c := loadMedian(off), loadMedian(on), loadMedian(rec)
		b.ReportMetric(o.rate(), "off-msgs/s")
		b.ReportMetric(s.rate(), "sandboxed-msgs/s")
		b.ReportMetric(100*s.rate()/o.rate(), "sandboxed-ratio-%")
		b.ReportMetric(c.rate(), "recycled-msgs/s")
		b.ReportMetric(100*c.rate()/o.rate(), "recycled-ratio-%")
		b.ReportMetric(float64(s.lost+o.lost+c.lost), "lost")
		b.ReportMetric(float64(s.doubled+o.doubled+c.doubled), "doubled")
		b.ReportMetric(float64(s.starts), "claude-starts")
	}
}

// BenchmarkFirstTurnSandbox: the first turn of a chat, which starts
// claude, with sandbox = "off" and sandboxed. Two hosts run at once; a new
// chat writes to one, then another to the other, one message at a time,
// each waiting for its reply. Measured per turn: getUpdates hands the
// update out → the fake claude has read the prompt from its stdin (the
// run log's "start"): the host's work, the process start and, sandboxed,
// bubblewrap's. Reported: the p50 of each and first-turn-delta-ms, the
// sandboxed p50 minus the unsandboxed (the goal: ≤ 2 ms). -sandbox.user=nobody
// runs its hosts as nobody, under the same metric names.
func BenchmarkFirstTurnSandbox(b *testing.B) {
	as, claude := sandboxBench(b)
	for b.Loop() {
		type host struct {
			srv    *telegramtest.Server
			d      *Daemon
			runLog string
			sent   int
			ids    map[string]int
			lat    []time.Duration
		}
		var hosts [3]*host
		// spare = false: every first turn starts claude, which is what this
		// compares (a brand-new chat would otherwise adopt a spare while
		// max_warm leaves room for one).
		for i, agent := range []Attrs{{"sandbox": "off", "spare": false}, {"spare": false}, {"spare": false}} {
			srv := telegramtest.NewServer(tgToken)
			b.Cleanup(srv.Close)
			dir := b.TempDir()
			runLog := filepath.Join(dir, "workspace", "claude-runs.jsonl")
			h := loadHost(dir, claude, runLog, agent, srv.APIEndpoint())
			h.Admin = Attrs{"listen": sdktest.FreeAddr(b)} // for statusSandbox
			// The third host's sandboxes are recycled.
			d := withHelper(b, i == 2, func() *Daemon { return LaunchAs(b, h.Write(b), as) })
			assertRunsAs(b, d, as)
			b.Cleanup(func() { d.stop() })
			hosts[i] = &host{srv: srv, d: d, runLog: runLog, ids: map[string]int{}}
		}
		for i, h := range hosts {
			deadline := time.Now().Add(tgWait)
			for len(h.srv.Requests("getUpdates")) == 0 || len(h.srv.Commands()) == 0 {
				if time.Now().After(deadline) {
					b.Fatalf("clawhost not ready after %v:\n%s", tgWait, h.d.log.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			b.Logf("host %d, clawhost as %s: sandbox %q", i+1, hostUserName(as), statusSandbox(b, h.d.cfgPath))
		}
		for k := range firstTurnChats {
			for _, h := range hosts {
				chat := int64(loadFirstChat + k)
				mark := fmt.Sprintf("q%dz0q", chat)
				h.ids[mark] = h.srv.PushText(telegramtest.PrivateChat(chat), telegramtest.User{ID: chat, FirstName: "First"},
					"first "+mark+" #mark="+mark)
				h.sent++
				ctx, cancel := context.WithTimeout(context.Background(), tgWait)
				_, err := h.srv.WaitSent(ctx, h.sent)
				cancel()
				if err != nil {
					b.Fatalf("first turn %s: %v\n%s", mark, err, h.d.log.String())
				}
				time.Sleep(outPace)
			}
		}
		for _, h := range hosts {
			started := map[string]int64{}
			for _, ev := range runEvents(h.runLog) {
				if ev.Event == "start" && len(ev.Marks) > 0 {
					started[ev.Marks[0]] = ev.At
				}
			}
			for mark, id := range h.ids {
				handed := h.srv.HandedOut(id)
				if handed.IsZero() || started[mark] == 0 {
					b.Fatalf("first turn %s: handed out %v, claude read it at %d: a timestamp is missing", mark, handed, started[mark])
				}
				h.lat = append(h.lat, time.Duration(started[mark]-handed.UnixNano()))
			}
		}
		off, on, rec := percentile(hosts[0].lat, 50), percentile(hosts[1].lat, 50), percentile(hosts[2].lat, 50)
		b.ReportMetric(msOf(off), "off-first-turn-p50-ms")
		b.ReportMetric(msOf(on), "sandboxed-first-turn-p50-ms")
		b.ReportMetric(msOf(on-off), "first-turn-delta-ms")
		b.ReportMetric(msOf(rec), "recycled-first-turn-p50-ms")
		b.ReportMetric(msOf(rec-off), "recycled-first-turn-delta-ms")
	}
}

// assertRunsAs fails the benchmark unless clawhost d runs as as (nil: the
// test's user, not checked).
func assertRunsAs(b *testing.B, d *Daemon, as *hostUser) {
	b.Helper()
	if as == nil {
		return
	}
	if uid := lpUID(b, d.cmd.Process.Pid); uid != strconv.FormatUint(uint64(as.uid), 10) {
		b.Fatalf("clawhost runs as uid %s, not %s's", uid, as.name)
	}
}

// hostUserName names the user clawhost runs as, for a log line.
func hostUserName(u *hostUser) string {
	if u == nil {
		return "the test's user"
	}
	return u.name
}
