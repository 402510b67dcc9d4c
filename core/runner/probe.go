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
