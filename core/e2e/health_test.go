package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestMissingClaudeIsNotHealthy: with agent.command pointing nowhere
// `clawhost validate` fails at the command's line; the host starts (the
// chat is told when a turn cannot run), but /healthz is 503 naming the
// agent and what to do, and `clawhost status` says NOT READY and exits 1.
// launchAdmin launches h with its admin endpoint on a free address (set
// in h, so that a later h.Write keeps it) and returns once the endpoint
// answers: the daemon, the config file's path and the endpoint's address.
func launchAdmin(t *testing.T, h *Host) (d *Daemon, cfg, addr string) {
	t.Helper()
	addr = sdktest.FreeAddr(t)
	h.Admin = Attrs{"listen": addr}
	cfg = h.Write(t)
	d = Launch(t, cfg)
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/status.json"); return code == 200 }, "the admin endpoint")
	return d, cfg, addr
}

func TestMissingClaudeIsNotHealthy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := Host{Dir: dir, Agent: Agent{Command: filepath.Join(dir, "no-claude-here"), Attrs: Attrs{"workspace": "./workspace", "timeout": "30s"}}}
	_, cfg, addr := launchAdmin(t, &h)
	code, body := get(t, "http://"+addr+"/healthz")
	if code != 503 || !strings.Contains(body, `"agent"`) || !strings.Contains(body, `"state":"missing"`) || !strings.Contains(body, "no-claude-here not found") {
		t.Errorf("/healthz: %d %s", code, body)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"validate", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "claude CLI not found") || !strings.Contains(errb.String(), "config.hcl:") {
		t.Errorf("clawhost validate: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"status", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "agent: NOT READY (missing)") || !strings.Contains(out.String(), "install the claude CLI") {
		t.Errorf("clawhost status: exit %d\n%s%s", rc, out.String(), errb.String())
	}
}

