package sqlite

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/procmem"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/storetest"
)

// payload is a typical normalized message (~300 bytes of JSON).
var payload = []byte(`{"channel":"telegram","chat_type":"group","sender":{"id":"1001","name":"Ada Lovelace","username":"ada"},` +
	`"text":"Could you summarise the thread above and list the open questions, please?","reply_to":"4711",` +
	`"mentions":["clawbot"],"timestamp":"2026-01-01T12:00:00Z","media":[]}`)

// openBench opens a store on a fresh directory with opts and closes it
// with the benchmark.
func openBench(b *testing.B, opts Options) *DB {
	b.Helper()
	d, err := Open(context.Background(), b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// perSender runs op b.N times from 1,000 concurrent senders, message n
// (its id) in chat n%1000, and reports the sustained rate as msgs/s.
func perSender(b *testing.B, op func(ctx context.Context, chat, id string) error) {
	var seq atomic.Int64
	b.SetParallelism(1000 / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			n := seq.Add(1)
			if err := op(ctx, strconv.FormatInt(n%1000, 10), strconv.FormatInt(n, 10)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
}

// BenchmarkAcceptParallel measures group-committed Accepts from 1,000
// concurrent senders (one session each); msgs/s is the sustained rate.
func BenchmarkAcceptParallel(b *testing.B) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		b.Run("sync="+sync, func(b *testing.B) {
			d := openBench(b, Options{Synchronous: sync})
			b.ReportAllocs()
			perSender(b, func(ctx context.Context, chat, id string) error {
				_, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: chat, MessageID: id, Message: payload})
				return err
			})
		})
	}
}

// BenchmarkLifecycleParallel runs the whole journal life of a message:
// Accept, Enqueue, Start, RecordReply (one chunk), MarkSent: five
// group-committed writes per message.
func BenchmarkLifecycleParallel(b *testing.B) {
	d := openBench(b, Options{})
	perSender(b, func(ctx context.Context, chat, id string) error { return journalLife(ctx, d, chat, id) })
}

// BenchmarkLifecycleSerial is one chat's messages one after another, as a
// warm turn writes them: Accept, Enqueue, Start, RecordReply (one chunk),
// MarkSent, each its own transaction, at durability "process" (no fsync:
// what is measured is the store's own work). cpu-us/msg is the process's
// CPU (user and system) per message.
//
//	go test ./core/store/sqlite -run '^$' -bench LifecycleSerial
func BenchmarkLifecycleSerial(b *testing.B) {
	d := openBench(b, Options{Synchronous: "NORMAL"})
	ctx := context.Background()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		n++
		if err := journalLife(ctx, d, "1", strconv.Itoa(n)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(n), "cpu-us/msg")
}

// journalLife is one message's life in the journal, each step its own
// write: Accept, Enqueue, Start, RecordReply (one chunk), MarkSent.
func journalLife(ctx context.Context, d *DB, chat, msgID string) error {
	r, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: chat, MessageID: msgID, Message: payload})
	if err == nil {
		err = d.Enqueue(ctx, r.ID, "s"+chat)
	}
	if err == nil {
		err = d.Start(ctx, r.ID)
	}
	if err == nil {
		err = d.RecordReply(ctx, store.Reply{JournalID: r.ID, Text: "ok", Chunks: []string{"ok"}})
	}
	if err == nil {
		_, err = d.MarkSent(ctx, store.ChunkSent{JournalID: r.ID, Index: 0, PlatformIDs: []string{"1"}})
	}
	return err
}

// processCPU is the process's user and system CPU so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchSession(i int) store.Session {
	return store.Session{
		Key: fmt.Sprintf("agent:main:tg:group:%06d", i), SessionID: fmt.Sprintf("s%06d", i),
		ClaudeSessionID: fmt.Sprintf("0b6c3f1e-0000-4000-8000-%012d", i), Turns: int64(i),
		Usage: store.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheCreationTokens: 300},
		Model: "claude-sonnet-4", Chat: []byte(`{"channel":"telegram","chat_type":"group","chat_id":"-100123","display":"Team chat"}`),
		LastTarget: store.Target{Instance: "tg", ChatID: "-100123"},
	}
}

