package webchat_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk/channel"
)

// browserTimeout bounds each browser test as a whole.
const browserTimeout = 60 * time.Second

// openAndSay opens the chat page in b, sends text from it and returns the
// message as the host got it.
func openAndSay(t *testing.T, ctx context.Context, b *webchattest.Browser, r *running, text string) channel.InboundMessage {
	t.Helper()
	if err := b.Open(r.Link()); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(text); err != nil {
		t.Fatal(err)
	}
	in, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestBrowserConversation plays the host against the real page in headless
// Chromium: the user sends, the host streams a reply (Send, then Edits), the
// page shows it in place; a reload and a plugin restart keep the
// conversation.
func TestBrowserConversation(t *testing.T) {
	b := webchattest.NewBrowser(t, browserTimeout)
	dir := t.TempDir()
	r := start(t, setup{dataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()

	in := openAndSay(t, ctx, b, r, "hello from the browser")
	if in.Text != "hello from the browser" || in.ChatType != channel.ChatDirect || in.ChatID != in.Sender.ID {
		t.Fatalf("inbound %+v", in)
	}
	if err := b.WaitJS(`document.querySelector('#log .msg.user[data-status="sent"]')`); err != nil {
		t.Fatal(err)
	}

	// The host works: typing, then a streamed draft.
	if err := r.SetTyping(ctx, channel.TypingRequest{ChatID: in.ChatID, On: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`!document.getElementById("typing").hidden`); err != nil {
		t.Fatal(err)
	}
	res, err := r.Send(ctx, channel.SendRequest{ChatID: in.ChatID, Text: "Here is", Format: channel.FormatMarkdown})
	if err != nil {
		t.Fatal(err)
	}
	final := "Here is **the answer**:\n\n```go\nfmt.Println(\"" + strings.Repeat("long line ", 30) + "\")\n```\n\nDone."
	steps := []string{"Here is **the", "Here is **the answer**:\n\n```go\nfmt.Println(", final}
	for _, s := range steps {
		if err := r.Edit(ctx, channel.EditRequest{ChatID: in.ChatID, MessageID: res.MessageIDs[0], Text: s, Format: channel.FormatMarkdown}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SetTyping(ctx, channel.TypingRequest{ChatID: in.ChatID, On: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "Done."); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.getElementById("typing").hidden`); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		ms, err := b.Messages()
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].Role != "user" || ms[1].Role != "bot" || ms[1].ID != res.MessageIDs[0] {
			t.Fatalf("%s: messages %+v", when, ms)
		}
		if !strings.Contains(ms[1].HTML, "<strong>the answer</strong>") || !strings.Contains(ms[1].HTML, `<pre><code class="language-go">`) {
			t.Errorf("%s: reply html %s", when, ms[1].HTML)
		}
		// The code block scrolls horizontally in a monospace font.
		style, err := webchattest.Eval[string](b, `(() => { const s = getComputedStyle(document.querySelector("#log pre")); return s.overflowX + "|" + getComputedStyle(document.querySelector("#log pre code")).fontFamily; })()`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(style, "auto|") || !strings.Contains(style, "monospace") {
			t.Errorf("%s: code block style %q", when, style)
		}
	}
	check("streamed")

	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	check("after reload")

	// The plugin process is replaced: the page reconnects by itself.
	addr := strings.TrimSuffix(strings.TrimPrefix(r.URL(), "http://"), "/")
	r.stop()
	if err := b.WaitJS(`document.getElementById("conn").dataset.state !== "online"`); err != nil {
		t.Fatal(err)
	}
	r2 := start(t, setup{dataDir: dir, listen: addr})
	if err := b.WaitOnline(); err != nil {
		t.Fatal(err)
	}
	check("after plugin restart")
	if _, err := r2.Send(ctx, channel.SendRequest{ChatID: in.ChatID, Text: "still here"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitMessage("bot", "still here"); err != nil {
		t.Fatal(err)
	}

	// A command button sends its text.
	if err := b.ClickCommand("/status"); err != nil {
		t.Fatal(err)
	}
	if m, err := r2.inbox.Next(ctx); err != nil || m.Text != "/status" {
		t.Fatalf("command button: %+v %v", m, err)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs opened: %v", d)
	}
}

// TestBrowserInjectionIsInert sends hostile text both ways and checks the
// DOM has no injected element and nothing ran.
func TestBrowserInjectionIsInert(t *testing.T) {
	b := webchattest.NewBrowser(t, browserTimeout)
	r := start(t, setup{})
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	if err := b.Open(r.Link()); err != nil {
		t.Fatal(err)
	}
	payloads := []string{
		`<script>window.__pwned=1;alert("script")</script>`,
		`<img src=x onerror="window.__pwned=2;alert('img')">`,
		`[click me](javascript:window.__pwned=3)`,
		`<iframe srcdoc="<script>parent.__pwned=4</script>"></iframe>`,
		`<svg onload="window.__pwned=5"></svg> <a href="javascript:alert(6)">raw link</a>`,
	}
	userText := strings.Join(payloads, "\n")
	if err := b.Send(userText); err != nil {
		t.Fatal(err)
	}
	in, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Text != userText {
		t.Errorf("inbound text changed: %q", in.Text)
	}
	for i, p := range payloads {
		if _, err := r.Send(ctx, channel.SendRequest{ChatID: in.ChatID, Text: fmt.Sprintf("payload %d: %s end", i, p), Format: channel.FormatMarkdown}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.WaitMessage("bot", fmt.Sprintf("payload %d", len(payloads)-1)); err != nil {
		t.Fatal(err)
	}
	// The user's message shows the text literally.
	if _, err := b.WaitMessage("user", `<img src=x onerror=`); err != nil {
		t.Fatal(err)
	}
	// Let any handler that would fire (image error, frame load) fire.
	time.Sleep(300 * time.Millisecond)
	n, err := webchattest.Eval[int](b, `document.querySelectorAll('#log script, #log iframe, #log svg, #log img, #log [onerror], #log [onload], #log a[href^="javascript:"]').length`)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d injected elements in the page", n)
	}
	pwned, err := webchattest.Eval[bool](b, `typeof window.__pwned !== "undefined"`)
	if err != nil {
		t.Fatal(err)
	}
	if pwned {
		t.Error("injected script ran")
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs opened: %v", d)
	}
}

// TestBrowserFiles: in headless Chromium a file picked with the 📎 button
// reaches the host as the message's attachment (with the text typed beside
// it), and a file the host sends shows under its message as a link whose
// download, made by the page, is the file.
func TestBrowserFiles(t *testing.T) {
	b := webchattest.NewBrowser(t, browserTimeout)
	dir := t.TempDir()
	r := start(t, setup{dataDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	if err := b.Open(r.Link()); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(src, []byte("notes from the browser"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.Ctx, chromedp.SetValue(chromedp.CSS("#input"), "see attached"), chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{src})); err != nil {
		t.Fatal(err)
	}
	in, err := r.inbox.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if in.Text != "see attached" || len(in.Media) != 1 || in.Media[0].Filename != "notes.txt" {
		t.Fatalf("inbound %+v", in)
	}
	rc, _, err := r.DownloadMedia(ctx, channel.DownloadRequest{Ref: in.Media[0].Ref})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "notes from the browser" {
		t.Errorf("the host downloaded %q", got)
	}
	if err := b.WaitJS(`document.querySelector('#log .msg.user .files a.file')`); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "report.csv")
	if err := os.WriteFile(out, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Send(ctx, channel.SendRequest{ChatID: in.ChatID, Text: "Here is the report.", Format: channel.FormatMarkdown,
		Media: []channel.OutboundMedia{{Path: out, Kind: channel.MediaDocument}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.querySelector('#log .msg.bot .files a.file')`); err != nil {
		t.Fatal(err)
	}
	type link struct {
		Text     string `json:"text"`
		Download string `json:"download"`
		Body     string `json:"body"`
	}
	l, err := chromedp.Run(b.Ctx, chromedp.Evaluate[link](`(async () => {
		const a = document.querySelector('#log .msg.bot .files a.file');
		const r = await fetch(a.href);
		return {text: a.textContent, download: a.download, body: await r.text()};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if l.Download != "report.csv" || !strings.Contains(l.Text, "report.csv") || l.Body != "a,b\n1,2\n" {
		t.Errorf("the page's link %+v", l)
	}
}

// TestBrowserAudioPlayer: an audio file the host sends (a spoken reply,
// made here with espeak-ng and ffmpeg as the voice plugin makes it) gets a
// player on the page, which the page's Content-Security-Policy lets load
// the file and the browser decodes (a duration > 0).
func TestBrowserAudioPlayer(t *testing.T) {
	b := webchattest.NewBrowser(t, browserTimeout)
	for _, p := range []string{"espeak-ng", "ffmpeg"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("CLAWHOST_REQUIRE_VOICE") == "1" {
				t.Fatalf("%s is needed (make voice): %v", p, err)
			}
			t.Skipf("%s not found (make voice); set CLAWHOST_REQUIRE_VOICE=1 to fail instead", p)
		}
	}
	dir := t.TempDir()
	wav, mp3 := filepath.Join(dir, "voice.wav"), filepath.Join(dir, "voice.mp3")
	if out, err := exec.Command("espeak-ng", "-w", wav, "hello from the player").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng (make voice): %v %s", err, out)
	}
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", wav, "-c:a", "libmp3lame", "-ac", "1", mp3).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg (make voice): %v %s", err, out)
	}
	r := start(t, setup{dataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	defer cancel()
	in := openAndSay(t, ctx, b, r, "speak to me")
	if _, err := r.Send(ctx, channel.SendRequest{ChatID: in.ChatID, Text: "Spoken.", Media: []channel.OutboundMedia{{Path: mp3, Kind: channel.MediaAudio}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.querySelector('#log .msg.bot .files audio')`); err != nil {
		t.Fatal(err)
	}
	d, err := chromedp.Run(b.Ctx, chromedp.Evaluate[float64](`(async () => {
		const a = document.querySelector('#log .msg.bot .files audio');
		if (a.readyState < 1) {
			await new Promise((ok, no) => {
				a.addEventListener("loadedmetadata", ok);
				a.addEventListener("error", () => no(new Error("audio error " + (a.error && a.error.code))));
			});
		}
		return a.duration;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || !(d > 0) {
		t.Fatalf("the player's duration: %v, %v", d, err)
	}
}
