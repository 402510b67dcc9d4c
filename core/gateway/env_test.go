package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/testbin"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
)

// env runs the real pipeline: the plugin host with the loopback example
// channel (a real plugin process), the SQLite store and the runner driving
// a fake claude (this test binary, see core/internal/fakeclaude).
//
// A test whose rule is the gateway's own runs in process instead (lo in
// lo_test.go, inproc in inproc_test.go: recording ports, the scripted
// agent, the fake clock, waits on events). What stays here needs a
// process, because its rule lives in the plugin protocol, the plugin host
// or the runner:
//
//   - the runner and claude's output: TestBuiltinCommands (/status shows
//     the runner's model, cost and warm process), TestAgentErrorsBecomeNotices
//     (claude's error results classified), TestMissingCLIGivesNotice,
//     TestStreamingBlocksArriveWhileAgentWorks and
//     TestStreamingDraftEditsInPlace (claude's streamed messages),
//     TestApprovalsWithButtons, TestApprovalsTyped and
//     TestApprovalsGoToOwners (claude's permission prompts through the
//     runner's control protocol), TestWorktrees (claude's working
//     directory and a shell in it);
//   - the plugin protocol and host: TestCapabilitiesAndHookFieldsCrossTheProcesses,
//     TestTurnWaitsForAStartingHook and TestCommandWaitsForAStartingCommandPlugin
//     (plugins that start late), TestOversizeMessageIsToldAndSkipped (the
//     protocol's 8 MiB limit), TestRetriesAndPlainFallback (the sdk's
//     error codes across gRPC), TestChunkingToChannelLimit (the limit the
//     plugin declares, counted by it), TestReplyContextMediaAndTags (an
//     attachment downloaded through the plugin), TestStoreLockedThenReleased
//     (the plugin's 503 to a poster while the store is locked).

var loopbackBin string

func TestMain(m *testing.M) {
	if os.Getenv(fakeclaude.EnvVar) != "" {
		fakeclaude.Main()
		return
	}
	dir, err := testbin.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	loopbackBin = filepath.Join(dir, "clawhost-loopback")
	os.Exit(pgtest.Main(m))
}

type env struct {
	t      *testing.T
	dir    string
	held   string // the release file of the last hold (hold)
	db     *sqlite.DB
	agent  *runner.Runner
	gw     *Gateway
	host   *pluginhost.Supervisor
	addr   string
	after  int
	logBuf *sdktest.Log
	set    Settings
}

type envOptions struct {
	settings  func(*Settings)
	runner    func(*runner.Config)
	textLimit int
	// extra plugin instances, started with the loopback channel.
	extra []pluginhost.Spec
	dir   string // reuse a data dir (restart)
	now   func() time.Time
	// busyTimeout is the store's wait for a lock held by another
	// connection; zero is the store's default.
	busyTimeout time.Duration
	// loopback adds attributes to the loopback channel's config block.
	loopback map[string]any
	// ownerClaims answers /owner CODE; nil: none.
	ownerClaims OwnerClaims
}

// baseSettings admits lo:u1 (and owner lo:owner) in direct chats and the
// group lo:g1.
func baseSettings() Settings {
	return Settings{
		Access: access.Policy{DMPolicy: access.PolicyPairing, AllowFrom: []string{"lo:u1"}, Owners: []string{"lo:owner"},
			GroupPolicy: access.PolicyAllowlist, Groups: []string{"lo:g1"}, RequireMention: true},
		Sources: map[string]string{"lo": "loopback"},
		Turn:    turn.Settings{Streaming: turn.StreamBlocks, GroupHistoryLimit: 50},
	}
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	e := &env{t: t, dir: dir, logBuf: &sdktest.Log{}}
	log := hclog.New(&hclog.LoggerOptions{Output: e.logBuf, Level: hclog.Debug})
	var err error
	e.db, err = sqlite.Open(context.Background(), filepath.Join(dir, "data"), sqlite.Options{Synchronous: "NORMAL", Now: o.now, BusyTimeout: o.busyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	ws := filepath.Join(dir, "workspace")
	_ = os.MkdirAll(ws, 0o700)
	rc := runner.Config{Name: sessionkey.DefaultAgent, Command: exe, Env: map[string]string{fakeclaude.EnvVar: "1"}, Workspace: ws, StateDir: filepath.Join(dir, "runner"), Timeout: 20 * time.Second, KillGrace: 200 * time.Millisecond,
		// The pipeline is under test, not the sandbox (core/runner tests that).
		Sandbox: runner.SandboxOff}
	if o.runner != nil {
		o.runner(&rc)
	}
	e.agent, err = runner.New(rc, log.Named("runner"))
	if err != nil {
		t.Fatal(err)
	}
	e.set = baseSettings()
	e.set.Turn.Workspace, e.set.Delivery.Workspace = ws, ws
	if o.settings != nil {
		o.settings(&e.set)
	}
	e.host = pluginhost.New(pluginhost.Options{Logger: log, Inbound: func(ctx context.Context, inst string, msgs []channel.InboundMessage) error {
		return e.gw.Inbound(ctx, inst, msgs)
	}, OnReady: func(*pluginhost.Instance) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.gw.RefreshCommands(ctx)
	}})
	e.gw = New(Options{Logger: log, Store: e.db, Agent: e.agent, Ports: e.host.Ports(), Settings: e.set, Version: "test", Now: o.now, OwnerClaims: o.ownerClaims})
	addrFile := filepath.Join(dir, "lo.addr")
	_ = os.Remove(addrFile)
	limit := o.textLimit
	if limit == 0 {
		limit = 4000
	}
	e.host.Apply(append([]pluginhost.Spec{{
		Instance: "lo", Source: "loopback", Path: loopbackBin, DataDir: filepath.Join(dir, "plugins", "lo"), Fingerprint: "lo",
		Decode: func(schema.Schema) ([]byte, error) {
			cfg := map[string]any{"addr_file": addrFile, "text_limit": limit}
			for k, v := range o.loopback {
				cfg[k] = v
			}
			return json.Marshal(cfg)
		},
	}}, o.extra...))
	if err := e.gw.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(addrFile)
		if err == nil && len(b) > 0 {
			e.addr = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("loopback did not start\n%s", e.logBuf.String())
		}
		time.Sleep(10 * time.Millisecond) // a real process: the loopback plugin starting
	}
	t.Cleanup(func() {
		e.stop()
		if t.Failed() {
			t.Logf("log:\n%s", e.logBuf.String())
		}
	})
	return e
}

