package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
)

// TestStatusPageActions: in Chromium, the status page acts — Approve on a
// pending pairing lets the sender in and answers their held message, Deny
// on a pending pairing drops it, Stop on a running session stops its turn (no
// answer comes), Restart on a plugin restarts it; each through the page's
// own forms, behind the admin token, and each in the audit trail.
func TestStatusPageActions(t *testing.T) {
	d, base := startPairingHost(t, nil)
	dir, cfg := d.Dir(), d.ConfigPath()
	token, err := admin.ReadToken(filepath.Join(dir, "data", admin.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	page := base + "/"
	// Not the web chat: no connection to wait for, the page as it loads.
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(page+"?token="+token)); err != nil {
		t.Fatal(err)
	}
	reload := func() {
		t.Helper()
		if err := chromedp.Do(b.Ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
	}
	click := func(form string) {
		t.Helper()
		if _, err := webchattest.Eval[bool](b, `(document.querySelector('form[action="`+form+`"] button').click(), true)`); err != nil {
			t.Fatalf("click %s: %v", form, err)
		}
	}
	// shown reloads the page and waits until it shows form (the page
	// may still be loading when a click comes straight after an action).
	shown := func(form string) {
		t.Helper()
		reload()
		if err := b.WaitJS(`document.querySelector('form[action="` + form + `"]')`); err != nil {
			t.Fatal(err)
		}
	}
	// press clicks the button of form once the page shows it and waits
	// until the page is back at / without it, loaded to its end (a page
	// still being parsed lacks the forms below the part it has read).
	press := func(form string) {
		t.Helper()
		shown(form)
		click(form)
		if err := b.WaitJS(`document.readyState == "complete" && location.pathname == "/" && !document.querySelector('form[action="` + form + `"]')`); err != nil {
			t.Fatal(err)
		}
	}

	// Approve a pairing: the sender is told and their held message is
	// answered.
	d.post("friend", "hello there")
	d.nextSend("chat-friend") // the code
	press("/pairing/approve")
	for seen := ""; !strings.Contains(seen, "hello there"); {
		seen += d.nextSend("chat-friend") + "\n"
	}
	var approved bytes.Buffer
	if rc := run([]string{"pairing", "list", "-approved", "-config", cfg}, &approved, &approved); rc != 0 || !strings.Contains(approved.String(), "lo:friend") {
		t.Errorf("after Approve: pairing list -approved %d\n%s", rc, approved.String())
	}

	// Deny a pairing.
	d.post("stranger", "let me in")
	d.nextSend("chat-stranger")
	press("/pairing/deny")
	var out, errb bytes.Buffer
	if rc := run([]string{"pairing", "list", "-config", cfg}, &out, &errb); rc != 0 || strings.Contains(out.String(), "lo:stranger") {
		t.Errorf("after Deny: pairing list %d\n%s%s", rc, out.String(), errb.String())
	}

	// Stop a running turn (after one that finished, which names the
	// session).
	d.post("owner", "hi")
	if got := d.nextSend("chat-owner"); !strings.Contains(got, "hi") {
		t.Fatalf("the owner's first answer: %q", got)
	}
	d.post("owner", "think long #sleep=20s")
	d.waitFor(func() bool { return typingSeen(d) }, "the turn to start")
	press("/sessions/stop")
	for _, r := range d.sent(2 * time.Second) {
		d.after = r.Seq
		if r.Op == "send" && r.ChatID == "chat-owner" && strings.Contains(r.Text, "think long") {
			t.Errorf("the stopped turn answered: %q", r.Text)
		}
	}

	// Restart the plugin.
	before := pluginPIDs(d, 1)
	shown("/plugins/lo/restart")
	click("/plugins/lo/restart")
	d.waitFor(func() bool {
		now := pluginPIDs(d, 1)
		return len(now) == 1 && now[0] != before[0]
	}, "the plugin's new process")

	var trail []struct{ Kind, Subject, Decision, Detail string }
	out.Reset()
	if rc := run([]string{"audit", "-json", "-config", cfg}, &out, &errb); rc != 0 {
		t.Fatalf("audit: %d %s", rc, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &trail); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range trail {
		have[e.Kind+" "+e.Subject+" "+e.Decision] = true
	}
	for _, want := range []string{"pairing lo:friend approved", "pairing lo:stranger denied", "command /stop allowed", "command restart allowed"} {
		if !have[want] {
			t.Errorf("audit trail lacks %q: %+v", want, trail)
		}
	}
}
