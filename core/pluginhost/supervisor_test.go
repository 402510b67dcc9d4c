package pluginhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/envfilter"
	"github.com/clawhost/clawhost/sdk/sdktest"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/testbin"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
)

// The test binary doubles as a misbehaving plugin: with CLAWHOST_FAULT set
// it serves a plugin that fails in the named way.
func TestMain(m *testing.M) {
	if mode := os.Getenv("CLAWHOST_FAULT"); mode != "" {
		faultPlugin(mode)
		return
	}
	os.Exit(m.Run())
}

type faulty struct{ mode string }

func (f *faulty) Capabilities() channel.Capabilities { return channel.Capabilities{MaxTextLength: 100} }
func (f *faulty) Run(ctx context.Context, inbox channel.Inbox) error {
	switch f.mode {
	case "panic":
		go func() { time.Sleep(20 * time.Millisecond); panic("fault plugin panics on purpose") }() // the fault plugin
	case "crash":
		time.Sleep(20 * time.Millisecond) // the fault plugin
		os.Exit(3)
	case "flood":
		n, _ := strconv.Atoi(os.Getenv("CLAWHOST_FLOOD_N"))
		batch := make([]channel.InboundMessage, 0, 512)
		for i := 0; i < n; i++ {
			batch = append(batch, channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "c", MessageID: strconv.Itoa(i), Sender: channel.Sender{ID: "u"}, Text: "a message of about one hundred bytes, which is what a short chat message looks like ok"})
			if len(batch) == cap(batch) || i == n-1 {
				if err := inbox.Deliver(ctx, batch...); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
	case "badlog":
		// hclog-shaped lines whose fields are not strings: go-plugin's
		// reader type-asserts them and would panic the host. Written to
		// fd 2 itself: go-plugin's Serve points os.Stderr elsewhere.
		stderr := os.NewFile(2, "stderr")
		fmt.Fprintln(stderr, `{"@message":1,"@level":2,"@timestamp":3,"n":4}`)
		fmt.Fprintln(stderr, `{"@message":{"nested":true},"@level":"warn"}`)
		fmt.Fprintln(stderr, `{"@message":"a good line after the bad ones","@level":"info"}`)
	case "oversize":
		// The sdk hands the host a stub instead, in the same batch as a
		// normal message, and Deliver succeeds: the plugin moves on.
		err := inbox.Deliver(ctx, channel.InboundMessage{ChatID: "c", MessageID: "big", Sender: channel.Sender{ID: "u"}, Text: strings.Repeat("x", 9<<20)},
			channel.InboundMessage{ChatID: "c", MessageID: "ok", Sender: channel.Sender{ID: "u"}, Text: "after the big one"})
		_ = inbox.Deliver(ctx, channel.InboundMessage{ChatID: "c", MessageID: "next", Sender: channel.Sender{ID: "u"}, Text: fmt.Sprintf("delivered: %v", err)})
	}
	<-ctx.Done()
	return nil
}
func (f *faulty) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	return channel.SendResponse{MessageIDs: []string{"1"}}, nil
}

// faultPlugin serves the fault plugin of mode. Besides the modes of
// faulty.Run:
//
//	hang         never completes the handshake
//	ignoreterm   ignores SIGTERM once configured (a plugin stuck in a
//	             cleanup that never ends)
//	termdefault  dies of SIGTERM once configured, as a program without a
//	             handler does (a plugin not written with the sdk)
//
// Any other mode is a well-behaved sdk plugin.
func faultPlugin(mode string) {
	switch mode {
	case "hang":
		time.Sleep(time.Hour) // never completes the handshake
	case "nokind":
		os.Exit(sdk.Serve(sdk.Plugin{Name: "fault-nokind"})) // refuses to start: no kind
	case "stdout":
		fmt.Println("a plugin that prints to stdout") // breaks the handshake
	}
	p := sdk.Plugin{Name: "fault-" + mode, Channel: &faulty{mode: mode}}
	if mode == "command" { // a command plugin: no channel, no inbound stream
		p = sdk.Plugin{Name: "fault-command", Command: faultCommand{}}
	}
	switch mode {
	case "logs":
		p.Configure = logEveryLevel
	case "ignoreterm", "termdefault":
		// After sdk.Serve installed its SIGTERM handler, which Ignore and
		// Reset replace.
		p.Configure = func(context.Context, schema.Config) error {
			if mode == "ignoreterm" {
				signal.Ignore(syscall.SIGTERM)
			} else {
				signal.Reset(syscall.SIGTERM)
			}
			return nil
		}
	}
	os.Exit(sdk.Serve(p))
}

