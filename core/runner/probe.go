package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/clawhost/clawhost/core/internal/runas"
)

// BackgroundNice is the CPU priority of the host's start probe: a node
// start (~1 CPU-second) that must not slow a turn starting at the same
// time, yet ends on a busy machine (19 starved it for minutes behind a
// few busy processes: its CPU weight is 1.5 % of a normal one's; 10's is
// 11 %).
const BackgroundNice = 10

// AuthStatus is what `claude auth status` prints (the CLI 2.1.330: a JSON
// object, read from its own files and environment — it makes no request
// and spends no turn).
type AuthStatus struct {
	LoggedIn     bool   `json:"loggedIn"`
	AuthMethod   string `json:"authMethod"`
	APIKeySource string `json:"apiKeySource"`
}

// Probe asks the CLI, with the environment a turn gets (CLAUDE_CONFIG_DIR,
// agent.env, the API variables) and as run_as's user (not in the sandbox),
// for its version (`claude --version`) and whether it is logged in
// (`claude auth status`). nice is the probe's CPU priority (0: the
// caller's; the host's start probe uses BackgroundNice so that it never
// slows a first turn).
func (c Config) Probe(ctx context.Context, nice int) (version string, auth AuthStatus, err error) {
	path, err := exec.LookPath(c.Command)
	if err != nil {
		return "", auth, errNotFound(c.Command, err)
	}
	env := c.env(os.Environ(), os.TempDir())
	dir := c.Workspace
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = os.TempDir() // not made yet (clawhost doctor before the first start)
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env, cmd.Dir = env, dir
		if c.RunAs != nil {
			cmd.SysProcAttr = credentialAttr(c.RunAs)
		}
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if nice != 0 {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, nice)
		}
		err := cmd.Wait()
		return out.Bytes(), err
	}
	out, err := run("--version")
	if err != nil {
		return "", auth, fmt.Errorf("%s --version: %w", c.Command, err)
	}
	version, _, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	out, err = run("auth", "status")
	if err != nil && len(out) == 0 {
		return version, auth, fmt.Errorf("%s auth status: %w", c.Command, err)
	}
	if err := json.Unmarshal(out, &auth); err != nil {
		return version, auth, fmt.Errorf("%s auth status: not the JSON it prints: %w", c.Command, err)
	}
	return version, auth, nil
}

// Answer is what one minimal real request through the CLI found (Config.Ask).
type Answer struct {
	// OK: the API answered the request.
	OK bool
	// Status is the API's HTTP status when it refused (401, 403, 429, 529…); 0 when no
	// status came back (not logged in, the API unreachable).
	Status int
	// Message is the CLI's own words for a refusal ("Invalid API key · Fix external
	// API key"), never a credential.
	Message string
}

// Refused reports whether the API refused the credentials (401, 403) or the CLI has none:
// no turn can work until the login or the key changes.
func (a Answer) Refused() bool {
	return a.Status == 401 || a.Status == 403 || strings.Contains(a.Message, "Not logged in")
}

// Ask makes one minimal real request, as a turn's claude would make it (the same
// environment and user as Probe, the agent's model): `claude -p` with a one-word prompt on
// stdin, --max-turns 1, no transcript written (--no-session-persistence), one API retry,
// in a temporary directory. It spends one small request (a few thousand input tokens of
// claude's own system prompt). err is for a CLI that could not run or printed no result;
// what the API said is in the Answer.
func (c Config) Ask(ctx context.Context) (Answer, error) {
	path, err := exec.LookPath(c.Command)
	if err != nil {
		return Answer{}, errNotFound(c.Command, err)
	}
	dir, err := os.MkdirTemp("", "clawhost-ask-")
	if err != nil {
		return Answer{}, err
	}
	defer os.RemoveAll(dir)
	if c.RunAs != nil {
		if err := c.RunAs.Chown(dir); err != nil {
			return Answer{}, err
		}
	}
	c.MaxRetries = 1
	args := []string{"-p", "--output-format", "json", "--max-turns", "1", "--no-session-persistence"}
	if c.Model != "" {
		args = append(args, "--model", c.Model)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env, cmd.Dir = c.env(os.Environ(), dir), dir
	cmd.Stdin = strings.NewReader("Reply with the single word OK.")
	if c.RunAs != nil {
		cmd.SysProcAttr = credentialAttr(c.RunAs)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	runErr := cmd.Run()
	var res struct {
		IsError bool   `json:"is_error"`
		Status  *int   `json:"api_error_status"`
		Result  string `json:"result"`
		Subtype string `json:"subtype"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		if runErr != nil {
			return Answer{}, fmt.Errorf("%s -p: %w", c.Command, runErr)
		}
		return Answer{}, fmt.Errorf("%s -p: not the JSON result it prints: %w", c.Command, err)
	}
	// error_max_turns: the model asked for a tool; the API answered.
	a := Answer{OK: !res.IsError || res.Subtype == "error_max_turns", Message: res.Result}
	if res.Status != nil {
		a.Status = *res.Status
	}
	return a, nil
}

// credentialAttr runs a process as u (nil: as the host).
func credentialAttr(u *runas.User) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: u.Credential()}
}
