package runner

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/internal/asnobody"
	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestForAgent: a named agent's configuration is its own — run_as, sandbox,
// settings, config directory, what the sandbox hides and binds back, its
// timeouts — but for what is the runner's: the slots, one-shot, the state
// directory and how processes are stopped; its MaxWarm is capped by the
// runner's, and a zero timeout is the runner's.
func TestForAgent(t *testing.T) {
	t.Parallel()
	nobody := &runas.User{Name: "nobody", UID: 65534}
	runnerCfg := Config{Name: "main", StateDir: "/state", MaxConcurrent: 3, OneShot: true, PartialMessages: true, MaxRetries: 2, KillGrace: time.Second,
		MaxWarm: 4, Timeout: time.Minute, IdleTimeout: time.Hour, Sandbox: SandboxAuto, Settings: SettingsProject, ConfigDir: "/data/claude"}
	agent := Config{Name: "public", Workspace: "/ws", RunAs: nobody, Sandbox: SandboxOff, Settings: SettingsUser, ConfigDir: "/data/claude-public",
		Hide: []string{"/data"}, Expose: []string{"/data/run/agent"}, IdleTimeout: time.Second, MaxWarm: 9, MaxConcurrent: 7, OneShot: false, StateDir: "/elsewhere"}
	got := runnerCfg.forAgent(agent)
	if got.RunAs != nobody || got.Sandbox != SandboxOff || got.Settings != SettingsUser || got.ConfigDir != "/data/claude-public" ||
		strings.Join(got.Hide, ",") != "/data" || strings.Join(got.Expose, ",") != "/data/run/agent" || got.IdleTimeout != time.Second || got.Workspace != "/ws" {
		t.Errorf("the agent's own settings were not kept: %+v", got)
	}
	if got.StateDir != "/state" || got.MaxConcurrent != 3 || !got.OneShot || !got.PartialMessages || got.MaxRetries != 2 || got.KillGrace != time.Second {
		t.Errorf("the runner's settings were not the runner's: %+v", got)
	}
	if got.MaxWarm != 4 || got.Timeout != time.Minute {
		t.Errorf("MaxWarm %d (want the runner's 4), Timeout %s (want the runner's 1m)", got.MaxWarm, got.Timeout)
	}
	if zero := runnerCfg.forAgent(Config{Name: "z"}); zero.IdleTimeout != time.Hour || zero.Sandbox != SandboxAuto || zero.Settings != SettingsProject || zero.Command != DefaultCommand {
		t.Errorf("zero fields: %+v", zero)
	}
}

// TestConfigDirOfOneUser: agents that share a claude config directory must
// run as one user, since claude's files there are private to the user that
// wrote them.
func TestConfigDirOfOneUser(t *testing.T) {
	t.Parallel()
	main := &Config{Name: "main", ConfigDir: "/data/claude"}
	other := &Config{Name: "public", ConfigDir: "/data/claude", RunAs: &runas.User{Name: "nobody", UID: 65534}}
	err := prepareRunAs(main, map[string]*Config{"public": other})
	if err == nil || !strings.Contains(err.Error(), `agents "main" and "public" share the claude config directory /data/claude`) {
		t.Errorf("error %v", err)
	}
}

// TestFakeAgentSandbox: the sandbox is the agent's — with the runner's
// sandbox "auto" (bubblewrap, hiding data_dir), an agent with sandbox
// "off" runs unsandboxed and sees data_dir — and the status says it per
// agent.
func TestFakeAgentSandbox(t *testing.T) {
	needBwrap(t)
	data := t.TempDir()
	must(t, os.WriteFile(filepath.Join(data, "clawhost.db"), []byte("DATABASE-CONTENT"), 0o600))
	f := newFake(t, func(c *Config) {
		c.Name, c.Sandbox, c.Hide = "main", SandboxAuto, []string{data}
		// The fake writes its log where the sandbox lets it.
		c.Env["FAKE_CLAUDE_STATE"] = filepath.Join(c.Workspace, "state")
		must(t, os.MkdirAll(c.Env["FAKE_CLAUDE_STATE"], 0o700))
		open := *c
		open.Workspace, open.Sandbox = t.TempDir(), SandboxOff
		c.Agents = map[string]Config{"open": open}
	})
	// main's bubblewrap is recycled or per start as this machine allows (the default).
	f.r.waitZygotes()
	if got, want := f.r.SandboxState(), regexp.MustCompile(`^main: bubblewrap( \((recycled|per start: .+)\))?; open: off$`); !want.MatchString(got) {
		t.Errorf("SandboxState %q, want %s", got, want)
	}
	for _, tc := range []struct {
		agent   string
		visible bool
	}{{"main", false}, {"open", true}} {
		res := runTurn(t, f.r, TurnRequest{Key: tc.agent, Agent: tc.agent, SessionID: uuid.NewString(), NewSession: true, Prompt: "sh:cat " + filepath.Join(data, "clawhost.db")})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if got := strings.Contains(res.Text, "DATABASE-CONTENT"); got != tc.visible {
			t.Errorf("agent %s sees data_dir: %v, want %v (%q)", tc.agent, got, tc.visible, res.Text)
		}
	}
}

