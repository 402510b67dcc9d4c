package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/procstat"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/plugins/mcpchannel/mcpchanneltest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// The test binary doubles as a fake claude CLI (core/internal/fakeclaude)
// when CLAWHOST_FAKE_CLAUDE is set, and as a Claude Code channel server
// (mcpchanneltest) when its platform's address is set.
func TestMain(m *testing.M) {
	mcpchanneltest.Main(os.Exit)
	if os.Getenv(fakeclaude.EnvVar) != "" {
		fakeclaude.Main()
		return
	}
	os.Exit(pgtest.Main(m)) // runs the tests; stops PostgreSQL if a test started it

}

type daemon = Daemon

// loopbackHost is the host most tests run: the loopback channel (lo:u1
// allowed), the ping command plugin when ping, the clock hook.
func loopbackHost(dir string, ping bool) Host {
	return Host{
		Dir: dir,
		// The fake claude and its tools write test files outside the workspace.
		Agent:  Agent{Attrs: Attrs{"sandbox": "off"}},
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"lo:u1"}},
		// The tests count the messages sent; a slow cold start would show a
		// turn card and deliver the answer as its edit (card_test.go tests
		// the card).
		Messages: Attrs{"turn_card": "off"},
		Plugins: []Plugin{
			{Name: "lo", Source: "loopback", Config: Attrs{"addr_file": filepath.Join(dir, "lo.addr")}},
			{Name: "ping", Source: "ping", Attrs: Attrs{"enabled": ping}},
			{Name: "clock", Source: "clock-hook"},
		},
	}
}

func writeConfig(t testing.TB, dir string, ping bool) string {
	t.Helper()
	h := loopbackHost(dir, ping)
	return h.Write(t)
}

func startDaemon(t testing.TB, ping bool) *daemon {
	t.Helper()
	dir := t.TempDir()
	d := Launch(t, writeConfig(t, dir, ping))
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	return d
}

// waitFor is WaitFor for d's test.
func (d *daemon) waitFor(cond func() bool, what string) {
	d.t.Helper()
	sdktest.WaitFor(d.t, what, cond)
}

func (d *daemon) addr() string {
	b, _ := os.ReadFile(d.addrFile)
	return string(b)
}

func (d *daemon) post(sender, text string) {
	d.t.Helper()
	postInbound(d.t, d.addr(), map[string]any{"chat_id": "chat-" + sender, "sender_id": sender, "text": text})
}

// postInbound posts msg to the loopback plugin at addr as a platform does
// (deliverInbound); anything but 200 fails the test.
func postInbound(t testing.TB, addr string, msg map[string]any) {
	t.Helper()
	code, err := deliverInbound(addr, msg)
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK {
		t.Fatalf("inbound: status %d", code)
	}
}

// deliverInbound posts msg to the loopback plugin at addr as a platform
// does: with a message id (one is made when msg has none) that it sends
// again, after the Retry-After, while the loopback answers 503 (the host
// could not store the message: on a busy machine the database may be
// locked for a moment), for up to two minutes. It returns the last status.
// It takes no testing.TB: a helper process (injectHelper) calls it too.
func deliverInbound(addr string, msg map[string]any) (int, error) {
	if msg["message_id"] == nil {
		msg["message_id"] = fmt.Sprintf("m-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	body, _ := json.Marshal(msg)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Post("http://"+addr+"/inbound", "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, fmt.Errorf("inbound: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return resp.StatusCode, nil
		}
		wait := 300 * time.Millisecond
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		time.Sleep(wait) // on purpose: the loopback's Retry-After, as a platform honours it
	}
}

type record struct {
	Seq    int    `json:"seq"`
	Op     string `json:"op"`
	ChatID string `json:"chat_id"`
	Text   string `json:"text"`
}

