package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trConfigTemplate: the loopback channel, the fake claude (it echoes its
// prompt) and the transcription hook running a script. Arguments: plugin
// dir, agent command, addr file, transcriber script.
const trConfigTemplate = `
data_dir   = "./data"
plugin_dir = %q
log_level  = "debug"
agent {
  command   = %q
  workspace = "./workspace"
  env       = { CLAWHOST_FAKE_CLAUDE = "1" }
  timeout   = "30s"
}
access {
  dm_policy  = "allowlist"
  allow_from = ["lo:u1"]
}
messages {
  hook_timeout = "20s"
}
plugin "lo" {
  source = "loopback"
  config {
    addr_file = %q
  }
}
plugin "transcribe" {
  source = "transcribe-hook"
  config {
    command = [%q, "{file}"]
    timeout = "10s"
  }
}
`

// TestVoiceNoteTranscript: a voice note's audio reaches the
// before_agent_start hook as an attachment saved in the workspace; the
// transcription hook runs its command on it and the transcript reaches
// the prompt claude gets (the fake claude's echo shows it).
func TestVoiceNoteTranscript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe, _ := os.Executable()
	transcriber := filepath.Join(dir, "transcribe.sh")
	if err := os.WriteFile(transcriber, []byte("#!/bin/sh\nprintf 'transcript of %s: ' \"$(basename \"$1\")\"; cat \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.hcl")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(trConfigTemplate, binDir(t), exe, filepath.Join(dir, "lo.addr"), transcriber)), 0o600); err != nil {
		t.Fatal(err)
	}
	d := launch(t, dir, cfg)
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitFor(func() bool { b, err := os.ReadFile(d.addrFile); return err == nil && len(b) > 0 }, "loopback address file")
	body, _ := json.Marshal(map[string]any{"chat_id": "chat-u1", "sender_id": "u1", "text": "",
		"media": []map[string]string{{"kind": "voice", "ref": "data:please book a table for two", "mime": "audio/ogg", "filename": "note.ogg"}}})
	resp, err := http.Post("http://"+d.addr()+"/inbound", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reply := d.nextSend("chat-u1")
	if !strings.Contains(reply, "[Voice note transcript]") || !strings.Contains(reply, ".ogg: please book a table for two") {
		t.Fatalf("the transcript did not reach the prompt: %q", reply)
	}
}
