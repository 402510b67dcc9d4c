// Package matrixtest runs a real Matrix homeserver for tests: Dendrite
// (github.com/matrix-org/dendrite, Apache-2.0), built by `make dendrite`
// into .cache/dendrite, on loopback with SQLite and registration by
// shared secret only. Start starts one in a temporary directory and stops
// it when the test ends; Register makes accounts on it.
package matrixtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
	"maunium.net/go/mautrix/synapseadmin"
	_ "modernc.org/sqlite" // the databases created in WAL mode
)

// ServerName is the homeserver's name: user ids are @name:localhost.
const ServerName = "localhost"

// startTimeout bounds Dendrite's start (about 1.2 s measured on a busy
// two-core machine).
const startTimeout = 60 * time.Second

// Server is a running Dendrite.
type Server struct {
	// URL is the client-server API's base, http://127.0.0.1:<port>: the
	// front (see front) before Dendrite's own port.
	URL    string
	front  *http.Server
	secret string
	dir    string
	cmd    *exec.Cmd
	log    *bytes.Buffer
	mu     sync.Mutex
	done   chan struct{}
	exit   error // how Dendrite exited, once done is closed
}

// Bin is the directory of the Dendrite binaries: CLAWHOST_DENDRITE_DIR, else
// .cache/dendrite at the root of the checkout (the directory with go.work
// above the working directory).
func Bin() string {
	if d := os.Getenv("CLAWHOST_DENDRITE_DIR"); d != "" {
		return d
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return filepath.Join(dir, ".cache", "dendrite")
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ".cache/dendrite"
		}
		dir = up
	}
}

// Start runs a Dendrite for tb: it skips the test when the binaries are
// missing (fails with CLAWHOST_REQUIRE_DENDRITE=1), and stops the server
// and removes its directory when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := Bin()
	if _, err := os.Stat(filepath.Join(bin, "dendrite")); err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_DENDRITE") == "1" {
			tb.Fatalf("dendrite not found in %s (run make dendrite, or set CLAWHOST_DENDRITE_DIR)", bin)
		}
		tb.Skip("dendrite not built (make dendrite); set CLAWHOST_REQUIRE_DENDRITE=1 to fail instead")
	}
	s, err := start(bin, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		select {
		case <-s.done: // nothing stops Dendrite before the test ends
			tb.Errorf("dendrite exited during the test (%v): every check after that fails with it; its log is below", s.exit)
		default:
		}
		s.Stop()
		if tb.Failed() {
			tb.Logf("dendrite's log:\n%s", s.Log())
		}
	})
	return s
}

