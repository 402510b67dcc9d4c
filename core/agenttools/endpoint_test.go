package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/clawhost/clawhost/core/command"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/runas"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// added records the entries the tool adds.
type added struct {
	mu      sync.Mutex
	entries []command.ScheduleEntry
}

func (s *added) Add(_ context.Context, e command.ScheduleEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, e)
	return nil
}

// startAgentAPI starts the tool endpoint in a fresh run directory.
func startAgentAPI(t *testing.T, log io.Writer) *Endpoint {
	t.Helper()
	a := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Output: log}), Schedules: &added{}})
	if err := a.Start(filepath.Join(t.TempDir(), "run", "agent")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return a
}

// unixClient talks HTTP over the unix socket at path.
func unixClient(path string) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}
}

// A chat's token schedules into that chat only; a bad time or an empty
// text is refused. The token reaches the bridge through a 0600 file's
// env map, never through an argument.
func TestAgentAPIScheduleIsBoundToTheChat(t *testing.T) {
	t.Parallel()
	a := startAgentAPI(t, &strings.Builder{})
	path, tools := a.Tools(sessionkey.Key{Agent: "main", Chat: "tg:direct:1"}, &message.Message{Instance: "tg", ChatID: "42", ChatType: channel.ChatDirect, From: "tg:7"})
	if len(tools) != 1 || tools[0] != ScheduleTool || filepath.Dir(path) != a.dir {
		t.Fatalf("tools %q, config %q; want a file in %s", tools, path, a.dir)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, a.dir: 0o700, a.sock: 0o600} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", p, fi, err, want)
		}
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("MCP config %s: %v %s", path, err, b)
	}
	srv := cfg.MCPServers["clawhost"]
	tok := a.token("tg:42", "", false, "main")
	if strings.Join(srv.Args, " ") != "mcp-schedule" || srv.Env[EnvAgentToken] != tok || srv.Env[EnvAgentChat] != "tg:42" || srv.Env[EnvAgentSocket] != a.sock {
		t.Errorf("MCP server %+v: want args [mcp-schedule] and the token, chat and socket in env", srv)
	}
	client := unixClient(a.sock)
	post := func(chat, token string, at time.Time, text string) int {
		b, _ := json.Marshal(map[string]any{"token": token, "chat": chat, "agent": "main", "at": at, "text": text})
		resp, err := client.Post("http://clawhost/schedule", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	soon := time.Now().Add(time.Hour)
	if code := post("tg:43", tok, soon, "x"); code != http.StatusForbidden {
		t.Errorf("another chat with this token: %d", code)
	}
	if code := post("tg:42", tok, time.Now().Add(-time.Hour), "x"); code != http.StatusBadRequest {
		t.Errorf("a past time: %d", code)
	}
	if code := post("tg:42", tok, soon, " "); code != http.StatusBadRequest {
		t.Errorf("an empty text: %d", code)
	}
	if code := post("tg:42", tok, time.Now().Add(400*24*time.Hour), "x"); code != http.StatusBadRequest {
		t.Errorf("two years ahead: %d", code)
	}
	if code := post("tg:42", tok, soon, "remind me"); code != http.StatusOK {
		t.Fatalf("a valid call: %d", code)
	}
	s := a.schedules.(*added)
	if len(s.entries) != 1 || s.entries[0].Chat != "tg:42" || s.entries[0].Prompt != "remind me" || s.entries[0].Sender != "tg:7" || !s.entries[0].At.Equal(soon) {
		t.Errorf("added %+v", s.entries)
	}
}

// TestAgentAPIPeerCheck: a connection whose SO_PEERCRED uid is not
// allowed is closed before a byte of HTTP is read; an allowed one is
// served.
func TestAgentAPIPeerCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		allowed []int
		served  bool
	}{
		{"own uid", []int{os.Getuid()}, true},
		{"added uid", []int{os.Getuid() + 1000, os.Getuid()}, true},
		{"another uid only", []int{os.Getuid() + 1000}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sock := filepath.Join(t.TempDir(), "s.sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			pl := &peerListener{Listener: ln, allowed: c.allowed, refuse: func(int) {}}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "served") })}
			go func() { _ = srv.Serve(pl) }()
			t.Cleanup(func() { _ = srv.Close() })
			resp, err := unixClient(sock).Get("http://clawhost/")
			served := err == nil && resp.StatusCode == 200
			if err == nil {
				resp.Body.Close()
			}
			if served != c.served {
				t.Errorf("served = %v (%v), want %v", served, err, c.served)
			}
		})
	}
}

