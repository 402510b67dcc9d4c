package e2e

// End-to-end tests of the low findings of issue 33 through the built
// binary: the Telegram webhook secret's length and lockout, a PostgreSQL
// url without TLS to another machine, and CLAWHOST_REATTACH against a
// sha256 pin. The redaction of configured secrets is TestRedactsConfiguredSecrets.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// validateBinary runs the built binary's validate on src and returns its
// exit status and output.
func validateBinary(t *testing.T, src string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir(t), "clawhost"), "validate", "-config", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// TestPostgresWithoutTLSRefused: validate refuses a url to another
// machine without sslmode, at the engine line and without the password;
// with sslmode=verify-full, or to a local socket, it is accepted.
func TestPostgresWithoutTLSRefused(t *testing.T) {
	// agent.command names a file that exists: validate checks it too.
	const tmpl = "data_dir = %q\nstorage {\n  engine = \"postgres\"\n  url    = %q\n}\nagent {\n  command = \"/bin/sh\"\n}\n"
	code, out := validateBinary(t, fmt.Sprintf(tmpl, t.TempDir(), "postgres://clawhost:pw-e2e-secret@db.example:5432/clawhost"))
	if code != 1 || !strings.Contains(out, "config.hcl:3:") || !strings.Contains(out, "The server db.example is not on this machine") ||
		!strings.Contains(out, "sslmode=verify-full") || strings.Contains(out, "pw-e2e-secret") {
		t.Errorf("plain url to db.example: exit %d\n%s", code, out)
	}
	for _, url := range []string{
		"postgres://clawhost:pw-e2e-secret@db.example:5432/clawhost?sslmode=verify-full",
		"postgres://clawhost@/clawhost?host=/run/postgresql&sslmode=disable",
	} {
		if code, out := validateBinary(t, fmt.Sprintf(tmpl, t.TempDir(), url)); code != 0 {
			t.Errorf("%s: exit %d\n%s", url, code, out)
		}
	}
}

// webhookHost: the telegram plugin taking updates on a webhook at listen.
func webhookHost(dir, endpoint, listen, secret string) Host {
	return Host{Dir: dir, LogLevel: "-", Admin: Attrs{"listen": ""},
		Plugins: []Plugin{{Name: "tg", Source: "telegram", Config: Attrs{
			"token": tgToken, "api_endpoint": endpoint, "webhook_listen": listen, "webhook_secret": secret}}}}
}

// TestWebhookSecretE2E: a webhook_secret under 16 characters is refused
// by validate at its line; with a long one the running plugin answers
// wrong secrets 401, and after ten in a minute 429 — the right secret
// too — while the lockout lasts.
func TestWebhookSecretE2E(t *testing.T) {
	srv := telegramtest.NewServer(tgToken)
	t.Cleanup(srv.Close)
	listen := sdktest.FreeAddr(t)
	short := webhookHost("", srv.APIEndpoint(), listen, "s3cret").HCL(t)
	at := fmt.Sprintf("config.hcl:%d:", 1+strings.Count(short[:strings.Index(short, "webhook_secret")], "\n"))
	code, out := validateBinary(t, short)
	if code != 1 || !strings.Contains(out, "webhook_secret too short") || !strings.Contains(out, at) || strings.Contains(out, "s3cret") {
		t.Errorf("short secret: exit %d\n%s", code, out)
	}

	const secret = "e2e-webhook-secret-0123456789"
	dir := t.TempDir()
	h := webhookHost(dir, srv.APIEndpoint(), listen, secret)
	cfgPath := h.Write(t)
	d := Launch(t, cfgPath)
	post := func(s string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+listen+"/hook", strings.NewReader(`{"update_id":1,"poll":{}}`))
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", s)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	d.waitFor(func() bool { return post(secret) == http.StatusOK }, "the webhook to accept the right secret")
	for i := 0; i < 9; i++ {
		if code := post(fmt.Sprintf("guess-%02d-0123456789", i)); code != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d, want 401", i, code)
		}
	}
	if code := post("guess-last-0123456789"); code != http.StatusUnauthorized {
		t.Fatalf("tenth wrong secret: %d, want 401", code)
	}
	if code := post(secret); code != http.StatusTooManyRequests {
		t.Errorf("right secret during the lockout: %d, want 429", code)
	}
	if strings.Contains(d.log.String(), secret) {
		t.Errorf("the log shows the webhook secret")
	}
}

// TestReattachRefusedForPinnedPlugin: with CLAWHOST_REATTACH naming an
// instance whose block pins sha256, the host does not attach: the
// instance is misconfigured, saying why, in /status.json.
func TestReattachRefusedForPinnedPlugin(t *testing.T) {
	bin, err := os.ReadFile(filepath.Join(binDir(t), "clawhost-loopback"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bin)
	dir := t.TempDir()
	adminAddr := sdktest.FreeAddr(t)
	h := adminHost(dir, adminAddr)
	h.Plugins[0].Attrs = Attrs{"sha256": hex.EncodeToString(sum[:])}
	cfgPath := h.Write(t)
	t.Setenv(pluginclient.EnvReattach, `{"lo":{"Protocol":"grpc","ProtocolVersion":1,"Pid":2147483000,"Test":true,"Addr":{"Network":"unix","String":"`+filepath.Join(dir, "debug.sock")+`"}}}`)
	d := Launch(t, cfgPath)
	base := "http://" + adminAddr
	d.waitFor(func() bool { code, _ := get(t, base+"/status.json"); return code == 200 }, "the admin endpoint")
	d.waitFor(func() bool { return instanceOf(t, base, "lo").State == "misconfigured" }, "lo misconfigured")
	if st := instanceOf(t, base, "lo"); !strings.Contains(st.LastError, "pins sha256") || !strings.Contains(st.LastError, pluginclient.EnvReattach) {
		t.Errorf("last error %q does not say why", st.LastError)
	}
}
