package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestPageToolApproval: in Chromium, a tool-use question waiting in a
// chat is answered from the status page — Allow runs the command and the
// turn goes on, Deny does not run it and claude reads the denial; the
// real claude CLI against the fake Anthropic API, on the fake Telegram.
func TestPageToolApproval(t *testing.T) {
	rig, outside := newTgClaude(t), t.TempDir()
	fake, srv, dir := rig.fake, rig.srv, rig.dir
	adminAddr := sdktest.FreeAddr(t)
	d := rig.start(t, Host{
		Agent:    rig.agent(Attrs{"timeout": "60s", "approvals": "chat", "approval_timeout": "60s", "sandbox": "off"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "owners": []string{"tg:1001"}},
		Admin:    Attrs{"listen": adminAddr},
		Messages: Attrs{"streaming": "blocks"},
	})
	d.waitFor(func() bool { code, _ := get(t, "http://"+adminAddr+"/status.json"); return code == 200 }, "the admin endpoint")
	token, err := admin.ReadToken(filepath.Join(dir, "data", admin.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate("http://"+adminAddr+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	chat, alice := telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice")
	touch := func(name string) anthropictest.Reply {
		return anthropictest.Reply{Text: "On it.", ToolUse: &anthropictest.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch " + filepath.Join(outside, name), "description": "create " + name}}}
	}
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(outside, name)); return err == nil }
	answer := func(name, verb string) {
		t.Helper()
		tgWaitMessage(t, srv, tgAlice, "claude wants to use Bash:", "touch "+filepath.Join(outside, name))
		if err := chromedp.Do(b.Ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		sel := `form[action^="/approvals/"][action$="/` + verb + `"] button`
		if err := b.WaitJS(`document.querySelector('` + sel + `')`); err != nil {
			t.Fatalf("no %s button on the page: %v", verb, err)
		}
		if _, err := webchattest.Eval[bool](b, `(document.querySelector('`+sel+`').click(), true)`); err != nil {
			t.Fatalf("click %s: %v", verb, err)
		}
		if err := b.WaitJS(`location.pathname == "/" && !document.querySelector('` + sel + `')`); err != nil {
			t.Fatal(err)
		}
	}

	fake.Enqueue(touch("allowed"), anthropictest.Reply{Text: "Created it."})
	srv.PushText(chat, alice, "please create the file")
	answer("allowed", "allow")
	tgWaitMessage(t, srv, tgAlice, "Created it.")
	if !exists("allowed") {
		t.Error("the command allowed from the page did not run")
	}

	fake.Enqueue(touch("denied"), anthropictest.Reply{Text: "Understood, I left it alone."})
	srv.PushText(chat, alice, "create another one")
	answer("denied", "deny")
	tgWaitMessage(t, srv, tgAlice, "Understood, I left it alone.")
	if exists("denied") {
		t.Error("a command denied from the page ran")
	}
	reqs := fake.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "denied") {
		t.Error("claude did not read the denial")
	}
}
