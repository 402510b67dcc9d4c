package telegram_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/plugins/telegram"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

var alice = telegramtest.User{ID: 1001, FirstName: "Alice", Username: "alice"}

func config(t *testing.T, srv *telegramtest.Server) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"token": srv.Token(), "api_endpoint": srv.APIEndpoint(), "poll_timeout": 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func configure(t *testing.T, ctx context.Context, p *pluginclient.Plugin, cfg []byte) {
	t.Helper()
	diags, err := p.Configure(ctx, schema.Config{Instance: "tg", JSON: cfg, DataDir: t.TempDir()})
	if err != nil || len(diags) > 0 {
		t.Fatalf("configure: %v %v", err, diags)
	}
}

// startReceiving starts a plugin process (stopped when the test ends),
// configures it with cfg and opens its receive stream.
func startReceiving(t *testing.T, ctx context.Context, cfg []byte) (*sdktest.Harness, *pluginclient.Stream) {
	t.Helper()
	h := sdktest.Start(t, telegram.Plugin())
	configure(t, ctx, h.Plugin, cfg)
	s, err := h.Plugin.Receive(ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

func receiveOne(t *testing.T, s *pluginclient.Stream) pluginclient.Delivery {
	t.Helper()
	select {
	case d, ok := <-s.C:
		if !ok {
			t.Fatalf("stream ended: %v", s.Err())
		}
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery within 10s")
	}
	return pluginclient.Delivery{}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The plugin is stopped while its Deliver waits for the host's ack (the
// host got the message but had not stored it). getUpdates' offset has not
// moved, so the next plugin process gets the same update again.
func TestStopBeforeAckLosesNothing(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer("42:STOP")
	t.Cleanup(srv.Close)
	id := srv.PushText(telegramtest.PrivateChat(alice.ID), alice, "do not lose me")
	cfg := config(t, srv)

	var first pluginclient.Delivery
	t.Run("first process", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, s := startReceiving(t, ctx, cfg)
		first = receiveOne(t, s)
		if first.Message.Text != "do not lose me" {
			t.Fatalf("got %+v", first.Message)
		}
		// The plugin is blocked in Deliver now; give a wrong implementation
		// the chance to poll on.
		time.Sleep(200 * time.Millisecond)
		if srv.Offset() > id || srv.Pending() != 1 {
			t.Fatalf("offset %d confirmed update %d before the ack", srv.Offset(), id)
		}
		// The sub-test's cleanup stops the plugin without an ack.
	})
	if srv.Offset() > id || srv.Pending() != 1 {
		t.Fatalf("after the stop: offset %d, pending %d", srv.Offset(), srv.Pending())
	}

	t.Run("second process", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h, s := startReceiving(t, ctx, cfg)
		again := receiveOne(t, s)
		if again.Message.MessageID != first.Message.MessageID || again.Message.Text != first.Message.Text {
			t.Fatalf("redelivered %+v, want %+v", again.Message, first.Message)
		}
		if err := h.Plugin.Ack(ctx, again.ID); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "offset after ack", func() bool { return srv.Offset() == id+1 && srv.Pending() == 0 })
	})
}

// The optional capabilities over real gRPC.
func TestCapabilitiesOverTheWire(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer("42:WIRE")
	t.Cleanup(srv.Close)
	srv.AddFile("doc1", "documents/file_1.pdf", []byte("%PDF-1.7 body"))
	srv.AddFileWithSize("big", "documents/big.bin", bytes.Repeat([]byte("b"), 3000), -1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h := sdktest.Start(t, telegram.Plugin())
	// Capabilities are described once configured (before, the kinds
	// only).
	if d, err := h.Plugin.Describe(ctx); err != nil || !d.Channel || d.Capabilities.MaxTextLength != 0 {
		t.Fatalf("description before Configure %+v, %v", d, err)
	}
	configure(t, ctx, h.Plugin, config(t, srv))
	d, err := h.Plugin.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Typing || !d.Edit || !d.CommandMenu || !d.Reactions || d.Capabilities.MaxTextLength != 4096 || d.Capabilities.LengthUnit != channel.LengthUTF16 || !d.Capabilities.Buttons {
		t.Fatalf("description %+v", d)
	}

	var buf bytes.Buffer
	info, err := h.Plugin.DownloadMedia(ctx, "doc1", 0, &buf)
	if err != nil || buf.String() != "%PDF-1.7 body" || info.MIME != "application/pdf" {
		t.Fatalf("download: %q %+v %v", buf.String(), info, err)
	}
	buf.Reset()
	if _, err := h.Plugin.DownloadMedia(ctx, "big", 1000, &buf); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Fatalf("download over the cap: %v", err)
	}
	if err := h.Plugin.SetCommands(ctx, []command.Spec{{Name: "new", Description: "fresh session"}, {Name: "bad.name", Description: "x"}}); err != nil {
		t.Fatal(err)
	}
	if c := srv.Commands(); len(c) != 1 || c[0].Command != "new" {
		t.Fatalf("commands %+v", c)
	}
	if err := h.Plugin.SetTyping(ctx, channel.TypingRequest{ChatID: "5", On: true}); err != nil {
		t.Fatal(err)
	}
	srv.Fail("sendMessage", 1, telegramtest.TooManyRequests(3))
	_, err = h.Plugin.Send(ctx, channel.SendRequest{ChatID: "5", Text: "hi"})
	if channel.CodeOf(err) != channel.CodeRateLimited {
		t.Fatalf("429 over the wire: %v", err)
	}
}

