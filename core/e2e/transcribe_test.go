package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestVoiceNoteTranscript: a voice note's audio reaches the
// message_received hook as an attachment saved in the workspace, before
// the queue; the transcription hook runs its command on it and the
// transcript replaces the audio in the prompt claude gets (the fake
// claude's echo shows it, and no attachment).
func TestVoiceNoteTranscript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	transcriber := filepath.Join(dir, "transcribe.sh")
	sdktest.WriteExecutable(t, transcriber, []byte("#!/bin/sh\nprintf 'transcript of %s: ' \"$(basename \"$1\")\"; cat \"$1\"\n"), 0o700)
	reply := transcribeVoiceNote(t, dir, transcriber, nil, nil, "please book a table for two")
	if !strings.Contains(reply, "[Voice note transcript]") || !strings.Contains(reply, ".ogg: please book a table for two") {
		t.Fatalf("the transcript did not reach the prompt: %q", reply)
	}
	if strings.Count(reply, ".ogg") != 1 {
		t.Fatalf("the audio is still attached beside its transcript: %q", reply)
	}
}

// transcribeVoiceNote starts a host in dir on the loopback channel with
// the fake claude (it echoes its prompt) and the transcription hook
// running script (attrs: the plugin block's attributes, env: the
// script's environment; both may be nil), sends it a voice note whose
// audio is said and returns the reply: the prompt claude got.
func transcribeVoiceNote(t *testing.T, dir, script string, attrs Attrs, env map[string]string, said string) string {
	t.Helper()
	config := Attrs{"command": []string{script, "{file}"}, "timeout": "10s"}
	if env != nil {
		config["env"] = env
	}
	d := Start(t, Host{
		Dir:      dir,
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"lo:u1"}},
		Messages: Attrs{"hook_timeout": "20s"},
		Plugins: []Plugin{
			{Name: "lo", Source: "loopback", Config: Attrs{"addr_file": filepath.Join(dir, "lo.addr")}},
			{Name: "transcribe", Source: "transcribe-hook", Attrs: attrs, Config: config},
		},
	})
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	postInbound(t, d.addr(), map[string]any{"chat_id": "chat-u1", "sender_id": "u1", "text": "",
		"media": []map[string]string{{"kind": "voice", "ref": "data:" + said, "mime": "audio/ogg", "filename": "note.ogg"}}})
	return d.nextSend("chat-u1")
}
