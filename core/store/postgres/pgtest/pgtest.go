// Package pgtest starts a throwaway PostgreSQL cluster for tests: the
// server from the machine's packages (Debian's postgresql, which
// `make postgres` installs), initialized in a temporary directory under
// /tmp and listening only on a unix socket there, with fsync off. One
// cluster serves a whole test binary, started at the first test that asks
// for it; every test gets a database of its own. It is a test harness:
// only tests import it.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.Cluster(t).NewDatabase(t)
//		...
//	}
//
// Without PostgreSQL the tests that ask for a cluster are skipped with a
// loud message, unless CLAWHOST_REQUIRE_POSTGRES=1 (make test sets it):
// then they fail and say how to install it.
//
// Main stops the cluster and removes its directory when the tests end. A
// test binary that dies without returning from Main (a panic, -timeout,
// kill) takes the server with it (the server gets SIGKILL when its parent
// dies); the directory it leaves is removed by the next cluster started
// on the machine.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/deathsig"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/ownerdir"

	"github.com/jackc/pgx/v5"
)

// EnvRequire makes a missing PostgreSQL a failure instead of a skip.
const EnvRequire = "CLAWHOST_REQUIRE_POSTGRES"

// Server is a running cluster. Its superuser is clawhost, with trust
// authentication over the socket.
type Server struct {
	dir  string // the cluster's temporary directory; the socket is in it
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the server exited
	n    atomic.Int64  // databases created
}

var (
	once    sync.Once
	shared  *Server
	errMiss error        // PostgreSQL is not installed
	errRun  error        // it is, but the cluster did not start
	skipped atomic.Int64 // tests skipped for errMiss
)

// Main runs the tests of a package (m.Run) and then stops the cluster, if
// a test started one, removes its directory and returns the tests' code.
// Call it from TestMain in every package that uses Cluster:
// os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	if n := skipped.Load(); n > 0 {
		// Again where it shows without -v (go test in a package's
		// directory; go test ./... shows a passing package's output only
		// with -v).
		fmt.Fprintf(os.Stderr, "pgtest: SKIPPED %d tests: PostgreSQL not installed (%v); install it with `make postgres` (or apt-get install postgresql)\n", n, errMiss)
	}
	return code
}

// Cluster returns the test binary's cluster, starting it at the first
// call. It skips (or, with CLAWHOST_REQUIRE_POSTGRES=1, fails) the test
// when PostgreSQL is not installed, and fails it when the cluster did not
// start; a failure to start is not retried, every caller gets it.
func Cluster(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { shared, errMiss, errRun = start() })
	switch {
	case errMiss != nil && os.Getenv(EnvRequire) == "1":
		t.Fatalf("PostgreSQL is required (%s=1) but not installed: %v; install it with `make postgres` (or apt-get install postgresql)", EnvRequire, errMiss)
	case errMiss != nil:
		skipped.Add(1)
		t.Skipf("SKIPPED: PostgreSQL not installed; the PostgreSQL tests did NOT run (%v). Install it with `make postgres` (or apt-get install postgresql); make test requires it", errMiss)
	case errRun != nil:
		t.Fatalf("start PostgreSQL: %v", errRun)
	}
	return shared
}

// URL is the connection string (for pgx or libpq) of database db on the
// cluster.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://clawhost@/%s?host=%s&port=%d&sslmode=disable", db, s.dir, s.port)
}

// Dir is the cluster's directory, where its socket is.
func (s *Server) Dir() string { return s.dir }

// NewDatabase creates an empty database for t, dropped when t ends, and
// returns its URL.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return s.URL(name)
}

// exec runs one statement in the maintenance database.
func (s *Server) exec(ctx context.Context, sql string) error {
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql)
	return err
}

// binDir finds the directory of initdb and postgres: Debian's
// /usr/lib/postgresql/<version>/bin (newest first; not on PATH), else the
// directory initdb on PATH resolves to (initdb runs the postgres next to
// it).
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.SliceStable(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if d := filepath.Dir(p); isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH")
}

// version is the number of /usr/lib/postgresql/<version>/bin: 15, 9.6.
func version(dir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// start initializes and starts a cluster: (server, nil, nil), or
// (nil, why PostgreSQL is missing, nil), or (nil, nil, why it did not
// start). PostgreSQL refuses to run as root: as root, initdb and the
// server run as the postgres user Debian's package creates.
func start() (*Server, error, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err, nil
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errors.New("running as root, and there is no postgres user to run the server as"), nil
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	removeLeftovers()
	// A short path: a unix socket's path is limited to ~107 bytes. The
	// directory names the test binary (core/internal/ownerdir).
	dir, err := ownerdir.Make("/tmp", "pg")
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*Server, error, error) {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := func(extra ...string) ([]byte, error) {
		args := append([]string{"-D", data, "-U", "clawhost", "--auth=trust", "-E", "UTF8", "--no-sync"}, extra...)
		cmd := exec.Command(filepath.Join(bin, "initdb"), args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd.CombinedOutput()
	}
	if out, err := initdb("--locale=C.UTF-8"); err != nil {
		os.RemoveAll(data)
		if out2, err2 := initdb("--no-locale"); err2 != nil {
			return fail(fmt.Errorf("initdb: %v\n%s\n%s", err2, out, out2))
		}
	}
	// The socket, .s.PGSQL.<port>, is in dir, which no other cluster
	// uses, so any port does; a random one still keeps clusters started
	// together apart in what the server derives from it (its System V
	// shared memory key), and a clash is retried.
	logPath := filepath.Join(dir, "postgres.log")
	var log []byte
	for range 5 {
		port := 20000 + rand.IntN(40000)
		s, err := run(bin, dir, port, logPath, cred)
		if err == nil {
			return s, nil, nil
		}
		log, _ = os.ReadFile(logPath)
		if !strings.Contains(string(log), "could not create lock file") && !strings.Contains(string(log), "already in use") {
			return fail(fmt.Errorf("%v; server log %s:\n%s", err, logPath, tail(log)))
		}
	}
	return fail(fmt.Errorf("no free port in 5 tries; server log:\n%s", tail(log)))
}

// run starts the server on port and waits until it takes connections.
func run(bin, dir string, port int, logPath string, cred *syscall.Credential) (*Server, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-k", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so that a ^C to the tests' group is not the
	// server's business; and SIGKILL when the test binary dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	deathsig.Set(cmd.SysProcAttr)
	// The parent-death signal comes when the thread that started the
	// child ends, not the process: the goroutine keeps its thread locked,
	// blocked in Wait, for as long as the server runs.
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	s := &Server{dir: dir, port: port, cmd: cmd, done: done}
	if err := s.waitReady(); err != nil {
		cmd.Process.Kill()
		<-done
		return nil, err
	}
	return s, nil
}

// waitReady connects until the server answers, for at most 30 s.
func (s *Server) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 30 s: %v", err)
		}
		select {
		case <-s.done:
			return fmt.Errorf("the server exited (%v)", s.cmd.ProcessState)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop shuts the server down at once (SIGQUIT, pg_ctl's immediate mode:
// the cluster is thrown away) and removes its directory.
func (s *Server) stop() {
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	os.RemoveAll(s.dir)
}

// removeLeftovers removes the directories of clusters whose test binary
// died without stopping them (their server died with it).
func removeLeftovers() { ownerdir.RemoveLeftovers("/tmp", "pg*", 0) }

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