func (e *env) stop() {
	if e.gw == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.gw.Close(ctx)
	e.host.Stop()
	_ = e.agent.Close(ctx)
	_ = e.db.Close()
	e.gw = nil
}

// in is a loopback inbound message.
type in map[string]any

func dm(sender, text string) in {
	return in{"chat_id": "chat-" + sender, "sender_id": sender, "sender_name": "User " + sender, "text": text}
}

func (e *env) post(m in) {
	e.t.Helper()
	body, _ := json.Marshal(m)
	resp, err := http.Post("http://"+e.addr+"/inbound", "application/json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		e.t.Fatalf("inbound: status %d", resp.StatusCode)
	}
}

func (e *env) fail(op, code string, count, retryAfterMS int) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"op": op, "code": code, "count": count, "retry_after_ms": retryAfterMS})
	resp, err := http.Post("http://"+e.addr+"/fail", "application/json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
}

type record struct {
	Seq       int      `json:"seq"`
	Op        string   `json:"op"`
	ChatID    string   `json:"chat_id"`
	ThreadID  string   `json:"thread_id"`
	MessageID string   `json:"message_id"`
	Text      string   `json:"text"`
	Format    string   `json:"format"`
	ReplyTo   string   `json:"reply_to"`
	On        bool     `json:"on"`
	Media     []string `json:"media"`
	// Buttons are sent under the message (loopback config buttons).
	Buttons [][]channel.Button `json:"buttons"`
}

// records returns everything the channel did after the last call, waiting
// up to wait for at least one record.
func (e *env) records(wait time.Duration) []record {
	e.t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s/sent?after=%d&wait=%s", e.addr, e.after, wait))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var recs []record
	_ = json.NewDecoder(resp.Body).Decode(&recs)
	for _, r := range recs {
		e.after = max(e.after, r.Seq)
	}
	return recs
}

// next returns the next record with op "send" to chat.
func (e *env) next(chat string) record {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range e.records(time.Second) {
			if r.Op == "send" && r.ChatID == chat {
				e.after = r.Seq
				return r
			}
		}
	}
	e.t.Fatalf("nothing sent to %s", chat)
	return record{}
}

// text returns the text of the next send to chat.
func (e *env) text(chat string) string {
	e.t.Helper()
	return e.next(chat).Text
}

// rest returns the texts of further sends to chat (a reply's later
// blocks) until nothing more comes for d.
func (e *env) rest(chat string, d time.Duration) string {
	e.t.Helper()
	var out []string
	for {
		got := false
		for _, r := range e.records(d) {
			e.after = r.Seq
			if r.Op == "send" && r.ChatID == chat {
				out, got = append(out, r.Text), true
			}
		}
		if !got {
			return strings.Join(out, "\n")
		}
	}
}

// quiet asserts nothing is sent to chat for d.
func (e *env) quiet(chat string, d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, r := range e.records(time.Until(deadline)) {
			if r.Op == "send" && r.ChatID == chat {
				e.t.Fatalf("unexpected send to %s: %q", chat, r.Text)
			}
		}
	}
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polls what real processes (plugins, claude) do
	}
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%q does not contain %q", got, w)
		}
	}
}

func senderID(id string) channel.Sender { return channel.Sender{ID: id} }

// hold returns a directive that keeps a fake claude turn running until
// release is called (the fake's #wait on a file), so a test orders its
// messages around a running turn without waiting for time.
func (e *env) hold() (directive string, release func()) {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), "release")
	e.held = path
	return "#wait=" + path, func() {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			e.t.Fatal(err)
		}
	}
}

// claudeHolds waits until the fake claude holds the last held turn (its
// #wait began): the typing indicator is on a moment before claude has
// the prompt, and a /stop in between finds no run to abort.
func (e *env) claudeHolds(deadline time.Time) {
	e.t.Helper()
	if e.held == "" {
		return
	}
	for time.Now().Before(deadline) {
		if _, err := os.Stat(e.held + ".waiting"); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond) // polls a file the fake claude process writes
	}
	e.t.Fatalf("claude never began to hold the turn (%s.waiting)", e.held)
}

// running waits until chat's typing indicator is on and claude holds the
// turn: its turn runs.
func (e *env) running(chat string) {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range e.records(time.Second) { // the loopback waits for a record
			if r.Op == "typing" && r.ChatID == chat && r.On {
				e.claudeHolds(deadline)
				return
			}
		}
	}
	e.t.Fatalf("no turn runs in %s", chat)
}
