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

// AuthStatus is what `claude auth status` prints (the CLI 2.1.330: a JSON
// object, read from its own files and environment — it makes no request
// and spends no turn).
type AuthStatus struct {
	LoggedIn     bool   `json:"loggedIn"`
	AuthMethod   string `json:"authMethod"`
	APIKeySource string `json:"apiKeySource"`
}

// Probe asks the CLI, with the environment a turn gets (CLAUDE_CONFIG_DIR,
// agent.env, the API variables; not as run_as's user nor in the sandbox),
// for its version (`claude --version`) and whether it is logged in
// (`claude auth status`).
func (c Config) Probe(ctx context.Context) (version string, auth AuthStatus, err error) {
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
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		// A node start (~1 CPU-second) that must not slow a turn starting
		// at the same time: at the lowest priority.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, 19)
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
