package chaos

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/core/internal/fakeclaude"
	"github.com/clawhost/clawhost/core/internal/procstat"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"

	_ "modernc.org/sqlite" // the journal is read with the driver the store uses
)

const (
	token = "123456:TEST-clawhost-chaos"
	// settleLimit bounds the wait for a trial's messages: longer than the
	// host's send timeout (60 s). A scenario may set its own (settle).
	settleLimit = 2 * time.Minute
	// orphanGrace is how long the processes of a dead host may take to go.
	orphanGrace = 5 * time.Second
	// stopLimit bounds a SIGTERMed host's shutdown; then it is killed.
	stopLimit = 30 * time.Second
)

// chats are the DM chats (and their users) that talk to the bot.
var chats = []int64{1001, 1002, 1003, 1004}

// msg is one message a chat sent.
type msg struct {
	mark string
	chat int64
	// chatID and id are the chat and message ids the host journals it
	// under.
	chatID string
	id     string
	parts  int
	trial  int
	// file and emoji: claude sends the file (named file) with send_file
	// and reacts with emoji (the tools scenario; "" none).
	file, emoji string
	// note: claude calls the plugin tool note with the mark (the
	// plugin-tool scenario).
	note bool
	// settled: the journal entry was finished before the trial's limit.
	settled bool
}

// env is one scenario's world: the fake platform, the host on its
// directory, and what was sent and done.
type env struct {
	t      testing.TB
	sc     scenario
	dir    string
	data   string
	home   string
	runLog string
	exe    string
	plat   platform
	log    *os.File

	host     *exec.Cmd
	hostDone chan struct{}
	hostPID  int

	mu   sync.Mutex
	msgs []*msg
	// kills are the moments the host was sent SIGKILL.
	kills []time.Time

	db *sql.DB
	// url and peers: the multi-host mode (cluster_test.go).
	url   string
	peers []*peer

	orphans  []string
	recovery []time.Duration
	notes    []string
	faults   int // faults that struck (a claude kill finds no claude, say)
	trials   int
}

