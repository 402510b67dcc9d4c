package chaos

import (
	"cmp"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

var (
	flagLong   = flag.Bool("chaos.long", false, "run the long campaign (TestChaos; make chaos sets it)")
	flagSeed   = flag.Uint64("chaos.seed", 0, "seed of every random choice (0: from the clock; printed)")
	flagTrials = flag.String("chaos.trials", "", "trials per scenario over the defaults, e.g. host-kill9=100,api-drop=5")
	flagOnly   = flag.String("chaos.only", "", "run only the scenarios whose name matches this regexp")
	flagBudget = flag.Duration("chaos.budget", 30*time.Minute, "wall-clock bound of the long campaign, shared among the scenarios by their trials (a scenario starts no trial after its share)")
	flagKeep   = flag.String("chaos.keep", "", "keep each scenario's directory (logs, run log, database) under this directory")
	// storage { durability } of the single-host scenarios: "process"
	// (no fsync) must keep every count at zero across kill -9 as the
	// default does (docs/guarantees.md).
	flagDurability = flag.String("chaos.durability", "", `storage durability of the single-host scenarios ("full", the default, or "process")`)
	// Sandboxed claudes: the campaign's claudes run in bubblewrap (recycled sandboxes
	// where they work, CLAWHOST_SANDBOX_HELPER as the host reads it) instead of sandbox =
	// "off"; the run log's directory is given to claude (add_dirs).
	flagSandbox = flag.Bool("chaos.sandbox", false, `run claude sandboxed (agent.sandbox = "auto") instead of "off"`)
)

// The test binary doubles as the fake claude CLI.
func TestMain(m *testing.M) {
	if os.Getenv(fakeclaude.EnvVar) != "" {
		fakeclaude.Main()
		return
	}
	os.Exit(pgtest.Main(m)) // the multi-host scenarios' PostgreSQL stops with the campaign
}

// shortSeed is TestChaosShort's fixed seed.
const shortSeed = 20261122

// TestChaosShort runs a few trials of most scenarios with a fixed seed:
// the campaign's regression test in make test. It fails on any lost or
// doubled message, re-run of a finished turn or orphan.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos campaign runs real processes")
	}
	campaign(t, options{seed: shortSeed, short: true})
}

// TestChaos is the long campaign (make chaos): the default trials of
// every scenario, bounded by -chaos.budget.
func TestChaos(t *testing.T) {
	if !*flagLong {
		t.Skip("the long campaign runs with make chaos (-chaos.long)")
	}
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano() % 1e9)
	}
	campaign(t, options{seed: seed, budget: *flagBudget})
}

type options struct {
	seed   uint64
	short  bool
	budget time.Duration
}

// trials is the number of trials of sc: its default, or -chaos.trials.
func trials(t *testing.T, sc scenario, short bool) int {
	n := sc.long
	if short {
		n = sc.short
	}
	for _, kv := range strings.Split(*flagTrials, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if ok && name == sc.name {
			var err error
			if n, err = strconv.Atoi(v); err != nil {
				t.Fatalf("-chaos.trials %q: %v", kv, err)
			}
		}
	}
	return n
}