// sent returns what the loopback channel did after the last record seen,
// waiting up to wait for something.
func (d *daemon) sent(wait time.Duration) []record {
	resp, err := http.Get(fmt.Sprintf("http://%s/sent?after=%d&wait=%s", d.addr(), d.after, wait))
	if err != nil {
		time.Sleep(50 * time.Millisecond) // on purpose: the plugin restarts; the caller asks again
		return nil
	}
	defer resp.Body.Close()
	var recs []record
	_ = json.NewDecoder(resp.Body).Decode(&recs)
	return recs
}

// nextSend returns the next message sent to chat, skipping typing and
// edits; it waits on the event, bounded by the test's deadline (waitFor).
func (d *daemon) nextSend(chat string) string {
	d.t.Helper()
	return d.nextSendWithin(chat, time.Until(sdktest.WaitDeadline(d.t)))
}

// nextSendWithin is nextSend waiting up to wait.
func (d *daemon) nextSendWithin(chat string, wait time.Duration) string {
	d.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		for _, r := range d.sent(2 * time.Second) {
			d.after = r.Seq
			if r.Op == "send" && r.ChatID == chat {
				return r.Text
			}
		}
	}
	d.t.Fatalf("no message sent to %s", chat)
	return ""
}

// waitServing waits until the host's loopback channel listens: it wrote
// its address file (in a cluster, only the host holding the channel's
// lease runs it).
func (d *daemon) waitServing() {
	d.t.Helper()
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback address file")
}

// sendsTo returns the texts of the messages sent to chat that keep accepts
// (nil keeps all): it waits until deadline for the first, calls first (if
// not nil) when it comes, then watches 3 s more for a second copy.
func (d *daemon) sendsTo(chat string, deadline time.Time, keep func(text string) bool, first func()) []string {
	var got []string
	for time.Now().Before(deadline) {
		for _, r := range d.sent(time.Second) {
			d.after = r.Seq
			if r.Op != "send" || r.ChatID != chat || keep != nil && !keep(r.Text) {
				continue
			}
			if len(got) == 0 {
				if first != nil {
					first()
				}
				deadline = time.Now().Add(3 * time.Second) // then watch for a second copy
			}
			got = append(got, r.Text)
		}
	}
	return got
}

// children are the pids whose parent is pid; alive reports whether pid
// runs (a zombie does not).
var children, alive = procstat.Children, procstat.Alive

// pluginPID returns the pid of the running child of d whose executable
// is binary (a plugin's: clawhost-telegram), other than not (0 for none).
func pluginPID(d *daemon, binary string, not int) int {
	for _, p := range children(d.cmd.Process.Pid) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); p != not && strings.Contains(exe, binary) && alive(p) {
			return p
		}
	}
	return 0
}

func pluginPIDs(d *daemon, want int) []int {
	d.t.Helper()
	var pids []int
	d.waitFor(func() bool {
		pids = nil
		for _, p := range children(d.cmd.Process.Pid) {
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); strings.Contains(exe, "clawhost-") {
				pids = append(pids, p)
			}
		}
		return len(pids) == want
	}, fmt.Sprintf("%d plugin processes", want))
	return pids
}

