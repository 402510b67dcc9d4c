package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestRedactsConfiguredSecrets: configured secrets are redacted by value,
// not only by key: a plugin's status message and its panic quoting the
// web chat's access_token (an attribute its schema marks sensitive) and a
// plugin env value named like a token show as [redacted] in /status.json,
// `clawhost status` and the log.
func TestRedactsConfiguredSecrets(t *testing.T) {
	const webToken, envToken = "webchat-token-0123456789", "loop-env-secret-abcdef"
	dir := t.TempDir()
	adminAddr := sdktest.FreeAddr(t)
	addrFile := filepath.Join(dir, "lo.addr")
	h := Host{Dir: dir, Admin: Attrs{"listen": adminAddr}, Plugins: []Plugin{
		{Name: "lo", Source: "loopback", Attrs: Attrs{"env": map[string]string{"LOOPBACK_API_TOKEN": envToken}}, Config: Attrs{"addr_file": addrFile}},
		{Name: "web", Source: "webchat", Config: Attrs{"listen": sdktest.FreeAddr(t), "access_token": webToken}},
	}}
	cfgPath := h.Write(t)
	d := Launch(t, cfgPath)
	d.addrFile = addrFile
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback")
	base := "http://" + adminAddr
	d.waitFor(func() bool { code, _ := get(t, base+"/status.json"); return code == 200 }, "the admin endpoint")
	d.waitFor(func() bool { return instanceOf(t, base, "web").State == "ready" }, "the web chat ready")

	leak := func(where, text string) {
		t.Helper()
		for _, s := range []string{webToken, envToken} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the secret %q:\n%s", where, s, text)
			}
		}
	}
	secretText := "key " + webToken + " and " + envToken
	loopbackReport(t, d, map[string]any{"state": "degraded", "message": "cannot log in: " + secretText})
	d.waitFor(func() bool { return instanceOf(t, base, "lo").State == "degraded" }, "the reported status")
	if st := instanceOf(t, base, "lo"); st.Message != "cannot log in: key [redacted] and [redacted]" {
		t.Errorf("status message %q, want both secrets [redacted]", st.Message)
	}

	b, _ := json.Marshal(map[string]string{"message": secretText})
	if resp, err := http.Post("http://"+d.addr()+"/panic", "application/json", bytes.NewReader(b)); err == nil {
		resp.Body.Close()
	}
	d.waitFor(func() bool { return instanceOf(t, base, "lo").Restarts > 0 }, "the plugin restarted after its panic")
	if !strings.Contains(d.log.String(), "panic: loopback: key [redacted] and [redacted]") {
		t.Errorf("the log does not show the panic with the secrets [redacted]")
	}
	_, js := get(t, base+"/status.json")
	leak("/status.json", js)
	_, page := get(t, base+"/")
	leak("the status page", page)
	_, out := statusOut(cfgPath)
	leak("clawhost status", out)
	leak("the log", d.log.String())
}