// binDir returns the directory holding the example plugins.
func binDir(t testing.TB) string {
	t.Helper()
	d, err := testbin.Dir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type recorder struct {
	mu   sync.Mutex
	msgs []channel.InboundMessage
	ch   chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 1024)} }

func (r *recorder) inbound(ctx context.Context, instance string, msgs []channel.InboundMessage) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, msgs...)
	r.mu.Unlock()
	for range msgs {
		r.ch <- struct{}{}
	}
	return nil
}

func (r *recorder) texts() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, m := range r.msgs {
		out[m.Text] = true
	}
	return out
}

// newHost is a supervisor for tests, stopped with the test: quick
// backoffs, inbound messages to rec; with changes the options further.
func newHost(t *testing.T, rec *recorder, with ...func(*Options)) *Supervisor {
	t.Helper()
	o := Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}), Inbound: rec.inbound, FirstBackoff: 20 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}
	for _, f := range with {
		f(&o)
	}
	h := New(o)
	t.Cleanup(h.Stop)
	return h
}

// quickProbe probes every 100 ms with a second's timeout, the backoff's
// ceiling the default.
func quickProbe(o *Options) {
	o.ProbeInterval, o.ProbeTimeout, o.MaxBackoff = 100*time.Millisecond, time.Second, 0
}

func loopbackSpec(t testing.TB, name string) (Spec, string) {
	t.Helper()
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	return Spec{
		Instance: name, Source: "loopback", Path: filepath.Join(binDir(t), "clawhost-loopback"),
		DataDir: filepath.Join(dir, "data"), Fingerprint: "1",
		Decode: func(schema.Schema) ([]byte, error) {
			return json.Marshal(map[string]any{"listen": "127.0.0.1:0", "addr_file": addrFile, "text_limit": 4000})
		},
	}, addrFile
}

// runLoopback applies the loopback plugin to h as instance "lo" and waits
// until it is ready: the instance, the file the plugin writes its address
// to, and its ready status.
func runLoopback(t *testing.T, h *Supervisor) (*Instance, string, Status) {
	t.Helper()
	spec, addrFile := loopbackSpec(t, "lo")
	h.Apply([]Spec{spec})
	inst := h.Instance("lo")
	return inst, addrFile, waitState(t, inst, StateReady)
}

func faultSpec(name, mode string) Spec {
	return Spec{Instance: name, Source: "fault", Path: os.Args[0], Env: []string{"CLAWHOST_FAULT=" + mode}, Fingerprint: mode, StartTimeout: 2 * time.Second}
}

func waitState(t *testing.T, inst *Instance, want State) Status {
	t.Helper()
	var st Status
	sdktest.WaitFor(t, fmt.Sprintf("instance %s in state %s", inst.spec.Instance, want), func() error {
		st = inst.Status()
		return sdktest.Saw(st.State == want, "state %s (last error %q)", st.State, st.LastError)
	})
	return st
}

