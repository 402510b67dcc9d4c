package e2e

// Host-level tests of what plugins report about themselves: the real
// clawhost binary with the loopback example made to report
// needs_attention with a QR code (its POST /status), and with the real
// telegram plugin against the fake Bot API rejecting the token, down, and
// up again.

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/internal/qrcode/qrcodetest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// pageQRText decodes the QR image of the status page; "" when it has none.
func pageQRText(t *testing.T, page string) string {
	t.Helper()
	raw, _ := qrcodetest.PageImage(t, page)
	if raw == nil {
		return ""
	}
	return qrcodetest.DecodePNG(t, raw)
}

// terminalQRText decodes the QR code `clawhost status` drew after "scan
// this QR code:"; "" when there is none.
func terminalQRText(t *testing.T, out string) string {
	t.Helper()
	return terminalQRTextAfter(t, out, "scan this QR code:\n", statusIndent)
}

// terminalQRTextAfter decodes the QR code drawn, each line prefixed by
// indent, after the last header in out ("" when there is none).
func terminalQRTextAfter(t *testing.T, out, header, indent string) string {
	t.Helper()
	i := strings.LastIndex(out, header)
	if i < 0 {
		return ""
	}
	rest := out[i+len(header):]
	var rows []string
	for _, line := range strings.Split(rest, "\n") {
		art, ok := strings.CutPrefix(line, indent)
		if !ok || strings.Trim(art, " ▀▄█") != "" || art == "" {
			break
		}
		rows = append(rows, art)
	}
	return qrcodetest.Decode(t, qrcodetest.FromTerminal(t, strings.Join(rows, "\n"), 4))
}

// loopbackReport makes the loopback plugin report a status.
func loopbackReport(t *testing.T, d *daemon, body map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post("http://"+d.addr()+"/status", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /status: %s", resp.Status)
	}
}

// statusOut runs `clawhost status` and returns its exit code and output.
func statusOut(cfgPath string) (int, string) {
	var out, errb bytes.Buffer
	rc := run([]string{"status", "-config", cfgPath}, &out, &errb)
	return rc, out.String() + errb.String()
}

