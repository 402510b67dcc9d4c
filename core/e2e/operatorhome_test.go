package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxHidesTheOperatorsClaude: the operator's ~/.claude and
// ~/.claude.json (their account, MCP servers, every project's history) are
// invisible to a sandboxed claude (docs/security.md) also when claude's
// HOME is not the operator's: agent.env setting HOME, as every real-CLI
// test here does. The sandbox hid only the .claude of the last HOME in
// claude's environment (the agent's), so a tool read the operator's,
// through the real binary and the real CLI, in both sandbox modes.
func TestSandboxHidesTheOperatorsClaude(t *testing.T) {
	t.Run("bwrap per start", func(t *testing.T) { testOperatorsClaude(t, "0") })
	t.Run("recycled", func(t *testing.T) { testOperatorsClaude(t, "1") })
}

func testOperatorsClaude(t *testing.T, helper string) {
	t.Parallel()
	lpNeedBwrap(t)
	const secretJSON, secretDir = "OPERATOR-CLAUDE-JSON-8231", "OPERATOR-CLAUDE-DIR-8231"
	// The operator's home, clawhost's HOME: somewhere the sandbox shows
	// (read-only), not under /tmp, which every sandbox gets empty.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	op, err := os.MkdirTemp(wd, ".operator-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(op) })
	if err := os.WriteFile(filepath.Join(op, ".claude.json"), []byte(`{"secret":"`+secretJSON+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(op, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(op, ".claude", "history.jsonl"), []byte(secretDir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startClaudeHost(t, clOptions{
		agent: Attrs{"allowed_tools": []string{"Bash"}},
		env:   []string{"HOME=" + op, "CLAWHOST_SANDBOX_HELPER=" + helper}, // runner.ZygoteEnv
	})
	h.fake.Enqueue(bashRun("cat " + filepath.Join(op, ".claude.json") + " " + filepath.Join(op, ".claude", "history.jsonl") + " 2>&1; echo look-done")...)
	h.say("u1", "look")
	res := lpToolResult(t, h, 2)
	if !strings.Contains(res, "look-done") {
		t.Fatalf("the script did not finish:\n%s", res)
	}
	for _, s := range []string{secretJSON, secretDir} {
		if strings.Contains(res, s) {
			t.Errorf("a sandboxed tool read the operator's %s:\n%s", s, res)
		}
	}
}
