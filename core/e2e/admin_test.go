package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// adminHost: the loopback channel, pairing with lo:owner as the owner,
// the admin endpoint at adminAddr.
func adminHost(dir, adminAddr string) Host {
	return Host{
		Dir:      dir,
		LogLevel: "-",
		Access:   Attrs{"dm_policy": "pairing", "owners": []string{"lo:owner"}},
		Admin:    Attrs{"listen": adminAddr},
		Plugins:  []Plugin{{Name: "lo", Source: "loopback", Config: Attrs{"addr_file": filepath.Join(dir, "lo.addr")}}},
	}
}

// pairingCode returns the pairing code the host's reply to a stranger
// shows ("… code is CODE …").
func pairingCode(t *testing.T, reply string) string {
	t.Helper()
	i := strings.Index(reply, "code is ")
	if i < 0 {
		t.Fatalf("no pairing code in %q", reply)
	}
	return strings.Fields(reply[i+len("code is "):])[0]
}

// startPairingHost starts adminHost in a new directory (mod, when set,
// changes it first) and returns once the loopback plugin wrote its address
// and the admin endpoint answers /healthz with 200: the daemon and the
// endpoint's base URL.
func startPairingHost(t *testing.T, mod func(*Host)) (*daemon, string) {
	t.Helper()
	dir, adminAddr := t.TempDir(), sdktest.FreeAddr(t)
	h := adminHost(dir, adminAddr)
	if mod != nil {
		mod(&h)
	}
	d := Start(t, h)
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback")
	base := "http://" + adminAddr
	d.waitFor(func() bool { code, _ := get(t, base+"/healthz"); return code == 200 }, "/healthz 200")
	return d, base
}

