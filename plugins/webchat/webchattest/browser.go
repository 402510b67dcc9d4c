package webchattest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package installs the browser.
const ChromiumPath = "/usr/bin/chromium"

// EnvRequireBrowser, set to "1", turns a missing Chromium from a skip into
// a failure (CI, where the browser is installed).
const EnvRequireBrowser = "CLAWHOST_REQUIRE_BROWSER"

// Browser is one headless Chromium tab with an empty profile. Every method
// is bounded by the timeout given to NewBrowser.
type Browser struct {
	// Ctx is the chromedp context of the tab, for actions not wrapped here.
	Ctx context.Context

	mu      sync.Mutex
	dialogs []string
}

// NewBrowser starts Chromium (ChromiumPath) headless with a fresh
// user-data-dir under t.TempDir() and the flags that keep it off the
// network. It skips the test when Chromium is missing, unless
// EnvRequireBrowser is "1". The browser is stopped when the test ends or
// after timeout, whichever comes first. JavaScript dialogs (alert, confirm)
// are dismissed and recorded (Dialogs).
func NewBrowser(t TB, timeout time.Duration) *Browser {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv(EnvRequireBrowser) == "1" {
			t.Fatalf("chromium not found at %s and %s=1: install Debian's chromium package", ChromiumPath, EnvRequireBrowser)
		}
		t.Skipf("chromium not found at %s (apt-get install chromium); set %s=1 to fail instead", ChromiumPath, EnvRequireBrowser)
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), timeout)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(1000, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	b := &Browser{Ctx: bctx}
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dialogs := chromedp.Events(bctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(ev.Type)+": "+ev.Message)
			b.mu.Unlock()
			_, _ = chromedp.Call(bctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return b
}

// Dialogs returns the JavaScript dialogs the page opened ("alert: 1").
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// Open navigates to the page at url and waits until it is connected.
func (b *Browser) Open(url string) error {
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("open %s: %w", url, err)
	}
	return b.WaitOnline()
}

// Reload reloads the page and waits until it is connected again.
func (b *Browser) Reload() error {
	if err := chromedp.Do(b.Ctx, chromedp.Reload()); err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	return b.WaitOnline()
}

// WaitOnline waits until the page's WebSocket is connected and synced.
func (b *Browser) WaitOnline() error {
	return b.WaitJS(`document.getElementById("conn").dataset.state === "online"`)
}

// Send types text into the message box and presses the Send button.
func (b *Browser) Send(text string) error {
	err := chromedp.Do(b.Ctx,
		chromedp.SetValue(chromedp.CSS("#input"), text),
		chromedp.Click(chromedp.CSS("#send")),
	)
	if err != nil {
		return fmt.Errorf("send %q: %w", text, err)
	}
	return nil
}

// ClickCommand presses the command button that sends text (e.g. "/new").
func (b *Browser) ClickCommand(text string) error {
	sel := fmt.Sprintf(`#commands button[data-command=%q]`, text)
	if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		return fmt.Errorf("click command %s: %w", text, err)
	}
	return nil
}

// Buttons returns the labels of the enabled buttons under messages, top to
// bottom.
func (b *Browser) Buttons() ([]string, error) {
	ls, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#log .msg .buttons button:not(:disabled)")).map(e => e.textContent)`))
	if err != nil {
		return nil, fmt.Errorf("buttons: %w", err)
	}
	return ls, nil
}

// PressButton waits for an enabled button labelled label under a message,
// clicks the most recent one, and waits until it is disabled (the press
// was sent).
func (b *Browser) PressButton(label string) error {
	find := fmt.Sprintf(`Array.from(document.querySelectorAll("#log .msg .buttons button:not(:disabled)")).filter(e => e.textContent === %q).pop()`, label)
	if err := b.WaitJS(find); err != nil {
		return fmt.Errorf("press %q: %w", label, err)
	}
	click := `(() => { document.querySelectorAll("[data-clicked]").forEach(x => delete x.dataset.clicked); const e = ` + find + `; e.dataset.clicked = "1"; e.click(); return true; })()`
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](click)); err != nil {
		return fmt.Errorf("press %q: %w", label, err)
	}
	return b.WaitJS(`(() => { const e = document.querySelector('#log .msg .buttons button[data-clicked="1"]'); return !e || e.disabled; })()`)
}

// PageMessage is one message as the page shows it.
type PageMessage struct {
	// ID is the message id (webchat.Message.ID).
	ID string `json:"id"`
	// Role is "user" or "bot".
	Role string `json:"role"`
	// Text is the body's rendered text (innerText).
	Text string `json:"text"`
	// HTML is the body's markup (innerHTML).
	HTML string `json:"html"`
	// Status is the delivery state of a user message ("sending", "sent",
	// "failed"); empty for bot messages.
	Status string `json:"status"`
}

// Messages returns the messages shown, top to bottom.
func (b *Browser) Messages() ([]PageMessage, error) {
	ms, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]PageMessage](`Array.from(document.querySelectorAll("#log .msg")).map(e => ({
		id: e.dataset.id, role: e.classList.contains("user") ? "user" : "bot",
		text: e.querySelector(".body").innerText, html: e.querySelector(".body").innerHTML,
		status: e.dataset.status || ""}))`))
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	return ms, nil
}

// WaitMessage waits until a message of role ("user" or "bot") whose text
// contains substr is shown, and returns it.
func (b *Browser) WaitMessage(role, substr string) (PageMessage, error) {
	var found PageMessage
	err := b.poll(func() (bool, error) {
		ms, err := b.Messages()
		if err != nil {
			return false, err
		}
		for _, m := range ms {
			if m.Role == role && strings.Contains(m.Text, substr) {
				found = m
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return found, fmt.Errorf("wait for %s message containing %q: %w", role, substr, err)
	}
	return found, nil
}

// Typing reports whether the typing indicator is shown.
func (b *Browser) Typing() (bool, error) {
	return chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`!document.getElementById("typing").hidden`))
}

// Banner returns the error banner's text; empty when hidden.
func (b *Browser) Banner() (string, error) {
	return chromedp.Run(b.Ctx, chromedp.Evaluate[string](`(() => { const e = document.getElementById("banner"); return e.hidden ? "" : e.textContent; })()`))
}

// Eval evaluates a JavaScript expression and returns its value decoded
// as T.
func Eval[T any](b *Browser, expr string) (T, error) {
	return chromedp.Run(b.Ctx, chromedp.Evaluate[T](expr))
}

// WaitJS waits until the JavaScript expression is true.
func (b *Browser) WaitJS(expr string) error {
	err := b.poll(func() (bool, error) {
		ok, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
		if err != nil && navigating(err) {
			return false, nil // the page is being replaced (what a wait after a click may await): ask the next one
		}
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("wait for %s: %w", expr, err)
	}
	return nil
}

// navigating reports whether err is an evaluation lost to a navigation: the page it ran
// in went away (a form's submit, a redirect) before it answered.
func navigating(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Inspected target navigated or closed") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context with specified id")
}

// poll calls f every 50ms until it returns true, an error, or the
// browser's time is up.
func (b *Browser) poll(f func() (bool, error)) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := f()
		if err != nil || ok {
			return err
		}
		select {
		case <-b.Ctx.Done():
			return b.Ctx.Err()
		case <-t.C:
		}
	}
}
