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
	// The loopback channel, the fake claude (it echoes its prompt) and the
	// transcription hook running the script.
	d := Start(t, Host{
		Dir:      dir,
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"lo:u1"}},
		Messages: Attrs{"hook_timeout": "20s"},
		Plugins: []Plugin{
			{Name: "lo", Source: "loopback", Config: Attrs{"addr_file": filepath.Join(dir, "lo.addr")}},
			{Name: "transcribe", Source: "transcribe-hook", Config: Attrs{"command": []string{transcriber, "{file}"}, "timeout": "10s"}},
		},
	})
	d.addrFile = filepath.Join(dir, "lo.addr")
	d.waitServing()
	postInbound(t, d.addr(), map[string]any{"chat_id": "chat-u1", "sender_id": "u1", "text": "",
		"media": []map[string]string{{"kind": "voice", "ref": "data:please book a table for two", "mime": "audio/ogg", "filename": "note.ogg"}}})
	reply := d.nextSend("chat-u1")
	if !strings.Contains(reply, "[Voice note transcript]") || !strings.Contains(reply, ".ogg: please book a table for two") {
		t.Fatalf("the transcript did not reach the prompt: %q", reply)
	}
	if strings.Count(reply, ".ogg") != 1 {
		t.Fatalf("the audio is still attached beside its transcript: %q", reply)
	}
}
