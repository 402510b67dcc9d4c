package e2e

// Host-level tests with the real Claude Code CLI: the clawhost binary runs
// the loopback channel plugin and the real claude CLI (CLAWHOST_CLAUDE_BIN,
// or .cache/claude-cli from `make claude-cli`), which talks to the fake
// Anthropic Messages API of core/anthropictest on 127.0.0.1. Nothing leaves
// the machine. They skip when the CLI is missing unless
// CLAWHOST_REQUIRE_CLAUDE=1 (then they fail).
//
// TestClaudeHostMeasure prints latency and memory figures; it runs only
// with CLAWHOST_MEASURE=1.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// clClaudeBin finds the real CLI: $CLAWHOST_CLAUDE_BIN or
// <repo>/.cache/claude-cli/node_modules/.bin/claude (what `make claude-cli`
// installs). Without it the test is skipped, unless
// CLAWHOST_REQUIRE_CLAUDE=1.
func clClaudeBin(t testing.TB) string {
	t.Helper()
	p := os.Getenv("CLAWHOST_CLAUDE_BIN")
	if p == "" {
		p, _ = filepath.Abs("../../.cache/claude-cli/node_modules/.bin/claude")
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
		t.Fatalf("claude CLI not found at %s (set CLAWHOST_CLAUDE_BIN or run make claude-cli)", p)
	}
	t.Skip("claude CLI not installed (make claude-cli); set CLAWHOST_REQUIRE_CLAUDE=1 to fail instead")
	return ""
}

// clRecord is one loopback /sent record and when the test's poller saw it.
type clRecord struct {
	Seq       int    `json:"seq"`
	Op        string `json:"op"`
	ChatID    string `json:"chat_id"`
	MessageID string `json:"message_id"`
	Text      string `json:"text"`
	// Media are the paths of the files sent, Buttons the buttons' ids.
	Media   []string `json:"media"`
	Buttons [][]struct {
		ID string `json:"id"`
	} `json:"buttons"`
	At time.Time
}

// clHost is one clawhost daemon (restartable on the same directory) with
// its fake API and a poller that timestamps what the loopback channel sent.
type clHost struct {
	t        testing.TB
	bin      string // the claude CLI
	dir      string
	cfgPath  string
	addrFile string
	fake     *anthropictest.Server
	env      []string
	as       *hostUser // the user clawhost runs as; nil: the test's

	cmd      *exec.Cmd
	log      *sdktest.Log
	addr     string
	stopPoll context.CancelFunc
	pollDone chan struct{}

	mu      sync.Mutex
	recs    []clRecord
	changed chan struct{}
}

type clOptions struct {
	oneShot bool
	// agent is more settings of the agent block; setup, when set, runs on
	// the host's directory before clawhost starts.
	agent Attrs
	setup func(dir string)
	// senders are the loopback senders allowed in (default u1); agents
	// are agent "<id>" blocks.
	senders []string
	agents  []Agent
	// env is more of clawhost's environment (a host secret no child may see).
	env []string
	// command, when set, is agent.command given the host's directory.
	command func(dir string) string
	// plugins are more plugin blocks beside the loopback "lo"; lo its
	// host settings (debounce, ...); loConfig more of its config block
	// (e.g. buttons); messages the messages block (default: streaming =
	// "blocks"); access more of the access block (owners, members).
	plugins  []Plugin
	lo       Attrs
	loConfig Attrs
	messages Attrs
	access   Attrs
	// user, when set, is the user clawhost runs as (the test runs as
	// root; see hostUser); status turns the admin endpoint on at a free
	// loopback address, for sandboxMode.
	user   string
	status bool
}