// post injects one inbound message into a loopback plugin; it returns once
// the host acked it (nil) or fails.
func post(addrFile, text string) error {
	addr, err := os.ReadFile(addrFile)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]string{"chat_id": "c1", "sender_id": "u1", "text": text})
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Post("http://"+string(addr)+"/inbound", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func TestLoopbackRoundTrip(t *testing.T) {
	rec := newRecorder()
	h := newHost(t, rec)
	inst, addrFile, _ := runLoopback(t, h)
	if err := post(addrFile, "hello"); err != nil {
		t.Fatal(err)
	}
	if !rec.texts()["hello"] {
		t.Fatalf("inbound not recorded: %v", rec.texts())
	}
	plug, desc, ok := inst.Client()
	if !ok || !desc.Channel || !desc.Typing || !desc.Edit {
		t.Fatalf("describe: %+v", desc)
	}
	if _, err := plug.Send(context.Background(), channel.SendRequest{ChatID: "c1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
}

// TestKillPluginMidStream: kill -9 of a channel plugin while messages flow;
// it is restarted, its stream resumes, and every message the host acked
// (the POST returned 200) was stored.
func TestKillPluginMidStream(t *testing.T) {
	rec := newRecorder()
	h := newHost(t, rec)
	inst, addrFile, first := runLoopback(t, h)

	var acked []string
	killed := false
	for i := 0; i < 200; i++ {
		text := fmt.Sprintf("m%03d", i)
		if i == 100 {
			if first.PID <= 0 {
				t.Fatalf("no pid for the plugin: %+v", first)
			}
			_ = syscall.Kill(first.PID, syscall.SIGKILL)
			killed = true
		}
		// Like a platform, the client retries until the plugin accepts.
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := post(addrFile, text)
			if err == nil {
				acked = append(acked, text)
				break
			}
			if !killed || time.Now().After(deadline) {
				t.Fatalf("post %s: %v", text, err)
			}
			time.Sleep(10 * time.Millisecond) // polls a real plugin process
		}
	}
	st := waitState(t, inst, StateReady)
	if st.Restarts < 1 || st.PID == first.PID {
		t.Fatalf("plugin was not restarted: %+v", st)
	}
	got := rec.texts()
	for _, a := range acked {
		if !got[a] {
			t.Errorf("acked message %s was lost", a)
		}
	}
	if len(acked) != 200 {
		t.Errorf("only %d of 200 messages acked", len(acked))
	}
}

// faultCommand is the command of the fault plugin's "command" mode.
type faultCommand struct{}

func (faultCommand) Commands() []sdkcommand.Spec { return []sdkcommand.Spec{{Name: "fault"}} }
func (faultCommand) Execute(context.Context, sdkcommand.Request) (sdkcommand.Response, error) {
	return sdkcommand.Response{}, nil
}

// TestKilledCommandPluginIsRestarted: a plugin without an inbound stream
// (a command plugin) that dies is seen by its process's end, not by a
// poll, and restarted.
func TestKilledCommandPluginIsRestarted(t *testing.T) {
	h := newHost(t, newRecorder())
	h.Apply([]Spec{faultSpec("cmd", "command")})
	inst := h.Instance("cmd")
	first := waitState(t, inst, StateReady)
	if first.PID <= 0 {
		t.Fatalf("no pid for the plugin: %+v", first)
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, inst, "the killed command plugin restarted", func(st Status) bool {
		return st.Restarts >= 1 && st.State == StateReady && st.PID != first.PID
	})
}

func TestPanickingPluginIsRestarted(t *testing.T) {
	h := newHost(t, newRecorder())
	h.Apply([]Spec{faultSpec("p", "panic")})
	inst := h.Instance("p")
	waitStatus(t, inst, "the panicking plugin restarted twice", func(st Status) bool { return st.Restarts >= 2 })
	if st := inst.Status(); !strings.Contains(st.LastError, "exited") {
		t.Errorf("last error %q does not say the plugin exited", st.LastError)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	h := newHost(t, newRecorder())
	sp := faultSpec("slow", "hang")
	sp.StartTimeout = 300 * time.Millisecond
	h.Apply([]Spec{sp})
	st := waitState(t, h.Instance("slow"), StateDegraded)
	if !strings.Contains(st.LastError, "slow") || !strings.Contains(st.LastError, "timeout") {
		t.Errorf("error %q should name the instance and the timeout", st.LastError)
	}
}

func TestMissingBinary(t *testing.T) {
	h := newHost(t, newRecorder())
	dir := t.TempDir()
	path := filepath.Join(dir, "clawhost-loopback")
	spec, addrFile := loopbackSpec(t, "lo")
	spec.Path = path
	crashing := faultSpec("other", "panic") // its restarts are the test's clock
	h.Apply([]Spec{spec, crashing})
	st := waitState(t, h.Instance("lo"), StateMissing)
	if !strings.Contains(st.LastError, path) || !strings.Contains(st.LastError, "lo") || !strings.Contains(st.Action, "make build") {
		t.Errorf("error %q should name the instance and the path; action %q the fix", st.LastError, st.Action)
	}
	// Not retried in a loop: while the other instance restarts three times,
	// the missing one stays settled until a reload.
	waitStatus(t, h.Instance("other"), "the crashing instance restarted three times", func(st Status) bool { return st.Restarts >= 3 })
	if st := h.Instance("lo").Status(); st.State != StateMissing || st.Restarts != 0 {
		t.Fatalf("a missing binary is not retried: %+v", st)
	}
	// Installed, then reloaded with the same block: it starts.
	b, err := os.ReadFile(filepath.Join(binDir(t), "clawhost-loopback"))
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WriteExecutable(t, path, b, 0o700)
	h.Apply([]Spec{spec, crashing})
	waitState(t, h.Instance("lo"), StateReady)
	if err := post(addrFile, "after install"); err != nil {
		t.Fatal(err)
	}
}

func TestMisconfiguredSettlesUntilReload(t *testing.T) {
	h := newHost(t, newRecorder())
	spec, _ := loopbackSpec(t, "lo")
	good := spec.Decode
	spec.Decode = func(schema.Schema) ([]byte, error) {
		return nil, errors.New("config.hcl:7,3: unsupported argument \"tokn\"")
	}
	h.Apply([]Spec{spec})
	st := waitState(t, h.Instance("lo"), StateMisconfigured)
	if !strings.Contains(st.LastError, "tokn") || st.Restarts != 0 || !strings.Contains(st.Action, "reload") {
		t.Fatalf("status %+v", st)
	}
	spec.Decode = good // the operator fixed the block and reloaded
	h.Apply([]Spec{spec})
	waitState(t, h.Instance("lo"), StateReady)
}

func TestUnresponsivePluginIsRestarted(t *testing.T) {
	rec := newRecorder()
	h := newHost(t, rec, quickProbe)
	_, addrFile, first := runLoopback(t, h)
	if err := syscall.Kill(first.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, h.Instance("lo"), "the stopped plugin restarted", func(st Status) bool { return st.State == StateReady && st.PID != first.PID })
	if !strings.Contains(st.LastError, "liveness probe") {
		t.Errorf("last error %q", st.LastError)
	}
	if err := post(addrFile, "after restart"); err != nil {
		t.Fatal(err)
	}
}

// waitStopped waits until every thread of pid is stopped (SIGSTOP takes
// effect asynchronously: a thread may still answer a call meanwhile).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	sdktest.WaitFor(t, fmt.Sprintf("every thread of process %d stopped", pid), func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		stopped := len(tasks) > 0
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			// The state follows the parenthesized command name.
			i := strings.LastIndexByte(string(b), ')')
			stopped = stopped && err == nil && i > 0 && len(b) > i+2 && (b[i+2] == 'T' || b[i+2] == 't')
		}
		return stopped
	})
}

