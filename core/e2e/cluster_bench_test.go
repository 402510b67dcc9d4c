package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// BenchmarkClusterLoad: messages/s end to end (fake Bot API, the telegram
// plugin, clawhost, the fake claude) with 1, 2 and 3 hosts on one
// PostgreSQL, and SQLite's one host beside them, in interleaved rounds
// (medians reported); and what each message costs the shared database:
// its transactions (each single-statement write or read is one, a
// multi-statement write one with its BEGIN and COMMIT) and the rows it
// inserts, updates and deletes, from pg_stat_database.
//
//	make build && go test ./core/e2e -run '^$' -bench ClusterLoad -benchtime 1x
//
// With the defaults every message starts a fake claude (100 chats share
// max_warm 4), which dominates the CPU; -args -load.agent='max_warm = 100'
// leaves the host's own path.
//
// All the hosts run on this one machine (2 shared cores), so more hosts
// add no CPU: what the figures show is the cost of the coordination
// (placement, handing messages to the session's host, replies relayed to
// the poller), not the capacity a second machine adds.
func BenchmarkClusterLoad(b *testing.B) {
	srv := pgtest.Cluster(b)
	const rounds = 3
	setups := []struct {
		name  string
		hosts int // 0: SQLite
	}{{"sqlite-1", 0}, {"postgres-1", 1}, {"postgres-2", 2}, {"postgres-3", 3}}
	for b.Loop() {
		res := map[string][]clusterRound{}
		for r := range rounds {
			for _, s := range setups {
				cr := clusterLoadRound(b, srv, s.hosts, r)
				res[s.name] = append(res[s.name], cr)
				b.Logf("round %d %s: %.0f msg/s, %.1f transactions/msg, %.1f rows written/msg", r+1, s.name, cr.rate(), cr.xacts, cr.rows)
			}
		}
		for _, s := range setups {
			m := clusterMedian(res[s.name])
			b.ReportMetric(m.rate(), s.name+"-msgs/s")
			if s.hosts > 0 {
				b.ReportMetric(m.xacts, s.name+"-xacts/msg")
				b.ReportMetric(m.rows, s.name+"-rows/msg")
			}
		}
	}
}

// clusterRound is one round of one setup.
type clusterRound struct {
	elapsed     time.Duration
	msgs        int
	xacts, rows float64 // per message
}

func (r clusterRound) rate() float64 { return float64(r.msgs) / r.elapsed.Seconds() }

func clusterMedian(rs []clusterRound) clusterRound {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b clusterRound) int { return int(a.elapsed - b.elapsed) })
	return s[len(s)/2]
}

// clusterLoadChats × clusterLoadPerChat messages per round.
const (
	clusterLoadChats   = 100
	clusterLoadPerChat = 5
)

// clusterLoadRound starts hosts (0: one on SQLite) on a fresh database,
// runs the load and stops them.
func clusterLoadRound(b *testing.B, srv *pgtest.Server, hosts, round int) clusterRound {
	tg := telegramtest.NewServer(tgToken)
	defer tg.Close()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	url := ""
	if hosts > 0 {
		url = srv.NewDatabase(b)
	}
	var ds []*daemon
	for i := range max(hosts, 1) {
		dir := filepath.Join(b.TempDir(), fmt.Sprintf("r%d-h%d", round, i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		h := loadHost(dir, exe, filepath.Join(dir, "runs.jsonl"), nil, tg.APIEndpoint())
		if url != "" {
			h.Storage = Attrs{"engine": "postgres", "url": url, "host_id": fmt.Sprintf("h%d", i+1), "lease_ttl": "3s"}
		}
		ds = append(ds, Start(b, h))
	}
	defer func() {
		for _, d := range ds {
			loadStop(d)
		}
	}()
	deadline := time.Now().Add(tgWait)
	for len(tg.Requests("getUpdates")) == 0 || len(tg.Commands()) == 0 {
		if time.Now().After(deadline) {
			b.Fatalf("the bot is not served after %v", tgWait)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if hosts > 1 {
		time.Sleep(2 * time.Second) // every host sees the others live
	}
	var before, after [2]int64
	if url != "" {
		before = pgStats(b, url)
	}
	lr := loadRunN(b, tg, "clawhost", clusterLoadChats, clusterLoadPerChat)
	res := clusterRound{elapsed: lr.elapsed, msgs: clusterLoadChats * clusterLoadPerChat}
	if url != "" {
		time.Sleep(1500 * time.Millisecond) // idle backends flush their statistics within a second
		after = pgStats(b, url)
		res.xacts = float64(after[0]-before[0]) / float64(res.msgs)
		res.rows = float64(after[1]-before[1]) / float64(res.msgs)
	}
	return res
}

// pgStats reads the database's committed transactions and written rows.
func pgStats(b *testing.B, url string) [2]int64 {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	// The statistics are flushed by the backends now and then: ask for a
	// fresh snapshot.
	_, _ = conn.Exec(ctx, `SELECT pg_stat_clear_snapshot()`)
	var s [2]int64
	if err := conn.QueryRow(ctx, `SELECT xact_commit, tup_inserted + tup_updated + tup_deleted FROM pg_stat_database WHERE datname = current_database()`).Scan(&s[0], &s[1]); err != nil {
		b.Fatal(err)
	}
	return s
}