func campaign(t *testing.T, o options) {
	var only *regexp.Regexp
	if *flagOnly != "" {
		only = regexp.MustCompile(*flagOnly)
	}
	start := time.Now()
	fmt.Printf("chaos campaign: seed %d (reproduce with -chaos.seed=%d)\n", o.seed, o.seed)
	// The budget is shared among the scenarios by their trials, so a
	// short budget runs fewer trials of every scenario rather than all of
	// the first ones and none of the last; time a scenario leaves unused
	// goes to the ones after it.
	left := 0
	for _, sc := range scenarios {
		if only == nil || only.MatchString(sc.name) {
			left += trials(t, sc, o.short)
		}
	}
	var rows []row
	for _, sc := range scenarios {
		n := trials(t, sc, o.short)
		if n == 0 || (only != nil && !only.MatchString(sc.name)) {
			continue
		}
		var deadline time.Time
		if o.budget > 0 {
			remaining := o.budget - time.Since(start)
			deadline = time.Now().Add(remaining * time.Duration(n) / time.Duration(left))
		}
		left -= n
		dir := t.TempDir()
		if *flagKeep != "" {
			dir = filepath.Join(*flagKeep, sc.name)
			_ = os.RemoveAll(dir)
		}
		e := newEnv(t, sc, dir)
		if !e.setup() {
			e.close()
			rows = append(rows, row{name: sc.name, skipped: true, notes: e.notes})
			fmt.Printf("%s: %s\n", sc.name, strings.Join(e.notes, "; "))
			continue
		}
		rng := rngFor(o.seed, sc.name)
		for i := range n {
			if !deadline.IsZero() && time.Now().After(deadline) {
				e.notes = append(e.notes, fmt.Sprintf("the scenario's share of the %v budget was used after %d of %d trials", o.budget, i, n))
				break
			}
			e.trial(i, rng)
		}
		e.stop()
		r := e.tally()
		e.close()
		rows = append(rows, r)
		fmt.Printf("%s: %d trials, %d messages, %d faults, %d host SIGKILLs, failures %d, ledger $%.6f of $%.6f, after %v\n",
			sc.name, r.trials, r.msgs, e.faults, r.kills, len(r.failures), r.costRecorded, r.costTrue, time.Since(start).Round(time.Second))
		for _, f := range r.failures {
			t.Errorf("%s: %s", sc.name, f)
		}
		for _, n := range r.notes {
			fmt.Printf("  note: %s\n", n)
		}
	}
	var b strings.Builder
	printTable(&b, rows)
	fmt.Printf("\n%s\nseed %d, %v\n", b.String(), o.seed, time.Since(start).Round(time.Second))
	for _, r := range rows {
		if r.failed() {
			t.Errorf("%s: %d lost, %d doubled, %d finished turns re-run, %d charged twice, %d costs off, %d Stop buttons left, %d orphans, %d unfinished, %d given up of which %d ran twice, %d false notices",
				r.name, r.lost, r.doubled, r.finishedReruns, r.chargedTwice, r.costOff, r.stopsLeft, r.orphans, r.unfinished, r.givenUp, r.ranTwice, r.falseNotices)
		}
	}
	if t.Failed() {
		t.Logf("table:\n%s", b.String())
	}
}

// trial runs one trial: its chats send, the fault strikes at its moment,
// and the trial waits for every message to settle.
func (e *env) trial(i int, rng *rand.Rand) {
	p := plan(rng, e.sc)
	at := time.Duration(rng.Int64N(int64(e.sc.window)))
	r := rng.Uint64()
	if e.sc.before != nil {
		e.sc.before(e, i)
	}
	fmt.Fprintf(e.log, "\n===== chaos: trial %d at %s =====\n", i, time.Now().Format(time.RFC3339Nano))
	sent := make(chan []*msg, 1)
	go func() { sent <- e.send(i, p) }()
	time.Sleep(at)
	recStart := e.sc.inject(e, r)
	ms := <-sent
	settledAt, ok := e.settle(ms)
	if ok {
		e.recovery = append(e.recovery, max(0, settledAt.Sub(recStart)))
	} else {
		var open []string
		for _, m := range ms {
			if !m.settled {
				open = append(open, m.mark)
			}
		}
		e.notes = append(e.notes, fmt.Sprintf("trial %d: %v not settled %v after the fault", i, open, cmp.Or(e.sc.settle, settleLimit)))
	}
	e.plat.clearFailures()
	e.checkGone(fmt.Sprintf("after trial %d", i))
	e.trials++
	if *flagLong {
		fmt.Printf("  %s trial %d: %d messages, settled %v, recovery %v\n", e.sc.name, i, len(ms), ok, settledAt.Sub(recStart).Round(time.Millisecond))
	}
}
