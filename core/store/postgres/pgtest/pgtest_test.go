package pgtest_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestDatabasesAreSeparate: two databases of one cluster share nothing.
func TestDatabasesAreSeparate(t *testing.T) {
	t0 := time.Now()
	s := pgtest.Cluster(t)
	t.Logf("cluster ready in %v (socket in %s)", time.Since(t0), s.Dir())
	ctx := context.Background()
	t0 = time.Now()
	urlA := s.NewDatabase(t)
	t.Logf("database created in %v", time.Since(t0))
	a, err := pgx.Connect(ctx, urlA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := pgx.Connect(ctx, s.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if _, err := a.Exec(ctx, `CREATE TABLE x (v int)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'x'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the first database does not see its own table: %d, %v", n, err)
	}
	if err := b.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'x'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second database sees the first's table: %d, %v", n, err)
	}
}

const envHelper = "PGTEST_HELPER_KILLED"

// TestHelperKilled is the test binary TestKilledBinaryTakesTheServer
// kills: it starts a cluster, says where, and waits.
func TestHelperKilled(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		t.Skip("run by TestKilledBinaryTakesTheServer")
	}
	s := pgtest.Cluster(t)
	os.Stdout.WriteString("URL " + s.URL("postgres") + " DIR " + s.Dir() + "\n")
	bufio.NewReader(os.Stdin).ReadString('\n') // until killed
}

// TestKilledBinaryTakesTheServer: a test binary killed with its cluster
// running (no Main to stop it) leaves no server behind, and its
// directory goes at the next start.
func TestKilledBinaryTakesTheServer(t *testing.T) {
	pgtest.Cluster(t) // skips or fails as the other tests when PostgreSQL is missing
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperKilled$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 4 || f[0] != "URL" || f[2] != "DIR" {
		// The helper failed: the rest of its output says why.
		stdin.Close()
		rest, _ := io.ReadAll(io.LimitReader(r, 64<<10))
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q, %v; then:\n%s", line, err, rest)
	}
	url, dir := f[1], f[3]
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal(err)
	}
	defer c.Close(context.Background())

	cmd.Process.Kill()
	cmd.Wait()
	// A backend ends its idle connection when the postmaster is gone:
	// reading from the connection returns then, without polling.
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	err = c.PgConn().WaitForNotification(wctx)
	if wctx.Err() != nil {
		if b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL) // not to leave it running
			}
		}
		os.RemoveAll(dir)
		t.Fatalf("the server outlived its killed test binary by 15 s: %v", err)
	}
	t.Logf("the connection ended: %v", err)

	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Fatalf("the killed binary's cluster directory should still be there: %v", err)
	}
	pgtest.RemoveLeftovers()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left over: %v", dir, err)
	}
}
