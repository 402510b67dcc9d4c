package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// keyringScript is a Bash tool's python3 that, with the kernel keyring's calls
// (x86_64 and arm64 numbers), adds a key to the user keyring ("add"), or looks
// one up there and reads it ("read"); it prints what it got.
func keyringScript(op, name, secret string) string {
	py := fmt.Sprintf(`
import ctypes, os, platform
l = ctypes.CDLL(None, use_errno=True)
nr = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
if %q == "add":
    r = l.syscall(nr[0], b"user", %q.encode(), %q.encode(), %d, -4)
    print("ADD", r if r >= 0 else os.strerror(ctypes.get_errno()))
else:
    k = l.syscall(nr[1], 10, -4, b"user", %q.encode(), 0)
    buf = ctypes.create_string_buffer(128)
    n = l.syscall(nr[1], 11, k, buf, 128) if k > 0 else -1
    print("READ", buf.value.decode() if n > 0 else "none: " + os.strerror(ctypes.get_errno()))
`, op, name, secret, len(secret), name)
	return "python3 -c " + shellQuote(py)
}

// TestBoundaryKeyring: the kernel keyring, which no namespace confines, between two
// chats (issue 76, finding 5). Chat A's claude puts a key in its user's keyring, chat
// B's looks for it and reads it; B must never get it, per start and in recycled
// sandboxes. Against 12aa131's binaries A's add_key succeeded and B read the secret.
func TestBoundaryKeyring(t *testing.T) {
	t.Parallel()
	for _, run := range []sandboxRun{{helper: "0"}, {helper: "1"}} {
		t.Run("helper="+run.helper, func(t *testing.T) {
			t.Parallel()
			lpNeedBwrap(t)
			h, _ := run.startHost(t, clOptions{agent: Attrs{"allowed_tools": []string{"Bash"}}, senders: []string{"a", "b"}})
			name, secret := "clawhost-canary-"+testNonce(t), "KEY-SECRET-"+testNonce(t)
			h.fake.Enqueue(bashRun(keyringScript("add", name, secret))...)
			h.say("a", "keep a key")
			added := lpToolResult(t, h, 2)
			h.fake.Enqueue(bashRun(keyringScript("read", name, secret))...)
			h.say("b", "find the key")
			read := lpToolResult(t, h, 4)
			t.Logf("chat a: %s; chat b: %s", strings.TrimSpace(added), strings.TrimSpace(read))
			if strings.Contains(read, secret) {
				t.Errorf("chat b read the key chat a kept in the keyring: %s", read)
			}
			if strings.Contains(added, "ADD") && !strings.Contains(added, "not permitted") {
				t.Errorf("chat a's add_key was not refused: %s", added)
			}
		})
	}
}
