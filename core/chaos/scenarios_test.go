package chaos

import (
	"github.com/clawhost/clawhost/core/e2e"

	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// scenario is one kind of fault.
type scenario struct {
	name   string
	prefix string // of its message marks
	// long and short are the trials of `make chaos` and of TestChaosShort.
	long, short int
	// window: the fault strikes at a random moment in [0, window) after
	// the trial's first message.
	window time.Duration
	// tmpfs: the data directory is a small tmpfs (disk-full).
	tmpfs bool
	// inject strikes, with r a random number drawn for it, and returns
	// the moment recovery starts.
	inject func(e *env, r uint64) time.Time
	// before, when set, runs before trial i (not a fault).
	before func(e *env, i int)
	// hosts > 1: the multi-host mode (cluster_test.go); defaultTTL: the
	// hosts run with the default storage.lease_ttl (5 s), not clusterTTL.
	hosts      int
	defaultTTL bool
	// noFalseNotices: the tally fails a "may be missing" notice that
	// excuses no missing part (a graceful stop must send none).
	// platform is the chat platform ("" Telegram, "slack"; platform_test.go).
	platform string
	// settle, when set, bounds the wait for a trial's messages instead of
	// settleLimit: for faults whose recovery is a client's timeout.
	settle time.Duration
	// sendingHook: a message_sending hook (the exec-hook example running
	// signScript) shapes every reply, streaming is off, and the tally
	// fails a reply the chat shows unshaped.
	sendingHook bool
	// tools: claude calls send_file and react in most turns (through
	// the host's MCP server); the tally fails a file the chat got twice
	// or not at all, and a reaction missing or set more often than
	// claude asked.
	tools bool
	// pluginTool: claude calls a plugin tool with a side effect (the
	// whoami-tool example's note: a line in the workspace's notes.txt)
	// in most turns; the tally counts a note written twice for one
	// message (done ×2), and one missing from a reply claude gave.
	pluginTool bool
	// longTurns: every turn runs past the turn card's delay, so the chat
	// shows cards; the tally fails any message left with a live Stop
	// button.
	longTurns bool
	// limit: the fake claude answers at claude's usage limit while the
	// scenario's limit file says so (limitFile).
	limit bool
	// noFalseNotices: see hosts.
	noFalseNotices bool
}

// signScript is the sending-hook scenario's message_sending program: it
// writes each part's run of x as y, so a reply the chat shows with x's
// was sent without going through the hook.
const signScript = `#!/usr/bin/python3
import json, sys
req = json.load(sys.stdin)
json.dump({"rewrite": True, "text": req["text"].replace("x" * 90, "y" * 90)}, sys.stdout)
`

// pluginKillsPerHost: plugin-kill9 restarts the host gracefully after this
// many kills. The host restarts a crashed plugin with a crash-loop
// backoff (50 ms doubling to 30 s, reset after a minute of stable
// running); killing the plugin every few seconds for 50 trials would
// measure that cap (30 s, as a first campaign showed), not the recovery
// from a crash. The backoff itself is core/pluginhost's to test.
const pluginKillsPerHost = 5

// pluginHostRestart restarts the host gracefully every
// pluginKillsPerHost trials of a plugin-kill scenario.
func pluginHostRestart(e *env, i int) {
	if i > 0 && i%pluginKillsPerHost == 0 {
		e.restartHost(syscall.SIGTERM)
		e.waitUntil(30*time.Second, func() bool { return e.pluginPID() != 0 })
	}
}

// pluginKill9 sends the channel plugin SIGKILL (the host restarts it; the
// platform delivers again what the plugin had not confirmed).
func pluginKill9(e *env, r uint64) time.Time {
	e.unconfirmed(r)
	defer e.plat.clearFailures()
	var pid int
	e.waitUntil(3*time.Second, func() bool { pid = e.pluginPID(); return pid != 0 })
	if pid == 0 {
		e.notes = append(e.notes, "no plugin process to kill")
		return time.Now()
	}
	fmt.Fprintf(e.log, "\n===== chaos: SIGKILL to the plugin %d at %s =====\n", pid, time.Now().Format(time.RFC3339Nano))
	_ = syscall.Kill(pid, syscall.SIGKILL)
	e.faults++
	return time.Now()
}

// apiMethods are the calls an API fault may hit.
var apiMethods = []string{"sendMessage", "sendMessage", "editMessageText", "getUpdates"}

// apiFault makes one or two calls of a randomly chosen method fail with f.
func apiFault(f func(r uint64) telegramtest.Failure) func(*env, uint64) time.Time {
	return func(e *env, r uint64) time.Time {
		method := apiMethods[r%uint64(len(apiMethods))]
		times := 1 + int(r/7%2)
		e.tg().Fail(method, times, f(r))
		e.faults++
		fmt.Fprintf(e.log, "\n===== chaos: %d x %s fails with %+v at %s =====\n", times, method, f(r), time.Now().Format(time.RFC3339Nano))
		return time.Now()
	}
}

var scenarios = []scenario{
	{name: "host-kill9", prefix: "hk", long: 100, short: 3, window: 2500 * time.Millisecond, inject: func(e *env, r uint64) time.Time {
		e.faults++
		e.unconfirmed(r)
		return e.restartHost(syscall.SIGKILL)
	}},
	{name: "sending-hook-kill9", prefix: "sh", long: 30, window: 2500 * time.Millisecond, sendingHook: true, inject: func(e *env, r uint64) time.Time {
		e.faults++
		e.unconfirmed(r)
		return e.restartHost(syscall.SIGKILL)
	}},
	{name: "host-sigterm", prefix: "ht", long: 30, short: 2, window: 2500 * time.Millisecond, inject: func(e *env, r uint64) time.Time {
		e.faults++
		e.unconfirmed(r)
		return e.restartHost(syscall.SIGTERM)
	}},
	{name: "plugin-kill9", prefix: "pk", long: 50, short: 2, window: 2500 * time.Millisecond, before: pluginHostRestart, inject: pluginKill9},
	// The same against the slack plugin over Socket Mode: envelopes the
	// host stored but the fake never saw acknowledged come again.
	{name: "slack-plugin-kill9", prefix: "sk", long: 20, short: 1, window: 2500 * time.Millisecond, platform: "slack",
		before: pluginHostRestart, inject: pluginKill9},
	{name: "slack-host-kill9", prefix: "sh", long: 20, short: 1, window: 2500 * time.Millisecond, platform: "slack", inject: func(e *env, r uint64) time.Time {
		e.faults++
		e.unconfirmed(r)
		return e.restartHost(syscall.SIGKILL)
	}},
	// claude calls send_file and react (the fake's MCP calls reach the
	// host's own tools) before it thinks; the host is killed -9 at a
	// random moment, often between a tool call and the reply.
	{name: "tools-host-kill9", prefix: "tk", long: 15, short: 1, window: 2500 * time.Millisecond, tools: true, inject: func(e *env, r uint64) time.Time {
		e.faults++
		e.unconfirmed(r)
		return e.restartHost(syscall.SIGKILL)
	}},
	// claude calls a plugin tool with a side effect (a note per message)
	// before it thinks; the host is killed -9 at a random moment, often
	// between the call and the reply: the re-run makes the call again
	// and must get the stored result, not a second note.
	{name: "plugin-tool-kill9", prefix: "pt", long: 15, short: 1, window: 2500 * time.Millisecond, pluginTool: true, inject: func(e *env, r uint64) time.Time {
		e.faults++
		e.unconfirmed(r)
		return e.restartHost(syscall.SIGKILL)
	}},
	// Long turns show turn cards; once one is live the host is killed
	// -9 within a card tick or two (between the card's last edit and the
	// answer): the re-run's answer takes the card over.
	{name: "turn-card-kill9", prefix: "tc", long: 6, window: 1500 * time.Millisecond, longTurns: true, inject: turnCardKill9},
	// claude's usage limit strikes for a few seconds; the host parks the
	// turns it refused and is killed -9 while they are parked or just as
	// the reset releases them.
	{name: "usage-limit-kill9", prefix: "ul", long: 6, window: 1500 * time.Millisecond, limit: true, inject: usageLimitKill9},
	{name: "claude-kill9", prefix: "ck", long: 20, short: 1, window: 2000 * time.Millisecond, inject: func(e *env, r uint64) time.Time {
		var pids []int
		e.waitUntil(3*time.Second, func() bool { pids = e.claudeProcs(); return len(pids) > 0 })
		if len(pids) == 0 {
			e.notes = append(e.notes, "no claude process to kill")
			return time.Now()
		}
		pid := pids[r%uint64(len(pids))]
		fmt.Fprintf(e.log, "\n===== chaos: SIGKILL to claude %d at %s =====\n", pid, time.Now().Format(time.RFC3339Nano))
		_ = syscall.Kill(pid, syscall.SIGKILL)
		e.faults++
		return time.Now()
	}},
	{name: "api-drop", prefix: "ad", long: 10, short: 1, window: 2000 * time.Millisecond,
		inject: apiFault(func(uint64) telegramtest.Failure { return telegramtest.AcceptedThenDropped() })},
	{name: "api-malformed", prefix: "am", long: 10, short: 1, window: 2000 * time.Millisecond,
		inject: apiFault(func(uint64) telegramtest.Failure { return telegramtest.AcceptedMalformed() })},
	{name: "api-5xx", prefix: "a5", long: 8, window: 2000 * time.Millisecond,
		inject: apiFault(func(r uint64) telegramtest.Failure { return telegramtest.ServerError([]int{500, 502, 503}[r%3]) })},
	{name: "api-429", prefix: "a4", long: 8, window: 2000 * time.Millisecond,
		inject: apiFault(func(r uint64) telegramtest.Failure { return telegramtest.TooManyRequests(1 + int(r%2)) })},
	{name: "api-silence", prefix: "as", long: 6, window: 2000 * time.Millisecond,
		inject: apiFault(func(r uint64) telegramtest.Failure {
			return telegramtest.Slow(time.Duration(3+r%4) * time.Second)
		})},
	// A silenced call ends only at the plugin's timeout: 20 s for a send,
	// poll_timeout 30 s + 10 s for getUpdates, with 1, 2, 4 s of backoff
	// between. Two silenced polls of a trial, plus one a previous trial's
	// fault had already taken (ClearFailures cannot take back a call in
	// flight), hold inbound for 3 × 40 s + 7 s: more than settleLimit.
	{name: "api-timeout", prefix: "at", long: 2, window: 2000 * time.Millisecond, settle: 3 * time.Minute,
		inject: apiFault(func(uint64) telegramtest.Failure { return telegramtest.AcceptedSilence() })},
	{name: "store-locked", prefix: "sl", long: 6, short: 1, window: 1500 * time.Millisecond, inject: func(e *env, r uint64) time.Time {
		hold := time.Duration(3+r%4) * time.Second
		release, err := lockDatabase(filepath.Join(e.data, "clawhost.db"))
		if err != nil {
			e.notes = append(e.notes, "lock: "+err.Error())
			return time.Now()
		}
		e.faults++
		fmt.Fprintf(e.log, "\n===== chaos: database locked for %v at %s =====\n", hold, time.Now().Format(time.RFC3339Nano))
		time.Sleep(hold)
		release()
		return time.Now()
	}},
	{name: "disk-full", prefix: "df", long: 5, window: 1500 * time.Millisecond, tmpfs: true, inject: func(e *env, r uint64) time.Time {
		hold := time.Duration(3+r%3) * time.Second
		filler := filepath.Join(e.data, "filler")
		if err := e2e.FillDisk(filler); err != nil {
			e.notes = append(e.notes, "fill: "+err.Error())
			return time.Now()
		}
		e.faults++
		fmt.Fprintf(e.log, "\n===== chaos: disk full for %v at %s =====\n", hold, time.Now().Format(time.RFC3339Nano))
		time.Sleep(hold)
		_ = os.Remove(filler)
		return time.Now()
	}},
	// Three hosts on one PostgreSQL (cluster_test.go): kill -9 of the
	// host that polls the bot (the others take the channel lease over),
	// of a host that only runs turns (its sessions and open entries move),
	// a graceful stop of any host (it hands its leases back).
	{name: "cluster-poller-kill9", prefix: "cp", long: 30, short: 1, hosts: 3, window: 2500 * time.Millisecond, inject: clusterFault("poller", syscall.SIGKILL)},
	{name: "cluster-worker-kill9", prefix: "cw", long: 30, hosts: 3, window: 2500 * time.Millisecond, inject: clusterFault("worker", syscall.SIGKILL)},
	{name: "cluster-sigterm", prefix: "cs", long: 15, hosts: 3, window: 2500 * time.Millisecond, inject: clusterFault("any", syscall.SIGTERM)},
	// Issue 85's failover campaign at the default lease_ttl (5 s): a
	// kill -9 of any host every trial — a message is given up only after
	// claude truly read its prompt twice ("given up" = "ran twice") —, and
	// a SIGTERM of any host every trial — no chat is told a part "may be
	// missing" that arrived ("false notices" 0).
	{name: "cluster-kill9-storm", prefix: "cx", long: 20, hosts: 3, defaultTTL: true, window: 5 * time.Second, inject: clusterFault("any", syscall.SIGKILL)},
	{name: "cluster-sigterm-storm", prefix: "cy", long: 15, hosts: 3, defaultTTL: true, noFalseNotices: true, window: 5 * time.Second,
		inject: clusterFault("any", syscall.SIGTERM)},
}

// unconfirmed: in half the trials (r odd) the platform is not told for a
// while before a kill what the host already stored and acked (Telegram's
// getUpdates fails with 502, Slack's acknowledgements are lost): the next
// plugin process gets those messages again, and the host's durable
// dedupe must drop them. Without this a
// random kill almost never lands in the few milliseconds between an ack
// and the next poll. The failures end with the kill (restartHost clears
// them before the exec).
func (e *env) unconfirmed(r uint64) {
	if r%2 == 0 {
		return
	}
	e.plat.unconfirm()
	fmt.Fprintf(e.log, "\n===== chaos: the platform is not told what the host stored, before the kill, at %s =====\n", time.Now().Format(time.RFC3339Nano))
	time.Sleep(time.Duration(300+r%1200) * time.Millisecond)
}

// rngFor is the scenario's random source: the seed and its name.
func rngFor(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// lockDatabase holds the database with BEGIN EXCLUSIVE from another
// connection until release is called.
func lockDatabase(path string) (release func(), err error) {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	return func() {
		_, _ = conn.ExecContext(ctx, "ROLLBACK")
		conn.Close()
		db.Close()
	}, nil
}

// tmpfsSize is the disk-full scenario's data directory: enough for the
// database, its WAL and the plugin's state, filled up by fill.
const tmpfsSize = "16m"

// mountTmpfs mounts a tmpfs of size at dir; it returns why it cannot
// ("" when mounted).
func mountTmpfs(dir, size string) string {
	if os.Geteuid() != 0 {
		return "not root: cannot mount a tmpfs for the data directory"
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		return fmt.Sprintf("mount -t tmpfs failed: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// turnCardKill9 waits for a turn card with its Stop button in some chat,
// then kills the host -9 within the next 0–2.5 s: between the card's
// edits (every 2 s) and the answer.
func turnCardKill9(e *env, r uint64) time.Time {
	if !e.waitUntil(10*time.Second, func() bool { return len(e.liveStops()) > 0 }) {
		e.notes = append(e.notes, "no turn card showed before the kill")
	}
	time.Sleep(time.Duration(r%2500) * time.Millisecond)
	e.faults++
	return e.restartHost(syscall.SIGKILL)
}

// usageLimitKill9 sets claude's usage limit to reset 3–5 s from now; the
// host is killed -9 while the refused turns are parked (r even) or just
// as the reset releases them (r odd).
func usageLimitKill9(e *env, r uint64) time.Time {
	reset := time.Now().Add(time.Duration(3+r%3) * time.Second).Truncate(time.Second).Add(time.Second)
	if err := os.WriteFile(e.limitFile(), []byte(strconv.FormatInt(reset.Unix(), 10)), 0o600); err != nil {
		e.t.Fatal(err)
	}
	e.faults++
	fmt.Fprintf(e.log, "\n===== chaos: claude's usage limit until %s, at %s =====\n", reset.Format(time.RFC3339), time.Now().Format(time.RFC3339Nano))
	if r%2 == 0 {
		time.Sleep(time.Duration(500+r/2%1500) * time.Millisecond)
	} else {
		time.Sleep(time.Until(reset) + time.Duration(r/2%400)*time.Millisecond)
	}
	return e.restartHost(syscall.SIGKILL)
}

// limitFile holds the Unix time claude's usage limit resets at, when the
// scenario has one (#limit): the fake claude refuses turns until
// shortly before then.
func (e *env) limitFile() string { return filepath.Join(e.dir, "limit") }
