package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// The test binary doubles as the helpers `clawhost plugin test` runs:
// with CLAWHOST_TEST_INJECT set it is an -inject command for the loopback
// API (POST /inbound at the address in lo.addr of the plugin's data dir);
// with CLAWHOST_TEST_PLUGIN set it is a deliberately faulty plugin. It runs
// from init, before TestMain, so main_test.go stays as it is.
func init() {
	if os.Getenv("CLAWHOST_TEST_INJECT") != "" {
		os.Exit(injectHelper())
	}
	if u := os.Getenv("CLAWHOST_TEST_SLACK_INJECT"); u != "" {
		os.Exit(slackInjectHelper(u))
	}
	if mode := os.Getenv("CLAWHOST_TEST_PLUGIN"); mode != "" {
		faultyPlugin(mode)
	}
}

// injectHelper posts $CLAWHOST_TEST_TEXT to the loopback API of the plugin
// whose data dir is $CLAWHOST_TEST_DATA_DIR.
func injectHelper() int {
	addr, err := os.ReadFile(filepath.Join(os.Getenv("CLAWHOST_TEST_DATA_DIR"), "lo.addr"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "inject:", err)
		return 1
	}
	// As a platform does (deliverInbound): a 503 is sent again with the same id.
	code, err := deliverInbound(string(addr), map[string]any{"chat_id": "c1", "sender_id": "u1", "text": os.Getenv("CLAWHOST_TEST_TEXT")})
	if err != nil || code == http.StatusServiceUnavailable {
		fmt.Fprintln(os.Stderr, "inject:", err, code)
		return 1
	}
	return 0
}

// slackInjectHelper posts $CLAWHOST_TEST_TEXT as a DM to the fake Slack's
// control endpoint u (slacktest.ControlPost; channel and user in its
// query), dropping what an earlier plugin process left unacknowledged.
func slackInjectHelper(u string) int {
	q, err := url.Parse(u)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inject:", err)
		return 1
	}
	form := url.Values{"channel": {q.Query().Get("channel")}, "user": {q.Query().Get("user")}, "text": {os.Getenv("CLAWHOST_TEST_TEXT")}, "forget": {"1"}}
	resp, err := http.PostForm(q.Scheme+"://"+q.Host+q.Path, form)
	if err != nil {
		fmt.Fprintln(os.Stderr, "inject:", err)
		return 1
	}
	resp.Body.Close()
	return 0
}