// TestAttentionQREndToEnd: a plugin that needs a QR code scanned shows it
// on the status page as an image and in `clawhost status` as a terminal QR
// (both decode to the plugin's payload), /healthz and /metrics name the
// state, a reply to it fails at once, `clawhost retry` reaches the plugin
// and the rotated code replaces the old one; reporting ready ends it.
func TestAttentionQREndToEnd(t *testing.T) {
	d, base := startPairingHost(t, nil)
	cfgPath := d.ConfigPath()

	// A WhatsApp-like pairing payload.
	payload := "2@Yw3bQ0vYdKk7dV0k9v2KfUo2m8bS4yjB3q1tYxq4m7L0a6E0yW3cPpTqGzQ1hFZ7bJf3KQ==,5aQ3nZ1wNQGQ0h8yJdxkq8n1bV0b7FvE2Wv2iU4n0Hg=,VtZkR1n2k0X3hY5s8t+Jm7wq2Yb5H0c1uQ9Z3sLq9Fk="
	msg := "Scan the QR code with WhatsApp on the phone: Settings → Linked devices → Link a device."
	loopbackReport(t, d, map[string]any{"state": "needs_attention", "message": msg,
		"attention": map[string]any{"kind": "qr", "data": payload, "expires_at": time.Now().Add(time.Minute), "retry": "Show a new QR code"}})

	var rc int
	var out string
	d.waitFor(func() bool { rc, out = statusOut(cfgPath); return strings.Contains(out, "needs_attention") }, "status: needs_attention")
	if rc != 1 {
		t.Errorf("clawhost status exit %d, want 1", rc)
	}
	for _, want := range []string{"plugins ready 0/1", "what to do: " + msg, "left); run clawhost status again", "Show a new QR code: clawhost retry lo"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q", want)
		}
	}
	if got := terminalQRText(t, out); got != payload {
		t.Fatalf("the terminal QR decodes to %q, want the payload; output:\n%s", got, out)
	}

	_, page := get(t, base+"/")
	if got := pageQRText(t, page); got != payload {
		t.Fatalf("the page's QR image decodes to %q, want the payload", got)
	}
	if !strings.Contains(page, `action="/plugins/lo/retry"`) {
		t.Error("the page has no retry button")
	}
	code, body := get(t, base+"/healthz")
	if code != 503 || !strings.Contains(body, `"instance":"lo"`) || !strings.Contains(body, `"state":"needs_attention"`) || !strings.Contains(body, "Linked devices") {
		t.Errorf("/healthz %d %s", code, body)
	}
	if _, m := get(t, base+"/metrics"); !strings.Contains(m, `clawhost_plugin_state{instance="lo",state="needs_attention"} 1`) {
		t.Error("/metrics lacks the needs_attention state")
	}

	// A message arrives while the channel needs attention: its reply is
	// not sent and fails at once, saying why.
	start := time.Now()
	d.post("owner", "anyone there?")
	d.waitFor(func() bool { return strings.Contains(d.log.String(), "reply could not be delivered") }, "the failed delivery in the log")
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("the reply took %s to fail: nothing may wait for a plugin that needs attention", took)
	}
	if !strings.Contains(d.log.String(), "needs attention: "+msg[:20]) {
		t.Errorf("the failure does not say the plugin needs attention:\n%s", d.log.String())
	}
	for _, r := range d.sent(0) {
		if r.Op == "send" {
			t.Errorf("sent %+v to a plugin that needs attention", r)
		}
	}

	// The retry reaches the plugin; the page and status follow the new code.
	var rout, rerr bytes.Buffer
	if rc := run([]string{"retry", "lo", "-config", cfgPath}, &rout, &rerr); rc != 0 || !strings.Contains(rout.String(), "retry requested") {
		t.Fatalf("clawhost retry: %d %q %q", rc, rout.String(), rerr.String())
	}
	d.waitFor(func() bool { _, page := get(t, base+"/"); return pageQRText(t, page) == payload+"#1" }, "the rotated QR on the page")
	if _, out := statusOut(cfgPath); terminalQRText(t, out) != payload+"#1" {
		t.Errorf("status does not show the rotated QR:\n%s", out)
	}
	if rc := run([]string{"retry", "nope", "-config", cfgPath}, &rout, &rerr); rc != 1 || !strings.Contains(rerr.String(), "no such plugin instance") {
		t.Errorf("retry of an unknown instance: %d %q", rc, rerr.String())
	}

	// Linked: the plugin reports ready; nothing of the attention is left.
	loopbackReport(t, d, map[string]any{"state": "ready"})
	d.waitFor(func() bool { rc, out = statusOut(cfgPath); return rc == 0 }, "status: ready")
	if strings.Contains(out, "scan this QR") || strings.Contains(out, "what to do") {
		t.Errorf("status after ready:\n%s", out)
	}
	rerr.Reset()
	if rc := run([]string{"retry", "lo", "-config", cfgPath}, &rout, &rerr); rc != 1 || !strings.Contains(rerr.String(), "offers no retry") {
		t.Errorf("retry of a ready plugin: %d %q", rc, rerr.String())
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz after ready: %d", code)
	}
}

