package e2e

import (
	"bytes"
	"strings"
	"testing"
)

// TestPairingNames: a stranger's name and @username, as the channel gave
// them, are kept with the pairing code and shown where an owner decides:
// clawhost pairing list, clawhost status and the status page.
func TestPairingNames(t *testing.T) {
	t.Parallel()
	d, base := startPairingHost(t, nil)
	cfg := d.ConfigPath()
	postInbound(t, d.addr(), map[string]any{"chat_id": "chat-dave", "sender_id": "dave", "sender_name": "Dave Null", "sender_username": "dnull", "text": "let me in"})
	d.nextSend("chat-dave") // the code
	var out, errb bytes.Buffer
	if rc := run([]string{"pairing", "list", "-config", cfg}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "lo:dave") || !strings.Contains(out.String(), "Dave Null (@dnull)") {
		t.Errorf("pairing list: exit %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	run([]string{"status", "-config", cfg}, &out, &errb)
	if !strings.Contains(out.String(), "waiting for an owner: Dave Null (@dnull) lo:dave (code ") {
		t.Errorf("clawhost status:\n%s", out.String())
	}
	d.waitFor(func() bool { code, _ := get(t, base+"/status.json"); return code == 200 }, "the admin endpoint")
	if _, page := get(t, base+"/"); !strings.Contains(page, "Dave Null @dnull <code>lo:dave</code>") {
		t.Errorf("the page does not name the stranger:\n%s", page)
	}
}