// TestEndToEnd: a message in a loopback chat reaches the (fake) agent with
// the clock hook's context and the reply comes back; /ping is answered by
// the command plugin; an unknown sender never reaches the agent; SIGHUP
// disables and re-enables a plugin; SIGTERM leaves no plugin running.
func TestEndToEnd(t *testing.T) {
	d := startDaemon(t, true)
	pluginPIDs(d, 3)

	d.post("u1", "hello there")
	got := d.nextSend("chat-u1")
	if !strings.HasPrefix(got, "echo: ") || !strings.Contains(got, "hello there") || !strings.Contains(got, "Current date and time") {
		t.Errorf("reply %q: want an echo of the prompt with the clock hook's context", got)
	}

	d.post("u1", "/ping now")
	if got := d.nextSend("chat-u1"); got != "pong now" {
		t.Errorf("/ping: got %q", got)
	}

	d.post("u2", "let me in")
	if got := d.nextSend("chat-u2"); strings.Contains(got, "echo") || !strings.Contains(got, "lo:u2") {
		t.Errorf("unknown sender: got %q, want a refusal naming lo:u2", got)
	}

	// SIGHUP with ping disabled: /ping goes to the agent instead.
	writeConfig(t, d.dir, false)
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	pluginPIDs(d, 2)
	d.post("u1", "/ping again")
	if got := d.nextSend("chat-u1"); !strings.HasPrefix(got, "echo: ") {
		t.Errorf("/ping with the plugin disabled: got %q, want the agent's echo", got)
	}
	// An invalid file is refused and the running set kept.
	_ = os.WriteFile(d.cfgPath, []byte("plugin \"x\" {"), 0o600)
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(func() bool { return strings.Contains(d.log.String(), "configuration refused") }, "refusal of the invalid file")
	writeConfig(t, d.dir, true)
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	// The reload first checks the new ping block in a probe process, then
	// starts the instance.
	d.waitFor(func() bool { return strings.Count(d.log.String(), "configuration reloaded") == 2 }, "the reload re-enabling ping")
	pids := pluginPIDs(d, 3)
	// The plugin may still be starting: the router waits for it rather
	// than sending its command to the agent.
	d.post("u1", "/ping back")
	if got := d.nextSend("chat-u1"); got != "pong back" {
		t.Errorf("/ping re-enabled: got %q", got)
	}

	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("clawhost exit after SIGTERM: %v", err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("plugin pid %d still running after SIGTERM", p)
		}
	}
}

// TestNoOrphansAfterSIGKILL: plugins die with the host.
func TestNoOrphansAfterSIGKILL(t *testing.T) {
	d := startDaemon(t, true)
	pids := pluginPIDs(d, 3)
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.waitFor(func() bool {
		for _, p := range pids {
			if alive(p) {
				return false
			}
		}
		return true
	}, "plugins to exit after the host was SIGKILLed")
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := writeConfig(t, dir, true)
	var out, errb bytes.Buffer
	if code := run([]string{"validate", "-config", good}, &out, &errb); code != 0 {
		t.Fatalf("valid config: exit %d\n%s", code, errb.String())
	}
	h := loopbackHost(t.TempDir(), true)
	h.Agent.Command = "claude"
	h.Plugins[0].Config = Attrs{"adr_file": 1}
	bad := h.Write(t)
	errb.Reset()
	if code := run([]string{"validate", "-config", bad}, io.Discard, &errb); code != 1 {
		t.Fatalf("invalid plugin config: exit %d, want 1", code)
	}
	if s := errb.String(); !strings.Contains(s, "adr_file") || !strings.Contains(s, "addr_file") {
		t.Errorf("diagnostics should point at adr_file and suggest addr_file:\n%s", s)
	}
}

func TestValidateUnknownSource(t *testing.T) {
	h := loopbackHost(t.TempDir(), true)
	h.Agent.Command = "claude"
	h.Plugins[0].Source = "lopback"
	path := h.Write(t)
	var errb bytes.Buffer
	if code := run([]string{"validate", "-config", path}, io.Discard, &errb); code != 1 {
		t.Fatalf("unknown source: exit %d, want 1", code)
	}
	if s := errb.String(); !strings.Contains(s, "clawhost-lopback") || !strings.Contains(s, `"loopback"`) {
		t.Errorf("want the missing path and a did-you-mean for loopback:\n%s", s)
	}
}

