package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// TestCommandAnswerSurvivesARestart: a command plugin's answer of four
// messages (a file with one, buttons under another) is recorded before
// the first is sent. The host stops while the second is in flight (its
// send's outcome unknown, as after kill -9): the next start delivers the
// third and fourth with their file and buttons, does not send the first
// again, does not send the second twice (the chat is told a part may be
// missing), and the entry ends done.
func TestCommandAnswerSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(file, []byte("%PDF-1.4 report"), 0o600); err != nil {
		t.Fatal(err)
	}
	answer := &command.Response{Replies: []command.Reply{
		{Text: "first"},
		{Text: "second"},
		{Text: "third", Media: []channel.OutboundMedia{{Path: file, Kind: channel.MediaDocument}}},
		{Text: "fourth", Buttons: [][]channel.Button{{{ID: "/report again", Label: "Again"}}}},
	}}
	ws := t.TempDir()
	start := func(ports *recPorts) (*Gateway, *sqlite.DB) {
		t.Helper()
		db, err := sqlite.Open(context.Background(), dir, sqlite.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		ports.answer, ports.buttons = answer, true
		s := Settings{
			Access:  access.Policy{DMPolicy: access.PolicyAllowlist, AllowFrom: []string{"tg:*"}},
			Sources: map[string]string{"tg": "telegram"},
			Turn:    turn.Settings{Streaming: turn.StreamOff, Workspace: ws},
		}
		s.Delivery.Workspace = ws
		g := New(Options{Logger: hclog.NewNullLogger(), Store: db, Agent: newScripted(), Ports: ports, Settings: s, Version: "test"})
		if err := g.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		g.RefreshCommands(context.Background())
		return g, db
	}

	// The first host: the second message's send does not answer until the
	// host is gone. Its store closes under it, as at kill -9: nothing it
	// does after that is recorded.
	inFlight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ports1 := newRecPorts()
	ports1.hold = func(ctx context.Context, n int) error {
		if n < 1 {
			return nil
		}
		once.Do(func() { close(inFlight) })
		<-release
		return pluginclient.ErrPluginExited
	}
	g1, db1 := start(ports1)
	if err := g1.Inbound(context.Background(), "tg", []channel.InboundMessage{dmFrom("5", "/report")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("the second message was never sent")
	}
	_ = db1.Close()
	defer func() {
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		g1.Close(ctx)
	}()
	seen := 0
	if got := ports1.next(t, "5", &seen); got != "first" {
		t.Fatalf("first host sent %q first", got)
	}

	// The second host finishes the answer.
	ports2 := newRecPorts()
	g2, db2 := start(ports2)
	defer db2.Close()
	seen = 0
	var got []string
	for range 3 {
		got = append(got, ports2.next(t, "5", &seen))
	}
	if !strings.Contains(got[0], "may be missing") || got[1] != "third" || got[2] != "fourth" {
		t.Fatalf("after the restart: %q; want the notice, third, fourth", got)
	}
	ports2.mu.Lock()
	third, fourth := ports2.sent[1], ports2.sent[2]
	ports2.mu.Unlock()
	if len(third.Media) != 1 || third.Media[0].Path != file || len(third.Buttons) != 0 {
		t.Errorf("third went with %+v, %+v; want the file alone", third.Media, third.Buttons)
	}
	if len(fourth.Media) != 0 || len(fourth.Buttons) != 1 || fourth.Buttons[0][0].ID != "/report again" {
		t.Errorf("fourth went with %+v, %+v; want the button", fourth.Media, fourth.Buttons)
	}
	// Nothing more (a graceful stop waits for the resumed delivery), and
	// the entry is done.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g2.Close(ctx)
	if open, err := db2.ListUnfinished(context.Background(), 0, 10); err != nil || len(open) != 0 {
		t.Fatalf("unfinished entries after the answer: %+v, %v", open, err)
	}
	ports2.mu.Lock()
	defer ports2.mu.Unlock()
	if len(ports2.sent) != 3 {
		t.Fatalf("second host sent %d messages: %+v", len(ports2.sent), ports2.sent)
	}
}
