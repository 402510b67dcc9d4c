package e2e

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// checksFile writes the loopback channel and the clock hook, whose own
// check (Validate, examples/clock-hook) rejects an unknown time zone, with
// the clock's time zone into dir.
type checksFile struct {
	t                              *testing.T
	dir, path, adminAddr, addrFile string
	logLevel                       string // "" for none
	zone                           string // the last one written
}

func newChecksFile(t *testing.T) *checksFile {
	dir := t.TempDir()
	return &checksFile{t: t, dir: dir, path: filepath.Join(dir, "config.hcl"), adminAddr: sdktest.FreeAddr(t), addrFile: filepath.Join(dir, "lo.addr")}
}

func (c *checksFile) write(zone string) {
	c.t.Helper()
	c.zone = zone
	h := Host{Dir: c.dir, LogLevel: cmp.Or(c.logLevel, "-"),
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"lo:u1"}},
		Admin:  Attrs{"listen": c.adminAddr},
		Plugins: []Plugin{
			{Name: "lo", Source: "loopback", Config: Attrs{"addr_file": c.addrFile}},
			{Name: "clock", Source: "clock-hook", Config: Attrs{"timezone": zone}},
		}}
	h.Write(c.t)
}

// at is where the (rejected) timezone value is in the file.
func (c *checksFile) at() string {
	return posOf(c.t, c.path, strconv.Quote(c.zone))
}

