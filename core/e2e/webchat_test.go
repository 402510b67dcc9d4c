package e2e

// Host-level tests of the webchat channel in a real headless Chromium: the
// daemon runs the clawhost-webchat plugin and the test binary as a fake
// claude CLI (fakeclaude_test.go); the browser plays the user. They skip
// when Chromium is missing unless CLAWHOST_REQUIRE_BROWSER=1 (see
// webchattest.NewBrowser).

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// wcBrowserTimeout bounds each browser test as a whole.
const wcBrowserTimeout = 120 * time.Second

// startWebchatDaemon runs clawhost with only the webchat plugin and returns
// the daemon and the page's link with its token, as `clawhost status`
// shows it, once the page answers.
func startWebchatDaemon(t *testing.T) (*daemon, string) {
	t.Helper()
	dir := t.TempDir()
	listen := sdktest.FreeAddr(t)
	h := Host{
		Dir:     dir,
		Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"web:*"}},
		Admin:   Attrs{"listen": sdktest.FreeAddr(t)},
		Plugins: []Plugin{{Name: "web", Source: "webchat", Config: Attrs{"listen": listen}}},
	}
	cfg := h.Write(t)
	d := Launch(t, cfg)
	url := "http://" + listen + "/"
	d.waitFor(func() bool { return wcHealthy(url) }, "the webchat page at "+url)
	link := ""
	d.waitFor(func() bool { link = wcStatusLink(cfg); return link != "" }, "clawhost status to show the web chat's link")
	if !strings.HasPrefix(link, url+"?token=") {
		t.Fatalf("link %q is not the page's with a token", link)
	}
	return d, link
}

// wcFileLink is the link of the web chat instance at url, with the token
// the plugin keeps in its data directory under dataDir.
func wcFileLink(t testing.TB, dataDir, instance, url string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "plugins", instance, webchat.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return url + "?token=" + strings.TrimSpace(string(b))
}

// wcLinkRE finds the web chat's link in `clawhost status`.
var wcLinkRE = regexp.MustCompile(`open: (http://\S+\?token=[0-9a-f]{64})`)

// wcStatusLink is the link `clawhost status` shows for the web chat; ""
// when it shows none (yet).
func wcStatusLink(cfg string) string {
	var out, errb strings.Builder
	run([]string{"status", "-config", cfg}, &out, &errb)
	if m := wcLinkRE.FindStringSubmatch(out.String()); m != nil {
		return m[1]
	}
	return ""
}

// TestWebchatToken: the web chat on loopback refuses the page, its script
// and its socket without the token; the token is made at the first start
// (0600 in the plugin's data directory), never logged, shown by `clawhost
// status` in the link, which works and survives a restart of the plugin.
func TestWebchatToken(t *testing.T) {
	d, link := startWebchatDaemon(t)
	page := link[:strings.Index(link, "?")]
	for _, u := range []string{page, page + "static/app.js", page + "ws", page + "?token=" + strings.Repeat("0", 64)} {
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %s, want 401", u, res.Status)
		}
	}
	token := link[strings.Index(link, "=")+1:]
	tokenFile := filepath.Join(d.dir, "data", "plugins", "web", "access.token")
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file %s: %v %v, want mode 0600", tokenFile, fi, err)
	}
	if b, _ := os.ReadFile(tokenFile); strings.TrimSpace(string(b)) != token {
		t.Errorf("the link's token is not the one kept in %s", tokenFile)
	}
	if !strings.Contains(d.log.String(), "token_file="+tokenFile) {
		t.Errorf("the log does not say where the web chat's token is")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := webchattest.NewClient(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, "c1", "hello #tokenworks"); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := c.NextOf(ctx, webchat.EventMessage)
		if err != nil {
			t.Fatalf("no reply through the link: %v", err)
		}
		if ev.Message != nil && ev.Message.Role == webchat.RoleBot && strings.Contains(ev.Message.HTML, "tokenworks") {
			break
		}
	}
	c.Close()

	// The plugin is killed and restarted by the host: the same link works.
	_ = syscall.Kill(webchatPluginPID(d), syscall.SIGKILL)
	d.waitFor(func() bool {
		jar, _ := cookiejar.New(nil)
		res, err := (&http.Client{Jar: jar}).Get(link) // the cookie, then the page
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, "the link to work after the plugin's restart")
	if strings.Contains(d.log.String(), token) {
		t.Error("the log holds the web chat's token")
	}
}