func start(bin, dir string) (*Server, error) {
	out, err := exec.Command(filepath.Join(bin, "generate-keys"), "--private-key", filepath.Join(dir, "matrix_key.pem")).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("generate-keys: %v: %s", err, out)
	}
	cfg, err := exec.Command(filepath.Join(bin, "generate-config"), "-ci", "-dir", dir, "-server", ServerName).Output()
	if err != nil {
		return nil, fmt.Errorf("generate-config: %v", err)
	}
	secret := fmt.Sprintf("e2e-secret-%d", time.Now().UnixNano())
	c := string(cfg)
	for _, r := range [][2]string{
		{"private_key: matrix_key.pem", "private_key: " + filepath.Join(dir, "matrix_key.pem")},
		{"registration_disabled: false", "registration_disabled: true"},
		{"registration_shared_secret: complement", "registration_shared_secret: " + secret},
		{"level: trace", "level: info"},
	} {
		if !strings.Contains(c, r[0]) {
			return nil, fmt.Errorf("generate-config's output has no %q", r[0])
		}
		c = strings.Replace(c, r[0], r[1], 1)
	}
	if err := walDatabases(c); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "dendrite.yaml")
	if err := os.WriteFile(cfgPath, []byte(c), 0o600); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{secret: secret, dir: dir, log: &bytes.Buffer{}, done: make(chan struct{})}
	if s.front, s.URL, err = front("http://" + port); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(filepath.Join(bin, "dendrite"), "-config", cfgPath, "-http-bind-address", port)
	s.cmd.Dir = dir
	s.cmd.Stdout = s
	s.cmd.Stderr = s
	if err := s.cmd.Start(); err != nil {
		s.front.Close()
		return nil, err
	}
	go func() { s.exit = s.cmd.Wait(); s.front.Close(); close(s.done) }()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/_matrix/client/versions", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("dendrite exited at start: %s", s.Log())
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("dendrite did not answer within %s: %s", startTimeout, s.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// walDatabases creates each SQLite database the configuration names in
// WAL mode before Dendrite opens it (the mode stays with the file;
// Dendrite drops a connection string's query, so it cannot be asked
// there). In the default rollback-journal mode a sync's read and a write
// of another of Dendrite's connections took each other's locks under load
// and waited out the 10 s busy timeout: the sync failed with SQLITE_BUSY
// and the event it should have carried never reached the plugin (seen as
// TestConformance's "no inbound message within 20s").
func walDatabases(cfg string) error {
	for _, line := range strings.Split(cfg, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "connection_string: file:")
		if !ok {
			continue
		}
		db, err := sql.Open("sqlite", "file:"+v)
		if err != nil {
			return err
		}
		_, err = db.Exec("PRAGMA journal_mode=WAL")
		db.Close()
		if err != nil {
			return fmt.Errorf("%s: journal_mode=WAL: %w", v, err)
		}
	}
	return nil
}

// front serves upstream (Dendrite's port) at a loopback address of its
// own, each request detached from its client's cancellation: a request
// whose client hung up runs to its end. Dendrite on SQLite turns a
// cancelled request into sqlite3_interrupt on a connection it shares, and
// under load that left the connection interrupted: every later request
// needing it was answered HTTP 500 "interrupted (9)" (seen in CI as all of
// TestConformance's checks failing after a plugin stopped during its
// login). The plugins' own cancellations are theirs to make; this is the
// homeserver the tests run against staying up through them.
func front(upstream string) (*http.Server, string, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, "", err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a hung-up client's reply has nowhere to go
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: detach(rp), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	return srv, "http://" + l.Addr().String(), nil
}

// detach is h with each request's context no longer ended by its client.
func detach(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
	})
}

// freePort is a loopback address nothing listens on.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Write collects Dendrite's output (Log).
func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

// Log is what Dendrite printed so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Stop ends Dendrite (SIGTERM, then SIGKILL after 10 s).
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Account is a registered user.
type Account struct {
	UserID      id.UserID
	Password    string
	AccessToken string
	DeviceID    id.DeviceID
}

// Register makes the account name (an admin when admin) by the shared
// secret, logged in on a fresh device.
func (s *Server) Register(ctx context.Context, name string, admin bool) (Account, error) {
	cli, err := mautrix.NewClient(s.URL, "", "")
	if err != nil {
		return Account{}, err
	}
	pw := "pw-" + name + "-e2e"
	resp, err := (&synapseadmin.Client{Client: cli}).SharedSecretRegister(ctx, s.secret,
		synapseadmin.ReqSharedSecretRegister{Username: name, Password: pw, Admin: admin})
	if err != nil {
		return Account{}, fmt.Errorf("registering %s: %w", name, err)
	}
	if resp.AccessToken == "" {
		return Account{}, errors.New("the registration returned no access token")
	}
	return Account{UserID: resp.UserID, Password: pw, AccessToken: resp.AccessToken, DeviceID: resp.DeviceID}, nil
}

// Client is a mautrix client logged in as a.
func (s *Server) Client(a Account) *mautrix.Client {
	cli, err := mautrix.NewClient(s.URL, a.UserID, a.AccessToken)
	if err != nil {
		panic(err) // s.URL is well formed
	}
	cli.DeviceID = a.DeviceID
	// A new connection per request: Dendrite may close an idle kept-alive
	// connection just as the next request goes out on it, and Go does not
	// retry a PUT (a test's send then fails with EOF).
	cli.Client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return cli
}
