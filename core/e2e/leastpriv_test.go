package e2e

// Least privilege, end to end through the real binary, the real claude CLI
// and the fake Anthropic API: claude runs under the bot's settings, not the
// operator's; in a sandbox that hides data_dir, the config file and the
// operator's ~/.claude; as another user with run_as; and no process of
// clawhost's user can read the host's or a plugin's environment.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// lpToolResult is the text of the tool_result in the fake API's n-th
// request (the one claude sends after running the scripted tool).
func lpToolResult(t *testing.T, h *clHost, n int) string {
	t.Helper()
	req := h.request(n, 60*time.Second)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				return b.ResultText()
			}
		}
	}
	t.Fatalf("request %d carries no tool_result", n)
	return ""
}

// lpNeedBwrap skips without bubblewrap, unless CLAWHOST_REQUIRE_CLAUDE=1.
func lpNeedBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_CLAUDE") == "1" {
			t.Fatalf("bwrap not installed (make bubblewrap): %v", err)
		}
		t.Skip("bwrap not installed (make bubblewrap installs Debian's bubblewrap); set CLAWHOST_REQUIRE_CLAUDE=1 to fail instead")
	}
}

// TestClaudeOperatorSettingsIgnored: the operator's ~/.claude/settings.json
// allows `env` without asking and has a hook. By default (settings =
// "project") neither applies: the model's `env` is refused and the hook
// never runs. settings = "user" is the operator opting in: both apply.
func TestClaudeOperatorSettingsIgnored(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		settings string
		applies  bool
	}{{"", false}, {"user", true}} {
		t.Run("settings="+tc.settings, func(t *testing.T) {
			t.Parallel()
			agent := Attrs{}
			if tc.settings != "" {
				agent["settings"] = tc.settings
			}
			var hookRan string
			h := startClaudeHost(t, clOptions{agent: agent, setup: func(dir string) {
				hookRan = filepath.Join(dir, "workspace", "hook-ran")
				settings, _ := json.Marshal(map[string]any{
					"permissions": map[string]any{"allow": []string{"Bash(env:*)"}},
					"hooks": map[string]any{"UserPromptSubmit": []any{map[string]any{
						"hooks": []any{map[string]any{"type": "command", "command": "touch " + hookRan}}}}},
				})
				writeFile(t, filepath.Join(dir, "home", ".claude", "settings.json"), string(settings))
				if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
					t.Fatal(err)
				}
			}})
			h.fake.Enqueue(anthropictest.Reply{Text: "Looking.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "env", "description": "show the environment"}}},
				anthropictest.Reply{Text: "Done looking."})
			h.post("u1", "what is in your environment?")
			h.waitSend("chat-u1", 0, 60*time.Second)
			result := lpToolResult(t, h, 2)
			if ran := strings.Contains(result, "PATH="); ran != tc.applies {
				t.Errorf("env ran unasked: %v, want %v; tool result:\n%s", ran, tc.applies, result)
			}
			_, err := os.Stat(hookRan)
			if hooked := err == nil; hooked != tc.applies {
				t.Errorf("the operator's hook ran: %v, want %v", hooked, tc.applies)
			}
			if args := strings.Join(clCmdline(h.claudePIDsOrFail()[0]), " "); !strings.Contains(args, "--permission-mode default") || !strings.Contains(args, "--strict-mcp-config") {
				t.Errorf("claude's argv %q", args)
			}
		})
	}
}

// claudePIDsOrFail is claudePIDs, at least one.
func (h *clHost) claudePIDsOrFail() []int {
	h.t.Helper()
	var pids []int
	sdktest.WaitFor(h.t, "a claude process", func() bool { pids = h.claudePIDs(); return len(pids) > 0 })
	return pids
}

