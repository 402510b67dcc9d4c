package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// The crash test re-executes the test binary as a writer process
// (TestCrashChild with crashDirEnv set), SIGKILLs it at a random moment and
// checks the database against what the child reported as done. The child
// prints a line only after the call returned success, so every reported
// fact must survive.
const (
	crashDirEnv   = "CLAWHOST_STORE_CRASH_DIR"
	crashRoundEnv = "CLAWHOST_STORE_CRASH_ROUND"
	crashSyncEnv  = "CLAWHOST_STORE_CRASH_SYNC"
	// The test re-accepts every reported message and expects a duplicate,
	// so the cap must not prune any key (TestDedupeCap covers the cap).
	crashDedupeMax = 1 << 20
)

func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("crash test helper; run by TestCrashRecovery")
	}
	round := os.Getenv(crashRoundEnv)
	ctx := context.Background()
	d, err := Open(ctx, dir, Options{Synchronous: os.Getenv(crashSyncEnv), DedupeMax: crashDedupeMax})
	if err != nil {
		fmt.Printf("E open: %v\n", err)
		os.Exit(1)
	}
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
		outMu.Unlock()
	}
	// Entries left unfinished by earlier rounds (after the parent's
	// Recover) are advanced too.
	open, err := d.ListUnfinished(ctx, 0, 0)
	if err != nil {
		say("E list: %v", err)
		os.Exit(1)
	}
	work := make(chan store.Entry, len(open)+1)
	for _, e := range open {
		work <- e
	}
	say("READY")
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for i := 0; ; i++ {
				var e store.Entry
				select {
				case e = <-work:
				default:
					mid := fmt.Sprintf("r%s-g%d-%d", round, g, i)
					r, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: strconv.Itoa(g), MessageID: mid, Message: []byte(`{}`)})
					if err != nil || r.Duplicate {
						say("E accept %s: %+v %v", mid, r, err)
						continue
					}
					say("A %d %s", r.ID, mid)
					e = store.Entry{ID: r.ID, State: store.StateAccepted, ChatID: strconv.Itoa(g), MessageID: mid, Instance: "tg"}
					if rng.IntN(4) == 0 {
						if r, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: e.ChatID, MessageID: mid}); err != nil || !r.Duplicate {
							say("E duplicate %s not detected: %+v %v", mid, r, err)
						}
					}
				}
				advance(ctx, d, e, rng, say)
			}
		}()
	}
	wg.Wait()
}

// advance moves an entry some random steps along its life, reporting each
// step that returned success.
func advance(ctx context.Context, d *DB, e store.Entry, rng *rand.Rand, say func(string, ...any)) {
	for rng.IntN(5) != 0 {
		var err error
		switch e.State {
		case store.StateAccepted:
			if rng.IntN(10) == 0 {
				err = d.Finish(ctx, store.FinishRequest{IDs: []int64{e.ID}, State: store.StateDropped, Reason: "test"})
				e.State = store.StateDropped
				break
			}
			err = d.Enqueue(ctx, e.ID, "s"+e.ChatID)
			e.State = store.StateQueued
		case store.StateQueued:
			err = d.Start(ctx, e.ID)
			e.State = store.StateProcessing
		case store.StateProcessing:
			err = d.RecordReply(ctx, store.Reply{JournalID: e.ID, Text: "ab", Chunks: []string{"a", "b"}})
			e.State = store.StateReplied
		case store.StateReplied:
			p, perr := d.PendingReply(ctx, e.ID)
			if perr != nil {
				say("E pending reply %d: %v", e.ID, perr)
				return
			}
			u := p.Unsent()
			if len(u) == 0 {
				say("E replied %d without unsent chunks", e.ID)
				return
			}
			var r store.MarkSentResult
			r, err = d.MarkSent(ctx, store.ChunkSent{JournalID: e.ID, Index: u[0].Index, PlatformIDs: []string{"p"}})
			if err == nil {
				say("C %d %d", e.ID, u[0].Index)
				if r.AllSent {
					e.State = store.StateDone
				}
			}
		default:
			return
		}
		if err != nil {
			say("E step %d from %s: %v", e.ID, e.State, err)
			return
		}
		say("S %d %s", e.ID, e.State)
	}
}

type crashFacts struct {
	msgID map[int64]string       // accepted entries
	rank  map[int64]int          // highest state rank reported
	sent  map[int64]map[int]bool // chunks reported sent
}