// TestFakeAgentIdleTimeout: a warm process is stopped after its own agent's
// idle_timeout, not the runner's.
func TestFakeAgentIdleTimeout(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(c *Config) {
		c.Name, c.IdleTimeout = "main", time.Hour
		brief := *c
		brief.IdleTimeout = 200 * time.Millisecond
		c.Agents = map[string]Config{"brief": brief}
	})
	a := runTurn(t, f.r, TurnRequest{Key: "a", SessionID: uuid.NewString(), NewSession: true, Prompt: "a"})
	mustOK(t, a, "echo: a")
	b := runTurn(t, f.r, TurnRequest{Key: "b", Agent: "brief", SessionID: uuid.NewString(), NewSession: true, Prompt: "b"})
	mustOK(t, b, "echo: b")
	waitGone(t, b.PID, 3*time.Second)
	if w := f.r.Warm(); w["a"] == 0 || w["b"] != 0 {
		t.Errorf("warm %v: want main's process only", w)
	}
}

// TestOwnMCPConfig: a process running as a user that does not own the
// session's MCP config file gets a copy of its own (0600, that user's) in
// its TMPDIR; the file itself when the user owns it, or claude runs as the
// host's user; a JSON string as it is.
func TestOwnMCPConfig(t *testing.T) {
	t.Parallel()
	nobody := asnobody.Nobody(t, "give files to another user")
	dir, tmp := t.TempDir(), t.TempDir()
	hosts, theirs := filepath.Join(dir, "host.json"), filepath.Join(dir, "theirs.json")
	must(t, os.WriteFile(hosts, []byte(`{"mcpServers":{}}`), 0o600))
	must(t, os.WriteFile(theirs, []byte(`{"mcpServers":{}}`), 0o600))
	must(t, nobody.Chown(theirs))
	r := &Runner{}
	for _, tc := range []struct {
		name string
		c    *Config
		mcp  string
		want string
	}{
		{"the host's file, claude as nobody", &Config{RunAs: nobody}, hosts, filepath.Join(tmp, "mcp-config.json")},
		{"nobody's file", &Config{RunAs: nobody}, theirs, theirs},
		{"claude as the host's user", &Config{}, hosts, hosts},
		{"a JSON string", &Config{RunAs: nobody}, `{"mcpServers":{}}`, `{"mcpServers":{}}`},
		{"none", &Config{RunAs: nobody}, "", ""},
	} {
		got, err := r.ownMCPConfig(tc.c, tc.mcp, tmp)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, got, err, tc.want)
		}
	}
	fi, err := os.Stat(filepath.Join(tmp, "mcp-config.json"))
	if err != nil || fi.Mode() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != nobody.UID {
		t.Errorf("the copy: %v %v, want 0600 nobody's", fi, err)
	}
}

// TestFakeRunAsWarmWithHostsMCPConfig: a claude running as a user that does
// not own the session's MCP config file runs with a copy of it, and its next
// turn with the same file is still its own: the warm process is matched by
// the file the turn names, not by the copy (it was restarted at every turn).
func TestFakeRunAsWarmWithHostsMCPConfig(t *testing.T) {
	t.Parallel()
	nobody := asnobody.Nobody(t, "run claude as another user")
	// nobody must reach the fake (this test binary) and its own directories.
	open, err := os.MkdirTemp("", "runas-warm-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(open) })
	must(t, os.Chmod(open, 0o755))
	exe, err := os.Executable()
	must(t, err)
	b, err := os.ReadFile(exe)
	must(t, err)
	fake := filepath.Join(open, "claude")
	sdktest.WriteExecutable(t, fake, b, 0o755)
	state, ws := filepath.Join(open, "state"), filepath.Join(open, "ws")
	for _, d := range []string{state, ws} {
		must(t, os.Mkdir(d, 0o700))
		must(t, nobody.Chown(d))
	}
	mcp := filepath.Join(t.TempDir(), "session-mcp.json") // the host's, 0600
	must(t, os.WriteFile(mcp, []byte(`{"mcpServers":{}}`), 0o600))
	f := newFake(t, func(c *Config) {
		c.Command, c.Workspace, c.RunAs, c.StateDir = fake, ws, nobody, filepath.Join(open, "runner")
		c.Env["FAKE_CLAUDE_STATE"] = state
	})
	sid := uuid.NewString()
	a := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, NewSession: true, Prompt: "hi", MCPConfig: mcp})
	mustOK(t, a, "echo: hi")
	c := runTurn(t, f.r, TurnRequest{Key: "k", SessionID: sid, Prompt: "again", MCPConfig: mcp})
	mustOK(t, c, "echo: again")
	if c.NewProcess || a.PID != c.PID {
		t.Fatalf("the second turn started claude again (pids %d, %d)", a.PID, c.PID)
	}
}
