package gateway

import (
	"cmp"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// lo is the in-process counterpart of env for the tests moved off the
// plugin and claude processes: the gateway with baseSettings over
// recording ports standing for the loopback instance "lo" (shown as
// "Loopback", as the plugin is) and the scripted agent answering as the
// fake claude does ("echo: " and the prompt). Its helpers keep env's names
// (post, text, quiet …) so a moved test reads as it did; every wait is on
// an event the ports or the agent recorded.
type lo struct {
	t      *testing.T
	gw     *Gateway
	db     *sqlite.DB
	ports  *recPorts
	agent  *scripted
	seen   int // sends read by next, over every chat
	logBuf *sdktest.Log
	once   sync.Once // stop
}

type loOptions struct {
	settings func(*Settings)
	now      func() time.Time
	// clock is the pipeline's (Options.Clock); nil: the real one.
	clock tstime.Clock
	// textLimit is the channel's text limit; 0: 4000, the loopback's.
	textLimit int
	// buttons: the channel shows buttons (the loopback's buttons = true).
	buttons bool
	// agent is the agent (a restart keeps the one before); nil: a new one.
	agent *scripted
	// dir holds the store (in dir/data, as env's); "": a new one.
	dir string
	// ownerClaims answers /owner CODE; nil: none.
	ownerClaims OwnerClaims
}

func newLo(t *testing.T, o loOptions) *lo {
	t.Helper()
	l := &lo{t: t, logBuf: &sdktest.Log{}, ports: newRecPorts(), agent: o.agent}
	if l.agent == nil {
		l.agent = newScripted()
	}
	l.ports.name, l.agent.echo = "Loopback", true
	// What the loopback plugin declares by default.
	limit := cmp.Or(o.textLimit, 4000)
	l.ports.caps = &channel.Capabilities{MaxTextLength: limit, LengthUnit: channel.LengthUTF16, Markup: channel.MarkupMarkdown, Threads: true, Groups: true, Buttons: o.buttons}
	l.ports.buttons = o.buttons
	var err error
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	l.db, err = sqlite.Open(context.Background(), filepath.Join(dir, "data"), sqlite.Options{Synchronous: "NORMAL", Now: o.now})
	if err != nil {
		t.Fatal(err)
	}
	set := baseSettings()
	set.Turn.Workspace = t.TempDir()
	set.Delivery.Workspace = set.Turn.Workspace
	if o.settings != nil {
		o.settings(&set)
	}
	log := hclog.New(&hclog.LoggerOptions{Output: l.logBuf, Level: hclog.Debug})
	l.gw = New(Options{Logger: log, Store: l.db, Agent: l.agent, Ports: l.ports, Settings: set, Version: "test", Now: o.now, Clock: o.clock, OwnerClaims: o.ownerClaims})
	if err := l.gw.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.stop)
	return l
}

// stop closes the gateway and the store (a restart opens the directory
// again), also at the test's end.
func (l *lo) stop() {
	l.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l.gw.Close(ctx)
		_ = l.db.Close()
		if l.t.Failed() {
			l.t.Logf("log:\n%s", l.logBuf.String())
		}
	})
}

// post hands the gateway m as the loopback plugin hands it what is posted
// to its /inbound (a direct chat unless chat_type says otherwise).
func (l *lo) post(m in) {
	l.t.Helper()
	str := func(k string) string { s, _ := m[k].(string); return s }
	msg := channel.InboundMessage{ChatType: channel.ChatType(str("chat_type")), ChatID: str("chat_id"), ThreadID: str("thread_id"), MessageID: str("message_id"),
		Sender: channel.Sender{ID: str("sender_id"), Name: str("sender_name")}, Text: str("text"), Timestamp: time.Now()}
	msg.WasMentioned, _ = m["mentioned"].(bool)
	msg.Edited, _ = m["edited"].(bool)
	if a, ok := m["action"].(map[string]string); ok {
		msg.Action = &channel.Action{ButtonID: a["ButtonID"], MessageID: a["MessageID"]}
	}
	msg.ChatTitle = str("chat_title")
	if msg.ChatType == "" {
		msg.ChatType = channel.ChatDirect
	}
	if msg.MessageID == "" {
		msg.MessageID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if err := l.gw.Inbound(context.Background(), "lo", []channel.InboundMessage{msg}); err != nil {
		l.t.Fatal(err)
	}
}

// text is the text of the next send to chat (sends to other chats before
// it are passed over, as env's are).
func (l *lo) text(chat string) string {
	l.t.Helper()
	return l.ports.next(l.t, chat, &l.seen)
}

// next is the next send to chat as env's record has it (its message id
// the one the ports answered).
func (l *lo) next(chat string) record {
	l.t.Helper()
	l.text(chat)
	l.ports.mu.Lock()
	defer l.ports.mu.Unlock()
	r := l.ports.sent[l.seen-1]
	return record{Op: "send", ChatID: r.ChatID, ThreadID: r.ThreadID, MessageID: strconv.Itoa(l.seen), Text: r.Text, Format: string(r.Format), ReplyTo: r.ReplyToMessageID, Buttons: r.Buttons}
}

// quiet asserts that nothing more is sent to chat before the answer to
// the marker m, a message of the same chat: the chat's messages are
// answered in order, so whatever else it would have been sent comes
// before that answer. The marker's answer is read.
func (l *lo) quiet(chat string, marker in) {
	l.t.Helper()
	want, _ := marker["text"].(string)
	l.post(marker)
	if got := l.text(chat); !strings.Contains(got, want) {
		l.t.Fatalf("unexpected send to %s: %q (before the answer to %q)", chat, got, want)
	}
}

// hold returns the text that keeps the agent's turn running until release
// (the scripted agent holds a prompt with "hold" in it).
func (l *lo) hold() (directive string, release func()) {
	var once sync.Once
	return "hold", func() { once.Do(func() { close(l.agent.release) }) }
}

// running waits until the agent holds a turn.
func (l *lo) running() {
	l.t.Helper()
	select {
	case <-l.agent.held:
	case <-time.After(10 * time.Second): // a bound on a failing test
		l.t.Fatal("no turn runs")
	}
}