func (f *crashFacts) parse(t *testing.T, out []byte) (accepts int) {
	for _, line := range strings.Split(string(out), "\n") {
		fs := strings.Fields(line)
		if len(fs) == 0 {
			continue
		}
		switch fs[0] {
		case "E":
			t.Errorf("child: %s", line)
		case "A":
			if len(fs) != 3 {
				continue // cut by the kill
			}
			id, _ := strconv.ParseInt(fs[1], 10, 64)
			f.msgID[id] = fs[2]
			accepts++
		case "S":
			if len(fs) != 3 {
				continue
			}
			id, _ := strconv.ParseInt(fs[1], 10, 64)
			if r := store.State(fs[2]).Rank(); r > f.rank[id] {
				f.rank[id] = r
			}
		case "C":
			if len(fs) != 3 {
				continue
			}
			id, _ := strconv.ParseInt(fs[1], 10, 64)
			idx, _ := strconv.Atoi(fs[2])
			if f.sent[id] == nil {
				f.sent[id] = map[int]bool{}
			}
			f.sent[id][idx] = true
		}
	}
	return accepts
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("inside the child")
	}
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	facts := &crashFacts{msgID: map[int64]string{}, rank: map[int64]int{}, sent: map[int64]map[int]bool{}}
	total := 0
	const rounds = 12
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round),
			crashSyncEnv+"="+[]string{"FULL", "NORMAL"}[round%2]) // both survive kill -9
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		ready := make(chan struct{})
		eof := make(chan struct{})
		go func() {
			defer close(eof)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				out.Write(sc.Bytes())
				out.WriteByte('\n')
				if sc.Text() == "READY" {
					close(ready)
				}
			}
		}()
		select {
		case <-ready:
		case <-eof:
			cmd.Wait()
			t.Fatalf("round %d: child exited before it was ready; output:\n%s", round, out.String())
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("round %d: child not ready", round)
		}
		// Kill at a random point of the write stream (this sleep picks the
		// moment; nothing waits for time to pass).
		time.Sleep(time.Duration(20+rand.IntN(500)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-eof
		cmd.Wait()
		total += facts.parse(t, out.Bytes())
		verifyCrashFacts(t, ctx, dir, facts, round)
	}
	t.Logf("%d rounds, %d accepts reported, %d entries with state changes", rounds, total, len(facts.rank))
	if total == 0 {
		t.Fatal("children reported no accepts: the test checked nothing")
	}
}

func verifyCrashFacts(t *testing.T, ctx context.Context, dir string, f *crashFacts, round int) {
	t.Helper()
	d, err := Open(ctx, dir, Options{DedupeMax: crashDedupeMax})
	if err != nil {
		t.Fatalf("round %d: reopen after kill: %v", round, err)
	}
	defer d.Close()
	for id, mid := range f.msgID {
		e, err := d.Entry(ctx, id)
		if err != nil {
			t.Fatalf("round %d: accepted entry %d (%s) lost: %v", round, id, mid, err)
		}
		if e.MessageID != mid {
			t.Fatalf("round %d: entry %d is %s, want %s", round, id, e.MessageID, mid)
		}
		if e.State.Rank() < f.rank[id] {
			t.Fatalf("round %d: entry %d went backwards to %s (rank %d < %d)", round, id, e.State, e.State.Rank(), f.rank[id])
		}
		if e.Attempts > store.DefaultMaxAttempts {
			t.Fatalf("round %d: entry %d started %d times", round, id, e.Attempts)
		}
		for idx := range f.sent[id] {
			p, err := d.PendingReply(ctx, id)
			if err != nil || !p.Chunks[idx].Sent() {
				t.Fatalf("round %d: sent chunk %d of %d lost: %v", round, idx, id, err)
			}
		}
		if r, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: e.ChatID, MessageID: mid}); err != nil || !r.Duplicate || r.ID != id {
			t.Fatalf("round %d: re-accept of %s = %+v, %v; want duplicate of %d", round, mid, r, err, id)
		}
	}
	rec, err := d.Recover(ctx, store.RecoverOptions{})
	if err != nil {
		t.Fatalf("round %d: recover: %v", round, err)
	}
	for _, e := range rec.Resume {
		if f.rank[e.ID] >= store.StateReplied.Rank() {
			t.Fatalf("round %d: entry %d had a reply but is resumed for a run", round, e.ID)
		}
		// Recover's processing → queued is the one allowed step back.
		f.rank[e.ID] = min(f.rank[e.ID], e.State.Rank())
	}
	for _, p := range rec.Deliver {
		for idx := range f.sent[p.Entry.ID] {
			if !p.Chunks[idx].Sent() {
				t.Fatalf("round %d: delivered chunk %d of %d offered again", round, idx, p.Entry.ID)
			}
		}
	}
	for _, e := range rec.Failed {
		f.rank[e.ID] = store.StateFailed.Rank()
	}
	if len(rec.Stale) > 0 {
		t.Fatalf("round %d: %d stale replies within seconds", round, len(rec.Stale))
	}
	left, err := d.ListUnfinished(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if e.State == store.StateProcessing {
			t.Fatalf("round %d: entry %d still processing after Recover", round, e.ID)
		}
	}
}