// startClaudeHost writes the config and starts clawhost with a new fake API.
func startClaudeHost(t testing.TB, o clOptions) *clHost {
	t.Helper()
	bin := clClaudeBin(t)
	h := &clHost{t: t, bin: bin, dir: t.TempDir(), fake: anthropictest.New(), changed: make(chan struct{}), env: o.env}
	if o.user != "" {
		h.as = lookupHostUser(t, o.user)
	}
	t.Cleanup(h.fake.Close)
	h.cfgPath = filepath.Join(h.dir, "config.hcl")
	h.addrFile = filepath.Join(h.dir, "lo.addr")
	// The loopback channel as instance "lo" and the real claude CLI
	// against the fake API.
	agent := Attrs{"workspace": filepath.Join(h.dir, "workspace"), "timeout": "60s", "one_shot": o.oneShot}
	for k, v := range o.agent {
		agent[k] = v
	}
	if o.command != nil {
		agent["command"] = o.command(h.dir)
	}
	allow := []string{"lo:u1"}
	if len(o.senders) > 0 {
		allow = nil
		for _, s := range o.senders {
			allow = append(allow, "lo:"+s)
		}
	}
	cfg := Host{
		Dir:      h.dir,
		Agent:    RealClaude(bin, filepath.Join(h.dir, "home"), h.fake.URL(), agent),
		Agents:   o.agents,
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": allow},
		Admin:    Attrs{"listen": ""},
		Messages: o.messages,
		Plugins:  append([]Plugin{{Name: "lo", Source: "loopback", Attrs: o.lo, Config: Attrs{"addr_file": h.addrFile}}}, o.plugins...),
	}
	for k, v := range o.access {
		cfg.Access[k] = v
	}
	for k, v := range o.loConfig {
		cfg.Plugins[0].Config[k] = v
	}
	if cfg.Messages == nil {
		cfg.Messages = Attrs{"streaming": "blocks"}
	}
	if o.status {
		cfg.Admin = Attrs{"listen": sdktest.FreeAddr(t)}
	}
	cfg.Write(t)
	if o.setup != nil {
		o.setup(h.dir)
	}
	if h.as != nil {
		h.as.own(t, h.dir)
	}
	t.Cleanup(func() {
		if h.cmd != nil && h.cmd.ProcessState == nil {
			h.stop()
		}
		if t.Failed() {
			t.Logf("clawhost log:\n%s", h.log.String())
		}
	})
	h.start()
	return h
}

// start runs clawhost on the host's directory (again, after stop) and
// starts polling the loopback's sent log.
func (h *clHost) start() {
	h.t.Helper()
	_ = os.Remove(h.addrFile)
	h.log = &sdktest.Log{}
	h.cmd = Command(h.t, h.cfgPath)
	if len(h.env) > 0 {
		h.cmd.Env = append(os.Environ(), h.env...)
	}
	if h.as != nil {
		h.as.apply(h.cmd, h.dir)
	}
	h.cmd.Stdout = h.log
	h.cmd.Stderr = h.log
	if err := h.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	sdktest.WaitFor(h.t, "the loopback plugin's address file", func() error {
		b, err := os.ReadFile(h.addrFile)
		h.addr = string(b)
		return sdktest.Saw(err == nil && len(b) > 0, "no address yet (%v); clawhost log:\n%s", err, h.log)
	})
	ctx, cancel := context.WithCancel(context.Background())
	h.stopPoll, h.pollDone = cancel, make(chan struct{})
	go h.poll(ctx, h.addr, h.pollDone)
}

// stop sends SIGTERM and waits (bounded) for clawhost to exit.
func (h *clHost) stop() {
	h.t.Helper()
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			h.t.Errorf("clawhost exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = h.cmd.Process.Kill()
		<-done
		h.t.Errorf("clawhost did not exit within 20s of SIGTERM")
	}
	if h.stopPoll != nil { // nil when the start failed
		h.stopPoll()
		<-h.pollDone
	}
}

// poll long-polls the loopback's /sent and keeps every record with the
// time it arrived here.
func (h *clHost) poll(ctx context.Context, addr string, done chan struct{}) {
	defer close(done)
	after := 0
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("http://%s/sent?after=%d&wait=2s", addr, after), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		var recs []clRecord
		_ = json.NewDecoder(resp.Body).Decode(&recs)
		resp.Body.Close()
		now := time.Now()
		if len(recs) == 0 {
			continue
		}
		h.mu.Lock()
		for _, r := range recs {
			r.At = now
			h.recs = append(h.recs, r)
			after = r.Seq
		}
		close(h.changed)
		h.changed = make(chan struct{})
		h.mu.Unlock()
	}
}

// mark is the number of records seen so far; pass it to waitSend to look
// only at later ones.
func (h *clHost) mark() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.recs)
}

// waitSend returns the first send to chat at record index >= from and the
// index after it.
func (h *clHost) waitSend(chat string, from int, within time.Duration) (clRecord, int) {
	h.t.Helper()
	deadline := time.After(within)
	for {
		h.mu.Lock()
		for i := from; i < len(h.recs); i++ {
			if r := h.recs[i]; r.Op == "send" && r.ChatID == chat {
				h.mu.Unlock()
				return r, i + 1
			}
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			h.t.Fatalf("nothing sent to %s within %v (records: %v)", chat, within, h.sends(chat, 0))
			return clRecord{}, 0
		}
	}
}