// TestSendToAHungPluginEndsWithTheProbe: a send in flight to a plugin that
// stopped answering (SIGSTOP) fails once the liveness probe kills it,
// instead of blocking until the caller's own deadline; the next send waits
// for the restarted process and goes through.
func TestSendToAHungPluginEndsWithTheProbe(t *testing.T) {
	rec := newRecorder()
	h := newHost(t, rec, quickProbe)
	_, _, first := runLoopback(t, h)
	if err := syscall.Kill(first.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, first.PID)
	const deadline = 30 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := h.Ports().Send(ctx, "lo", channel.SendRequest{ChatID: "c1", Text: "to a hung plugin"})
	took := time.Since(start)
	if err == nil || took > deadline/3 {
		t.Fatalf("send to the stopped plugin: err %v after %v; want a failure once the probe (1 s) kills it", err, took)
	}
	t.Logf("send failed after %v: %v", took.Round(time.Millisecond), err)
	if _, err := h.Ports().Send(ctx, "lo", channel.SendRequest{ChatID: "c1", Text: "after the restart"}); err != nil {
		t.Fatalf("send after the restart: %v", err)
	}
	if st := h.Instance("lo").Status(); st.PID == first.PID {
		t.Errorf("still the stopped process %d", st.PID)
	}
}