func BenchmarkSessionGet(b *testing.B) {
	d := openBench(b, Options{})
	ctx := context.Background()
	for i := range 10_000 {
		storetest.PutSession(b, d, benchSession(i))
	}
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			key := benchSession(int(seq.Add(1) % 10_000)).Key
			if _, err := d.Session(ctx, key); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSessionUpdate replaces whole sessions with UpdateSession (a
// read and a write in one group-committed operation).
func BenchmarkSessionUpdate(b *testing.B) {
	d := openBench(b, Options{})
	ctx := context.Background()
	var seq atomic.Int64
	b.SetParallelism(100)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s := benchSession(int(seq.Add(1) % 10_000))
			if _, err := d.UpdateSession(ctx, s.Key, func(x *store.Session, _ bool) error { *x = s; return nil }); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// vmRSS returns this process's resident set size, in bytes.
func vmRSS(tb testing.TB) int64 {
	tb.Helper()
	u, ok := procmem.Read(os.Getpid())
	if !ok {
		tb.Skip("no resident set size (/proc/self/statm)")
	}
	return u.RSS
}

// BenchmarkSessionsRSS measures the resident memory added by 10,000 stored
// sessions: RSS of an open, idle store vs. after inserting them and
// reading every one back and listing the most recent ones (as the status
// page does). Run it alone:
//
//	go test ./core/store/sqlite -run '^$' -bench SessionsRSS -benchtime 1x
func BenchmarkSessionsRSS(b *testing.B) {
	for range b.N {
		ctx := context.Background()
		runtime.GC()
		debug.FreeOSMemory()
		before := vmRSS(b)
		d, err := Open(ctx, b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		idle := vmRSS(b)
		for i := range 10_000 {
			storetest.PutSession(b, d, benchSession(i))
		}
		for i := range 10_000 {
			if _, err := d.Session(ctx, benchSession(i).Key); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := d.RecentSessions(ctx, 0); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		after := vmRSS(b)
		d.Close()
		b.ReportMetric(float64(idle-before)/(1<<20), "MB-open")
		b.ReportMetric(float64(after-idle)/(1<<20), "MB-10k-sessions")
	}
}

// BenchmarkRecordReplyLedger is what the usage ledger costs a turn:
// RecordReply of one chunk without and with the turn's usage row, which
// is written in the same transaction (one commit, one fsync either way).
// Compare the two sub-benchmarks of one run.
func BenchmarkRecordReplyLedger(b *testing.B) {
	for _, withUsage := range []bool{false, true} {
		b.Run(fmt.Sprintf("usage=%v", withUsage), func(b *testing.B) {
			d := openBench(b, Options{Synchronous: "FULL"})
			ctx := context.Background()
			ids := begunTurns(b, d, b.N)
			var u *store.TurnUsage
			if withUsage {
				u = &store.TurnUsage{Agent: "main", Instance: "tg", ChatID: "5", Sender: "tg:5", Model: "claude-opus-5-5",
					InputTokens: 4426, OutputTokens: 2, CostUSD: 0.017744, Duration: 220 * time.Millisecond, Outcome: "ok"}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for _, id := range ids {
				if err := d.RecordReply(ctx, store.Reply{JournalID: id, Text: "echo: hello", Chunks: []string{"echo: hello"}, Usage: u}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// begunTurns accepts n messages of chat tg:5 and begins each one's turn, as a warm
// turn's reply finds them; it returns their ids.
func begunTurns(b *testing.B, d *DB, n int) []int64 {
	b.Helper()
	ctx := context.Background()
	ids := make([]int64, n)
	for i := range ids {
		res, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: "5", MessageID: strconv.Itoa(i), Message: payload})
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Begin(ctx, "k", res.ID); err != nil {
			b.Fatal(err)
		}
		ids[i] = res.ID
	}
	return ids
}