// TestAgentAPIOtherAccount: another local account (uid 65534 through
// setpriv) cannot use the socket even when the file modes would let it
// connect: the peer check closes its connection. Needs root.
func TestAgentAPIOtherAccount(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to act as uid 65534")
	}
	setpriv, err1 := exec.LookPath("setpriv")
	curl, err2 := exec.LookPath("curl")
	if err1 != nil || err2 != nil {
		t.Skip("needs setpriv and curl")
	}
	var log sdktest.Log
	a := startAgentAPI(t, &log)
	// Open every directory on the way and the socket itself: only the
	// peer check is left.
	for p := a.sock; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		mode := os.FileMode(0o711)
		if p == a.sock {
			mode = 0o666
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	body := `{"token":"x","chat":"tg:1","at":"2099-01-01T00:00:00Z","text":"hi"}`
	run := func(asOther bool) (string, error) {
		args := []string{"-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "--unix-socket", a.sock, "-d", body, "http://clawhost/schedule"}
		cmd := exec.Command(curl, args...)
		if asOther {
			cmd = exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", curl}, args...)...)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(false); err != nil || !strings.HasPrefix(out, "403") {
		t.Fatalf("as the host's uid: %q %v, want the endpoint's 403 (bad token)", out, err)
	}
	if out, err := run(true); err == nil || strings.HasPrefix(out, "403") {
		t.Errorf("as uid 65534: %q %v, want the connection closed unanswered", out, err)
	}
	if !strings.Contains(log.String(), "uid=65534") {
		t.Errorf("the refusal is not logged:\n%s", log.String())
	}
}

// attached records the send_file tool's files and the react tool's
// reactions; a path named "bad" is refused, and a reaction in chat -200
// (a channel without reactions).
type attached struct {
	mu    sync.Mutex
	calls []string
}

func (f *attached) ReactTo(tgt message.Target, emoji string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tgt.ChatID == "-200" {
		return errors.New("this chat's channel has no reactions")
	}
	f.calls = append(f.calls, "react|"+tgt.ChatID+"|"+tgt.ThreadID+"|"+emoji)
	return nil
}

func (f *attached) AttachFile(tgt message.Target, path, caption string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if path == "bad" {
		return "", errors.New("bad was not sent: it is outside the workspace")
	}
	f.calls = append(f.calls, tgt.Instance+"|"+tgt.ChatID+"|"+tgt.ThreadID+"|"+path+"|"+caption)
	return filepath.Base(path), nil
}

// TestSendFileThroughTheBridge: claude's send_file call goes from the MCP
// bridge (with the environment of the chat's MCP config) to the host,
// which queues the file for the turn of that chat and thread; a refusal
// is the tool's error; a token of another thread is refused.
func TestSendFileThroughTheBridge(t *testing.T) {
	t.Parallel()
	files := &attached{}
	a := New(Options{Logger: hclog.NewNullLogger(), Schedules: &added{}, Turns: files})
	if err := a.Start(filepath.Join(t.TempDir(), "run", "agent")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	path, tools := a.Tools(sessionkey.Key{Agent: "main", Chat: "tg:direct:1"}, &message.Message{Instance: "tg", ChatID: "-100", ThreadID: "77", ChatType: channel.ChatGroup})
	if strings.Join(tools, ",") != ScheduleTool+","+SendFileTool+","+ReactTool {
		t.Fatalf("tools %q", tools)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("MCP config: %v", err)
	}
	env := cfg.MCPServers["clawhost"].Env
	answers := runBridge(t, env, append(mcpInit,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_file","arguments":{"path":"out/report.pdf","caption":"the report"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_file","arguments":{"path":"bad"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"react","arguments":{"emoji":"👍"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"react","arguments":{"emoji":"a b"}}}`))
	for id, want := range map[string]string{
		"1": `report.pdf will be sent to the chat with your answer.","type":"text"}]}`,
		"2": `bad was not sent: it is outside the workspace","type":"text"}],"isError":true`,
		"3": `Reacted with 👍.","type":"text"}]}`,
		"4": `No reaction: give one emoji","type":"text"}],"isError":true`,
	} {
		if b, _ := json.Marshal(answers[id]["result"]); !strings.Contains(string(b), want) {
			t.Errorf("tool answer %s: %s, want %s", id, b, want)
		}
	}
	calls := slices.Clone(files.calls)
	slices.Sort(calls)
	if strings.Join(calls, ";") != "react|-100|77|👍;tg|-100|77|out/report.pdf|the report" {
		t.Errorf("files %q", files.calls)
	}
	b, _ := json.Marshal(map[string]any{"token": env[EnvAgentToken], "chat": "tg:-100", "thread": "78", "group": true, "agent": "main", "path": "x"})
	resp, err := unixClient(a.sock).Post("http://clawhost/send_file", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("another thread with this token: %d", resp.StatusCode)
	}
}

// TestAgentAPISeveralUsers: with agents running claude as two users, both
// reach the socket (the endpoint answers them), a third account is refused
// by the peer check; the directory and the MCP config files stay the
// host's, the files 0600 (the runner gives each process a copy of its own).
func TestAgentAPISeveralUsers(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to act as other users")
	}
	setpriv, err1 := exec.LookPath("setpriv")
	curl, err2 := exec.LookPath("curl")
	if err1 != nil || err2 != nil {
		t.Skip("needs setpriv and curl")
	}
	var users []*runas.User
	for _, name := range []string{"daemon", "nobody"} {
		u, err := runas.Lookup(name)
		if err != nil {
			t.Skipf("no user %s: %v", name, err)
		}
		users = append(users, u)
	}
	var log sdktest.Log
	a := New(Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &log}), Schedules: &added{}, RunAs: users})
	top := t.TempDir()
	dir := filepath.Join(top, "run", "agent")
	if err := a.Start(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	// The directories above data_dir/run are the operator's to open.
	for p := top; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]os.FileMode{dir: 0o711 | os.ModeDir, a.sock: 0o666 | os.ModeSocket} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("%s: %v %v, want %v owned by the host", path, fi.Mode(), err, want)
		}
	}
	mcp, _ := a.Tools(sessionkey.Key{Agent: "main", Chat: "tg:direct:1"}, &message.Message{Instance: "tg", ChatID: "1", From: "tg:1"})
	if fi, err := os.Stat(mcp); err != nil || fi.Mode() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("MCP config file %s: %v %v, want 0600 the host's", mcp, fi.Mode(), err)
	}
	body := `{"token":"x","chat":"tg:1","at":"2099-01-01T00:00:00Z","text":"hi"}`
	for _, tc := range []struct {
		uid      string
		answered bool
	}{{"1", true}, {"65534", true}, {"2", false}} {
		args := []string{"--reuid=" + tc.uid, "--regid=" + tc.uid, "--clear-groups", curl, "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5", "--unix-socket", a.sock, "-d", body, "http://clawhost/schedule"}
		out, err := exec.Command(setpriv, args...).CombinedOutput()
		if got := err == nil && strings.HasPrefix(string(out), "403"); got != tc.answered {
			t.Errorf("as uid %s: %q %v; answered %v, want %v", tc.uid, out, err, got, tc.answered)
		}
	}
}
