package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// tgClaude is what a Telegram test with the real claude CLI starts from:
// the fake Bot API, the fake Anthropic API, the CLI and the host's
// directory. Both fakes close after the host stops (cleanups run last
// registered first, and the host registers its own later).
type tgClaude struct {
	srv  *telegramtest.Server
	fake *anthropictest.Server
	bin  string
	dir  string
}

// newTgClaude makes the fakes and the directory; without the claude CLI
// the test is skipped (see clClaudeBin).
func newTgClaude(t *testing.T) *tgClaude {
	t.Helper()
	bin := clClaudeBin(t)
	fake, srv := anthropictest.New(), telegramtest.NewServer(tgToken)
	t.Cleanup(fake.Close)
	t.Cleanup(srv.Close)
	return &tgClaude{srv: srv, fake: fake, bin: bin, dir: t.TempDir()}
}

// agent is the default agent block: the real claude CLI against the fake
// API with its HOME in the host's directory and the workspace
// <dir>/workspace unless attrs names one.
func (r *tgClaude) agent(attrs Attrs) Agent {
	a := Attrs{"workspace": filepath.Join(r.dir, "workspace")}
	maps.Copy(a, attrs)
	return RealClaude(r.bin, filepath.Join(r.dir, "home"), r.fake.URL(), a)
}

// start runs h in the rig's directory with the telegram plugin (instance
// "tg" on the fake Bot API) before h's own plugins and, when h names no
// admin block, no admin listener; see startOnTelegram.
func (r *tgClaude) start(t *testing.T, h Host) *Daemon {
	t.Helper()
	h.Dir = r.dir
	h.Plugins = append([]Plugin{tgPlugin(r.srv.APIEndpoint())}, h.Plugins...)
	if h.Admin == nil {
		h.Admin = Attrs{"listen": ""}
	}
	return startOnTelegram(t, r.srv, h)
}

// startOnTelegram starts h, whose plugins include the telegram plugin on
// srv, and returns once the plugin polls (its first getUpdates); see
// launchOn. The caller closes srv.
func startOnTelegram(t *testing.T, srv *telegramtest.Server, h Host) *Daemon {
	t.Helper()
	d := launchOn(t, h, platform{name: "bot API", requests: func() string { return tgRequestLog(srv) }})
	sdktest.WaitFor(t, "the plugin's first getUpdates", func() bool { return len(srv.Requests("getUpdates")) > 0 })
	return d
}

// platform is the fake chat platform a host's channel plugin talks to.
type platform struct {
	// name says whose requests a failed test's log shows.
	name string
	// close, when set, closes the fake after the host stopped
	// (cleanups run last registered first), so that the plugin never
	// sees its API vanish.
	close func()
	// requests is the fake's request log.
	requests func() string
}

// launchOn applies mods to h in order, writes its config and starts
// clawhost on it. When the test fails, its log gets the requests the
// platform saw.
func launchOn(t *testing.T, h Host, p platform, mods ...func(*Host)) *Daemon {
	t.Helper()
	for _, m := range mods {
		m(&h)
	}
	if p.close != nil {
		t.Cleanup(p.close)
	}
	d := Start(t, h)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s requests:\n%s", p.name, p.requests())
		}
	})
	return d
}

// apiRequest waits for the fake API's n-th request (1-based) to finish.
func apiRequest(t *testing.T, fake *anthropictest.Server, n int) *anthropictest.Request {
	t.Helper()
	var r *anthropictest.Request
	bounded(t, fmt.Sprintf("request %d", n), func(ctx context.Context) (err error) { r, err = fake.WaitDone(ctx, n); return err })
	return r
}

// apiRequestStarted waits for the fake API's n-th request (1-based) to
// arrive (its answer may still be on its way).
func apiRequestStarted(t *testing.T, fake *anthropictest.Server, n int) *anthropictest.Request {
	t.Helper()
	var r *anthropictest.Request
	bounded(t, fmt.Sprintf("request %d to arrive", n), func(ctx context.Context) (err error) { r, err = fake.WaitRequest(ctx, n); return err })
	return r
}

// bounded runs wait with a context bounded as the e2e waits are (tgWait)
// and fails the test with what and wait's error.
func bounded(t *testing.T, what string, wait func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tgWait)
	defer cancel()
	if err := wait(ctx); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// onceInOrder checks that text shows each of the n marks format makes of
// 1..n exactly once, in that order.
func onceInOrder(t *testing.T, text, format string, n int) {
	t.Helper()
	last := -1
	for i := 1; i <= n; i++ {
		m := fmt.Sprintf(format, i)
		if c := strings.Count(text, m); c != 1 {
			t.Errorf("%q shown %d times", m, c)
		}
		at := strings.Index(text, m)
		if at < last {
			t.Errorf("%q out of order", m)
		}
		last = at
	}
}

// showing returns the first of msgs whose text shows all of wants.
func showing[M any](msgs []M, text func(M) string, wants []string) (M, bool) {
	for _, m := range msgs {
		if !slices.ContainsFunc(wants, func(w string) bool { return !strings.Contains(text(m), w) }) {
			return m, true
		}
	}
	var none M
	return none, false
}

// editFile replaces the first old in the file at path with new (the file
// then 0600); it fails the test when the file has no old.
func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(b), old, new, 1)
	if edited == string(b) {
		t.Fatalf("%s has no %s to edit:\n%s", path, old, b)
	}
	if err := os.WriteFile(path, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
}

// countShowing is how many of msgs' texts show s.
func countShowing[M any](msgs []M, text func(M) string, s string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(text(m), s) {
			n++
		}
	}
	return n
}

// waitQuiet waits until the fake's latest request (latest: its time, zero
// for none) is quiet old: the bot went quiet.
func waitQuiet(t *testing.T, quiet time.Duration, latest func() time.Time) {
	t.Helper()
	sdktest.WaitFor(t, "the bot to go quiet", func() bool { return time.Since(latest()) >= quiet })
}

// requestLog is a fake's requests rs for a failed test's log: a line
// each, its time (from line) and what line says of it.
func requestLog[R any](rs []R, line func(R) (time.Time, string)) string {
	var b strings.Builder
	for _, r := range rs {
		at, s := line(r)
		fmt.Fprintf(&b, "%s %s\n", at.Format("15:04:05.000"), s)
	}
	return b.String()
}

// clip is s cut to its first n bytes and "…" when longer: a fake's
// request in a failed test's log.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