// fileSum is the SHA-256 of the file at path, as Spec.SHA256 holds it.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// pinnedCopy copies spec's binary into a fresh directory (as
// clawhost-loopback), points spec at the copy and pins its checksum, which
// it returns.
func pinnedCopy(t *testing.T, spec *Spec) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(spec.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	spec.Path = filepath.Join(t.TempDir(), "clawhost-loopback")
	sdktest.WriteExecutable(t, spec.Path, b, 0o700)
	spec.SHA256 = hex.EncodeToString(sum[:])
	return sum
}

func TestChecksum(t *testing.T) {
	h := newHost(t, newRecorder())
	good, _ := loopbackSpec(t, "good")
	good.SHA256 = fileSum(t, good.Path)
	bad, _ := loopbackSpec(t, "bad")
	bad.SHA256 = strings.Repeat("0", 64)
	h.Apply([]Spec{good, bad})
	waitState(t, h.Instance("good"), StateReady)
	st := waitState(t, h.Instance("bad"), StateMisconfigured)
	if !strings.Contains(st.LastError, "checksum") {
		t.Errorf("error %q should say the checksum does not match", st.LastError)
	}
}

// TestChecksumIsOfTheBytesThatRun: a binary swapped in after its checksum
// was verified (renamed over the path, as an update or an attacker would)
// does not run; the verified bytes do.
func TestChecksumIsOfTheBytesThatRun(t *testing.T) {
	h := newHost(t, newRecorder())
	spec, _ := loopbackSpec(t, "lo")
	sum := pinnedCopy(t, &spec)
	marker := filepath.Join(filepath.Dir(spec.Path), "unverified-ran")
	evil := spec.Path + ".new"
	sdktest.WriteExecutable(t, evil, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o700)
	swapped := make(chan struct{})
	h.opts.afterVerify = func(path string) {
		if err := os.Rename(evil, path); err != nil {
			t.Errorf("swap: %v", err)
		}
		close(swapped)
	}
	h.Apply([]Spec{spec})
	st := waitState(t, h.Instance("lo"), StateReady)
	<-swapped
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the binary swapped in after the check ran")
	}
	ran, err := os.ReadFile(fmt.Sprintf("/proc/%d/exe", st.PID))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(ran) != sum {
		t.Fatal("the running plugin is not the verified binary")
	}
}