func (c *checksFile) status(t *testing.T) admin.Snapshot {
	t.Helper()
	var snap admin.Snapshot
	code, body := get(t, "http://"+c.adminAddr+"/status.json")
	if code != 200 {
		return snap
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

func pluginOf(s admin.Snapshot, instance string) admin.Plugin {
	for _, p := range s.Plugins {
		if p.Instance == instance {
			return p
		}
	}
	return admin.Plugin{}
}

// TestValidateRunsPluginChecks: `clawhost validate` reports what the
// plugin's own Validate rejects at the value's file:line:col, in the same
// sorted list as the file's own errors, and exits 1; the block it accepts
// is valid.
func TestValidateRunsPluginChecks(t *testing.T) {
	c := newChecksFile(t)
	c.write("Europe/Berlin")
	var out, errb bytes.Buffer
	if code := run([]string{"validate", "-config", c.path}, &out, &errb); code != 0 {
		t.Fatalf("valid zone: exit %d\n%s", code, errb.String())
	}
	// And an error of the file's own before it, to see one sorted list
	// (the file's errors are found before the plugin is asked).
	c.logLevel = "loud"
	c.write("Mars/Base")
	out.Reset()
	errb.Reset()
	if code := run([]string{"validate", "-config", c.path}, &out, &errb); code != 1 {
		t.Fatalf("rejected zone: exit %d, want 1\n%s", code, errb.String())
	}
	got := errb.String()
	level := posOf(t, c.path, `"loud"`)
	i, j := strings.Index(got, "-> "+level+"\n"), strings.Index(got, "-> "+c.at()+"\n")
	if i < 0 || j < 0 || j < i {
		t.Errorf("want log_level's diagnostic at %s, then the plugin's at %s:\n%s", level, c.at(), got)
	}
	for _, want := range []string{`Unknown time zone in plugin "clock"`, `"Mars/Base" is not an IANA time zone name`, `timezone = "Mars/Base"`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "\n2 errors\n") || out.Len() != 0 {
		t.Errorf("want one count, \"2 errors\", and nothing on stdout:\n%s\n%s", got, out.String())
	}
}

// TestPluginChecksAtStartAndReload: started with a block its plugin
// rejects, the instance settles as misconfigured with the diagnostic at
// file:line:col (no restart loop) while the host serves the others; fixed
// and reloaded, it starts; a SIGHUP with a block it rejects again is
// refused whole — the running clock keeps its pid and its context still
// reaches the agent — and the refusal shows in status.json and `clawhost
// status`.
func TestPluginChecksAtStartAndReload(t *testing.T) {
	c := newChecksFile(t)
	c.write("Mars/Base")
	d := Launch(t, c.path)
	d.addrFile = c.addrFile
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback")
	d.waitFor(func() bool { return pluginOf(c.status(t), "clock").State == "misconfigured" }, "clock misconfigured")
	clock := pluginOf(c.status(t), "clock")
	if !strings.Contains(clock.LastError, "-> "+c.at()) || !strings.Contains(clock.LastError, "Unknown time zone") {
		t.Errorf("clock's last error should carry the diagnostic at %s:\n%s", c.at(), clock.LastError)
	}
	d.post("u1", "hello while misconfigured")
	if got := d.nextSend("chat-u1"); !strings.Contains(got, "hello while misconfigured") || strings.Contains(got, "Current date and time") {
		t.Errorf("reply %q: want the echo without the clock's context", got)
	}
	if n := strings.Count(d.log.String(), "plugin misconfigured"); n != 1 || pluginOf(c.status(t), "clock").Restarts != 0 {
		t.Errorf("misconfigured is reported once and not restarted: %d log lines, %d restarts", n, pluginOf(c.status(t), "clock").Restarts)
	}

	c.write("UTC")
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(func() bool { return pluginOf(c.status(t), "clock").State == "ready" }, "clock ready after the fix")
	pid := pluginOf(c.status(t), "clock").PID
	if r := c.status(t).LastReload; r == nil || r.Refused {
		t.Errorf("last reload %+v, want applied", r)
	}

	c.write("Venus/Base")
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(func() bool { r := c.status(t).LastReload; return r != nil && r.Refused }, "the refused reload in status.json")
	snap := c.status(t)
	if !strings.Contains(snap.LastReload.Reason, "-> "+c.at()) || !strings.Contains(snap.LastReload.Reason, "Venus/Base") {
		t.Errorf("refusal reason lacks the diagnostic at %s:\n%s", c.at(), snap.LastReload.Reason)
	}
	if p := pluginOf(snap, "clock"); p.State != "ready" || p.PID != pid {
		t.Errorf("clock after the refused reload: %s pid %d, want ready pid %d", p.State, p.PID, pid)
	}
	if !alive(pid) {
		t.Errorf("clock pid %d is gone", pid)
	}
	d.post("u1", "after the refusal")
	if got := d.nextSend("chat-u1"); !strings.Contains(got, "after the refusal") || !strings.Contains(got, "Current date and time") || !strings.Contains(got, "UTC") {
		t.Errorf("reply %q: want the echo with the running clock's UTC context", got)
	}
	var out bytes.Buffer
	if code := run([]string{"status", "-config", c.path}, &out, io.Discard); code != 1 {
		t.Errorf("clawhost status after a refused reload: exit %d, want 1", code)
	}
	for _, want := range []string{"was refused", "-> " + c.at(), "plugins ready 2/2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("clawhost status lacks %q:\n%s", want, out.String())
		}
	}
	if code, page := get(t, "http://"+c.adminAddr+"/"); code != 200 || !strings.Contains(page, "was refused") || !strings.Contains(page, "Venus/Base") {
		t.Errorf("status page (%d) does not show the refusal", code)
	}
	if !strings.Contains(d.log.String(), "configuration refused; keeping the running set") {
		t.Error("the refusal is not logged")
	}
}

// TestValidateTelegramToken: the telegram plugin's own check rejects a
// malformed token at its file:line:col without printing the token (the
// schema marks it sensitive); a webhook_url without webhook_listen is
// reported about webhook_listen, which is not written, at the config
// block.
func TestValidateTelegramToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "c.hcl")
	const secret = "hunter2-not-a-token"
	src := fmt.Sprintf(`plugin_dir = %q
plugin "tg" {
  source = "telegram"
  config {
    token       = %q
    webhook_url = "http://insecure.example/hook"
  }
}
`, binDir(t), secret)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	if code := run([]string{"validate", "-config", path}, io.Discard, &errb); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errb.String())
	}
	got := errb.String()
	for _, want := range []string{
		`Malformed bot token in plugin "tg"`, "-> " + path + ":5:19", "(source not shown: it may contain a sensitive value)",
		`Missing webhook_listen in plugin "tg"`, "-> " + path + ":4:3", "\n2 errors\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hunter2") {
		t.Errorf("the token is printed:\n%s", got)
	}
}
