package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// BenchmarkClusterLoad: messages/s end to end (fake Bot API, the telegram
// plugin, clawhost, the fake claude) with 1, 2 and 3 hosts on one
// PostgreSQL, and SQLite's one host beside them, in interleaved rounds
// (medians reported); and what each message costs the shared database:
// its transactions (each single-statement write or read is one, a
// multi-statement write one with its BEGIN and COMMIT) and the rows it
// inserts, updates and deletes, from pg_stat_database; and what the
// ordering check (a session's host asks, before a message runs, whether
// an older one of its chat is still out of its hands) costs each message:
// how many checks, their time and their share of the transactions, from
// the hosts' /metrics (clawhost_cluster_order_*).
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
				b.Logf("round %d %s: %.0f msg/s, %.1f transactions/msg, %.1f rows written/msg, %.2f ordering checks/msg (%.0f µs/msg)",
					r+1, s.name, cr.rate(), cr.xacts, cr.rows, cr.checks, cr.checkTime.Seconds()*1e6)
			}
		}
		for _, s := range setups {
			m := clusterMedian(res[s.name])
			b.ReportMetric(m.rate(), s.name+"-msgs/s")
			if s.hosts > 0 {
				b.ReportMetric(m.xacts, s.name+"-xacts/msg")
				b.ReportMetric(m.rows, s.name+"-rows/msg")
				b.ReportMetric(m.checks, s.name+"-order-checks/msg")
				b.ReportMetric(m.checkTime.Seconds()*1e6, s.name+"-order-check-us/msg")
				if m.xacts > 0 {
					b.ReportMetric(100*m.checks/m.xacts, s.name+"-order-check-xacts-%")
				}
			}
		}
	}
}

// clusterRound is one round of one setup.
type clusterRound struct {
	elapsed     time.Duration
	msgs        int
	xacts, rows float64 // per message
	// checks: the ordering checks per message; checkTime their time.
	checks    float64
	checkTime time.Duration
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
	var admins []string
	for i := range max(hosts, 1) {
		dir := filepath.Join(b.TempDir(), fmt.Sprintf("r%d-h%d", round, i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		h := loadHost(dir, exe, filepath.Join(dir, "runs.jsonl"), nil, tg.APIEndpoint())
		if url != "" {
			h.Storage = Attrs{"engine": "postgres", "url": url, "host_id": fmt.Sprintf("h%d", i+1), "lease_ttl": "3s"}
			admins = append(admins, sdktest.FreeAddr(b))
			h.Admin = Attrs{"listen": admins[i]}
		}
		ds = append(ds, Start(b, h))
	}
	defer func() {
		for _, d := range ds {
			d.stop()
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
		var checks float64
		for _, a := range admins {
			c, sec := orderChecks(b, a)
			checks += c
			res.checkTime += time.Duration(sec * float64(time.Second))
		}
		res.checks = checks / float64(res.msgs)
		res.checkTime /= time.Duration(res.msgs)
	}
	return res
}

// orderChecks reads a host's ordering checks and their seconds from its
// /metrics (counted since it started: the load is all it did).
func orderChecks(b *testing.B, addr string) (checks, seconds float64) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+AdminToken(addr))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "clawhost_cluster_order_checks_total":
			checks, _ = strconv.ParseFloat(v, 64)
		case "clawhost_cluster_order_check_seconds_total":
			seconds, _ = strconv.ParseFloat(v, 64)
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return checks, seconds
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