// sends returns the send records to chat from index from on.
func (h *clHost) sends(chat string, from int) []clRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []clRecord
	for _, r := range h.recs[min(from, len(h.recs)):] {
		if r.Op == "send" && r.ChatID == chat {
			out = append(out, r)
		}
	}
	return out
}

// post delivers an inbound DM from sender in chat "chat-<sender>" and
// returns the time just before the request.
func (h *clHost) post(sender, text string) time.Time {
	h.t.Helper()
	t0 := time.Now()
	postInbound(h.t, h.addr, map[string]any{"chat_id": "chat-" + sender, "sender_id": sender, "sender_name": sender, "text": text})
	return t0
}

// ask posts text from sender in its own chat ("chat-"+sender) and returns
// the first answer after it (waiting up to within) and the record index
// after that answer.
func (h *clHost) ask(sender, text string, within time.Duration) (clRecord, int) {
	h.t.Helper()
	from := h.mark()
	h.post(sender, text)
	return h.waitSend("chat-"+sender, from, within)
}

// request waits for the fake API's n-th /v1/messages request (1-based).
func (h *clHost) request(n int, within time.Duration) *anthropictest.Request {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	r, err := h.fake.WaitRequest(ctx, n)
	if err != nil {
		h.t.Fatalf("%v (the fake API has %d requests)", err, h.fake.Count())
	}
	return r
}