func newEnv(t testing.TB, sc scenario, dir string) *env {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sc: sc, dir: dir, data: filepath.Join(dir, "data"), home: filepath.Join(dir, "home"),
		runLog: filepath.Join(dir, "claude-runs.jsonl"), exe: exe}
	for _, d := range []string{e.data, e.home, filepath.Join(dir, "tools")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if sc.sendingHook {
		sdktest.WriteExecutable(t, filepath.Join(dir, "sign.py"), []byte(signScript), 0o700)
	}
	e.plat = newPlatform(sc.platform)
	h := e.hostConfig(dir, e.data)
	h.Write(t)
	if e.log, err = os.OpenFile(filepath.Join(dir, "clawhost.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// setup prepares the data directory (the disk-full scenario mounts a
// tmpfs there) and starts the host; false when the scenario cannot run
// here (said in the notes).
func (e *env) setup() bool {
	if e.sc.tmpfs {
		if reason := mountTmpfs(e.data, tmpfsSize); reason != "" {
			e.notes = append(e.notes, "skipped: "+reason)
			return false
		}
	}
	if e.sc.hosts > 1 {
		e.setupCluster()
	} else {
		e.startHost()
	}
	e.waitUntil(30*time.Second, e.plat.ready)
	return true
}

// stop stops the host (SIGTERM) and checks that nothing of it survived.
func (e *env) stop() {
	if e.host != nil {
		e.stopHost(syscall.SIGTERM)
		e.checkGone("final stop")
	}
	stopped := false
	for _, p := range e.peers {
		if p.cmd != nil {
			e.stopPeer(p, syscall.SIGTERM)
			stopped = true
		}
	}
	if stopped {
		e.checkGone("final stop")
	}
}

// close stops the host if it runs, then closes the database, the fake
// API and the log, and unmounts a tmpfs.
func (e *env) close() {
	e.stop()
	if e.db != nil {
		e.db.Close()
	}
	e.plat.close()
	e.log.Close()
	if e.sc.tmpfs {
		_ = syscall.Unmount(e.data, syscall.MNT_DETACH)
	}
}

// hostConfig is the scenario's configuration with its data in data: the
// platform's plugin against its fake, the fake claude logging its runs. text_limit 160 with chunk_mode "newline" puts each part of a fake
// reply (about 120 characters) in a chunk of its own.
func (e *env) hostConfig(dir, data string) e2e.Host {
	h := e2e.Host{
		Dir:     dir,
		DataDir: data,
		Agent: e2e.Agent{Env: map[string]string{"CLAWHOST_FAKE_CLAUDE_LOG": e.runLog},
			Attrs: e2e.Attrs{"sandbox": "off"}}, // the fake claude writes its run log outside the workspace
		Access:   e2e.Attrs{"dm_policy": "allowlist", "allow_from": e.allowFrom()},
		Messages: e2e.Attrs{"streaming": "auto", "text_limit": 160, "chunk_mode": "newline"},
		Plugins:  []e2e.Plugin{e.plat.plugin()},
	}
	if *flagDurability != "" {
		h.Storage = e2e.Attrs{"durability": *flagDurability}
	}
	if *flagSandbox {
		h.Agent.Attrs = e2e.Attrs{"sandbox": "auto", "add_dirs": []string{filepath.Dir(e.runLog)}}
	}
	if e.sc.sendingHook {
		// The chat sees only what the hook returned: no live draft of
		// claude's text before it.
		h.Messages["streaming"] = "off"
		h.Messages["hook_timeout"] = "10s"
		h.Plugins = append(h.Plugins, e2e.Plugin{Name: "sign", Source: "exec-hook",
			Config: e2e.Attrs{"message_sending": []string{filepath.Join(dir, "sign.py")}}})
	}
	if e.sc.pluginTool {
		h.Agent.Attrs["tools"] = []string{"whoami.note"}
		h.Plugins = append(h.Plugins, e2e.Plugin{Name: "whoami", Source: "whoami-tool"})
	}
	return h
}

// allowFrom names every chat's user.
func (e *env) allowFrom() []string {
	var out []string
	for _, c := range chats {
		out = append(out, e.plat.sender(c))
	}
	return out
}

// tg is the fake Bot API of a Telegram scenario (the API faults are
// Telegram's).
func (e *env) tg() *telegramtest.Server {
	p, ok := e.plat.(*telegramPlatform)
	if !ok {
		e.t.Fatalf("scenario %s: a Telegram fault on %T", e.sc.name, e.plat)
	}
	return p.srv
}

// startHost execs clawhost with the scenario's HOME, which everything it
// starts inherits: that is how a process of the scenario is recognized.
func (e *env) startHost() time.Time {
	at := time.Now()
	e.host, e.hostDone = e.exec("", filepath.Join(e.dir, "config.hcl"))
	e.hostPID = e.host.Process.Pid
	return at
}

// exec starts clawhost (label names it in the log) on cfg, in cfg's
// directory, with the scenario's HOME; done closes when it exited.
func (e *env) exec(label, cfg string) (cmd *exec.Cmd, done chan struct{}) {
	cmd = e2e.Command(e.t, cfg)
	cmd.Stdout, cmd.Stderr = e.log, e.log
	var envv []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, fakeclaude.EnvVar+"=") {
			envv = append(envv, kv)
		}
	}
	cmd.Env = append(envv, "HOME="+e.home)
	fmt.Fprintf(e.log, "\n===== chaos: exec clawhost%s at %s =====\n", label, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start clawhost%s: %v", label, err)
	}
	done = make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	return cmd, done
}

// stopHost signals the host and waits for it; a SIGTERMed host that has
// not exited after stopLimit is killed (and noted).
func (e *env) stopHost(sig syscall.Signal) {
	e.signal("", e.host, e.hostDone, sig)
	e.host = nil
}

// signal sends sig to a clawhost (label names it) and waits for it; one
// that ignores a SIGTERM for stopLimit is killed (and noted).
func (e *env) signal(label string, cmd *exec.Cmd, done chan struct{}, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		e.mu.Lock()
		e.kills = append(e.kills, time.Now())
		e.mu.Unlock()
	}
	fmt.Fprintf(e.log, "\n===== chaos: %v to clawhost%s at %s =====\n", sig, label, time.Now().Format(time.RFC3339Nano))
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(stopLimit):
		e.notes = append(e.notes, fmt.Sprintf("host%s ignored %v for %v; killed", label, sig, stopLimit))
		e.mu.Lock()
		e.kills = append(e.kills, time.Now())
		e.mu.Unlock()
		_ = cmd.Process.Kill()
		<-done
	}
}