func wcHealthy(url string) bool {
	c := http.Client{Timeout: time.Second}
	res, err := c.Get(url + "healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// wcBotText is the text of the page's bot messages, top to bottom, one per
// line.
func wcBotText(b *webchattest.Browser) (string, error) {
	ms, err := b.Messages()
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range ms {
		if m.Role == "bot" {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// wcReply sends text from the page and waits for the fake agent's echo of
// marker, a word unique to text.
func wcReply(t *testing.T, b *webchattest.Browser, text, marker string) webchattest.PageMessage {
	t.Helper()
	if err := b.Send(text); err != nil {
		t.Fatal(err)
	}
	var reply webchattest.PageMessage
	sdktest.WaitFor(t, "the reply to "+marker, func() error {
		ms, err := b.Messages()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Role == "bot" && strings.Contains(m.Text, "echo:") && strings.Contains(m.Text, marker) {
				reply = m
				return nil
			}
		}
		return sdktest.Saw(false, "the page shows %+v", ms)
	})
	return reply
}

// webchatPluginPID returns the pid of the daemon's one plugin process.
func webchatPluginPID(d *daemon) int {
	d.t.Helper()
	return pluginPIDs(d, 1)[0]
}

// TestWebchatBrowser: in Chromium, the page shows the command buttons, a
// message gets the agent's reply, HTML in the message is inert both ways,
// a reload keeps the conversation, and after the plugin process is killed
// (kill -9) and restarted by the host the same page reconnects by itself
// and the next message gets its reply.
func TestWebchatBrowser(t *testing.T) {
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	d, url := startWebchatDaemon(t)
	if err := b.Open(url); err != nil {
		t.Fatal(err)
	}

	// The built-in commands are offered.
	for _, c := range []string{"/new", "/status", "/stop"} {
		if err := b.WaitJS(fmt.Sprintf(`document.querySelector('#commands button[data-command=%q]')`, c)); err != nil {
			t.Fatal(err)
		}
	}

	// A message and its reply.
	reply := wcReply(t, b, "hello from chromium hello-marker", "hello-marker")
	if !strings.Contains(reply.HTML, "<p>") {
		t.Errorf("reply not rendered as markdown: %s", reply.HTML)
	}
	if err := b.WaitJS(`document.querySelector('#log .msg.user[data-status="sent"]')`); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.getElementById("typing").hidden`); err != nil {
		t.Fatal(err)
	}

	// HTML injection from the user, echoed back by the agent: inert, and
	// shown as the literal text.
	const img, script = `<img src=x onerror=alert(1)>`, `<script>window.__pwned=1;alert(2)</script>`
	reply = wcReply(t, b, "try "+img+" and "+script+" inject-marker", "inject-marker")
	time.Sleep(300 * time.Millisecond) // on purpose: an image error handler would fire now
	n, err := webchattest.Eval[int](b, `document.querySelectorAll('#log img, #log script, #log [onerror]').length`)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d injected elements in the page", n)
	}
	if pwned, err := webchattest.Eval[bool](b, `typeof window.__pwned !== "undefined"`); err != nil || pwned {
		t.Errorf("injected script ran (%v)", err)
	}
	if dl := b.Dialogs(); len(dl) != 0 {
		t.Errorf("dialogs opened: %v", dl)
	}
	user, err := b.WaitMessage("user", "inject-marker")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []webchattest.PageMessage{user, reply} {
		if !strings.Contains(m.Text, img) || !strings.Contains(m.Text, "<script>") {
			t.Errorf("%s message should show the markup as text: %q", m.Role, m.Text)
		}
	}

	// A reload keeps the conversation.
	before, err := b.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 4 {
		t.Fatalf("messages before reload: %+v", before)
	}
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	after, err := b.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if !sameMessages(before, after) {
		t.Fatalf("conversation changed by a reload:\nbefore %+v\nafter  %+v", before, after)
	}

	// kill -9 the plugin: the host restarts it and the same document
	// reconnects by itself (no reload: the marker survives).
	old := webchatPluginPID(d)
	if _, err := webchattest.Eval[bool](b, `(() => {
		window.__sameDocument = true; window.__connStates = [];
		const c = document.getElementById("conn");
		new MutationObserver(() => window.__connStates.push(c.dataset.state)).observe(c, {attributes: true});
		return true; })()`); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var restarted int
	sdktest.WaitFor(t, "the host to restart the webchat plugin", func() bool {
		restarted = pluginPID(d, "clawhost-webchat", old)
		return restarted != 0
	})
	t.Logf("webchat plugin pid %d killed, restarted as %d", old, restarted)
	sdktest.WaitFor(t, "the page to go offline and reconnect", func() error {
		ok, err := webchattest.Eval[bool](b, `window.__connStates.includes("offline") && document.getElementById("conn").dataset.state === "online"`)
		if err != nil {
			return err
		}
		return sdktest.Saw(ok, "the page did not go offline and back online")
	})
	if same, err := webchattest.Eval[bool](b, `window.__sameDocument === true`); err != nil || !same {
		t.Fatalf("the page was reloaded instead of reconnecting (%v)", err)
	}
	again, err := b.Messages()
	if err != nil {
		t.Fatal(err)
	}
	if !sameMessages(before, again) {
		t.Errorf("conversation after the plugin restart:\nbefore %+v\nafter  %+v", before, again)
	}
	wcReply(t, b, "still there? restart-marker", "restart-marker")
	if dl := b.Dialogs(); len(dl) != 0 {
		t.Errorf("dialogs opened: %v", dl)
	}
}

var wcLorem = regexp.MustCompile(`(lorem ipsum\s*){3,}`)

// wcShort abbreviates the filler of the fake agent's blocks.
func wcShort(s string) string {
	return wcLorem.ReplaceAllString(s, "lorem ipsum … ")
}

func sameMessages(a, b []webchattest.PageMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Role != b[i].Role || a[i].Text != b[i].Text {
			return false
		}
	}
	return true
}

// TestWebchatStreamedBlocks: a reply the agent writes as three assistant
// messages 300ms apart reaches the page whole and in order: "block 1",
// "block 2" and "block 3" are all shown (streamed as drafts edited in place
// or as separate messages), in that order.
func TestWebchatStreamedBlocks(t *testing.T) {
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	_, url := startWebchatDaemon(t)
	if err := b.Open(url); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := b.Send("stream please #blocks=3 #gap=300ms"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]time.Duration{}
	blocks := []string{"block 1", "block 2", "block 3"}
	var text string
	sdktest.WaitFor(t, "every block on the page", func() error {
		var err error
		if text, err = wcBotText(b); err != nil {
			t.Fatal(err)
		}
		for _, s := range blocks {
			if _, ok := seen[s]; !ok && strings.Contains(text, s) {
				seen[s] = time.Since(start)
			}
		}
		return sdktest.Saw(len(seen) == len(blocks), "the page shows %v of %v; bot messages:\n%s", seen, blocks, wcShort(text))
	})
	t.Logf("first seen after sending: %v", seen)
	last := -1
	for _, s := range blocks {
		i := strings.Index(text, s)
		if i < last {
			t.Errorf("%q shown out of order in %q", s, text)
		}
		last = i
	}
	// Whatever the drafts were, the page settles with no typing indicator
	// and each block shown once.
	if err := b.WaitJS(`document.getElementById("typing").hidden`); err != nil {
		t.Fatal(err)
	}
	if text, err := wcBotText(b); err != nil {
		t.Fatal(err)
	} else {
		for _, s := range blocks {
			if c := strings.Count(text, s+":"); c != 1 {
				t.Errorf("%q shown %d times", s, c)
			}
		}
	}
}

// startWebchatIn starts h with the web chat as a plugin of its own
// (instance "web" on a free loopback port) and, when h names none, access
// for every browser and no admin listener; once the page answers, b opens
// it with the token the plugin keeps.
func startWebchatIn(t *testing.T, b *webchattest.Browser, h Host) *Daemon {
	t.Helper()
	if h.Dir == "" {
		h.Dir = t.TempDir()
	}
	listen := sdktest.FreeAddr(t)
	h.Plugins = append(h.Plugins, Plugin{Name: "web", Source: "webchat", Config: Attrs{"listen": listen}})
	if h.Access == nil {
		h.Access = Attrs{"dm_policy": "allowlist", "allow_from": []string{"web:*"}}
	}
	if h.Admin == nil {
		h.Admin = Attrs{"listen": ""}
	}
	d := Start(t, h)
	url := "http://" + listen + "/"
	sdktest.WaitFor(t, "the page", func() bool { return wcHealthy(url) })
	if err := b.Open(wcFileLink(t, filepath.Join(h.Dir, "data"), "web", url)); err != nil {
		t.Fatal(err)
	}
	return d
}