// TestPluginTestSlack: `clawhost plugin test` passes every check against
// the clawhost-slack binary on the fake Slack, its inbound checks fed
// through the fake's control endpoint.
func TestPluginTestSlack(t *testing.T) {
	t.Parallel()
	srv := slacktest.NewServer(slBotToken, slAppToken)
	t.Cleanup(srv.Close)
	dm := srv.AddDM(slAlice).ID
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"bot_token":%q,"app_token":%q,"api_endpoint":%q}`, slBotToken, slAppToken, srv.Endpoint())
	inject := fmt.Sprintf("CLAWHOST_TEST_SLACK_INJECT='%s%s?channel=%s&user=%s' exec '%s'", srv.Endpoint(), slacktest.ControlPost, dm, slAlice.ID, exe)
	code, out, errOut := runPluginTest(t, "-config-json", cfg, "-inject", inject, filepath.Join(binDir(t), "clawhost-slack"))
	if code != 0 || !strings.Contains(out, " 0 failed, 0 skipped") || !strings.Contains(out, "PASS  receive_ack_redeliver") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, slBotToken) {
		t.Error("the token shows")
	}
}

// badCommands lists a command with a name the host cannot match.
type badCommands struct{}

func (badCommands) Commands() []sdkcommand.Spec {
	return []sdkcommand.Spec{{Name: "Bad Name"}}
}

func (badCommands) Execute(context.Context, sdkcommand.Request) (sdkcommand.Response, error) {
	return sdkcommand.Response{}, nil
}

// badReplies lists /report well but answers it with replies the host
// cannot use: an unknown format, a file by a relative path, an empty reply.
type badReplies struct{}

func (badReplies) Commands() []sdkcommand.Spec {
	return []sdkcommand.Spec{{Name: "report", Description: "a report"}}
}

func (badReplies) Execute(context.Context, sdkcommand.Request) (sdkcommand.Response, error) {
	return sdkcommand.Response{Replies: []sdkcommand.Reply{
		{Text: "<b>10</b>", Format: "html"},
		{Text: "see the file", Media: []channel.OutboundMedia{{Path: "report.txt"}}},
		{},
	}}, nil
}

// stuckChannel's Run ignores cancellation: the sdk waits for it, logs a
// warning and exits late.
type stuckChannel struct{}

func (stuckChannel) Capabilities() channel.Capabilities {
	return channel.Capabilities{MaxTextLength: 100}
}
func (stuckChannel) Run(context.Context, channel.Inbox) error {
	select {}
}
func (stuckChannel) Send(context.Context, channel.SendRequest) (channel.SendResponse, error) {
	return channel.SendResponse{MessageIDs: []string{"1"}}, nil
}

// faultyPlugin serves a plugin with one fault: "badcommands" lists an
// invalid command, "badreplies" answers with replies the host cannot use,
// "stuck" does not stop cleanly.
func faultyPlugin(mode string) {
	switch mode {
	case "badcommands":
		os.Exit(sdk.Serve(sdk.Plugin{Name: "faulty", Command: badCommands{}}))
	case "stuck":
		os.Exit(sdk.Serve(sdk.Plugin{Name: "faulty", Channel: stuckChannel{}}))
	case "badreplies":
		os.Exit(sdk.Serve(sdk.Plugin{Name: "faulty", Command: badReplies{}}))
	}
	os.Exit(3)
}

// wrapper writes a script that runs the test binary with env set: the
// plugin under test gets a minimal environment, so a variable must be set
// by the program clawhost starts.
func wrapper(t *testing.T, env string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plugin.sh")
	sdktest.WriteExecutable(t, path, []byte(fmt.Sprintf("#!/bin/sh\n%s exec '%s'\n", env, exe)), 0o700)
	return path
}

// injectFlag is the -inject command of the loopback API.
func injectFlag(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("CLAWHOST_TEST_INJECT=1 exec '%s'", exe)
}

// runPluginTest runs the real `clawhost plugin test` with args and returns
// its exit code, stdout and stderr.
func runPluginTest(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir(t), "clawhost"), append([]string{"plugin", "test"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestPluginTestGo: `clawhost plugin test` passes the Go examples of each
// kind, the loopback channel with every inbound check, and fails faulty
// plugins with one FAIL line naming the check; the git plugin answers /git
// in the directory -workdir names: output on stdout that is not
// the handshake, an invalid command list, a plugin that does not stop
// cleanly on SIGTERM.
func TestPluginTestGo(t *testing.T) {
	t.Parallel()
	bin := binDir(t)
	garbage := filepath.Join(t.TempDir(), "garbage.sh")
	sdktest.WriteExecutable(t, garbage, []byte("#!/bin/sh\necho hello\n"), 0o700)
	// The git plugin's chat directory: a repository with a change.
	gitWorkdir := filepath.Join(t.TempDir(), "repo")
	gitRepo(t, gitWorkdir)
	writeFile(t, filepath.Join(gitWorkdir, "README.md"), "hello\nchanged\n")
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		want  []string
		avoid []string
	}{
		{"loopback", []string{"-config-json", `{"addr_file":"lo.addr"}`, "-inject", injectFlag(t), filepath.Join(bin, "clawhost-loopback")}, 0,
			[]string{"PASS  receive_ack_redeliver", "PASS  send ", "PASS  stop ", "PASS  channel_describe", "13 passed, 0 failed, 0 skipped", "PASS  nack_redeliver", "PASS  text_limit", "PASS  unknown_chat"}, []string{"FAIL", "SKIP"}},
		{"loopback without inject", []string{filepath.Join(bin, "clawhost-loopback")}, 0,
			[]string{"SKIP  receive_ack_redeliver", "SKIP  send ", "SKIP  optional_capabilities", "SKIP  text_limit", "PASS  unknown_chat", "8 passed, 0 failed, 5 skipped"}, []string{"FAIL"}},
		{"channel template as it is", []string{"-inject", `printf %s "$CLAWHOST_TEST_TEXT" > spool/$$.tmp && mv spool/$$.tmp spool/inbox/$(date +%s%N).txt`, filepath.Join(bin, "clawhost-channel-template")}, 0,
			[]string{"PASS  receive_ack_redeliver", "PASS  nack_redeliver", "PASS  send ", "PASS  text_limit", "PASS  unknown_chat", "13 passed, 0 failed, 0 skipped"}, []string{"FAIL", "SKIP"}},
		{"ping", []string{filepath.Join(bin, "clawhost-ping")}, 0, []string{"PASS  list_commands          ", "/ping", "SKIP  execute", "7 passed, 0 failed, 1 skipped"}, nil},
		{"ping -exec", []string{"-exec", "/ping hello", filepath.Join(bin, "clawhost-ping")}, 0,
			[]string{"PASS  execute", "/ping: 1 replies (plain)", "8 passed, 0 failed, 0 skipped"}, nil},
		{"ping -exec /report", []string{filepath.Join(bin, "clawhost-ping"), "-exec", "/report"}, 0,
			[]string{"PASS  execute", "/report: 2 replies (markdown, plain +1 file)", "8 passed, 0 failed"}, nil},
		{"ping -exec unlisted", []string{"-exec", "/nope", filepath.Join(bin, "clawhost-ping")}, 1,
			[]string{"FAIL  execute", "the plugin lists no /nope", "7 passed, 1 failed"}, nil},
		{"bad replies", []string{"-exec", "/report now", wrapper(t, "CLAWHOST_TEST_PLUGIN=badreplies")}, 1,
			[]string{"FAIL  execute", `reply 1: format "html"`, `reply 2: file "report.txt": want an absolute path`, "reply 3 has neither text nor a file", "PASS  list_commands"}, nil},
		{"git -exec -workdir", []string{"-exec", "/git", "-workdir", gitWorkdir, "-config-json", `{"remote":"/nonexistent.git"}`, filepath.Join(bin, "clawhost-git")}, 0,
			[]string{"PASS  execute", "/git: 1 replies (markdown)", "PASS  list_tools", "PASS  call_tools", "0 failed, 0 skipped"}, []string{"tool error"}},
		{"git -exec diff", []string{"-exec", "/git diff", "-workdir", gitWorkdir, filepath.Join(bin, "clawhost-git")}, 0,
			[]string{"PASS  execute", "0 failed, 0 skipped"}, nil},
		{"git without a workdir", []string{"-exec", "/git", filepath.Join(bin, "clawhost-git")}, 0,
			[]string{"PASS  execute", "refused the input", "no agent directory"}, nil},
		{"clock-hook", []string{filepath.Join(bin, "clawhost-clock-hook")}, 0, []string{"PASS  before_agent_start", "7 passed, 0 failed"}, nil},
		{"stdout garbage", []string{garbage}, 1, []string{"FAIL  handshake", "Unrecognized remote plugin message: hello"}, []string{"PASS"}},
		{"bad command list", []string{wrapper(t, "CLAWHOST_TEST_PLUGIN=badcommands")}, 1,
			[]string{"FAIL  list_commands", `name "Bad Name"`, `/Bad Name has no description`, "6 passed, 1 failed"}, nil},
		{"stuck channel", []string{"-grace", "10s", wrapper(t, "CLAWHOST_TEST_PLUGIN=stuck")}, 1,
			[]string{"FAIL  stop", "channel did not stop within 2s", "PASS  describe"}, nil},
		{"missing binary", []string{filepath.Join(bin, "clawhost-nonexistent")}, 2, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := runPluginTest(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, a := range tc.avoid {
				if strings.Contains(out, a) {
					t.Errorf("stdout has %q", a)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out, errs)
			}
		})
	}
}

// pythonPlugin returns the path of the Python example, built by make build,
// or skips the test when it or Debian's python3-grpcio is missing, unless
// CLAWHOST_REQUIRE_PYTHON=1 (make test sets it).
func pythonPlugin(t *testing.T) string {
	t.Helper()
	need := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CLAWHOST_REQUIRE_PYTHON") == "1" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (CLAWHOST_REQUIRE_PYTHON=1 makes this a failure)", args...)
	}
	path := filepath.Join(binDir(t), "clawhost-python-echo")
	if _, err := os.Stat(path); err != nil {
		need("the Python example is not built (make build): %v", err)
	}
	if out, err := exec.Command("/usr/bin/python3", "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		need("Debian's python3-grpcio and python3-protobuf are missing (make deps): %v: %s", err, out)
	}
	return path
}

// TestPluginTestPython: the Python example passes every check of
// `clawhost plugin test`, the channel's inbound checks and its tool's
// included.
func TestPluginTestPython(t *testing.T) {
	t.Parallel()
	path := pythonPlugin(t)
	code, out, errs := runPluginTest(t, "-config-json", `{"addr_file":"lo.addr"}`, "-inject", injectFlag(t), "-exec", "/echo hi", path)
	if code != 0 || !strings.Contains(out, "18 passed, 0 failed, 0 skipped") || !strings.Contains(out, "/echo: 1 replies (plain)") ||
		!strings.Contains(out, "count_words: 1 words (asked in conformance:c1 by u1)") {
		t.Errorf("exit %d, want every check passed:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// TestPythonPluginEndToEnd: the Python example, as the only plugin of a
// real clawhost, is its chat (a message reaches the agent and the reply
// comes back through it), its message_received hook (a blocked word
// dropped with its reason, a rewrite) and answers /echo; a reload that changes its
// config restarts it; a stop ends it; and through all of it the host logs
// no WARN or ERROR line.
func TestPythonPluginEndToEnd(t *testing.T) {
	t.Parallel()
	py := pythonPlugin(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.hcl")
	addrFile := filepath.Join(dir, "py.addr")
	// The Python example as the only plugin (its directory is plugin_dir).
	write := func(limit int) {
		h := Host{Dir: dir, PluginDir: filepath.Dir(py), Admin: Attrs{"listen": ""},
			Access:  Attrs{"dm_policy": "allowlist", "allow_from": []string{"py:u1"}},
			Plugins: []Plugin{{Name: "py", Source: "python-echo", Config: Attrs{"addr_file": addrFile, "text_limit": limit, "blocked": []string{"password"}}}}}
		h.Write(t)
	}
	write(4000)
	d := Launch(t, cfgPath)
	d.addrFile = addrFile
	d.waitFor(func() bool { _, err := os.Stat(d.addrFile); return err == nil }, "the Python plugin's address file")
	pid := pythonPID(d)

	is := func(want string) func(string) bool { return func(got string) bool { return got == want } }
	for _, ex := range []struct {
		send, what string
		ok         func(got string) bool
	}{
		{"hello python", "want the agent's echo through the Python channel", func(got string) bool {
			return strings.HasPrefix(got, "echo: ") && strings.Contains(got, "hello python")
		}},
		// Its message_received hook: a blocked word drops the message
		// with the plugin's reason; :shrug: reaches the agent written out.
		{"my password is hunter2", "a blocked word: want the hook's reason", is("Messages with 'password' are not passed to the agent.")},
		// (The agent's echo is markdown: the shrug's backslash escapes the
		// underscore when the reply is rendered.)
		{"well :shrug:", "the hook's rewrite did not reach the agent", func(got string) bool {
			return strings.Contains(got, "well ¯") && strings.Contains(got, "(ツ)_/¯")
		}},
		{"/echo über 🐍", "/echo", is("über 🐍")},
		{"/echo", "/echo without text: want the plugin's invalid_request message", is("usage: /echo TEXT")},
	} {
		d.post("u1", ex.send)
		if got := d.nextSend("chat-u1"); !ex.ok(got) {
			t.Errorf("%q: %s; got %q", ex.send, ex.what, got)
		}
	}

	// A changed config block restarts the instance.
	_ = os.Remove(addrFile)
	write(3000)
	_ = d.cmd.Process.Signal(syscall.SIGHUP)
	d.waitFor(func() bool { _, err := os.Stat(d.addrFile); return err == nil && !alive(pid) }, "the Python plugin restarted with its new config")
	d.after = 0
	d.post("u1", "/echo again")
	if got := d.nextSend("chat-u1"); got != "again" {
		t.Errorf("/echo after the reload: got %q", got)
	}
	pid = pythonPID(d)

	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	if err := d.cmd.Wait(); err != nil {
		t.Errorf("clawhost exit after SIGTERM: %v", err)
	}
	if alive(pid) {
		t.Errorf("the Python plugin (pid %d) still runs after the host stopped", pid)
	}
	for _, l := range strings.Split(d.log.String(), "\n") {
		if strings.Contains(l, "[WARN]") || strings.Contains(l, "[ERROR]") {
			t.Errorf("host logged: %s", l)
		}
	}
	if t.Failed() {
		t.Logf("clawhost log:\n%s", d.log.String())
	}
}

// pythonPID returns the pid of the Python plugin the daemon runs (its
// executable is the interpreter; its command line names the plugin).
func pythonPID(d *daemon) int {
	d.t.Helper()
	pid := 0
	d.waitFor(func() bool {
		for _, p := range children(d.cmd.Process.Pid) {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); strings.Contains(string(b), "clawhost-python-echo") && alive(p) {
				pid = p
				return true
			}
		}
		return false
	}, "the Python plugin process")
	return pid
}

// TestPluginSchema: `clawhost plugin schema` starts a plugin as the host
// does and prints the config attributes it declares — by source (found
// beside clawhost) and by path, as a table and as JSON.
func TestPluginSchema(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(binDir(t), "clawhost")
	out, err := exec.Command(bin, "plugin", "schema", "telegram").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"config {} of clawhost-telegram", "token", "string (sensitive)", "required", "api_endpoint", "webhook_listen"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the table has no %q:\n%s", want, out)
		}
	}
	out, err = exec.Command(bin, "plugin", "schema", "-json", filepath.Join(binDir(t), "clawhost-webchat")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var attrs []struct {
		Name      string
		Sensitive bool
	}
	if err := json.Unmarshal(out, &attrs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	found := false
	for _, a := range attrs {
		found = found || a.Name == "access_token" && a.Sensitive
	}
	if !found {
		t.Errorf("the web chat's schema has no sensitive access_token: %s", out)
	}
}

// TestPluginRelativePath: `clawhost plugin schema` and `clawhost plugin
// test` take a plugin binary by a path relative to the working directory
// (the plugin starts in a directory of its own, so the path must not be
// looked up from there).
func TestPluginRelativePath(t *testing.T) {
	t.Parallel()
	dir := binDir(t)
	for _, args := range [][]string{{"plugin", "schema", "./clawhost-whoami-tool"}, {"plugin", "test", "./clawhost-whoami-tool"}} {
		cmd := exec.Command(filepath.Join(dir, "clawhost"), args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "whoami") {
			t.Errorf("clawhost %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