// TestCrashLoop: a plugin that keeps crashing backs off ever longer and is
// degraded, while a healthy plugin keeps working.
func TestCrashLoop(t *testing.T) {
	rec := newRecorder()
	h := newHost(t, rec)
	lo, addrFile := loopbackSpec(t, "lo")
	h.Apply([]Spec{lo, faultSpec("crashy", "crash")})
	waitState(t, h.Instance("lo"), StateReady)
	crashy := h.Instance("crashy")
	deadline := time.Now().Add(10 * time.Second)
	var starts []time.Time
	last := -1
	for len(starts) < 5 && time.Now().Before(deadline) {
		if st := crashy.Status(); st.Restarts != last && st.State == StateStarting {
			last = st.Restarts
			starts = append(starts, time.Now())
		}
		time.Sleep(2 * time.Millisecond) // polls a real plugin process
	}
	if len(starts) < 5 {
		t.Fatalf("saw only %d restarts", len(starts))
	}
	first, later := starts[1].Sub(starts[0]), starts[4].Sub(starts[3])
	if later <= first {
		t.Errorf("backoff did not grow: first gap %s, later gap %s", first, later)
	}
	if err := post(addrFile, "still here"); err != nil || !rec.texts()["still here"] {
		t.Errorf("healthy plugin stopped working during the crash loop: %v", err)
	}
}

// TestOversizeMessageBecomesAStub: a message over the frame limit reaches the
// host as a stub (ids and size, no text) in its batch, Deliver succeeds and
// the plugin goes on, without a restart.
func TestOversizeMessageBecomesAStub(t *testing.T) {
	rec := newRecorder()
	h := newHost(t, rec)
	h.Apply([]Spec{faultSpec("big", "oversize")})
	for range 3 {
		select {
		case <-rec.ch:
		case <-time.After(10 * time.Second):
			t.Fatal("the stub and the messages after it did not all arrive")
		}
	}
	rec.mu.Lock()
	msgs := append([]channel.InboundMessage(nil), rec.msgs...)
	rec.mu.Unlock()
	if len(msgs) != 3 || msgs[0].MessageID != "big" || msgs[0].OversizeBytes < 9<<20 || msgs[0].Text != "" ||
		msgs[1].Text != "after the big one" || msgs[2].Text != "delivered: <nil>" {
		t.Fatalf("got %+v", msgs)
	}
	if st := h.Instance("big").Status(); st.State != StateReady || st.Restarts != 0 {
		t.Errorf("plugin should stay up: %+v", st)
	}
}

// TestApplyReconciles: enabling, disabling and changing instances touches
// only those instances.
func TestApplyReconciles(t *testing.T) {
	h := newHost(t, newRecorder())
	a, _ := loopbackSpec(t, "a")
	b, _ := loopbackSpec(t, "b")
	h.Apply([]Spec{a})
	pa := waitState(t, h.Instance("a"), StateReady).PID
	h.Apply([]Spec{a, b})
	waitState(t, h.Instance("b"), StateReady)
	if st := h.Instance("a").Status(); st.PID != pa {
		t.Errorf("unchanged instance a was restarted")
	}
	b.Fingerprint = "2"
	h.Apply([]Spec{b})
	if h.Instance("a") != nil {
		t.Errorf("disabled instance a still present")
	}
	if pa <= 0 {
		t.Fatalf("no pid for instance a")
	}
	sdktest.WaitFor(t, fmt.Sprintf("the process of removed instance a (pid %d) to exit", pa), func() bool { return syscall.Kill(pa, 0) != nil })
	waitState(t, h.Instance("b"), StateReady)
}

// logLines returns the lines of log at level ("WARN", "ERROR").
func logLines(log, level string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "["+level+"]") {
			out = append(out, l)
		}
	}
	return out
}