// TestTelegramStates: a token the Bot API rejects shows needs_attention
// with what to do (exit 1, /healthz 503 naming tg); after the operator put
// a good token in the file and reloaded, an unreachable API shows
// degraded; when the API comes up the plugin is ready by itself, without
// a restart.
func TestTelegramStates(t *testing.T) {
	rejecting := telegramtest.NewServer(tgToken)
	t.Cleanup(rejecting.Close)
	downAddr := sdktest.FreeAddr(t) // nothing listens here yet

	dir := t.TempDir()
	adminAddr := sdktest.FreeAddr(t)
	cfgPath := filepath.Join(dir, "config.hcl")
	// The telegram plugin as "tg" with a fixed admin address.
	write := func(token, endpoint string) {
		h := Host{Dir: dir, LogLevel: "-", Admin: Attrs{"listen": adminAddr},
			Plugins: []Plugin{{Name: "tg", Source: "telegram", Config: Attrs{"token": token, "api_endpoint": endpoint, "poll_timeout": 1}}}}
		h.Write(t)
	}
	write("999:REJECTED", rejecting.APIEndpoint())
	d := Launch(t, cfgPath)
	base := "http://" + adminAddr

	// 1. The token is rejected.
	var rc int
	var out string
	d.waitFor(func() bool { rc, out = statusOut(cfgPath); return strings.Contains(out, "needs_attention") }, "tg needs_attention")
	if rc != 1 || !strings.Contains(out, "what to do: Telegram rejected the bot token") || !strings.Contains(out, "@BotFather") || !strings.Contains(out, "open: https://t.me/BotFather") {
		t.Errorf("status exit %d:\n%s", rc, out)
	}
	if strings.Contains(out, "REJECTED") {
		t.Errorf("status shows the token:\n%s", out)
	}
	code, body := get(t, base+"/healthz")
	if code != 503 || !strings.Contains(body, `"instance":"tg"`) || !strings.Contains(body, `"state":"needs_attention"`) || !strings.Contains(body, "rejected the bot token") {
		t.Errorf("/healthz %d %s", code, body)
	}
	st := instanceOf(t, base, "tg")
	if st.Restarts != 0 {
		t.Errorf("a rejected token restarted the plugin %d times", st.Restarts)
	}
	pid := st.PID
	time.Sleep(500 * time.Millisecond) // on purpose: it stays, without a restart loop
	if st := instanceOf(t, base, "tg"); st.PID != pid || st.State != "needs_attention" {
		t.Errorf("after 0.5 s: %+v (pid was %d)", st, pid)
	}
	if n := len(rejecting.Requests("getMe")); n > 2 {
		t.Errorf("%d getMe calls with a rejected token: it hammers the API", n)
	}

	// 2. A good token, but the API cannot be reached.
	write(tgToken, "http://"+downAddr+"/bot%s/%s")
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(func() bool { rc, out = statusOut(cfgPath); return strings.Contains(out, " degraded ") }, "tg degraded")
	if rc != 1 || !strings.Contains(out, "Cannot reach the Telegram Bot API") || !strings.Contains(out, "connection refused") || !strings.Contains(out, "not restarted") {
		t.Errorf("status exit %d:\n%s", rc, out)
	}
	if strings.Contains(out, tgToken) {
		t.Errorf("status shows the token:\n%s", out)
	}
	if code, _ := get(t, base+"/healthz"); code != 503 {
		t.Errorf("/healthz while degraded: %d", code)
	}
	degradedPID := instanceOf(t, base, "tg").PID

	// 3. The API comes up: ready by itself.
	ln, err := net.Listen("tcp", downAddr)
	if err != nil {
		t.Skipf("the reserved address was taken: %v", err)
	}
	up := telegramtest.NewServerWithListener(tgToken, ln)
	t.Cleanup(up.Close)
	// The plugin's backoff reaches 16 s.
	sdktest.WaitFor(t, "ready after the API came up", func() error {
		rc, out = statusOut(cfgPath)
		return sdktest.Saw(rc == 0, "status exit %d:\n%s", rc, out)
	})
	if st := instanceOf(t, base, "tg"); st.PID != degradedPID || st.State != "ready" {
		t.Errorf("ready by a restart, not by itself: %+v (pid was %d)", st, degradedPID)
	}
	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz when ready: %d %s", code, body)
	}
}

// instanceOf reads one plugin of /status.json.
func instanceOf(t *testing.T, base, name string) admin.Plugin {
	t.Helper()
	_, body := get(t, base+"/status.json")
	var snap admin.Snapshot
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatalf("status.json: %v", err)
	}
	for _, p := range snap.Plugins {
		if p.Instance == name {
			return p
		}
	}
	t.Fatalf("no plugin %s in status.json", name)
	return admin.Plugin{}
}

// TestRetryUsage: help lists retry; it needs exactly one instance.
func TestRetryUsage(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if rc := run([]string{"help"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "  retry INSTANCE [-config FILE] ") {
		t.Errorf("help lacks retry:\n%s", out.String())
	}
	out.Reset()
	if rc := run([]string{"help", "retry"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "status page's button") {
		t.Errorf("help retry: %d\n%s", rc, out.String())
	}
	for _, args := range [][]string{{"retry"}, {"retry", "a", "b"}} {
		errb.Reset()
		if rc := run(args, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "usage: clawhost retry INSTANCE") {
			t.Errorf("%v: exit %d %q", args, rc, errb.String())
		}
	}
}
