package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func configure(t *testing.T, cfg map[string]any) *sdktest.Harness {
	t.Helper()
	return sdktest.Start(t, plugin()).Configure(t, schema.Config{Instance: "tr", JSON: sdktest.ConfigJSON(t, cfg, nil)})
}

func voice(path string) hook.Attachment {
	return hook.Attachment{Kind: channel.MediaVoice, Path: path, MIME: "audio/ogg", Size: 1200}
}

// TestTranscribe: the command runs with {file} replaced and a minimal
// environment; its output is prepended; several notes are numbered; an
// image is not transcribed; a turn without audio gets nothing.
func TestTranscribe(t *testing.T) {
	t.Setenv("SECRET", "leaked") // in the plugin's environment, not the command's
	cmd := sdktest.ShellScript(t, "transcribe.sh", `echo "you said: $(cat "$1") (secret=${SECRET:-none}, extra=$EXTRA)"`)
	h := configure(t, map[string]any{"command": []string{cmd, "{file}"}, "env": map[string]string{"EXTRA": "x"}})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.ogg"), filepath.Join(dir, "b.ogg")
	_ = os.WriteFile(a, []byte("hello there"), 0o600)
	_ = os.WriteFile(b, []byte("second note"), 0o600)
	ctx := context.Background()
	res, err := received(h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Text: "(voice)", Attachments: []hook.Attachment{voice(a)}}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "[Voice note transcript]\nyou said: hello there (secret=none, extra=x)"; res.PrependContext != want {
		t.Errorf("got %q, want %q", res.PrependContext, want)
	}
	res, _ = received(h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Attachments: []hook.Attachment{voice(a), {Kind: channel.MediaImage, Path: a}, voice(b)}}))
	if !strings.Contains(res.PrependContext, "[Voice note 1 transcript]\nyou said: hello there") || !strings.Contains(res.PrependContext, "[Voice note 2 transcript]\nyou said: second note") || strings.Contains(res.PrependContext, "3") {
		t.Errorf("two notes: %q", res.PrependContext)
	}
	// A transcript replaces its audio; a failed one keeps it.
	if r, err := h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Attachments: []hook.Attachment{voice(a)}}); err != nil || len(r.Notes) != 1 || !r.Notes[0].Replace || r.Notes[0].Attachment != a {
		t.Errorf("the transcript does not replace the audio: %+v %v", r, err)
	}
	if res, _ := received(h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Text: "text only"})); res.PrependContext != "" {
		t.Errorf("no audio: %q", res.PrependContext)
	}
}

// TestTranscribeFailures: a failing command, one that outlives its timeout,
// an oversized file and a long transcript each give a short note; the turn
// is never blocked by an error.
func TestTranscribeFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	f := filepath.Join(dir, "n.ogg")
	_ = os.WriteFile(f, []byte("x"), 0o600)
	for _, tc := range []struct {
		name string
		cfg  map[string]any
		at   hook.Attachment
		want string
	}{
		{"exit", map[string]any{"command": []string{sdktest.ShellScript(t, "transcribe.sh", `echo "model not found" >&2; exit 3`), "{file}"}}, voice(f), "(transcription failed: exit 3: model not found)"},
		{"timeout", map[string]any{"command": []string{sdktest.ShellScript(t, "transcribe.sh", `exec sleep 30`)}, "timeout": "200ms"}, voice(f), "(transcription failed: no result within 200ms)"},
		{"missing", map[string]any{"command": []string{"/nonexistent/whisper"}}, voice(f), "(transcription failed: "},
		{"big", map[string]any{"command": []string{sdktest.ShellScript(t, "transcribe.sh", `echo hi`)}, "max_bytes": 100}, voice(f), "(not transcribed: 1200 bytes, over max_bytes)"},
		{"long", map[string]any{"command": []string{sdktest.ShellScript(t, "transcribe.sh", `echo abcdefghij`)}, "max_transcript": 4}, voice(f), "abcd…"},
		{"silent", map[string]any{"command": []string{sdktest.ShellScript(t, "transcribe.sh", `true`)}}, voice(f), "(no speech recognized)"},
	} {
		h := configure(t, tc.cfg)
		res, err := received(h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Attachments: []hook.Attachment{tc.at}}))
		if err != nil || !strings.HasPrefix(res.PrependContext, "[Voice note transcript]\n"+tc.want) {
			t.Errorf("%s: %q %v", tc.name, res.PrependContext, err)
		}
		if r, _ := h.Plugin.MessageReceived(ctx, hook.ReceivedRequest{Attachments: []hook.Attachment{tc.at}}); len(r.Notes) == 1 && r.Notes[0].Replace != (tc.name == "long" || tc.name == "silent") {
			t.Errorf("%s: replace = %v", tc.name, r.Notes[0].Replace)
		}
	}
}

// TestTranscribeValidate: an empty command and a bad timeout are refused
// at their attributes.
func TestTranscribeValidate(t *testing.T) {
	t.Parallel()
	h := sdktest.Start(t, plugin())
	diags, err := h.Plugin.Validate(context.Background(), schema.Config{Instance: "tr", JSON: []byte(`{"command":[],"timeout":"soon"}`)})
	if err != nil || len(diags) != 2 || diags[0].Attribute != "command" || diags[1].Attribute != "timeout" {
		t.Fatalf("diags %v err %v", diags, err)
	}
}

// TestTranscribeTimeoutKillsTheGroup: at the timeout a wrapper script's
// own children (ffmpeg, whisper) are killed with it, not left running.
func TestTranscribeTimeoutKillsTheGroup(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	h := configure(t, map[string]any{"command": []string{sdktest.ShellScript(t, "transcribe.sh", `sleep 30 & echo $! > `+pidFile+`; wait`)}, "timeout": "300ms"})
	f := filepath.Join(t.TempDir(), "n.ogg")
	_ = os.WriteFile(f, []byte("x"), 0o600)
	res, err := received(h.Plugin.MessageReceived(context.Background(), hook.ReceivedRequest{Attachments: []hook.Attachment{voice(f)}}))
	if err != nil || !strings.Contains(res.PrependContext, "no result within 300ms") {
		t.Fatalf("%q %v", res.PrependContext, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(5 * time.Second); ; {
		// Gone, or a zombie waiting for init to reap it.
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the wrapper's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// joined is a message_received answer's notes as the host adds them to
// the message, in PrependContext for the checks.
type joined struct{ PrependContext string }

// received joins the notes of a message_received answer.
func received(r hook.ReceivedResponse, err error) (joined, error) {
	var parts []string
	for _, n := range r.Notes {
		parts = append(parts, "["+n.Label+"]\n"+n.Text)
	}
	return joined{strings.Join(parts, "\n")}, err
}