// get fetches url; when it is an admin endpoint of a host the test
// launched, it sends that host's admin token (see adminTokens).
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	if tok := AdminToken(req.URL.Host); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAdminAndPairingCLI: the status page, /healthz and /metrics over HTTP,
// and `clawhost pairing list|approve` through a running host's admin
// endpoint.
func TestAdminAndPairingCLI(t *testing.T) {
	d, base := startPairingHost(t, nil)

	// A stranger is refused with a pairing code; the CLI lists and approves it.
	d.post("stranger", "hello")
	code := pairingCode(t, d.nextSend("chat-stranger"))
	var out, errb bytes.Buffer
	if rc := run([]string{"pairing", "list", "-config", d.cfgPath}, &out, &errb); rc != 0 || !strings.Contains(out.String(), code) || !strings.Contains(out.String(), "lo:stranger") {
		t.Fatalf("pairing list: rc %d out %q err %q", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := run([]string{"pairing", "approve", code, "-config", d.cfgPath}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "approved lo:stranger") {
		t.Fatalf("pairing approve: rc %d out %q err %q", rc, out.String(), errb.String())
	}
	// The approval tells the stranger and answers the message that asked.
	if got := d.nextSend("chat-stranger"); !strings.Contains(got, "An owner approved you") {
		t.Fatalf("after approval: %q", got)
	}
	if got := d.nextSend("chat-stranger"); !strings.Contains(got, "echo: ") || !strings.Contains(got, "hello") {
		t.Fatalf("the held message after approval: %q", got)
	}
	d.post("stranger", "now me")
	if got := d.nextSend("chat-stranger"); !strings.Contains(got, "echo: ") || !strings.Contains(got, "now me") {
		t.Fatalf("after approval: %q", got)
	}

	code2, page := get(t, base+"/")
	if code2 != 200 || !strings.Contains(page, "lo:direct:stranger") || !strings.Contains(page, "loopback") {
		t.Errorf("status page %d:\n%s", code2, page)
	}
	if strings.Contains(page, "<h2>Hosts</h2>") {
		t.Error("the status page of a host alone on SQLite has a Hosts section")
	}
	_, m := get(t, base+"/metrics")
	if strings.Contains(m, "clawhost_hosts_live") || !strings.Contains(m, `clawhost_host_info{engine="sqlite",host_id=`) {
		t.Errorf("/metrics of a host alone on SQLite: host info missing or cluster metrics present")
	}
	// Three messages in: hello, hello again as the approval answers it
	// (#approved), now me; two turns.
	for _, want := range []string{`clawhost_messages_in_total{instance="lo"} 3`, `clawhost_turns_total{agent="main",outcome="ok"} 2`, `clawhost_plugin_up{instance="lo"} 1`, "clawhost_turn_duration_seconds_bucket"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Lightly loaded, the host runs its Go code on one processor
	// (core/internal/procpace); a burst at its start may have moved it to
	// all, and two quiet seconds bring it back.
	if os.Getenv("GOMAXPROCS") == "" {
		sdktest.WaitFor(t, "the idle host on one processor", func() error {
			_, m := get(t, base+"/metrics")
			return sdktest.Saw(strings.Contains(m, "\ngo_sched_gomaxprocs_threads 1\n"), "go_sched_gomaxprocs_threads is not 1")
		})
		// The status page says so, and what the host takes while busy.
		if _, page := get(t, base+"/"); runtime.GOMAXPROCS(0) > 1 && !strings.Contains(page, fmt.Sprintf("host processors: <b>1 (all %d while busy)</b>", runtime.GOMAXPROCS(0))) {
			t.Errorf("the status page does not show the host on one processor of %d", runtime.GOMAXPROCS(0))
		}
		out.Reset()
		run([]string{"status", "-config", d.cfgPath}, &out, &errb)
		if want := fmt.Sprintf("host processors: 1 (all %d while busy)\n", runtime.GOMAXPROCS(0)); runtime.GOMAXPROCS(0) > 1 && !strings.Contains(out.String(), want) {
			t.Errorf("clawhost status lacks %q:\n%s", want, out.String())
		}
	}
	// The plugin dies: /healthz goes 503 until the host restarted it.
	pids := pluginPIDs(d, 1)
	_ = syscall.Kill(pids[0], syscall.SIGKILL)
	saw503 := false
	sdktest.WaitFor(t, "/healthz 503 while the plugin is down, then 200", func() error {
		c, _ := get(t, base+"/healthz")
		saw503 = saw503 || c == 503
		return sdktest.Saw(saw503 && c == 200, "/healthz %d, 503 seen before: %v", c, saw503)
	})
	if c, body := get(t, base+"/healthz"); c != 200 {
		t.Errorf("/healthz after the restart: %d %s", c, body)
	}
	if !saw503 {
		t.Log("restart was faster than the /healthz polling; 503 not observed")
	}
}

// TestStatusShowsWhatToDo: a plugin whose binary is missing settles in
// "missing" (no restart loop); `clawhost status` and /healthz name it with
// what to do, while the rest of the host serves.
func TestStatusShowsWhatToDo(t *testing.T) {
	dir := t.TempDir()
	adminAddr := sdktest.FreeAddr(t)
	h := adminHost(dir, adminAddr)
	h.Plugins = append(h.Plugins, Plugin{Name: "gone", Source: "loopback", Attrs: Attrs{"path": filepath.Join(dir, "clawhost-gone")}})
	cfgPath, addrFile := h.Write(t), filepath.Join(dir, "lo.addr")
	d := Launch(t, cfgPath)
	d.addrFile = addrFile
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback")
	var out, errb bytes.Buffer
	d.waitFor(func() bool {
		out.Reset()
		errb.Reset()
		rc := run([]string{"status", "-config", cfgPath}, &out, &errb)
		return rc == 1 && strings.Contains(out.String(), "missing") && strings.Contains(out.String(), "plugins ready 1/2")
	}, "status: lo ready, gone missing")
	for _, want := range []string{"plugins ready 1/2", "gone", "clawhost-gone", "what to do: build or install the binary"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out.String())
		}
	}
	code, body := get(t, "http://"+adminAddr+"/healthz")
	if code != 503 || !strings.Contains(body, `"instance":"gone"`) || !strings.Contains(body, `"state":"missing"`) || strings.Contains(body, `"instance":"lo"`) {
		t.Errorf("/healthz %d %s", code, body)
	}
	start := time.Now()
	if _, m := get(t, "http://"+adminAddr+"/metrics"); !strings.Contains(m, `clawhost_plugin_state{instance="gone",state="missing"} 1`) {
		t.Errorf("/metrics lacks the missing state:\n%s", m)
	}
	d.post("owner", "still serving")
	if got := d.nextSend("chat-owner"); !strings.Contains(got, "still serving") {
		t.Errorf("reply %q", got)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the reply waited %s: nothing may wait for a missing plugin", took) // a hook wait would take the 10 s start timeout
	}
	if n := strings.Count(d.log.String(), "plugin missing"); n != 1 {
		t.Errorf("the missing binary is reported once, not in a loop: %d lines", n)
	}
}

// TestAdminTokenEndToEnd: the running binary's admin endpoint refuses
// every route without the token (loopback included), takes the header and
// the link's ?token= (cookie, redirect without it), keeps the token 0600
// and reuses it after a restart; the CLI reads it and works; beyond
// loopback without TLS the host refuses to start.
func TestAdminTokenEndToEnd(t *testing.T) {
	d, base := startPairingHost(t, nil)
	dir, cfgPath, adminAddr := d.Dir(), d.ConfigPath(), strings.TrimPrefix(base, "http://")
	tokenFile := filepath.Join(dir, "data", "admin.token")
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v; want mode 0600", fi, err)
	}
	token := AdminToken(adminAddr)
	// Without a terminal the log says where the token is, never the token.
	d.waitFor(func() bool { return strings.Contains(d.log.String(), "token_file="+tokenFile) }, "the log to name the token file")
	if strings.Contains(d.log.String(), token) {
		t.Error("the log holds the admin token")
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path, auth string) (int, http.Header, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{"code":"AAAAAAAA"}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	for _, c := range []struct {
		method, path, auth string
		code               int
	}{
		{"GET", "/", "", 401},
		{"GET", "/status.json", "", 401},
		{"GET", "/metrics", "", 401},
		{"GET", "/pairing", "", 401},
		{"POST", "/pairing/approve", "", 401},
		{"POST", "/plugins/lo/retry", "", 401},
		{"GET", "/status.json", "Bearer wrong", 401},
		{"GET", "/", "Bearer " + token, 200},
		{"GET", "/status.json", "Bearer " + token, 200},
		{"GET", "/metrics", "Bearer " + token, 200},
		{"GET", "/pairing", "Bearer " + token, 200},
		{"POST", "/pairing/approve", "Bearer " + token, 404}, // reached: the code is unknown
	} {
		if code, _, body := send(c.method, c.path, c.auth); code != c.code {
			t.Errorf("%s %s with %q: %d %q, want %d", c.method, c.path, c.auth, code, body, c.code)
		}
	}
	code, hdr, _ := send("GET", "/?token="+token, "")
	if code != http.StatusSeeOther || hdr.Get("Location") != "/" || !strings.Contains(hdr.Get("Set-Cookie"), admin.CookieName+"=") ||
		!strings.Contains(hdr.Get("Set-Cookie"), "HttpOnly") || !strings.Contains(hdr.Get("Set-Cookie"), "SameSite=Strict") {
		t.Errorf("?token=: %d, Location %q, Set-Cookie %q; want 303 to / with the cookie", code, hdr.Get("Location"), hdr.Get("Set-Cookie"))
	}
	if code, _, body := send("GET", "/healthz", ""); code != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("/healthz without the token: %d %q, want only the status", code, body)
	}

	var out, errb bytes.Buffer
	if rc := run([]string{"status", "-config", cfgPath}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "plugins ready 1/1") {
		t.Errorf("clawhost status: rc %d out %q err %q", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := run([]string{"pairing", "list", "-config", cfgPath}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "no pending pairing codes") {
		t.Errorf("clawhost pairing list: rc %d out %q err %q", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"retry", "lo", "-config", cfgPath}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "offers no retry") {
		t.Errorf("clawhost retry lo: rc %d out %q err %q; want the endpoint's 409", rc, out.String(), errb.String())
	}

	// A restart keeps the token: links and scripts keep working.
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	d.restart()
	d.waitFor(func() bool { code, _ := get(t, base+"/healthz"); return code == 200 }, "/healthz 200 after the restart")
	if again := AdminToken(adminAddr); again != token {
		t.Error("the token changed across a restart")
	}
	if code, _, _ := send("GET", "/status.json", "Bearer "+token); code != 200 {
		t.Errorf("the old token after a restart: %d", code)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()

	// Beyond loopback without TLS: validate names the line, the host does
	// not start.
	h := adminHost(dir, adminAddr)
	h.Admin = Attrs{"listen": "0.0.0.0:0"}
	h.Write(t)
	wideLine := fmt.Sprintf("config.hcl:%d", lineOf(t, cfgPath, `"0.0.0.0:0"`))
	out.Reset()
	errb.Reset()
	if rc := run([]string{"validate", "-config", cfgPath}, &out, &errb); rc != 1 || !strings.Contains(out.String()+errb.String(), wideLine) ||
		!strings.Contains(out.String()+errb.String(), "beyond loopback without TLS") {
		t.Errorf("validate with listen 0.0.0.0: rc %d\n%s%s", rc, out.String(), errb.String())
	}
}

// posOf is "path:line:column" of the first s in the file at path.
func posOf(t *testing.T, path, s string) string {
	t.Helper()
	n := lineOf(t, path, s)
	b, _ := os.ReadFile(path)
	line := strings.Split(string(b), "\n")[n-1]
	return fmt.Sprintf("%s:%d:%d", path, n, strings.Index(line, s)+1)
}

// lineOf is the number of the first line of the file at path containing s.
func lineOf(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %s", path, s)
	return 0
}