// TestClaudeSandbox: with the default sandbox = "auto" and bubblewrap
// installed, a tool claude runs cannot read data_dir (the database), the
// config file (absent: its directory is hidden) or the operator's
// ~/.claude, nor the host's environment through /proc; it writes in the
// workspace.
func TestClaudeSandbox(t *testing.T) {
	t.Parallel()
	lpNeedBwrap(t)
	h := startClaudeHost(t, clOptions{agent: Attrs{"allowed_tools": []string{"Bash"}}, setup: func(dir string) {
		writeFile(t, filepath.Join(dir, "home", ".claude", "settings.json"), `{"note":"OPERATOR-PERSONAL"}`)
	}})
	data := filepath.Join(h.dir, "data")
	script := strings.Join([]string{
		"ls -a " + data,
		"head -c 16 " + filepath.Join(data, "clawhost.db"),
		"cat " + h.cfgPath,
		"cat " + filepath.Join(h.dir, "home", ".claude", "settings.json"),
		"cat /proc/" + strconv.Itoa(h.cmd.Process.Pid) + "/environ",
		"echo sandboxed > written.txt && echo wrote",
	}, "; ")
	h.fake.Enqueue(anthropictest.Reply{Text: "Trying.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": script, "description": "look around"}}},
		anthropictest.Reply{Text: "Tried."})
	h.post("u1", "look around")
	h.waitSend("chat-u1", 0, 60*time.Second)
	result := lpToolResult(t, h, 2)
	for _, secret := range []string{"SQLite format", "\nclawhost.db\n", "data_dir", "allow_from", "OPERATOR-PERSONAL", "ANTHROPIC_BASE_URL"} {
		if strings.Contains(result, secret) {
			t.Errorf("the sandbox let the tool see %q:\n%s", secret, result)
		}
	}
	for _, want := range []string{filepath.Join(data, "clawhost.db") + "' for reading: No such file", h.cfgPath + ": No such file", "settings.json: No such file", "wrote"} {
		if !strings.Contains(result, want) {
			t.Errorf("tool result lacks %q:\n%s", want, result)
		}
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, "workspace", "written.txt")); err != nil || string(b) != "sandboxed\n" {
		t.Errorf("write in the workspace: %q %v", b, err)
	}
	if !strings.Contains(h.log.String(), "sandbox=bubblewrap") {
		t.Errorf("the log does not say claude runs in bubblewrap")
	}
}

// TestHostNotDumpable: the host and its plugins clear their dumpable flag,
// so another process of their user cannot read their environment (the
// bot's tokens) from /proc, while /proc/<pid>/statm (the status page's
// memory figures) stays readable. As root the host runs as uid 65534
// (setpriv), so "another process of its user" is not root; a dumpable
// process of that user (the control) shows the check can fail.
func TestHostNotDumpable(t *testing.T) {
	t.Parallel()
	var wrap []string
	if os.Geteuid() == 0 {
		wrap = []string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
	}
	dir := lpSharedDir(t)
	h := Host{Dir: dir, DataDir: filepath.Join(dir, "data"), LogLevel: "-",
		Agent:   Agent{Command: "claude", Attrs: Attrs{"workspace": filepath.Join(dir, "workspace")}},
		Admin:   Attrs{"listen": ""},
		Plugins: []Plugin{{Name: "lo", Source: "loopback", Config: Attrs{"addr_file": "lo.addr"}}}}
	cfg := h.Write(t)
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	lpChown(t, dir)
	log := &sdktest.Log{}
	argv := append(append([]string(nil), wrap...), filepath.Join(binDir(t), "clawhost"), "-config", cfg)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAWHOST_TEST_SECRET=s3cret"}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("clawhost log:\n%s", log.String())
		}
	})
	addr := filepath.Join(dir, "data", "plugins", "lo", "lo.addr")
	sdktest.WaitFor(t, "the loopback plugin's address file", func() bool { b, err := os.ReadFile(addr); return err == nil && len(b) > 0 })
	// The plugin by its binary: the host run as a user other than root starts its
	// agent's recycled sandbox too (bwrap, then the helper in it), a child beside it.
	var plugins []int
	for _, pid := range children(cmd.Process.Pid) {
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); filepath.Base(exe) == "clawhost-loopback" {
			plugins = append(plugins, pid)
		}
	}
	if len(plugins) == 0 {
		t.Fatalf("no plugin process among the host's children %v", children(cmd.Process.Pid))
	}
	argv = append(append([]string(nil), wrap...), "sleep", "60")
	control := exec.Command(argv[0], argv[1:]...)
	control.Env = []string{"PATH=" + os.Getenv("PATH"), "CLAWHOST_TEST_SECRET=s3cret"}
	if err := control.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = control.Process.Kill(); _ = control.Wait() })
	// Until setpriv has exec'd sleep (its own uid from then on).
	sdktest.WaitFor(t, "the control process to exec sleep", func() error {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", control.Process.Pid))
		return sdktest.Saw(strings.TrimSpace(string(b)) == "sleep", "it runs %q", b)
	})
	for _, tc := range []struct {
		name     string
		pid      int
		readable bool
	}{{"host", cmd.Process.Pid, false}, {"plugin", plugins[0], false}, {"control", control.Process.Pid, true}} {
		environ := lpReadAs(wrap, fmt.Sprintf("/proc/%d/environ", tc.pid))
		if got := strings.Contains(environ, "s3cret") || strings.Contains(environ, "PATH="); got != tc.readable {
			t.Errorf("%s: environ readable by its user: %v, want %v", tc.name, got, tc.readable)
		}
		if statm := lpReadAs(wrap, fmt.Sprintf("/proc/%d/statm", tc.pid)); len(strings.Fields(statm)) < 3 {
			t.Errorf("%s: statm unreadable: %q", tc.name, statm)
		}
	}
}