// claudePIDs lists clawhost's processes that run the claude CLI: its
// children, or in the sandbox bwrap's (bwrap, its init, claude).
func (h *clHost) claudePIDs() []int {
	want, err := os.Stat(h.bin)
	if err != nil {
		return nil
	}
	var out []int
	for _, p := range descendants(h.cmd.Process.Pid, 3) {
		if !alive(p) {
			continue
		}
		if fi, err := os.Stat(fmt.Sprintf("/proc/%d/exe", p)); err == nil && os.SameFile(fi, want) && !probe(p) {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// probe reports whether pid is the host's probe of the CLI (claude
// --version, claude auth status at the start, at a low priority: on a
// busy machine it may still run when a test counts the turn's processes).
func probe(pid int) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	return slices.Contains(args, "--version") || slices.Contains(args, "auth")
}

// descendants are pid's children, their children, … down to depth levels.
func descendants(pid, depth int) []int {
	var out []int
	level := []int{pid}
	for range depth {
		var next []int
		for _, p := range level {
			next = append(next, children(p)...)
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// clCmdline is a process's argv.
func clCmdline(pid int) []string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// clAssistantTexts returns the text of every assistant message of a request.
func clAssistantTexts(r *anthropictest.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "assistant" {
			continue
		}
		var parts []string
		for _, b := range m.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		out = append(out, strings.Join(parts, "\n"))
	}
	return out
}

// clContainsInOrder reports whether every want is in some element of got,
// in order.
func clContainsInOrder(got []string, want ...string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && strings.Contains(g, want[i]) {
			i++
		}
	}
	return i == len(want)
}

// TestClaudeHostConversation: a DM is answered with the API's text; the
// follow-up is answered by the same warm claude process with the first turn
// in the request's history; after a host restart on the same data dir the
// session is resumed (--resume) with all earlier turns.
func TestClaudeHostConversation(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"

	// 1. DM in → the scripted reply out.
	h.fake.Enqueue(anthropictest.Reply{Text: "Hello Alice, nice to meet you."})
	got, m := h.ask("u1", "my name is Alice", 60*time.Second)
	if got.Text != "Hello Alice, nice to meet you." {
		t.Fatalf("first reply %q", got.Text)
	}
	r1 := h.request(1, time.Second)
	if u := r1.UserTexts(); len(u) != 1 || !strings.Contains(u[0], "my name is Alice") {
		t.Fatalf("first request user texts %q", u)
	}
	sid := r1.Header.Get("x-claude-code-session-id")
	warm := h.claudePIDs()
	if len(warm) != 1 {
		t.Fatalf("claude processes after the first turn: %v, want 1 warm", warm)
	}

	// 2. The follow-up goes to the warm process, with the first turn in the history.
	h.post("u1", "what is my name?")
	got, m = h.waitSend(chat, m, 60*time.Second)
	if !strings.HasPrefix(got.Text, "echo: ") || !strings.Contains(got.Text, "what is my name?") {
		t.Fatalf("follow-up reply %q", got.Text)
	}
	if n := h.fake.Count(); n != 2 {
		t.Fatalf("the fake API got %d requests after two turns, want 2", n)
	}
	r2 := h.request(2, time.Second)
	if u := r2.UserTexts(); len(u) != 2 || !clContainsInOrder(u, "my name is Alice", "what is my name?") {
		t.Fatalf("follow-up request user texts %q", u)
	}
	if a := clAssistantTexts(r2); !slices.Equal(a, []string{"Hello Alice, nice to meet you."}) {
		t.Fatalf("follow-up request assistant texts %q", a)
	}
	if s := r2.Header.Get("x-claude-code-session-id"); s != sid {
		t.Fatalf("follow-up session %q, first %q", s, sid)
	}
	if now := h.claudePIDs(); !slices.Equal(now, warm) {
		t.Fatalf("claude processes after the follow-up %v, before %v: a new process was started", now, warm)
	}

	// /status names the session by the id claude itself uses (its
	// session header, the runner's log lines, claude --resume).
	h.post("u1", "/status")
	got, m = h.waitSend(chat, m, 30*time.Second)
	if !strings.Contains(got.Text, "Claude session: "+sid) {
		t.Fatalf("/status %q does not name claude's session %s", got.Text, sid)
	}

	// 3. Host restart: the session is resumed from claude's transcript.
	h.stop()
	for _, p := range warm {
		if alive(p) {
			t.Fatalf("claude pid %d still running after clawhost stopped", p)
		}
	}
	h.start()
	m = h.mark()
	h.post("u1", "I am back after the restart")
	got, _ = h.waitSend(chat, m, 60*time.Second)
	if !strings.HasPrefix(got.Text, "echo: ") || !strings.Contains(got.Text, "I am back after the restart") {
		t.Fatalf("reply after restart %q", got.Text)
	}
	r3 := h.request(3, time.Second)
	if u := r3.UserTexts(); len(u) != 3 || !clContainsInOrder(u, "my name is Alice", "what is my name?", "I am back after the restart") {
		t.Fatalf("request after restart: user texts %q", u)
	}
	if a := clAssistantTexts(r3); len(a) != 2 || a[0] != "Hello Alice, nice to meet you." || !strings.Contains(a[1], "what is my name?") {
		t.Fatalf("request after restart: assistant texts %q", a)
	}
	if s := r3.Header.Get("x-claude-code-session-id"); s != sid {
		t.Fatalf("session after restart %q, before %q", s, sid)
	}
	pids := h.claudePIDs()
	if len(pids) != 1 {
		t.Fatalf("claude processes after the restart: %v", pids)
	}
	if argv := clCmdline(pids[0]); !slices.Contains(argv, "--resume") || !slices.Contains(argv, sid) {
		t.Fatalf("claude after the restart was not started with --resume %s: %q", sid, argv)
	}

	// /compact runs claude's own compaction in the session (the fake API
	// gets the summary request) and the conversation goes on.
	before := h.fake.Count()
	m = h.mark()
	h.post("u1", "/compact")
	got, _ = h.waitSend(chat, m, 60*time.Second)
	if got.Text != "Conversation compacted: claude goes on from a summary of it." {
		t.Fatalf("/compact answered %q", got.Text)
	}
	if h.fake.Count() != before+1 || !strings.Contains(strings.Join(h.request(before+1, time.Second).UserTexts(), "\n"), "summary") {
		t.Fatalf("no summary request at the API after /compact (%d → %d requests)", before, h.fake.Count())
	}
}

// TestClaudeHostStop: /stop during a slowly streaming reply answers
// "Stopped." at once and kills the run (what streamed before may have been
// shown, the rest never is), and the next message's prompt carries the
// abort note, once.
func TestClaudeHostStop(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"
	// 8 chunks 3 s apart: about 20 s of streaming.
	slow := anthropictest.Reply{Text: "SLOW-REPLY one two three four five six seven THE-END", Chunks: 8, ChunkDelay: 3 * time.Second}
	h.fake.Enqueue(slow)
	m := h.mark()
	h.post("u1", "tell me a long story")
	req := h.request(1, 60*time.Second)
	sdktest.WaitFor(t, "the reply to stream", func() bool { return req.Status() != 0 })
	pids := h.claudePIDs()
	t0 := time.Now()
	h.post("u1", "/stop")
	var got clRecord
	for {
		got, m = h.waitSend(chat, m, 15*time.Second)
		if got.Text == "Stopped." {
			break
		}
		// Only the part streamed before the stop may have been shown.
		if !strings.HasPrefix(slow.Text, strings.TrimSpace(got.Text)) || strings.Contains(got.Text, "THE-END") {
			t.Fatalf("/stop answered %q, want Stopped.", got.Text)
		}
	}
	t.Logf("/stop answered after %v", time.Since(t0).Round(time.Millisecond))
	if !req.LastTokenAt().IsZero() {
		t.Fatal("the slow reply finished before /stop; make it slower")
	}
	if len(pids) != 1 {
		t.Fatalf("claude processes during the turn: %v", pids)
	}
	sdktest.WaitFor(t, "the claude process to end after /stop", func() error {
		return sdktest.Saw(!alive(pids[0]), "claude pid %d still running", pids[0])
	})

	h.post("u1", "are you still there?")
	got, m = h.waitSend(chat, m, 60*time.Second)
	// A stop that comes before claude wrote the session's transcript
	// leaves nothing to resume (claude 2.1.330 writes it as the answer
	// streams): the reply then says the conversation starts anew, truly.
	if rest, ok := strings.CutPrefix(got.Text, turn.NoteSessionReset+"\n\n"); ok {
		t.Logf("the stop came before claude wrote the transcript: %q", turn.NoteSessionReset)
		got.Text = rest
	}
	if !strings.HasPrefix(got.Text, "echo: ") || !strings.Contains(got.Text, "are you still there?") {
		t.Fatalf("reply after /stop %q", got.Text)
	}
	r := h.request(2, time.Second)
	if last := r.LastUserText(); !strings.Contains(last, turn.AbortHint) || !strings.Contains(last, "are you still there?") {
		t.Fatalf("prompt after /stop lacks the abort note: %q", last)
	}
	for _, s := range h.sends(chat, 0) {
		if strings.Contains(s.Text, "THE-END") {
			t.Fatalf("the aborted reply was delivered: %q", s.Text)
		}
	}
	// The note is for one turn only.
	h.post("u1", "and again")
	_, _ = h.waitSend(chat, m, 60*time.Second)
	if last := h.request(3, time.Second).LastUserText(); strings.Contains(last, turn.AbortHint) {
		t.Fatalf("abort note repeated on the second turn after /stop: %q", last)
	}
}

// TestClaudeHostOverloaded: while the API answers 529 overloaded_error the
// user gets the short overloaded notice (after claude's few retries, not a
// hang), and the lane goes on with the next message.
func TestClaudeHostOverloaded(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"
	var overloaded atomic.Bool
	overloaded.Store(true)
	h.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if overloaded.Load() {
			return anthropictest.Overloaded()
		}
		return anthropictest.Reply{}
	})
	m := h.mark()
	t0 := h.post("u1", "are you busy?")
	got, m := h.waitSend(chat, m, 60*time.Second)
	took := time.Since(t0)
	if !strings.Contains(strings.ToLower(got.Text), "overloaded") || len(got.Text) > 200 || strings.Contains(got.Text, "API Error") {
		t.Fatalf("overloaded notice %q", got.Text)
	}
	attempts := h.fake.Count()
	t.Logf("overloaded notice after %v, %d API attempts", took.Round(time.Millisecond), attempts)
	if attempts < 2 || attempts > 5 {
		t.Errorf("%d API attempts, want claude's few retries (runner default CLAUDE_CODE_MAX_RETRIES=3)", attempts)
	}

	overloaded.Store(false)
	h.post("u1", "and now?")
	got, _ = h.waitSend(chat, m, 60*time.Second)
	if !strings.HasPrefix(got.Text, "echo: ") || !strings.Contains(got.Text, "and now?") {
		t.Fatalf("reply after the overload %q", got.Text)
	}
}

// TestClaudeHostPromptTooLong: the API's context-overflow error makes the
// host start a new session and say so; the next message's request has no
// earlier history.
func TestClaudeHostPromptTooLong(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"
	var tooLong atomic.Bool
	h.fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if tooLong.Load() {
			return anthropictest.PromptTooLong()
		}
		return anthropictest.Reply{}
	})
	m := h.mark()
	h.post("u1", "remember the code word BLUEBIRD")
	if got, next := h.waitSend(chat, m, 60*time.Second); !strings.Contains(got.Text, "BLUEBIRD") {
		t.Fatalf("first reply %q", got.Text)
	} else {
		m = next
	}
	first := h.request(1, time.Second).Header.Get("x-claude-code-session-id")

	tooLong.Store(true)
	n := h.fake.Count()
	h.post("u1", "a message that no longer fits")
	got, m := h.waitSend(chat, m, 60*time.Second)
	if !strings.Contains(got.Text, "new session") {
		t.Fatalf("prompt-too-long notice %q", got.Text)
	}
	t.Logf("prompt too long: %d API request(s), notice %q", h.fake.Count()-n, got.Text)
	for _, r := range h.fake.Requests()[n:] {
		t.Logf("  request %d: stream=%v max_tokens=%d messages=%d session=%s last user text %.60q", r.Seq, r.Stream, r.MaxTokens, len(r.Messages), r.Header.Get("x-claude-code-session-id"), r.LastUserText())
	}

	tooLong.Store(false)
	n = h.fake.Count()
	h.post("u1", "hello again")
	got, _ = h.waitSend(chat, m, 60*time.Second)
	if !strings.HasPrefix(got.Text, "echo: ") || !strings.Contains(got.Text, "hello again") {
		t.Fatalf("reply in the new session %q", got.Text)
	}
	r := h.request(n+1, time.Second)
	if u := r.UserTexts(); len(u) != 1 || !strings.Contains(u[0], "hello again") {
		t.Fatalf("new session's request has user texts %q, want only the new message", u)
	}
	if a := clAssistantTexts(r); len(a) != 0 || strings.Contains(string(r.Body), "BLUEBIRD") {
		t.Fatalf("new session's request carries earlier history (assistant %q)", a)
	}
	if s := r.Header.Get("x-claude-code-session-id"); s == first {
		t.Fatalf("new session reuses the claude session id %s", s)
	}
}

