package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/internal/ownerdir"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestPluginSocketRefusesStrangers: a process of clawhost's own user that
// finds a plugin's unix socket (as code claude runs could) and dials it
// with a plain gRPC client gets nothing: Send (a text to the owner, and the
// admin token as a file), Receive, Configure and go-plugin's controller
// Shutdown all fail with Unauthenticated; the Bot API sees no message and
// the plugin keeps running for its host.
func TestPluginSocketRefusesStrangers(t *testing.T) {
	srv := telegramtest.NewServer(tgToken)
	h := Host{
		Dir:     t.TempDir(),
		Access:  Attrs{"dm_policy": "allowlist", "owners": []string{"tg:1001"}},
		Admin:   Attrs{"listen": "127.0.0.1:0"}, // makes <data_dir>/admin.token
		Plugins: []Plugin{tgPlugin(srv.APIEndpoint())},
	}
	t.Cleanup(srv.Close)
	d := startOnTelegram(t, srv, h)
	pids := pluginPIDs(d, 1)
	token := admin.TokenPath(filepath.Join(d.Dir(), "data"))
	sdktest.WaitFor(t, "the admin token the attack names", func() bool {
		_, err := os.Stat(token)
		return err == nil
	})

	attackPluginSocket(t, d, strconv.Itoa(tgAlice), token)

	for _, s := range srv.Sent() {
		what := strconv.Quote(s.Text)
		if s.File != nil {
			what = "file " + strconv.Quote(string(s.File.Data))
		}
		t.Errorf("the Bot API recorded a %s to chat %s sent by a stranger's call: %s", s.Method, s.ChatID, what)
	}
	for _, m := range []string{"sendMessage", "sendDocument", "sendPhoto"} {
		if r := srv.Requests(m); len(r) != 0 {
			t.Errorf("the Bot API got %d %s request(s)", len(r), m)
		}
	}
	if !alive(pids[0]) {
		t.Errorf("the plugin (pid %d) stopped after a stranger's Shutdown", pids[0])
	}
}

// TestPythonPluginSocketRefusesStrangers: the Python example checks the
// host's secret as the Go sdk does: a stranger on its socket is refused
// every call, its channel records no send, and it keeps running.
func TestPythonPluginSocketRefusesStrangers(t *testing.T) {
	t.Parallel()
	py := pythonPlugin(t)
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "py.addr")
	h := Host{Dir: dir, PluginDir: filepath.Dir(py), Admin: Attrs{"listen": "127.0.0.1:0"},
		Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"py:u1"}},
		Plugins: []Plugin{{Name: "py", Source: "python-echo", Config: Attrs{"addr_file": addrFile}}}}
	d := Launch(t, h.Write(t))
	d.waitFor(func() bool { _, err := os.Stat(addrFile); return err == nil }, "the Python plugin's address file")
	pid := pythonPID(d)
	token := admin.TokenPath(filepath.Join(dir, "data"))
	d.waitFor(func() bool { _, err := os.Stat(token); return err == nil }, "the admin token the attack names")

	attackPluginSocket(t, d, "chat-u1", token)

	addr, err := os.ReadFile(addrFile)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + strings.TrimSpace(string(addr)) + "/sent?after=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sent []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&sent); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 0 {
		t.Errorf("the Python channel recorded strangers' sends: %v", sent)
	}
	if !alive(pid) {
		t.Errorf("the Python plugin (pid %d) stopped after a stranger's Shutdown", pid)
	}
}

// TestPythonMediaGrant: the Python example's runtime, as built, computes the
// media grant of proto/PROTOCOL.md's example as the Go sdk does.
func TestPythonMediaGrant(t *testing.T) {
	t.Parallel()
	py := pythonPlugin(t)
	cmd := exec.Command("/usr/bin/python3", "-B", "-c", `import clawhost_plugin as c
print(c.media_grant("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "42", "7", "/tmp/report.txt").hex())`)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+py) // the executable zip is importable
	out, err := cmd.CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != "8ee845585adfbb66091243ba99f73217e47b5507e2fd35e57efd0cb61168baac" {
		t.Errorf("the Python runtime's grant: %s (%v); want the protocol's example", got, err)
	}
}

// attackPluginSocket dials the socket of the one plugin of d with a plain
// gRPC client, as a stranger of clawhost's own user would, and calls Send
// (a text to chat, then the file at path), Receive, Configure and
// go-plugin's controller Shutdown: each must fail with Unauthenticated.
func attackPluginSocket(t *testing.T, d *Daemon, chat, path string) {
	t.Helper()
	calls := []struct {
		name string
		call func(ctx context.Context, conn *grpc.ClientConn) error
	}{
		{"Send text", func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := pb.NewChannelServiceClient(conn).Send(ctx, &pb.SendRequest{ChatId: chat, Text: "hello from a stranger"})
			return err
		}},
		{"Send media", func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := pb.NewChannelServiceClient(conn).Send(ctx, &pb.SendRequest{ChatId: chat, Media: []*pb.OutboundMedia{{Path: path, Kind: "document"}}})
			return err
		}},
		{"Receive", func(ctx context.Context, conn *grpc.ClientConn) error {
			s, err := pb.NewChannelServiceClient(conn).Receive(ctx, &pb.ReceiveRequest{})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		}},
		{"Configure", func(ctx context.Context, conn *grpc.ClientConn) error {
			_, err := pb.NewPluginServiceClient(conn).Configure(ctx, &pb.ConfigureRequest{Instance: "tg", ConfigJson: []byte(`{"token":"x"}`)})
			return err
		}},
		{"Shutdown", func(ctx context.Context, conn *grpc.ClientConn) error {
			return conn.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{})
		}},
	}
	for _, c := range calls {
		// Found again for each call: a plugin an accepted call broke is
		// restarted on a new socket.
		conn, err := grpc.NewClient("unix:"+pluginSocket(t, d.Process().Pid), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		// The bound only ends a call the plugin wrongly accepted (a
		// Receive stream waits for messages).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = c.call(ctx, conn)
		cancel()
		conn.Close()
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s from a stranger: %v; want Unauthenticated", c.name, errOrNil(err))
		}
	}

}

// pluginSocket finds the unix socket of the one plugin of the host with
// process id hostPID, as another process of its user can: the host's
// socket directory (clawhost-sock-*, named by its owner file) in the temp
// dir, a plugin-dir* per process, a plugin* socket inside.
func pluginSocket(t *testing.T, hostPID int) string {
	t.Helper()
	var found []string
	sdktest.WaitFor(t, "the plugin's socket", func() bool {
		found = nil
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "clawhost-sock-*"))
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, ownerdir.File))
			if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(hostPID) {
				continue
			}
			socks, _ := filepath.Glob(filepath.Join(d, "plugin-dir*", "plugin*"))
			found = append(found, socks...)
		}
		return len(found) == 1
	})
	return found[0]
}

// errOrNil spells a nil error for a failure message.
func errOrNil(err error) error {
	if err == nil {
		return errors.New("no error (the call succeeded)")
	}
	return err
}