// restartHost: the host got sig; once it and everything it started are
// gone, it is started again. It returns the moment of the exec.
func (e *env) restartHost(sig syscall.Signal) time.Time {
	e.stopHost(sig)
	e.plat.clearFailures()
	e.checkGone(fmt.Sprintf("after %v", sig))
	return e.startHost()
}

// push sends text from chat's user as a new message and returns the
// chat and message ids it is journaled under.
func (e *env) push(chat int64, text string) (string, string) {
	return e.plat.push(chat, text)
}

func (e *env) waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// journal opens the database read-only (once).
func (e *env) journal() *sql.DB {
	if e.db == nil && e.url != "" {
		db, err := sql.Open("pgx", e.url)
		if err != nil {
			e.t.Fatal(err)
		}
		db.SetMaxOpenConns(2)
		e.db = db
	}
	if e.db == nil {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(e.data, "clawhost.db")+"?mode=ro&_pragma=busy_timeout(200)")
		if err != nil {
			e.t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		e.db = db
	}
	return e.db
}

// entry is a message's journal entry.
type entry struct {
	found      bool
	id         int64
	state      string
	reason     string
	attempts   int
	uncertain  int
	replyText  string
	producedAt int64
	hasReply   bool
	// charges is the number of usage ledger rows of the entry's turn,
	// cost the sum of their costs.
	charges int
	cost    float64
}

func (e *env) entry(m *msg) (entry, error) {
	var en entry
	row := e.journal().QueryRow(e.sql(`SELECT id, state, reason, attempts FROM journal WHERE instance = ? AND chat_id = ? AND message_id = ?`),
		e.plat.instance(), m.chatID, m.id)
	switch err := row.Scan(&en.id, &en.state, &en.reason, &en.attempts); err {
	case nil:
		en.found = true
	case sql.ErrNoRows:
		return en, nil
	default:
		return en, err
	}
	err := e.journal().QueryRow(e.sql(`SELECT text, produced_at FROM replies WHERE journal_id = ?`), en.id).Scan(&en.replyText, &en.producedAt)
	switch err {
	case nil:
		en.hasReply = true
	case sql.ErrNoRows:
	default:
		return en, err
	}
	err = e.journal().QueryRow(e.sql(`SELECT count(*) FROM reply_chunks WHERE journal_id = ? AND CAST(uncertain AS INTEGER) = 1`), en.id).Scan(&en.uncertain)
	if err != nil {
		return en, err
	}
	err = e.journal().QueryRow(e.sql(`SELECT count(*), COALESCE(sum(cost_usd), 0) FROM usage WHERE journal_id = ?`), en.id).Scan(&en.charges, &en.cost)
	return en, err
}

