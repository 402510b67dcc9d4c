package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func configure(t *testing.T, cfg map[string]any) *sdktest.Harness {
	t.Helper()
	return sdktest.Start(t, plugin()).Configure(t, schema.Config{Instance: "gate", JSON: sdktest.ConfigJSON(t, cfg, nil)})
}

// TestExecHook: each hook's program gets the call as JSON on stdin (and
// CLAWHOST_HOOK) and its JSON answer comes back typed; a hook without a
// program passes; a media path is read and sent by value.
func TestExecHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen.json")
	table := filepath.Join(dir, "table.txt")
	if err := os.WriteFile(table, []byte("a|b"), 0o600); err != nil {
		t.Fatal(err)
	}
	received := sdktest.ShellScript(t, "hook.sh", `cat > `+seen+`; echo '{"rewrite": true, "text": "hi there", "notes": [{"attachment": "/a.ogg", "label": "T", "text": "said", "replace": true}]}'`)
	sending := sdktest.ShellScript(t, "hook.sh", `cat >/dev/null; echo '{"rewrite": true, "text": "signed", "media": [{"path": "`+table+`", "mime": "text/plain"}]}'`)
	end := sdktest.ShellScript(t, "hook.sh", `in=$(cat); [ "$CLAWHOST_HOOK" = agent_end ] && echo "$in" | grep -q '"call_id":"9"' && echo "$in" | grep -q '"name":"Read"'`)
	h := configure(t, map[string]any{"message_received": []string{received}, "message_sending": []string{sending}, "agent_end": []string{end}})

	r, err := h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{CallID: "7", Text: "hi", Sender: channel.Sender{ID: "u1"},
		Attachments: []hook.Attachment{{Kind: channel.MediaVoice, Path: "/a.ogg"}}})
	if err != nil || !r.Rewrite || r.Text != "hi there" || len(r.Notes) != 1 || r.Notes[0] != (hook.Note{Attachment: "/a.ogg", Label: "T", Text: "said", Replace: true}) {
		t.Fatalf("message_received: %+v %v", r, err)
	}
	var in map[string]any
	b, _ := os.ReadFile(seen)
	if err := json.Unmarshal(b, &in); err != nil || in["call_id"] != "7" || in["text"] != "hi" || !strings.Contains(string(b), `"path":"/a.ogg"`) {
		t.Fatalf("the program read %s (%v)", b, err)
	}
	s, err := h.Plugin.MessageSending(ctx, hook.SendingRequest{CallID: "8", Text: "reply"})
	if err != nil || s.Text != "signed" || len(s.Media) != 1 || string(s.Media[0].Data) != "a|b" || s.Media[0].Filename != "table.txt" {
		t.Fatalf("message_sending: %+v %v", s, err)
	}
	if err := h.Plugin.AgentEnd(ctx, hook.End{CallID: "9", ToolSteps: []hook.ToolStep{{Name: "Read", Summary: "x"}}}); err != nil {
		t.Fatalf("agent_end: %v", err)
	}

	none := configure(t, map[string]any{})
	if r, err := none.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Text: "x"}); err != nil || r.Rewrite || r.Drop {
		t.Fatalf("no program: %+v %v", r, err)
	}
}

// TestExecHookFailures: a non-zero exit, output that is not JSON and a
// program that outlives the timeout are errors (the host skips or drops
// per on_error), each saying why.
func TestExecHookFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, body, timeout, want string
	}{
		{"exit", `echo "no model" >&2; exit 3`, "5s", "exit 3: no model"},
		{"json", `echo not json`, "5s", "not the JSON answer"},
		{"timeout", `exec sleep 30`, "200ms", "no answer within 200ms"},
	} {
		h := configure(t, map[string]any{"message_received": []string{sdktest.ShellScript(t, "hook.sh", c.body)}, "timeout": c.timeout})
		_, err := h.Plugin.MessageReceived(context.Background(), hook.ReceivedRequest{Text: "x"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestExecHookValidate: a relative program and a bad timeout are refused
// at their attributes.
func TestExecHookValidate(t *testing.T) {
	t.Parallel()
	h := sdktest.Start(t, plugin())
	diags, err := h.Plugin.Validate(context.Background(), schema.Config{Instance: "gate", JSON: []byte(`{"message_sending": ["sign.sh"], "timeout": "soon"}`)})
	if err != nil || len(diags) != 2 {
		t.Fatalf("diagnostics %+v, err %v", diags, err)
	}
}