// TestStopPolitely: stopping a plugin sends SIGTERM first. One that exits
// on it — through the sdk's handler (exit 0) or by dying of the signal, as
// a plugin without a handler does — is stopped at once, without a WARN or
// ERROR line. One that ignores it is killed with its process group after
// the grace period, with exactly one WARN.
func TestStopPolitely(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		grace time.Duration
		// within bounds the stop; the ignoring plugin must also take at
		// least grace.
		within   time.Duration
		wantWarn bool
		// evidence is a log line showing how the plugin ended.
		evidence string
	}{
		{mode: "polite", grace: 20 * time.Second, within: 5 * time.Second, evidence: "SIGTERM: stopping"}, // the sdk's handler
		{mode: "termdefault", grace: 20 * time.Second, within: 5 * time.Second, evidence: "signal: terminated"},
		{mode: "ignoreterm", grace: 400 * time.Millisecond, within: 400*time.Millisecond + 5*time.Second, wantWarn: true, evidence: "signal: killed"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			log := &sdktest.Log{}
			h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: log}), StopGrace: tc.grace})
			t.Cleanup(h.Stop)
			h.Apply([]Spec{faultSpec("f", tc.mode)})
			st := waitState(t, h.Instance("f"), StateReady)
			if st.PID <= 0 {
				t.Fatalf("no pid: %+v", st)
			}
			start := time.Now()
			h.Apply(nil) // returns once the process has been reaped
			took := time.Since(start)
			defer func() {
				if t.Failed() {
					t.Logf("host log:\n%s", log.String())
				}
			}()
			if err := syscall.Kill(st.PID, 0); err != syscall.ESRCH {
				_ = syscall.Kill(-st.PID, syscall.SIGKILL)
				t.Fatalf("plugin process %d still exists after stop (kill 0: %v)", st.PID, err)
			}
			if took > tc.within {
				t.Errorf("stop took %s, want at most %s", took, tc.within)
			}
			if tc.wantWarn && took < tc.grace {
				t.Errorf("stop took %s: killed before the grace period of %s", took, tc.grace)
			}
			out := log.String()
			if !strings.Contains(out, tc.evidence) {
				t.Errorf("no %q in the log", tc.evidence)
			}
			if errs := logLines(out, "ERROR"); len(errs) > 0 {
				t.Errorf("ERROR lines while stopping:\n%s", strings.Join(errs, "\n"))
			}
			warns := logLines(out, "WARN")
			switch {
			case !tc.wantWarn && len(warns) > 0:
				t.Errorf("WARN lines while stopping:\n%s", strings.Join(warns, "\n"))
			case tc.wantWarn && (len(warns) != 1 || !strings.Contains(warns[0], "SIGTERM") || !strings.Contains(warns[0], strconv.Itoa(st.PID))):
				t.Errorf("want one WARN naming SIGTERM and pid %d, got:\n%s", st.PID, strings.Join(warns, "\n"))
			}
		})
	}
}

// TestPluginEnvironment: a plugin sees the few host variables it inherits,
// its block's env and the handshake — not the rest of the host's
// environment, where secrets live.
func TestPluginEnvironment(t *testing.T) {
	const secret = "hunter2-host-secret"
	t.Setenv("CLAWHOST_TEST_SECRET", secret)
	t.Setenv("LC_TIME", "C.UTF-8")
	t.Setenv("HOME", "/host/home")
	h := newHost(t, newRecorder())
	spec, _ := loopbackSpec(t, "lo")
	spec.Env = []string{"PLUGIN_SETTING=from-block", "HOME=/plugin/home", pluginclient.EnvSecret + "=from-block"}
	h.Apply([]Spec{spec})
	st := waitState(t, h.Instance("lo"), StateReady)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", st.PID))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
		if strings.Contains(value, secret) {
			t.Errorf("the plugin sees the host's secret in %s", name)
		}
		own := name == pluginclient.Handshake.MagicCookieKey || name == sdk.EnvLogLevel || name == pluginclient.EnvSecret || strings.HasPrefix(name, "PLUGIN_")
		if !envfilter.Allowed(name, inheritedEnv...) && !own && !slices.Contains(pluginDefaults, kv) {
			t.Errorf("the plugin inherited %s, which is neither allowed nor configured", name)
		}
	}
	for name, want := range map[string]string{
		"PLUGIN_SETTING":                      "from-block",
		"HOME":                                "/plugin/home", // the block overrides an inherited variable
		"LC_TIME":                             "C.UTF-8",
		"PATH":                                os.Getenv("PATH"),
		"GOMAXPROCS":                          "1",
		pluginclient.Handshake.MagicCookieKey: pluginclient.Handshake.MagicCookieValue,
	} {
		if got, ok := env[name]; !ok || got != want {
			t.Errorf("%s = %q (set: %v), want %q", name, got, ok, want)
		}
	}
	if _, ok := env[sdk.EnvLogLevel]; !ok {
		t.Errorf("%s not set", sdk.EnvLogLevel)
	}
	// The launch's own secret, which a block's env cannot replace (the
	// environ file shows the environment the process started with; the
	// sdk removes the variable from its copy at once).
	if s := env[pluginclient.EnvSecret]; !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(s) {
		t.Errorf("%s is not the launch's secret (64 hex digits): %d bytes", pluginclient.EnvSecret, len(s))
	}
}