// lpSharedDir is a temporary directory other users may enter (t.TempDir's
// parent is private to root).
func lpSharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "clawhost-lp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lpChown gives dir and everything in it to uid 65534 when the test runs as
// root.
func lpChown(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Lchown(p, 65534, 65534)
		}
		return err
	})
}

// lpReadAs is the content of path as a process started with wrap (another
// process of the user under test) sees it; "" when it cannot read it.
func lpReadAs(wrap []string, path string) string {
	args := append(append([]string(nil), wrap...), "cat", path)
	b, _ := exec.Command(args[0], args[1:]...).Output()
	return string(b)
}

// TestClaudeRunAs: as root, agent.run_as and a plugin's run_as start claude
// (and the tools it runs) and the plugin as uid 65534; the sandbox still
// applies.
func TestClaudeRunAs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("run_as needs clawhost to run as root")
	}
	h := startClaudeHost(t, clOptions{agent: Attrs{"allowed_tools": []string{"Bash"}, "run_as": "nobody"}, setup: func(dir string) {
		lpPrepareRunAs(t, dir, filepath.Join(dir, "workspace"))
	}})
	h.fake.Enqueue(anthropictest.Reply{Text: "Checking.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": "id -u; id -u > whoami.txt", "description": "who am I"}}},
		anthropictest.Reply{Text: "Checked."})
	h.post("u1", "who are you?")
	h.waitSend("chat-u1", 0, 60*time.Second)
	if result := lpToolResult(t, h, 2); !strings.Contains(result, "65534") {
		t.Errorf("tool result %q, want uid 65534", result)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "workspace", "whoami.txt")); strings.TrimSpace(string(b)) != "65534" {
		t.Errorf("whoami.txt %q", b)
	}
	for _, pid := range h.claudePIDsOrFail() {
		if uid := lpUID(t, pid); uid != "65534" {
			t.Errorf("claude pid %d runs as uid %s", pid, uid)
		}
	}
}

