package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/core/anthropictest"
	ce2e "github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestMatrixRestart: a message written while clawhost is down (after a
// kill -9, then after a clean stop) is answered once when it is back, and
// nothing answered before is answered again; the plugin's state (device,
// token, sync position) is 0600.
func TestMatrixRestart(t *testing.T) {
	t.Parallel()
	e := startMatrix(t)

	e.fake.Enqueue(anthropictest.Reply{Text: "First answer."})
	send(t, e.alice, e.dm, text("first"))
	e.waitBot(t, e.aw, e.dm, "the first answer", contains("First answer."))

	for i, stop := range []func(){
		func() { _ = e.d.Process().Kill() },
		func() { _ = e.d.Process().Signal(syscall.SIGTERM) },
	} {
		p := e.d.Process()
		stop()
		_, _ = p.Wait()
		word := []string{"killed", "stopped"}[i]
		send(t, e.alice, e.dm, text("written while "+word))
		e.fake.Enqueue(anthropictest.Reply{Text: "Answer after " + word + "."})
		e.d = ce2e.Launch(t, e.cfgPath)
		e.waitBot(t, e.aw, e.dm, "the answer after "+word, contains("Answer after "+word+"."))
	}
	e.fake.Enqueue(anthropictest.Reply{Text: "Last answer."})
	send(t, e.alice, e.dm, text("last"))
	e.waitBot(t, e.aw, e.dm, "the last answer", contains("Last answer."))

	for _, s := range []string{"First answer.", "Answer after killed.", "Answer after stopped.", "Last answer."} {
		if n := e.count(e.aw, e.dm, s); n != 1 {
			t.Errorf("%q sent %d times", s, n)
		}
	}
	got := map[string]int{}
	for _, r := range e.fake.Requests() {
		got[r.LastUserText()]++
	}
	for _, s := range []string{"first", "written while killed", "written while stopped", "last"} {
		n := 0
		for text, c := range got {
			if strings.Contains(text, s) && (s != "first" || !strings.Contains(text, "last")) {
				n += c
			}
		}
		if n != 1 {
			t.Errorf("claude got %q %d times: %v", s, n, got)
		}
	}
	var state string
	sdktest.WaitFor(t, "the plugin's state file", func() bool {
		m, _ := filepath.Glob(filepath.Join(e.d.Dir(), "data", "*", "*", "matrix-state.json"))
		m2, _ := filepath.Glob(filepath.Join(e.d.Dir(), "data", "*", "matrix-state.json"))
		m = append(m, m2...)
		if len(m) > 0 {
			state = m[0]
		}
		return state != ""
	})
	fi, err := os.Stat(state)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600", state, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(state)
	if strings.Contains(string(b), e.bot.Password) {
		t.Error("the state holds the password")
	}
}