// TestValidateOnePass: the file's own errors, a missing binary and a
// plugin's schema errors come in one list sorted by position, with one
// count. A plugin block with an error in its host settings is still probed;
// one with an error in what says how to start it is not.
func TestValidateOnePass(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.hcl")
	src := fmt.Sprintf(`plugin_dir = %q
plugin "lo" {
  source     = "loopback"
  queue_mode = "folowup"
  config {
    adr_file = "x"
  }
}
log_level = "loud"
plugin "tg" {
  source = "lopback"
}
plugin "sum" {
  source = "loopback"
  sha256 = "abc"
  config {
    nope = 1
  }
}
`, binDir(t))
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"validate", "-config", path}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errb.String())
	}
	got := errb.String()
	// Each problem once, in file order: line 4, 6, 9, 11, 15.
	want := []string{
		path + ":4:16",  // queue_mode: did you mean "followup"
		path + ":6:5",   // adr_file: from the loopback plugin's schema
		path + ":9:13",  // log_level
		path + ":11:12", // lopback: binary not found
		path + ":15:12", // sha256
	}
	var at []int
	for _, w := range want {
		if strings.Count(got, "-> "+w+"\n") != 1 {
			t.Errorf("want one diagnostic at %s", w)
		}
		at = append(at, strings.Index(got, "-> "+w+"\n"))
	}
	for i := 1; i < len(at); i++ {
		if at[i] < at[i-1] {
			t.Errorf("%s printed before %s", want[i], want[i-1])
		}
	}
	for _, s := range []string{`Did you mean "followup"?`, `Did you mean "loopback"?`, `"adr_file"`, "addr_file"} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %s", s)
		}
	}
	if strings.Contains(got, "nope") {
		t.Error(`plugin "sum" was probed although its sha256 is invalid`)
	}
	if n := strings.Count(got, " errors\n"); n != 1 || !strings.HasSuffix(got, "\n5 errors\n") {
		t.Errorf("want one count line at the end, \"5 errors\":\n%s", got)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out.String())
	}
}

// TestValidateLimits: a file over the size limit and one nested too deeply
// get one diagnostic each with file:line:col, and no crash.
func TestValidateLimits(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"large", "# " + strings.Repeat("x", 2<<20) + "\n", "too large"},
		{"nested", "a = " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n", "nested too deeply"},
	} {
		path := filepath.Join(dir, tc.name+".hcl")
		if err := os.WriteFile(path, []byte(tc.src), 0o600); err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		if code := run([]string{"validate", "-config", path}, io.Discard, &errb); code != 1 {
			t.Errorf("%s: exit %d, want 1", tc.name, code)
		}
		if s := errb.String(); !strings.Contains(s, tc.want) || !strings.Contains(s, "-> "+path+":1:") || len(s) > 2000 {
			t.Errorf("%s: want a short diagnostic %q at %s:1:\n%.2000s", tc.name, tc.want, path, s)
		}
	}
}

// TestReloadNestedKeepsRunning: SIGHUP with a file nested deep enough to
// overflow the parser's stack (or over the size limit) is refused with a
// diagnostic; the host keeps running and answering.
func TestReloadNestedKeepsRunning(t *testing.T) {
	d := startDaemon(t, false)
	pluginPIDs(d, 2)
	for i, src := range []string{
		"a = " + strings.Repeat("[", 1000000) + "\n",
		strings.Repeat("# padding\n", 200000),
	} {
		if err := os.WriteFile(d.cfgPath, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = d.cmd.Process.Signal(syscall.SIGHUP)
		d.waitFor(func() bool { return strings.Count(d.log.String(), "configuration refused") == i+1 }, "refusal of the file")
		if d.cmd.ProcessState != nil {
			t.Fatalf("clawhost exited: %v", d.cmd.ProcessState)
		}
		d.post("u1", fmt.Sprintf("still there %d?", i))
		if got := d.nextSend("chat-u1"); !strings.Contains(got, fmt.Sprintf("still there %d?", i)) {
			t.Errorf("reply %q: want the echo", got)
		}
	}
	log := d.log.String()
	for _, want := range []string{"Configuration nested too deeply", "Configuration file too large", d.cfgPath + ":1:"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}