// TestClaudeNamedAgentRunAsSandbox: a named agent's own run_as and sandbox
// apply to its claude, not the default agent's. As root, with the default
// agent sandboxed as clawhost's user: agent "public" (run_as = "nobody")
// runs its tools as uid 65534 in the sandbox, agent "open" (sandbox =
// "off") runs them unsandboxed, where data_dir is visible; each chat is
// routed to its agent by the agent's chats binding.
func TestClaudeNamedAgentRunAsSandbox(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("run_as needs clawhost to run as root")
	}
	lpNeedBwrap(t)
	var ws map[string]string
	h := startClaudeHost(t, clOptions{
		agent: Attrs{"allowed_tools": []string{"Bash"}},
		agents: []Agent{
			{ID: "public", Attrs: Attrs{"workspace": "./ws-public", "run_as": "nobody", "chats": []string{"lo:chat-u2"}}},
			{ID: "open", Attrs: Attrs{"workspace": "./ws-open", "sandbox": "off", "chats": []string{"lo:chat-u3"}}},
		},
		senders: []string{"u1", "u2", "u3"},
		setup: func(dir string) {
			ws = map[string]string{"main": filepath.Join(dir, "workspace"), "public": filepath.Join(dir, "ws-public"), "open": filepath.Join(dir, "ws-open")}
			lpPrepareRunAs(t, dir, ws["public"], ws["main"], ws["open"])
		},
	})
	db := filepath.Join(h.dir, "data", "clawhost.db")
	for _, tc := range []struct {
		agent, sender string
		uid           string
		sandboxed     bool
	}{
		{"main", "u1", "0", true},
		{"public", "u2", "65534", true},
		{"open", "u3", "0", false},
	} {
		script := "echo AGENT-" + tc.agent + "; id -u; id -u > whoami.txt; test -e " + db + " && echo DB-VISIBLE || echo DB-HIDDEN"
		h.fake.Enqueue(anthropictest.Reply{Text: "Checking.", ToolUse: &anthropictest.ToolUse{Name: "Bash", Input: map[string]any{"command": script, "description": "who am I"}}},
			anthropictest.Reply{Text: "Checked."})
		h.post(tc.sender, "who are you?")
		h.waitSend("chat-"+tc.sender, 0, 60*time.Second)
		result := lpToolResultWith(t, h, "AGENT-"+tc.agent)
		if f := strings.Fields(result); len(f) < 3 || f[1] != tc.uid {
			t.Errorf("agent %s: tool result %q, want uid %s", tc.agent, result, tc.uid)
		}
		if hidden := strings.Contains(result, "DB-HIDDEN"); hidden != tc.sandboxed {
			t.Errorf("agent %s: data_dir hidden from its tools: %v, want %v (sandboxed); tool result %q", tc.agent, hidden, tc.sandboxed, result)
		}
		if b, _ := os.ReadFile(filepath.Join(ws[tc.agent], "whoami.txt")); strings.TrimSpace(string(b)) != tc.uid {
			t.Errorf("agent %s: whoami.txt in its workspace %q, want %s", tc.agent, b, tc.uid)
		}
	}
	for _, want := range []string{"agent=main sandbox=bubblewrap", "agent=public sandbox=bubblewrap", "agent=open sandbox=off"} {
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}

// lpToolResultWith is the text of the first tool_result the fake API was
// sent that contains marker.
func lpToolResultWith(t *testing.T, h *clHost, marker string) string {
	t.Helper()
	var result string
	sdktest.WaitFor(t, "a tool result with "+marker, func() bool {
		for _, req := range h.fake.Requests() {
			for _, m := range req.Messages {
				for _, b := range m.Content {
					if b.Type == "tool_result" && strings.Contains(b.ResultText(), marker) {
						result = b.ResultText()
						return true
					}
				}
			}
		}
		return false
	})
	return result
}

// lpUID is the real uid of pid, from /proc/<pid>/status.
func lpUID(t testing.TB, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			return strings.Fields(rest)[0]
		}
	}
	return ""
}

// writeFile writes content to path, creating its directories.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lpPrepareRunAs does what the operator does for run_as = "nobody" in the
// host's directory dir: the workspace userWS (created with others) is the
// user's (uid 65534), who may pass through the directories above it and
// through data_dir.
func lpPrepareRunAs(t *testing.T, dir, userWS string, others ...string) {
	t.Helper()
	for _, d := range append([]string{userWS, filepath.Join(dir, "data")}, others...) {
		if err := os.MkdirAll(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(userWS, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(filepath.Join(dir, "data"), 0o711); err != nil {
		t.Fatal(err)
	}
}