// sql writes q's placeholders for the journal's engine ($n for
// PostgreSQL).
func (e *env) sql(q string) string {
	if e.url == "" {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func finished(state string) bool { return state == "done" || state == "failed" || state == "dropped" }

// settle waits until every message of ms has a finished journal entry,
// and returns when that was first seen; ok is false after the scenario's
// bound (settleLimit unless it sets its own).
func (e *env) settle(ms []*msg) (time.Time, bool) {
	limit := settleLimit
	if e.sc.settle > 0 {
		limit = e.sc.settle
	}
	deadline := time.Now().Add(limit)
	for {
		all := true
		for _, m := range ms {
			if m.settled {
				continue
			}
			en, err := e.entry(m)
			if err == nil && en.found && finished(en.state) {
				m.settled = true
				continue
			}
			all = false
		}
		if all {
			return time.Now(), true
		}
		if time.Now().After(deadline) {
			return time.Now(), false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a process seen in /proc.
type proc struct {
	pid, ppid, pgid int
	state           string
	cmdline         string
	environ         []byte
	// started is when the process started (the kernel's start time, to
	// its 10 ms ticks, on the wall clock).
	started time.Time
}

func procs() map[int]proc {
	out := map[int]proc{}
	for _, st := range procstat.All() {
		if len(st.Fields) < 20 {
			continue
		}
		p := proc{pid: st.PID, state: st.State(), ppid: st.PPID(), pgid: st.PGID(), started: st.Started()}
		dir := "/proc/" + strconv.Itoa(st.PID)
		cl, _ := os.ReadFile(dir + "/cmdline")
		p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
		p.environ, _ = os.ReadFile(dir + "/environ")
		out[st.PID] = p
	}
	return out
}

// claudePIDs are the pids of every fake claude process the run log names,
// with when each logged its start (the latest, should a pid come twice).
func (e *env) claudePIDs() map[int]time.Time {
	out := map[int]time.Time{}
	for _, ev := range e.runEvents() {
		if at := time.Unix(0, ev.At); at.After(out[ev.PID]) {
			out[ev.PID] = at
		}
	}
	return out
}

// inClaudesGroup reports whether p is in the process group of a fake
// claude the run log names (the tools it left are). Pids are reused: a
// process of another test on the machine whose group id is a pid this
// scenario's claude once had is not ours — the group's leader, when it
// lives, must have started by the time the claude logged its start (2 s
// of slack for the kernel's 10 ms ticks and the boot time's whole
// seconds; a reuse comes much later), and p cannot have started long
// before the claude did.
func inClaudesGroup(all map[int]proc, claude map[int]time.Time, p proc) bool {
	at, ok := claude[p.pgid]
	if !ok {
		return false
	}
	const slack = 2 * time.Second
	if p.started.Before(at.Add(-time.Minute)) {
		return false // older than the group it would belong to
	}
	if leader, ok := all[p.pgid]; ok && leader.state != "Z" && leader.started.After(at.Add(slack)) {
		return false // the pid is another process's now
	}
	return true
}

// ours returns the live processes of the scenario that are not the host
// or its descendants (every one when the host is dead).
func (e *env) ours() []proc {
	all := procs()
	claude := e.claudePIDs()
	mark := []byte("HOME=" + e.home + "\x00")
	var out []proc
	for _, p := range all {
		if p.state == "Z" || p.pid == os.Getpid() {
			continue
		}
		if !bytes.Contains(p.environ, mark) && !inClaudesGroup(all, claude, p) {
			continue
		}
		if e.host != nil && descends(all, p.pid, e.hostPID) || e.livePeer(all, p.pid) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func descends(all map[int]proc, pid, root int) bool {
	for i := 0; i < 64 && pid > 1; i++ {
		if pid == root {
			return true
		}
		pid = all[pid].ppid
	}
	return false
}

// checkGone waits up to orphanGrace for every process of the scenario
// outside the running host to go; those left are orphans (recorded, then
// killed so they do not haunt the next trial).
func (e *env) checkGone(when string) {
	var left []proc
	e.waitUntil(orphanGrace, func() bool { left = e.ours(); return len(left) == 0 })
	for _, p := range left {
		e.orphans = append(e.orphans, fmt.Sprintf("%s: pid %d (ppid %d, pgid %d) %q", when, p.pid, p.ppid, p.pgid, p.cmdline))
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// pluginPID is the running plugin process (0 for none).
func (e *env) pluginPID() int {
	for _, p := range procs() {
		if p.ppid == e.hostPID && p.state != "Z" && strings.Contains(p.cmdline, e.plat.binary()) {
			return p.pid
		}
	}
	return 0
}

// claudeProcs are the running fake claude processes of the host: its children, or,
// sandboxed (-chaos.sandbox), bubblewrap's or the sandbox helper's below it — never a
// process a fake claude started (the same executable, one level down).
func (e *env) claudeProcs() []int {
	var out []int
	all := procs()
	fake := func(p proc) bool { return strings.HasPrefix(p.cmdline, e.exe+" ") }
	for _, p := range all {
		if p.pid != e.hostPID && descends(all, p.pid, e.hostPID) && p.state != "Z" && fake(p) && !fake(all[p.ppid]) {
			out = append(out, p.pid)
		}
	}
	return out
}

// runEvents reads the fake claude's run log.
func (e *env) runEvents() []fakeclaude.RunEvent {
	b, _ := os.ReadFile(e.runLog)
	var out []fakeclaude.RunEvent
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev fakeclaude.RunEvent
		if json.Unmarshal(line, &ev) == nil && ev.Event != "" {
			out = append(out, ev)
		}
	}
	return out
}

// planMsg is a message a trial will send.
type planMsg struct {
	gap   time.Duration // before it is sent
	think time.Duration // the fake claude's time to answer
	parts int
	tool  bool
	// sendFile and emoji: claude calls send_file and react (sc.tools);
	// note: the plugin tool note (sc.pluginTool).
	sendFile bool
	emoji    string
	note     bool
}

// emojis are the reactions of the tools scenario (Telegram's set; not
// the host's seen reaction, 👀).
var emojis = []string{"👍", "🔥", "🙏", "🎉"}

// plan draws a trial's messages, per chat. A scenario's own draws (its
// tools, its long turns) come after the common ones, so the other
// scenarios' plans stay as they were.
func plan(rng *rand.Rand, sc scenario) map[int64][]planMsg {
	out := map[int64][]planMsg{}
	order := rng.Perm(len(chats))
	n := 2 + rng.IntN(len(chats)-1)
	for _, i := range order[:n] {
		k := 1 + rng.IntN(3)
		for range k {
			pm := planMsg{
				gap:   time.Duration(rng.IntN(500)) * time.Millisecond,
				think: time.Duration(rng.IntN(1500)) * time.Millisecond,
				parts: 1 + rng.IntN(3),
				tool:  rng.IntN(4) == 0,
			}
			if sc.tools {
				pm.sendFile = rng.IntN(3) > 0
				if rng.IntN(3) > 0 {
					pm.emoji = emojis[rng.IntN(len(emojis))]
				}
			}
			if sc.pluginTool {
				pm.note = rng.IntN(4) > 0
			}
			if sc.longTurns {
				// Past the turn card's delay (3 s), with an edit or two.
				pm.think = 3500*time.Millisecond + time.Duration(rng.IntN(3000))*time.Millisecond
			}
			out[chats[i]] = append(out[chats[i]], pm)
		}
	}
	return out
}

// markCost is the cost the fake claude reports for the turn answering
// mark (#cost): known to the tally, different per message, exact in
// binary.
func markCost(mark string) float64 {
	h := fnv.New32a()
	h.Write([]byte(mark))
	return float64(1+h.Sum32()%4096) / 1024 / 128
}

// send runs a trial's plan: each chat sends its messages in order.
func (e *env) send(trial int, p map[int64][]planMsg) []*msg {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var out []*msg
	for chat, list := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, pm := range list {
				time.Sleep(pm.gap)
				mark := fmt.Sprintf("%s%03dc%dm%d", e.sc.prefix, trial, chat%10, j)
				text := fmt.Sprintf("hello %s #mark=%s #parts=%d #sleep=%dms #cost=%v", mark, mark, pm.parts, pm.think.Milliseconds(), markCost(mark))
				if pm.tool {
					text += " #spawn=" + filepath.Join(e.dir, "tools", mark+".pid")
				}
				m := &msg{mark: mark, chat: chat, parts: pm.parts, trial: trial, emoji: pm.emoji}
				if pm.sendFile {
					m.file = mark + ".txt"
					text += " #sendfile=" + m.file
				}
				if pm.emoji != "" {
					text += " #react=" + pm.emoji
				}
				if pm.note {
					m.note = true
					text += " #note=" + mark
				}
				if e.sc.limit {
					text += " #limit=" + e.limitFile()
				}
				m.chatID, m.id = e.push(chat, text)
				mu.Lock()
				out = append(out, m)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	e.mu.Lock()
	e.msgs = append(e.msgs, out...)
	e.mu.Unlock()
	return out
}

// liveStops are the bot messages that still show a turn card's Stop
// button (none on a platform the card scenario does not run on).
func (e *env) liveStops() []string {
	if p, ok := e.plat.(*telegramPlatform); ok {
		return p.liveStops()
	}
	return nil
}

// toolNotes counts the plugin-tool scenario's notes by text: the lines the
// whoami-tool example wrote to the workspace's notes.txt.
func (e *env) toolNotes() map[string]int {
	b, _ := os.ReadFile(filepath.Join(e.dir, "workspace", "notes.txt"))
	out := map[string]int{}
	for line := range strings.Lines(string(b)) {
		text, _, _ := strings.Cut(strings.TrimRight(line, "\n"), "\t")
		out[text]++
	}
	return out
}