// TestReloadSaysWhatWaits: `clawhost reload` applies a changed file and
// names what waits for a restart (a changed agent.command, the log level);
// clawhost status says it too; what a reload applies (access) is not
// named. With a file that does not load, reload and status still find the
// host.
func TestReloadSaysWhatWaits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := Host{Dir: dir, Access: Attrs{"dm_policy": "pairing"}}
	d, cfg, addr := launchAdmin(t, &h)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`log_level\s*=\s*"debug"`).ReplaceAllString(string(b), `log_level = "info"`)
	text = regexp.MustCompile(`dm_policy\s*=\s*"pairing"`).ReplaceAllString(text, `dm_policy = "allowlist"`)
	text = regexp.MustCompile(`(?m)^(\s*command\s*=\s*)"([^"]*)"`).ReplaceAllString(text, `${1}"/usr/bin/true"`)
	if text == string(b) || !strings.Contains(text, `"/usr/bin/true"`) {
		t.Fatalf("the edit changed nothing:\n%s", text)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	rc := run([]string{"reload", "-config", cfg}, &out, &errb)
	applied, waits, _ := strings.Cut(out.String(), "these changes wait for a restart of clawhost:")
	if rc != 0 || !strings.HasPrefix(out.String(), "applied\n") || !strings.Contains(applied, "apply from the next message or turn:\n  access.dm_policy\n") ||
		!strings.Contains(waits, "agent.command") || !strings.Contains(waits, "log_level") || strings.Contains(waits, "access") {
		t.Fatalf("clawhost reload: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	run([]string{"status", "-config", cfg}, &out, &errb)
	if !strings.Contains(out.String(), "was applied; these changes wait for a restart of clawhost: ") || !strings.Contains(out.String(), "agent.command") {
		t.Errorf("clawhost status:\n%s", out.String())
	}

	// A file that does not load: reload and status still reach the host
	// (from data_dir/admin.json), the reload is refused with the
	// diagnostics, status shows it and exits 1.
	if err := os.WriteFile(cfg, []byte(text+"\naccess {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"reload", "-config", cfg}, &out, &errb); rc != 1 || !strings.HasPrefix(out.String(), "refused") || !strings.Contains(errb.String(), "reaching the running host at "+addr) {
		t.Fatalf("clawhost reload of a broken file: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := run([]string{"status", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "was refused") {
		t.Errorf("clawhost status with a broken file: exit %d\n%s", rc, out.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"pairing", "list", "-config", cfg}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "no pending pairing codes") ||
		!strings.Contains(errb.String(), "reaching the running host at "+addr) {
		t.Errorf("clawhost pairing list with a broken file: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"status", "-admin", addr, "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "was refused") || !strings.Contains(errb.String(), "(-admin)") {
		t.Errorf("clawhost status -admin with a broken file: exit %d\n%s%s", rc, out.String(), errb.String())
	}

	// A clean stop removes data_dir/admin.json; pairing with the broken
	// file then does not open a database the file does not name (a
	// default SQLite one would be wrong for PostgreSQL).
	_ = d.Process().Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "data", "admin.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin.json after a clean stop: %v", err)
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"pairing", "list", "-admin", addr, "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "does not answer") {
		t.Errorf("clawhost pairing list, host stopped, broken file: exit %d\n%s%s", rc, out.String(), errb.String())
	}
}

// TestSecondInstanceOnTheSamePorts: a second clawhost (another data_dir)
// whose admin endpoint cannot bind does not say "started": it exits 1
// naming the address and what to do.
func TestSecondInstanceOnTheSamePorts(t *testing.T) {
	t.Parallel()
	addr := sdktest.FreeAddr(t)
	first := Host{Dir: t.TempDir(), Admin: Attrs{"listen": addr}}
	d := Launch(t, first.Write(t))
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/status.json"); return code == 200 }, "the first host's admin endpoint")
	second := Host{Dir: t.TempDir(), Admin: Attrs{"listen": addr}}
	cmd := Command(t, second.Write(t))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(out.String(), "admin endpoint on "+addr) || strings.Contains(out.String(), "clawhost started") {
			t.Errorf("the second host: %v, exit %d\n%s", err, cmd.ProcessState.ExitCode(), out.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the second host kept running:\n%s", out.String())
	}
}

// TestValidateListsDisabledPlugins: a plugin disabled by an unset
// variable is listed with what disables it; its block's typo passes
// unseen without -all and is an error at its line with -all.
func TestValidateListsDisabledPlugins(t *testing.T) {
	t.Parallel()
	h := Host{Dir: t.TempDir(), Admin: Attrs{"listen": ""}, Plugins: []Plugin{{Name: "tg", Source: "telegram",
		Attrs:  Attrs{"enabled": Expr(`env("CLAWHOST_TEST_UNSET_TOKEN", "") != ""`)},
		Config: Attrs{"token": "123:abc", "tokn": "oops"}}}}
	cfg := h.Write(t)
	var out, errb bytes.Buffer
	if rc := run([]string{"validate", "-config", cfg}, &out, &errb); rc != 0 ||
		!strings.Contains(out.String(), `plugin "tg" (telegram): disabled: enabled = env("CLAWHOST_TEST_UNSET_TOKEN", "") != "" at `) {
		t.Errorf("validate: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"validate", "-all", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "tokn") {
		t.Errorf("validate -all: exit %d\n%s%s", rc, out.String(), errb.String())
	}

	// The usual pattern: the token from the same unset variable that
	// disables the plugin. -all passes whatever the caller's environment
	// (the plugin's "Empty bot token" is a warning) and still catches the
	// typo.
	h.Plugins[0].Config = Attrs{"token": Expr(`env("CLAWHOST_TEST_UNSET_TOKEN", "")`)}
	cfg = h.Write(t)
	out.Reset()
	errb.Reset()
	if rc := run([]string{"validate", "-all", "-config", cfg}, &out, &errb); rc != 0 {
		t.Errorf("validate -all, token from the unset variable: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	h.Plugins[0].Config = Attrs{"token": Expr(`env("CLAWHOST_TEST_UNSET_TOKEN", "")`), "tokn": "oops"}
	cfg = h.Write(t)
	out.Reset()
	errb.Reset()
	if rc := run([]string{"validate", "-all", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "tokn") {
		t.Errorf("validate -all, token from the unset variable and a typo: exit %d\n%s%s", rc, out.String(), errb.String())
	}
}

// TestReadOnlyDataDir: a data_dir the host cannot write to stops the start
// with one error naming it (not one per plugin): /proc/self is a
// directory nobody, root included, makes files in.
func TestReadOnlyDataDir(t *testing.T) {
	t.Parallel()
	h := Host{Dir: t.TempDir(), DataDir: "/proc/self", Admin: Attrs{"listen": ""}, Plugins: []Plugin{{Name: "lo", Source: "loopback"}, {Name: "lo2", Source: "loopback"}}}
	out, err := Command(t, h.Write(t)).CombinedOutput()
	if err == nil || strings.Count(string(out), "is not writable") != 1 || !strings.Contains(string(out), "data_dir /proc/self is not writable (data_dir at ") ||
		strings.Contains(string(out), "did not start") {
		t.Errorf("start on a data_dir nobody can write to: %v\n%s", err, out)
	}
}

// TestClaudeNotLoggedIn: the real CLI with no credentials — `claude auth
// status` says so at start, without a turn: /healthz is 503 with the agent
// not_logged_in and what to do; the same CLI with a key is ready and says
// how it is logged in.
func TestClaudeNotLoggedIn(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	for _, key := range []bool{false, true} {
		dir := t.TempDir()
		addr := sdktest.FreeAddr(t)
		agent := RealClaude(bin, filepath.Join(dir, "home"), "http://127.0.0.1:9", Attrs{"workspace": filepath.Join(dir, "workspace")})
		if !key {
			delete(agent.Env, "ANTHROPIC_API_KEY")
		}
		// A channel: a host without one is not healthy whatever its agent says.
		d := Launch(t, (&Host{Dir: dir, Agent: agent, Admin: Attrs{"listen": addr}, Plugins: []Plugin{{Name: "lo", Source: "loopback"}}}).Write(t))
		want := `"not_logged_in"`
		if key {
			want = `"api_key"`
		}
		d.waitFor(func() bool {
			_, body := get(t, "http://"+addr+"/status.json")
			return strings.Contains(body, want)
		}, "the agent item: "+want)
		if key {
			// Ready once the channel is too (it may still be starting).
			d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/healthz"); return code == 200 }, "/healthz 200")
			continue
		}
		if code, body := get(t, "http://"+addr+"/healthz"); code != 503 || !strings.Contains(body, "claude auth status says it is not logged in") {
			t.Errorf("key %v: /healthz %d %s", key, code, body)
		}
	}
}

// TestDoctor: with the real CLI logged in (a key) and a running host,
// nothing fails — the database held by the host and its admin port
// answering are fine; -json parses; with the CLI not logged in, doctor
// fails on it and says what to do.
func TestDoctor(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	dir := t.TempDir()
	agent := RealClaude(bin, filepath.Join(dir, "home"), "http://127.0.0.1:9", Attrs{"workspace": filepath.Join(dir, "workspace")})
	h := Host{Dir: dir, Agent: agent}
	_, cfg, addr := launchAdmin(t, &h)
	var out, errb bytes.Buffer
	if rc := run([]string{"doctor", "-config", cfg}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "logged in with api_key") ||
		!strings.Contains(out.String(), " at "+bin+" (agent.command)") ||
		!strings.Contains(out.String(), "held by the running clawhost") || !strings.Contains(out.String(), addr+" answers") {
		t.Errorf("doctor: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := run([]string{"doctor", "-json", "-config", cfg}, &out, &errb); rc != 0 {
		t.Errorf("doctor -json: exit %d\n%s", rc, errb.String())
	}
	var checks []struct{ Name, Verdict, Found, Do string }
	if err := json.Unmarshal(out.Bytes(), &checks); err != nil || len(checks) < 5 {
		t.Errorf("doctor -json: %v %+v", err, checks)
	}

	// A key the API refuses: claude auth status says "logged in with api_key" (it reads
	// no more than the environment); the one real request doctor makes FAILs.
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	fake.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if r.Header.Get("x-api-key") != "good-key" {
			return anthropictest.Unauthorized()
		}
		return anthropictest.Reply{Text: "OK"}
	})
	for _, c := range []struct {
		key     string
		rc      int
		line    string
		request bool
	}{
		{"bad-key", 1, "FAIL  claude answers (agent main)", true},
		{"good-key", 0, "ok    claude answers (agent main)", true},
	} {
		d := t.TempDir()
		ag := RealClaude(bin, filepath.Join(d, "home"), fake.URL(), Attrs{"workspace": filepath.Join(d, "workspace")})
		ag.Env["ANTHROPIC_API_KEY"] = c.key
		before := fake.Count()
		out.Reset()
		if rc := run([]string{"doctor", "-config", (&Host{Dir: d, Agent: ag, Admin: Attrs{"listen": ""}}).Write(t)}, &out, &errb); rc != c.rc || !strings.Contains(out.String(), c.line) ||
			!strings.Contains(out.String(), "logged in with api_key") || strings.Contains(out.String(), c.key) {
			t.Errorf("doctor with %s: exit %d\n%s", c.key, rc, out.String())
		}
		if fake.Count() == before {
			t.Errorf("doctor with %s made no request", c.key)
		}
	}

	dir2 := t.TempDir()
	agent2 := RealClaude(bin, filepath.Join(dir2, "home"), "http://127.0.0.1:9", Attrs{"workspace": filepath.Join(dir2, "workspace")})
	delete(agent2.Env, "ANTHROPIC_API_KEY")
	cfg2 := (&Host{Dir: dir2, Agent: agent2, Admin: Attrs{"listen": ""}}).Write(t)
	out.Reset()
	if rc := run([]string{"doctor", "-config", cfg2}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "FAIL  claude CLI (agent main)") || !strings.Contains(out.String(), "is not logged in") {
		t.Errorf("doctor without credentials: exit %d\n%s", rc, out.String())
	}
}

// TestDoctorChannels: doctor runs each enabled plugin's live checks (its
// Probe, through the launcher), which ask the platform (the fakes)
// whether it takes the config block's credentials: a Telegram token
// the Bot API refuses is a FAIL naming the channel (exit 1) and the token
// is never printed; the right one is ok with the bot's @username; a
// Discord bot is ok with its name and the Message Content intent, a FAIL
// when the intent is off; an unlinked WhatsApp is a warning.
func TestDoctorChannels(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	tg := telegramtest.NewServer(tgToken)
	defer tg.Close()
	dc := discordtest.NewServer(dcToken)
	defer dc.Close()
	doctor := func(tgTok string) (int, string) {
		dir := t.TempDir()
		agent := RealClaude(bin, filepath.Join(dir, "home"), "http://127.0.0.1:9", Attrs{"workspace": filepath.Join(dir, "workspace")})
		cfg := (&Host{Dir: dir, Agent: agent, Admin: Attrs{"listen": ""}, Plugins: []Plugin{
			{Name: "tg", Source: "telegram", Config: Attrs{"token": tgTok, "api_endpoint": tg.APIEndpoint()}},
			{Name: "dc", Source: "discord", Config: Attrs{"token": dcToken, "api_endpoint": dc.Endpoint()}},
			{Name: "wa", Source: "whatsapp"},
		}}).Write(t)
		var out, errb bytes.Buffer
		rc := run([]string{"doctor", "-config", cfg}, &out, &errb)
		return rc, out.String() + errb.String()
	}
	bad := "123:refused-token-xyz"
	rc, out := doctor(bad)
	if rc != 1 || !regexp.MustCompile(`FAIL  plugin "tg" \(telegram\): token\s+Telegram refused the token`).MatchString(out) || strings.Contains(out, bad) {
		t.Errorf("a refused Telegram token: exit %d\n%s", rc, out)
	}
	if !regexp.MustCompile(`ok    plugin "dc" \(discord\): token\s+Discord accepts the token: the bot is clawbot[^\n]*\n.*ok    plugin "dc" \(discord\): message content intent\s+the Message Content intent is on`).MatchString(out) {
		t.Errorf("discord:\n%s", out)
	}
	if !regexp.MustCompile(`WARN  plugin "wa" \(whatsapp\): linked device\s+no phone linked yet`).MatchString(out) {
		t.Errorf("whatsapp:\n%s", out)
	}
	rc, out = doctor(tgToken)
	if rc != 0 || !regexp.MustCompile(`ok    plugin "tg" \(telegram\): token\s+Telegram accepts the token: the bot is @clawbot`).MatchString(out) || strings.Contains(out, tgToken) {
		t.Errorf("the right Telegram token: exit %d\n%s", rc, out)
	}
	dc.SetMessageContentAllowed(false)
	rc, out = doctor(tgToken)
	if rc != 1 || !strings.Contains(out, "Message Content intent is off") || strings.Contains(out, dcToken) {
		t.Errorf("discord without the intent: exit %d\n%s", rc, out)
	}
}

// TestDisabledPluginShown: a plugin disabled by an unset variable is on
// the status page, in status.json and in clawhost status with what
// disables it, so "why is Telegram not there?" has its answer.
func TestDisabledPluginShown(t *testing.T) {
	t.Parallel()
	h := Host{Dir: t.TempDir(), Plugins: []Plugin{{Name: "tg", Source: "telegram",
		Attrs:  Attrs{"enabled": Expr(`env("CLAWHOST_TEST_UNSET_TOKEN", "") != ""`)},
		Config: Attrs{"token": Expr(`env("CLAWHOST_TEST_UNSET_TOKEN", "")`)}}}}
	_, cfg, addr := launchAdmin(t, &h)
	why := `enabled = env("CLAWHOST_TEST_UNSET_TOKEN", "") != "" at ` + cfg + `:`
	_, body := get(t, "http://"+addr+"/status.json")
	var snap struct {
		Disabled []struct{ Instance, Source, Why string } `json:"disabled_plugins"`
	}
	if err := json.Unmarshal([]byte(body), &snap); err != nil || len(snap.Disabled) != 1 || snap.Disabled[0].Instance != "tg" ||
		snap.Disabled[0].Source != "telegram" || !strings.HasPrefix(snap.Disabled[0].Why, why) {
		t.Errorf("status.json: %v %+v", err, snap.Disabled)
	}
	_, page := get(t, "http://"+addr+"/")
	if !strings.Contains(page, `id="disabled-tg"`) || !strings.Contains(page, "CLAWHOST_TEST_UNSET_TOKEN") {
		t.Errorf("the page does not show the disabled plugin:\n%s", page)
	}
	var out, errb bytes.Buffer
	run([]string{"status", "-config", cfg}, &out, &errb)
	if !regexp.MustCompile(`(?m)^  tg\s+telegram\s+not enabled: ` + regexp.QuoteMeta(why)).MatchString(out.String()) {
		t.Errorf("clawhost status:\n%s%s", out.String(), errb.String())
	}
}

// postAdmin POSTs form to the admin endpoint url with the host's token.
func postAdmin(t *testing.T, url string, form string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if tok := AdminToken(req.URL.Host); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDoctorOnStatusPage: doctor's checks run inside the host on POST
// /doctor (the page's Run checks button): status.json has them (without
// the database, which the host holds), the page shows the section with a
// Telegram token its platform refuses as a failure, and clawhost status
// names the failing check.
func TestDoctorOnStatusPage(t *testing.T) {
	t.Parallel()
	tg := telegramtest.NewServer(tgToken)
	defer tg.Close()
	h := Host{Dir: t.TempDir(), Plugins: []Plugin{
		{Name: "tg", Source: "telegram", Config: Attrs{"token": "123:refused", "api_endpoint": tg.APIEndpoint()}}}}
	_, cfg, addr := launchAdmin(t, &h)
	if _, page := get(t, "http://"+addr+"/"); !strings.Contains(page, `action="/doctor"`) || !strings.Contains(page, "Not run yet") {
		t.Fatalf("the page has no checks section:\n%s", page)
	}
	if code, body := postAdmin(t, "http://"+addr+"/doctor", ""); code != 200 {
		t.Fatalf("POST /doctor: %d %s", code, body)
	}
	var snap admin.Snapshot
	sdktest.WaitFor(t, "the checks to finish", func() error {
		_, body := get(t, "http://"+addr+"/status.json")
		snap = admin.Snapshot{}
		_ = json.Unmarshal([]byte(body), &snap)
		return sdktest.Saw(snap.Doctor != nil && !snap.Doctor.At.IsZero() && !snap.Doctor.Running, "status.json %s", body)
	})
	names := map[string]admin.DoctorCheck{}
	for _, c := range snap.Doctor.Checks {
		names[c.Name] = c
	}
	if c := names[`plugin "tg" (telegram): token`]; c.Verdict != "fail" || !strings.Contains(c.Found, "refused the token") {
		t.Errorf("the channel check: %+v", snap.Doctor.Checks)
	}
	if _, ok := names["database"]; ok || names["data_dir"].Verdict != "ok" {
		t.Errorf("checks: %+v", snap.Doctor.Checks)
	}
	if _, page := get(t, "http://"+addr+"/"); !strings.Contains(page, "1 fail") || !strings.Contains(page, "refused the token") {
		t.Errorf("the page's checks:\n%s", page)
	}
	var out, errb bytes.Buffer
	run([]string{"status", "-config", cfg}, &out, &errb)
	if !strings.Contains(out.String(), `FAIL plugin "tg" (telegram): token: Telegram refused the token`) {
		t.Errorf("clawhost status:\n%s%s", out.String(), errb.String())
	}
}

// TestSecondWebChatOnTheSamePort: a second clawhost whose web chat cannot
// bind its port (the first one's holds it) starts, but not silently: the
// log says it is degraded naming the plugin, /healthz answers 503 and
// clawhost status exits 1 naming it.
func TestSecondWebChatOnTheSamePort(t *testing.T) {
	t.Parallel()
	web := sdktest.FreeAddr(t)
	a1, a2 := sdktest.FreeAddr(t), sdktest.FreeAddr(t)
	first := Host{Dir: t.TempDir(), Admin: Attrs{"listen": a1}, Plugins: []Plugin{{Name: "web", Source: "webchat", Config: Attrs{"listen": web}}}}
	d1 := Launch(t, first.Write(t))
	d1.waitFor(func() bool { code, _ := get(t, "http://"+a1+"/healthz"); return code == 200 }, "the first host ready")
	second := Host{Dir: t.TempDir(), Admin: Attrs{"listen": a2}, Plugins: []Plugin{{Name: "web", Source: "webchat", Config: Attrs{"listen": web}}}}
	cfg := second.Write(t)
	d2 := Launch(t, cfg)
	d2.waitFor(func() bool { return strings.Contains(d2.Log(), "clawhost is degraded") }, "the degraded warning")
	if !regexp.MustCompile(`clawhost is degraded: .*plugins="web \(misconfigured\)"`).MatchString(d2.Log()) {
		t.Errorf("the warning does not name the plugin:\n%s", d2.Log())
	}
	if code, body := get(t, "http://"+a2+"/healthz"); code != 503 || !strings.Contains(body, "web") {
		t.Errorf("/healthz of the second host: %d %s", code, body)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"status", "-config", cfg}, &out, &errb); rc != 1 || !regexp.MustCompile(`(?m)^  web\s+webchat\s+misconfigured`).MatchString(out.String()) ||
		!strings.Contains(out.String(), web) {
		t.Errorf("clawhost status: exit %d\n%s%s", rc, out.String(), errb.String())
	}
}

// TestSighupSaysWhatWaits: SIGHUP after agent.command changed applies the
// file and says, in a WARN line and in status.json's last_reload, that the
// command waits for a restart of clawhost.
func TestSighupSaysWhatWaits(t *testing.T) {
	t.Parallel()
	h := Host{Dir: t.TempDir()}
	d, cfg, addr := launchAdmin(t, &h)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^(\s*command\s*=\s*)"([^"]*)"`).ReplaceAllString(string(b), `${1}"/usr/bin/true"`)
	if text == string(b) {
		t.Fatalf("the edit changed nothing:\n%s", text)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Process().Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	d.waitFor(func() bool { return strings.Contains(d.Log(), "configuration reloaded") }, "the reload")
	if !regexp.MustCompile(`\[WARN\] .*reload: these changes take effect only after a restart of clawhost: settings="?agent\.command`).MatchString(d.Log()) {
		t.Errorf("no WARN line naming agent.command:\n%s", d.Log())
	}
	var snap admin.Snapshot
	_, body := get(t, "http://"+addr+"/status.json")
	if err := json.Unmarshal([]byte(body), &snap); err != nil || snap.LastReload == nil || snap.LastReload.Refused ||
		!strings.Contains(strings.Join(snap.LastReload.NeedsRestart, "; "), "agent.command") || !slices.Contains(snap.LastReload.Changed, "agent.command") {
		t.Errorf("last_reload: %v %+v", err, snap.LastReload)
	}
}

// TestClaudeAuthRefused: the real claude CLI whose key the fake Anthropic
// API refuses (401) on a turn makes the agent item not_logged_in ("refused
// its credentials"): /healthz 503; the next turn that gets through makes
// it ready again.
func TestClaudeAuthRefused(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	fake := anthropictest.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	addr := sdktest.FreeAddr(t)
	h := loopbackHost(dir, false)
	h.Agent = RealClaude(bin, filepath.Join(dir, "home"), fake.URL(), Attrs{"workspace": filepath.Join(dir, "workspace"), "timeout": "60s", "sandbox": "off"})
	h.Admin = Attrs{"listen": addr}
	d := Launch(t, h.Write(t))
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback")
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/healthz"); return code == 200 }, "a healthy host (claude auth status: api_key)")

	// Every request refused (claude may retry), until a good answer.
	fake.SetResponder(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Unauthorized() })
	d.post("u1", "hello")
	d.nextSend("chat-u1") // the chat is told
	d.waitFor(func() bool {
		code, body := get(t, "http://"+addr+"/healthz")
		return code == 503 && strings.Contains(body, "refused its credentials")
	}, "the agent not_logged_in after the refused turn")

	fake.SetResponder(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Reply{Text: "back in business"} })
	d.post("u1", "again")
	for seen := ""; !strings.Contains(seen, "back in business"); {
		seen += d.nextSend("chat-u1")
	}
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/healthz"); return code == 200 }, "the agent ready after a good turn")
}

// TestStoreDoesNotOpen: a database that does not open stops the start
// with one error that says where the file names it (data_dir for SQLite),
// and no "clawhost started".
func TestStoreDoesNotOpen(t *testing.T) {
	t.Parallel()
	h := Host{Dir: t.TempDir(), Admin: Attrs{"listen": ""}, Plugins: []Plugin{{Name: "lo", Source: "loopback"}}}
	cfg := h.Write(t)
	// The database's file is a directory: SQLite cannot open it.
	if err := os.MkdirAll(filepath.Join(h.Dir, "data", "clawhost.db"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := Command(t, cfg).CombinedOutput()
	if err == nil || !regexp.MustCompile(`\(data_dir at .*config\.hcl:\d+\)`).Match(out) || strings.Contains(string(out), "clawhost started") {
		t.Errorf("start with a database that does not open: %v\n%s", err, out)
	}
}

// TestValidateProbeAndIDForms: validate normalises the ids written for a
// plugin with the forms its plugin declares — an owner no Telegram message
// can carry (an @username) is a warning with the plugin's hint — and
// -probe runs the plugins' live checks: a token the Bot API refuses is an
// error at the block (exit 1, the token never printed), the right one
// prints who the bot is.
func TestValidateProbeAndIDForms(t *testing.T) {
	t.Parallel()
	bin := clClaudeBin(t)
	tg := telegramtest.NewServer(tgToken)
	defer tg.Close()
	validate := func(tok string, args ...string) (int, string, string) {
		dir := t.TempDir()
		agent := RealClaude(bin, filepath.Join(dir, "home"), "http://127.0.0.1:9", Attrs{"workspace": filepath.Join(dir, "workspace")})
		cfg := (&Host{Dir: dir, Agent: agent, Admin: Attrs{"listen": ""}, Access: Attrs{"owners": []string{"tg:@alice", "tg:42"}}, Plugins: []Plugin{
			{Name: "tg", Source: "telegram", Config: Attrs{"token": tok, "api_endpoint": tg.APIEndpoint()}},
		}}).Write(t)
		var out, errb bytes.Buffer
		rc := run(append(append([]string{"validate"}, args...), "-config", cfg), &out, &errb)
		return rc, out.String(), errb.String()
	}
	rc, out, errs := validate(tgToken)
	if rc != 0 || !strings.Contains(errs, "Entry never matches in access.owners") || !strings.Contains(errs, "never @usernames") || strings.Contains(out, "the bot is") {
		t.Errorf("validate: exit %d\n%s\n%s", rc, out, errs)
	}
	rc, out, errs = validate(tgToken, "-probe")
	if rc != 0 || !strings.Contains(out, `plugin "tg" (telegram): the bot is @clawbot`) {
		t.Errorf("validate -probe, the right token: exit %d\n%s\n%s", rc, out, errs)
	}
	bad := "123:refused-token-xyz"
	rc, out, errs = validate(bad, "-probe")
	if rc != 1 || !strings.Contains(errs, "Live check failed: token") || strings.Contains(out+errs, bad) {
		t.Errorf("validate -probe, a refused token: exit %d\n%s\n%s", rc, out, errs)
	}
}

// TestNoChannelIsNotHealthy: a host none of whose plugins is enabled (a
// container started without a token) is not healthy: /healthz is 503
// saying no channel is configured and what to do, clawhost status says it
// and exits 1, the page shows it and the start's log warns; once a
// reload enables a channel (the web chat) /healthz is 200.
func TestNoChannelIsNotHealthy(t *testing.T) {
	t.Parallel()
	web := sdktest.FreeAddr(t)
	h := Host{Dir: t.TempDir(), Plugins: []Plugin{{Name: "web", Source: "webchat",
		Attrs:  Attrs{"enabled": Expr(`env("CLAWHOST_TEST_UNSET_TOKEN", "") != ""`)},
		Config: Attrs{"listen": web}}}}
	d, cfg, addr := launchAdmin(t, &h)
	code, body := get(t, "http://"+addr+"/healthz")
	if code != 503 || !strings.Contains(body, `"channels":{"state":"none"`) || !strings.Contains(body, "no channel is configured") ||
		!strings.Contains(body, "enable a channel plugin in config.hcl") {
		t.Errorf("/healthz: %d %s", code, body)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"status", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(out.String(), "channels: NONE: no channel is configured") {
		t.Errorf("clawhost status: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"healthcheck", "-config", cfg}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "no channel is configured") {
		t.Errorf("clawhost healthcheck: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	if _, page := get(t, "http://"+addr+"/"); !strings.Contains(page, "no channel is configured") {
		t.Errorf("the page does not say no channel is configured:\n%s", page)
	}
	d.waitFor(func() bool { return strings.Contains(d.Log(), "clawhost is not healthy: no channel is configured") }, "the start's warning")

	h.Plugins[0].Attrs = nil
	h.Write(t)
	out.Reset()
	errb.Reset()
	if rc := run([]string{"reload", "-config", cfg}, &out, &errb); rc != 0 {
		t.Fatalf("clawhost reload: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	d.waitFor(func() bool { code, _ := get(t, "http://"+addr+"/healthz"); return code == 200 }, "/healthz 200 with the web chat enabled")
}
