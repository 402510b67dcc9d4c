// Package pgtest starts a throwaway PostgreSQL cluster for tests: the
// server from the machine's packages (Debian's postgresql, which
// `make postgres` installs), initialized in a temporary directory and
// listening only on a unix socket there, with fsync off. One cluster
// serves a whole test binary; every test gets a database of its own.
// It is a test harness: only tests import it.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.Cluster(t).NewDatabase(t)
//		...
//	}
//
// Without PostgreSQL the tests that ask for a cluster are skipped with a
// loud message, unless CLAWHOST_REQUIRE_POSTGRES=1 (make test sets it):
// then they fail and say how to install it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvRequire makes a missing PostgreSQL a failure instead of a skip.
const EnvRequire = "CLAWHOST_REQUIRE_POSTGRES"

// Server is a running cluster.
type Server struct {
	dir  string // the cluster's temporary directory; the socket is in it
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the server exited
	n    atomic.Int64
}

var (
	once    sync.Once
	shared  *Server
	errMiss error // PostgreSQL is not installed
	errRun  error // it is, but the cluster did not start
)

// Main runs the tests of a package and stops the cluster, if one was
// started, before the binary exits.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.stop()
	}
	os.Exit(code)
}

// Cluster returns the test binary's cluster, starting it at the first
// call. It skips (or, with CLAWHOST_REQUIRE_POSTGRES=1, fails) the test
// when PostgreSQL is not installed, and fails it when the cluster does not
// start.
func Cluster(t testing.TB) *Server {
	t.Helper()
	once.Do(func() { shared, errMiss, errRun = start() })
	switch {
	case errMiss != nil && os.Getenv(EnvRequire) == "1":
		t.Fatalf("PostgreSQL is required (%s=1) but %v; install it with `make postgres` (apt-get install postgresql)", EnvRequire, errMiss)
	case errMiss != nil:
		t.Skipf("SKIPPED: PostgreSQL is not installed (%v): the PostgreSQL tests did not run; `make postgres` installs it", errMiss)
	case errRun != nil:
		t.Fatalf("start PostgreSQL: %v", errRun)
	}
	return shared
}

// URL is the connection string of database db on the cluster.
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
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return s.URL(name)
}

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
// /usr/lib/postgresql/<version>/bin (newest first), else PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "initdb")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH")
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// start initializes and starts a cluster. PostgreSQL refuses to run as
// root: as root, it runs as the postgres user Debian's package creates.
func start() (*Server, error, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err, nil
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errors.New("running as root and there is no postgres user to run the server as"), nil
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// A short path: a unix socket's path is limited to ~107 bytes.
	dir, err := os.MkdirTemp("/tmp", "pg")
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
	logPath := filepath.Join(dir, "postgres.log")
	for try := 0; try < 5; try++ {
		port := 20000 + rand.IntN(40000)
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return fail(err)
		}
		cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=300", "-c", "shared_buffers=32MB")
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			logf.Close()
			return fail(err)
		}
		logf.Close()
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		s := &Server{dir: dir, port: port, cmd: cmd, done: exited}
		if err := s.waitReady(exited); err != nil {
			cmd.Process.Kill()
			<-exited
			log, _ := os.ReadFile(logPath)
			if strings.Contains(string(log), "could not create") || strings.Contains(string(log), "already in use") {
				continue // another cluster has the port's socket or lock file
			}
			return fail(fmt.Errorf("%v; server log:\n%s", err, tail(log)))
		}
		return s, nil, nil
	}
	return fail(errors.New("no free port after 5 tries"))
}

// waitReady connects until the server answers, for at most 30 s.
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			return errors.New("the server exited")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 30 s: %v", err)
		}
	}
}

func (s *Server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		// SIGQUIT: immediate shutdown; the cluster is thrown away.
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	os.RemoveAll(s.dir)
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