// clParagraphs returns n distinct paragraphs of about size characters.
func clParagraphs(n, size int) []string {
	var out []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j := 0; b.Len() < size; j++ {
			fmt.Fprintf(&b, "Paragraph %d sentence %d says something. ", i+1, j+1)
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	return out
}

// TestClaudeHostStreamedBlocks: a long multi-paragraph reply streamed
// slowly reaches the chat as several blocks while it is written, in order,
// nothing twice.
func TestClaudeHostStreamedBlocks(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"
	paras := clParagraphs(4, 900)
	long := strings.Join(paras, "\n\n")
	// 24 deltas 200 ms apart: about 4.6 s of streaming.
	h.fake.Enqueue(anthropictest.Reply{Text: long, Chunks: 24, ChunkDelay: 200 * time.Millisecond})
	m := h.mark()
	h.post("u1", "write me four paragraphs")
	req := h.request(1, 60*time.Second)

	// Collect sends until the whole text has arrived.
	var got []clRecord
	var joined string
	deadline := time.Now().Add(60 * time.Second)
	for strings.Join(strings.Fields(joined), " ") != strings.Join(strings.Fields(long), " ") {
		if time.Now().After(deadline) {
			t.Fatalf("after 60s the chat has %d sends: %+v", len(got), got)
		}
		var r clRecord
		r, m = h.waitSend(chat, m, time.Until(deadline))
		got = append(got, r)
		texts := make([]string, len(got))
		for i, g := range got {
			texts[i] = g.Text
		}
		joined = strings.Join(texts, "\n\n")
		if len(joined) > len(long)+16*len(got) {
			t.Fatalf("the chat got more text than the reply: %q", texts)
		}
	}
	// Nothing more comes (on purpose: a further send would come now).
	time.Sleep(1500 * time.Millisecond)
	if extra := h.sends(chat, m); len(extra) > 0 {
		t.Fatalf("sent after the whole reply: %+v", extra)
	}
	last := req.LastTokenAt()
	early := 0
	for i, g := range got {
		t.Logf("send %d: %d chars, %v after the API's last token", i+1, len([]rune(g.Text)), g.At.Sub(last).Round(time.Millisecond))
		if g.At.Before(last) {
			early++
		}
	}
	if len(got) < 3 {
		t.Fatalf("%d sends, want several blocks", len(got))
	}
	// Blocks are shown while the reply is still being written.
	if early < 2 {
		t.Errorf("%d of %d sends arrived before the API's last token; want the blocks streamed while the reply is written", early, len(got))
	}
	for i, p := range paras {
		n := 0
		for _, g := range got {
			n += strings.Count(g.Text, p)
		}
		if n != 1 {
			t.Errorf("paragraph %d sent %d times", i+1, n)
		}
	}
	for i, g := range got {
		if len([]rune(g.Text)) > 4000 {
			t.Errorf("send %d has %d chars", i+1, len([]rune(g.Text)))
		}
	}
}

// TestClaudeHostMeasure prints (a) inbound POST → request at the API for a
// warm follow-up turn and for one_shot = true, (b) the API's last token →
// the loopback's send, (c) host RSS before and after 50 turns and the RSS of
// a warm claude process. CLAWHOST_MEASURE=1 runs it.
func TestClaudeHostMeasure(t *testing.T) {
	if os.Getenv("CLAWHOST_MEASURE") != "1" {
		t.Skip("set CLAWHOST_MEASURE=1 to measure")
	}
	type series struct {
		name          string
		inToAPI, tail []time.Duration
	}
	run := func(h *clHost, name string, turns int, each func(i int)) series {
		s := series{name: name}
		m := h.mark()
		for i := 0; i < turns; i++ {
			n := h.fake.Count()
			t0 := h.post("u1", fmt.Sprintf("measure turn %d", i))
			req := h.request(n+1, 60*time.Second)
			var r clRecord
			r, m = h.waitSend("chat-u1", m, 60*time.Second)
			if !strings.Contains(r.Text, fmt.Sprintf("measure turn %d", i)) {
				t.Fatalf("%s turn %d: reply %q", name, i, r.Text)
			}
			s.inToAPI = append(s.inToAPI, req.Arrived.Sub(t0))
			s.tail = append(s.tail, r.At.Sub(req.LastTokenAt()))
			if each != nil {
				each(i)
			}
		}
		return s
	}

	// Warm: one first turn (process start), then 50 warm follow-ups.
	h := startClaudeHost(t, clOptions{})
	time.Sleep(2 * time.Second)
	rssStart := rssMB(h.cmd.Process.Pid)
	first := run(h, "warm first turn", 1, nil)
	rssAfter1 := rssMB(h.cmd.Process.Pid)
	pids := h.claudePIDs()
	var claudeRSS []float64
	warm := run(h, "warm", 50, func(i int) {
		if i == 0 || i == 49 {
			for _, p := range h.claudePIDs() {
				claudeRSS = append(claudeRSS, rssMB(p))
			}
		}
	})
	time.Sleep(2 * time.Second) // on purpose: the resident set settles after the run
	rssAfter50 := rssMB(h.cmd.Process.Pid)
	if now := h.claudePIDs(); !slices.Equal(now, pids) || len(pids) != 1 {
		t.Errorf("warm process changed during the run: %v → %v", pids, now)
	}
	h.stop()

	// One-shot: a fresh claude process per turn.
	o := startClaudeHost(t, clOptions{oneShot: true})
	oneShot := run(o, "one_shot", 20, nil)
	o.stop()

	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	pct := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-16s %4s  %22s  %22s\n", "config", "n", "inbound→API p50/p95 ms", "last token→send p50/p95 ms")
	for _, s := range []series{first, warm, oneShot} {
		fmt.Fprintf(&b, "%-16s %4d  %10s / %-9s  %10s / %-9s\n", s.name, len(s.inToAPI),
			ms(pct(s.inToAPI, .5)), ms(pct(s.inToAPI, .95)), ms(pct(s.tail, .5)), ms(pct(s.tail, .95)))
	}
	fmt.Fprintf(&b, "host RSS MB: idle after start %.1f, after 1 turn %.1f, after 51 turns %.1f\n", rssStart, rssAfter1, rssAfter50)
	fmt.Fprintf(&b, "warm claude process RSS MB (after turn 2, after turn 51):")
	for _, v := range claudeRSS {
		fmt.Fprintf(&b, " %.1f", v)
	}
	b.WriteString("\n")
	t.Log(b.String())
}

// TestClaudeHostScheduleMessage: the agent schedules a message for itself
// with the host's schedule_message tool (an MCP server the host starts for
// claude, bound to the chat), with the real CLI against the fake API; the
// message comes back as a turn in the same chat at its time, and the reply
// reaches the chat — nothing produced between turns is lost.
func TestClaudeHostScheduleMessage(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"
	h.fake.Enqueue(anthropictest.Reply{ToolUse: &anthropictest.ToolUse{Name: "mcp__clawhost__schedule_message",
		Input: map[string]any{"in": "2s", "text": "the oven is on"}}})
	h.fake.Enqueue(anthropictest.Reply{Text: "I will remind you."})
	got, m := h.ask("u1", "remind me about the oven in two seconds", 60*time.Second)
	if got.Text != "I will remind you." {
		t.Fatalf("reply %q", got.Text)
	}
	if res := h.request(2, time.Second).LastUserText(); !strings.Contains(res, "Scheduled for") {
		t.Fatalf("tool result %q", res)
	}
	checkNoTokenInArgv(t, filepath.Join(h.dir, "data", "run", "agent"))
	got, _ = h.waitSend(chat, m, 30*time.Second)
	if !strings.HasPrefix(got.Text, "echo: ") || !strings.Contains(got.Text, "the oven is on") {
		t.Fatalf("scheduled turn's reply %q", got.Text)
	}
	// The run is u1's turn in u1's session (the loopback's direct chat
	// has an id of its own, as Discord's and Slack's have): claude sees
	// the conversation that scheduled it.
	var seen []string
	for _, m := range h.request(3, time.Second).Messages {
		for _, c := range m.Content {
			seen = append(seen, c.Text)
		}
	}
	if !strings.Contains(strings.Join(seen, "\n"), "remind me about the oven") {
		t.Errorf("the scheduled turn ran in a session of its own; claude was sent: %q", seen)
	}
}

// checkNoTokenInArgv: the warm claude and its schedule bridge carry the
// tool's token nowhere on their command lines (which every local account
// reads in /proc): claude's --mcp-config names a 0600 file in runDir, and
// the bridge gets the token in its environment. The bridge is told from
// other hosts' (tests run side by side) by the socket in its environment.
func checkNoTokenInArgv(t *testing.T, runDir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(runDir, "mcp-*.json"))
	if len(files) != 1 {
		t.Fatalf("MCP config files in %s: %v, want one", runDir, files)
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("MCP config %s: %v %v, want mode 0600", files[0], fi, err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(files[0])
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	token, socket := cfg.MCPServers["clawhost"].Env["CLAWHOST_AGENT_TOKEN"], cfg.MCPServers["clawhost"].Env["CLAWHOST_AGENT_SOCKET"]
	if len(token) < 32 || socket == "" {
		t.Fatalf("no token or socket in the MCP config's env: %s", b)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var claude, bridge bool
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		line := strings.Join(argv, " ")
		if strings.Contains(line, token) {
			t.Errorf("%s holds the tool's token: %q", p, line)
		}
		for i, a := range argv {
			if a == "--mcp-config" && i+1 < len(argv) && argv[i+1] == files[0] {
				claude = true
			}
		}
		if len(argv) == 2 && argv[1] == "mcp-schedule" {
			env, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
			if !strings.Contains(string(env), "\x00CLAWHOST_AGENT_SOCKET="+socket+"\x00") {
				continue // another host's (the tests run side by side)
			}
			bridge = true
			if !strings.Contains(string(env), "CLAWHOST_AGENT_TOKEN="+token) {
				t.Errorf("the bridge %s has no token in its environment", p)
			}
		}
	}
	if !claude || !bridge {
		t.Errorf("found claude with --mcp-config %s: %v; the bridge as `clawhost mcp-schedule`: %v", files[0], claude, bridge)
	}
}

// TestClaudeHostDirectives: /model and /effort from the chat, through the
// real binary and the real CLI: the API requests carry the model and the
// effort asked for, and the conversation goes on across the restarts of
// claude they cause.
func TestClaudeHostDirectives(t *testing.T) {
	h := startClaudeHost(t, clOptions{})
	const chat = "chat-u1"
	_, m := h.ask("u1", "my name is Alice", 60*time.Second)
	h.post("u1", "/model claude-sonnet-4-5")
	got, m := h.waitSend(chat, m, 30*time.Second)
	if !strings.Contains(got.Text, "Model: claude-sonnet-4-5 from the next message on") {
		t.Fatalf("/model answered %q", got.Text)
	}
	h.post("u1", "what is my name?")
	_, m = h.waitSend(chat, m, 60*time.Second)
	r := h.request(2, time.Second)
	if r.Model != "claude-sonnet-4-5" || !clContainsInOrder(r.UserTexts(), "my name is Alice", "what is my name?") {
		t.Fatalf("after /model: model %q, user texts %q", r.Model, r.UserTexts())
	}
	h.post("u1", "/model default")
	_, m = h.waitSend(chat, m, 30*time.Second)
	h.post("u1", "/effort high")
	_, m = h.waitSend(chat, m, 30*time.Second)
	h.post("u1", "think hard")
	_, _ = h.waitSend(chat, m, 60*time.Second)
	r = h.request(3, time.Second)
	var body struct {
		OutputConfig struct {
			Effort string `json:"effort"`
		} `json:"output_config"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if r.Model == "claude-sonnet-4-5" || body.OutputConfig.Effort != "high" || len(r.UserTexts()) != 3 {
		t.Fatalf("after /model default and /effort high: model %q, effort %q, user texts %q", r.Model, body.OutputConfig.Effort, r.UserTexts())
	}
}