func TestPluginEnv(t *testing.T) {
	t.Parallel()
	hostEnv := []string{"PATH=/bin", "HOME=/h", "TELEGRAM_BOT_TOKEN=secret", "LC_ALL=C", "LCX=no", "TZ=UTC", "AWS_SECRET_ACCESS_KEY=x", "MALFORMED"}
	got := pluginEnv(hostEnv, []string{"HOME=/p", "EXTRA=1", "PLUGIN_PROTOCOL_VERSIONS=9"}, []string{"PLUGIN_PROTOCOL_VERSIONS=1", "CLAWHOST_LOG_LEVEL=info"})
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "TZ=UTC", "GOMAXPROCS=1", "HOME=/p", "EXTRA=1", "PLUGIN_PROTOCOL_VERSIONS=9", "PLUGIN_PROTOCOL_VERSIONS=1", "CLAWHOST_LOG_LEVEL=info"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pluginEnv =\n%q\nwant (exec keeps the last of a duplicated name)\n%q", got, want)
	}
	// The block's env replaces a default; the host's own variable does not reach the plugin.
	got = pluginEnv([]string{"GOMAXPROCS=8"}, []string{"GOMAXPROCS=4"}, nil)
	if want := []string{"GOMAXPROCS=1", "GOMAXPROCS=4"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("pluginEnv with GOMAXPROCS in the block's env = %q, want %q", got, want)
	}
}

// TestStartupErrorsSayWhy: the state's error names the real reason of a
// failed start — what the plugin wrote to stderr, or that it wrote to
// stdout before the handshake — not only "no handshake".
// TestBadLogLinesDoNotCrashTheHost: a plugin in any language may write
// JSON to stderr whose hclog fields are not strings. go-plugin's log reader
// asserts them to strings and panics (which ends the host); the host's
// stderr guard rewrites them first.
func TestBadLogLinesDoNotCrashTheHost(t *testing.T) {
	var buf sdktest.Log
	h := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &buf}), Inbound: newRecorder().inbound})
	t.Cleanup(h.Stop)
	h.Apply([]Spec{faultSpec("badlog", "badlog")})
	waitState(t, h.Instance("badlog"), StateReady)
	sdktest.WaitFor(t, "the line after the bad ones in the host log", func() error {
		return sdktest.Saw(strings.Contains(buf.String(), "a good line after the bad ones"), "the host log:\n%s", buf.String())
	})
	if !strings.Contains(buf.String(), `{"nested":true}`) {
		t.Errorf("the non-string message was not kept as text:\n%s", buf.String())
	}
}

func TestStartupErrorsSayWhy(t *testing.T) {
	h := newHost(t, newRecorder())
	h.Apply([]Spec{faultSpec("nokind", "nokind"), faultSpec("stdout", "stdout")})
	for name, want := range map[string]string{
		"nokind": "plugin offers no kind: set Channel, Command, Hook, MessageReceived, MessageSending, AgentEnd or Tool",
		"stdout": `wrote "a plugin that prints to stdout" to stdout before the handshake`,
	} {
		st := waitStatus(t, h.Instance(name), name+"'s error saying why", func(st Status) bool { return strings.Contains(st.LastError, want) })
		t.Logf("%s: %s", name, st.LastError)
	}
}