// buildPlugin compiles cmd/clawhost-telegram into a temporary directory.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "clawhost-telegram")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "./cmd/clawhost-telegram")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startProcess starts the plugin binary as clawhost does (go-plugin, gRPC).
// A stray write to stdout would break this handshake.
func startProcess(t *testing.T, bin string) (*plugin.Client, *pluginclient.Plugin) {
	t.Helper()
	client := pluginclient.NewClient(pluginclient.Launch{Cmd: exec.Command(bin), KeepHostEnv: true, StartTimeout: 20 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Error})})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start plugin: %v", err)
	}
	raw, err := rpc.Dispense(pluginclient.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	return client, pluginclient.Wrap(raw.(*grpc.ClientConn))
}

// The real binary is SIGKILLed while the host holds an unacked message and
// the plugin waits in Deliver; a new process delivers the same update.
func TestKilledProcessLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binary")
	}
	t.Parallel()
	bin := buildPlugin(t)
	srv := telegramtest.NewServer("42:KILL")
	t.Cleanup(srv.Close)
	cfg := config(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	client1, p1 := startProcess(t, bin)
	configure(t, ctx, p1, cfg)
	s1, err := p1.Receive(ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	// Let a long poll start, then an update arrives during it.
	if _, err := srv.WaitRequests(ctx, "getUpdates", 1); err != nil {
		t.Fatal(err)
	}
	id := srv.PushText(telegramtest.PrivateChat(alice.ID), alice, "survive a kill")
	first := receiveOne(t, s1)
	pid := client1.ReattachConfig().Pid
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "plugin exit", client1.Exited)
	if srv.Offset() > id || srv.Pending() != 1 {
		t.Fatalf("offset %d confirmed update %d of a killed plugin", srv.Offset(), id)
	}

	_, p2 := startProcess(t, bin)
	configure(t, ctx, p2, cfg)
	s2, err := p2.Receive(ctx, 16)
	if err != nil {
		t.Fatal(err)
	}
	again := receiveOne(t, s2)
	if again.Message.MessageID != first.Message.MessageID || again.Message.Text != "survive a kill" {
		t.Fatalf("got %+v, want message %s again", again.Message, first.Message.MessageID)
	}
	if err := p2.Ack(ctx, again.ID); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "offset after ack", func() bool { return srv.Offset() == id+1 })
	if again.Message.ChatID != strconv.FormatInt(alice.ID, 10) {
		t.Fatalf("chat %s", again.Message.ChatID)
	}
}

// The host could not store an update and nacked it: the plugin forgets
// that delivery at once (channel.Offer returned the refusal), leaves the
// offset where it was, and fetches the update from Telegram again after
// the host's delay; it reaches the host as a new delivery of the same
// message, and the ack of that one confirms the offset. No restart, no
// second Receive, and no third copy.
func TestNackedUpdateIsFetchedAgainAfterTheDelay(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer("42:NACK")
	t.Cleanup(srv.Close)
	id := srv.PushText(telegramtest.PrivateChat(alice.ID), alice, "store me later")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, s := startReceiving(t, ctx, config(t, srv))
	first := receiveOne(t, s)
	nacked := time.Now()
	const delay = 300 * time.Millisecond
	if err := h.Plugin.Nack(ctx, "database is locked", delay, first.ID); err != nil {
		t.Fatal(err)
	}
	again := receiveOne(t, s)
	if waited := time.Since(nacked); waited < delay {
		t.Errorf("sent again after %s, before the %s delay", waited, delay)
	}
	if again.Message.MessageID != first.Message.MessageID || again.Message.Text != "store me later" {
		t.Fatalf("sent again %+v, want %+v", again.Message, first.Message)
	}
	if again.ID == first.ID {
		t.Fatalf("sent again as delivery %d, the nacked one: the sdk held it instead of letting Telegram send it again", again.ID)
	}
	if srv.Offset() > id || srv.Pending() != 1 {
		t.Fatalf("offset %d confirmed update %d before the ack", srv.Offset(), id)
	}
	if err := h.Plugin.Ack(ctx, again.ID); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "offset after ack", func() bool { return srv.Offset() == id+1 && srv.Pending() == 0 })
	next := srv.PushText(telegramtest.PrivateChat(alice.ID), alice, "and the next one")
	if d := receiveOne(t, s); d.Message.Text != "and the next one" {
		t.Fatalf("after the ack got %q, want the next update (%d), not a third copy", d.Message.Text, next)
	}
}
