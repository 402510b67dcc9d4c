package whatsapptest_test

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types/events"
	waLog "go.mau.fi/whatsmeow/util/log"

	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
)

// TestMain lets the test binary act as a separate client process (the
// plugin's situation): with WA_CHILD set it runs childClient instead of the
// tests.
func TestMain(m *testing.M) {
	if os.Getenv("WA_CHILD") == "1" {
		os.Exit(childClient())
	}
	os.Exit(m.Run())
}

// childClient connects a whatsmeow client wired only from WA_ADDR and
// WA_ROOT, with its store in WA_DB, and reports on stdout: "QR <code>",
// "CONNECTED", "MSG <id> <text>". Messages whose text starts with WA_REFUSE
// make the handler fail (no receipt). It runs until stdin closes or it is
// killed.
func childClient() int {
	key, err := hex.DecodeString(os.Getenv("WA_ROOT"))
	if err != nil || len(key) != 32 {
		fmt.Fprintln(os.Stderr, "bad WA_ROOT")
		return 2
	}
	whatsmeow.WACertPubKey = [32]byte(key)
	ctx := context.Background()
	db, err := sqlstore.New(ctx, "sqlite", "file:"+os.Getenv("WA_DB")+"?_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate", waLog.Noop)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dev, err := db.GetFirstDevice(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cli := whatsmeow.NewClient(dev, stderrLog{"child"})
	cli.SynchronousAck = true
	cli.EnableDecryptedEventBuffer = true
	hc := whatsapptest.NewHTTPClient(os.Getenv("WA_ADDR"))
	cli.SetWebsocketHTTPClient(hc)
	cli.SetPreLoginHTTPClient(hc)
	refuse := os.Getenv("WA_REFUSE")
	out := make(chan string, 64)
	go func() {
		for line := range out {
			fmt.Println(line)
		}
	}()
	cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		switch e := evt.(type) {
		case *events.QR:
			out <- "QR " + e.Codes[0]
		case *events.Connected:
			out <- "CONNECTED"
		case *events.UndecryptableMessage:
			out <- "UNDECRYPTABLE " + e.Info.ID
		case *events.Message:
			text := e.Message.GetConversation()
			out <- "MSG " + e.Info.ID + " " + text
			return refuse == "" || !strings.HasPrefix(text, refuse)
		}
		return true
	})
	if err := cli.Connect(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	cli.Disconnect()
	return 0
}

type child struct {
	cmd   *exec.Cmd
	lines chan string
	stdin io.WriteCloser
}

func startChild(t *testing.T, srv *whatsapptest.Server, db, refuse string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WA_CHILD=1", "WA_ADDR="+srv.Addr(), "WA_ROOT="+srv.RootKeyHex(), "WA_DB="+db, "WA_REFUSE="+refuse)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 64), stdin: stdin}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return c
}

// expect waits for a line with prefix and returns the rest of it.
func (c *child) expect(t *testing.T, prefix string) string {
	t.Helper()
	deadline := time.NewTimer(testTimeout)
	defer deadline.Stop()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited waiting for %q", prefix)
			}
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest)
			}
		case <-deadline.C:
			t.Fatalf("timed out waiting for %q from the child", prefix)
		}
	}
}

func TestClientProcessKilledAndRestarted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	srv := newServer(t)
	ctx := ctxT(t)
	db := filepath.Join(t.TempDir(), "wa.db")
	ct := addContact(t, srv, "15550001111", "200000000000001", "Alice")

	first := startChild(t, srv, db, "refuse")
	if err := srv.PairQR(ctx, first.expect(t, "QR ")); err != nil {
		t.Fatal(err)
	}
	first.expect(t, "CONNECTED")
	id, err := ct.SendText(ctx, whatsapptest.TextOptions{Text: "refuse me until the restart"})
	if err != nil {
		t.Fatal(err)
	}
	if got := first.expect(t, "MSG "); got != id+" refuse me until the restart" {
		t.Fatalf("child got %q", got)
	}
	// SIGKILL: no websocket close, no chance to send anything more.
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	for _, r := range srv.Receipts() {
		if r.ID == id {
			t.Fatalf("receipt for a refused message: %+v", r)
		}
	}

	// Stored messages come right after <success>, before whatsmeow's
	// events.Connected (which waits for the prekey and passive IQs).
	second := startChild(t, srv, db, "")
	if got := second.expect(t, "MSG "); got != id+" refuse me until the restart" {
		t.Fatalf("restarted child got %q", got)
	}
	if _, err := srv.WaitReceipt(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitLogins(ctx, 2); err != nil {
		t.Fatal(err)
	}
}

// stderrLog sends the child's whatsmeow warnings and errors to stderr, which
// the test shows.
type stderrLog struct{ module string }

func (l stderrLog) Warnf(msg string, args ...any)  { l.logf("WARN", msg, args...) }
func (l stderrLog) Errorf(msg string, args ...any) { l.logf("ERROR", msg, args...) }
func (l stderrLog) Infof(string, ...any)           {}
func (l stderrLog) Debugf(string, ...any)          {}
func (l stderrLog) Sub(m string) waLog.Logger      { return stderrLog{l.module + "/" + m} }
func (l stderrLog) logf(level, msg string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s: %s\n", level, l.module, fmt.Sprintf(msg, args...))
}
