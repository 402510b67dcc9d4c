package voice

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/voice/voicetest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// start serves a fresh plugin configured with cfg and dataDir.
func start(t *testing.T, cfg map[string]any, dataDir string) *pluginclient.Plugin {
	t.Helper()
	return sdktest.Start(t, New()).Configure(t, schema.Config{Instance: "voice", DataDir: dataDir, JSON: sdktest.ConfigJSON(t, cfg, nil)}).Plugin
}

func conv(key, ch string) command.Conversation {
	return command.Conversation{SessionKey: key, Instance: "tg", Channel: ch, ChatType: channel.ChatDirect, ChatID: key}
}

func voiceNote(path string) hook.Attachment {
	return hook.Attachment{Kind: channel.MediaVoice, Path: path, MIME: "audio/ogg", Filename: "note.ogg", Size: 10}
}

func setMode(t *testing.T, p *pluginclient.Plugin, key, mode string) string {
	t.Helper()
	res, err := p.Execute(context.Background(), command.Request{Command: "voice", Args: mode, Conversation: conv(key, "telegram")})
	if err != nil || len(res.Replies) != 1 {
		t.Fatalf("/voice %s: %+v %v", mode, res, err)
	}
	return res.Replies[0].Text
}

// TestVoiceBothWays: a voice note's transcript replaces its audio and is
// shown above the answer; /voice on adds a voice note that decodes (Opus
// in OGG for Telegram, MP3 for Discord); code is not read aloud; auto
// speaks only after a voice note; the mode survives a restart in the data
// directory (0600).
func TestVoiceBothWays(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	data := t.TempDir()
	spoken := filepath.Join(t.TempDir(), "spoken.txt")
	// The default espeak-ng, wrapped to record what it was asked to say.
	tts := sdktest.ShellScript(t, "engine.sh", `tee "`+spoken+`" | espeak-ng --stdin -w "$1"`)
	cfg := map[string]any{"stt_command": []string{sdktest.ShellScript(t, "engine.sh", `printf 'you said: '; cat "$1"`), "{file}"}, "tts_command": []string{tts, "{out}"}}
	p := start(t, cfg, data)
	ctx := context.Background()
	audio := filepath.Join(t.TempDir(), "note.ogg")
	_ = os.WriteFile(audio, []byte("book a table"), 0o600)

	r, err := p.MessageReceived(ctx, hook.ReceivedRequest{CallID: "1", Conversation: conv("a", "telegram"), Attachments: []hook.Attachment{voiceNote(audio)}})
	if err != nil || len(r.Notes) != 1 || !r.Notes[0].Replace || r.Notes[0].Text != "you said: book a table" || r.Notes[0].Attachment != audio {
		t.Fatalf("received: %+v %v", r, err)
	}
	s, err := p.MessageSending(ctx, hook.SendingRequest{CallID: "1", Conversation: conv("a", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Booked."})
	if err != nil || !s.Rewrite || s.Text != "🎙 you said: book a table\n\nBooked." || len(s.Media) != 0 {
		t.Fatalf("mode off: %+v %v", s, err)
	}
	// The transcript is shown once.
	if s, _ := p.MessageSending(ctx, hook.SendingRequest{CallID: "2", Conversation: conv("a", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "More."}); s.Rewrite {
		t.Fatalf("the transcript shown again: %+v", s)
	}

	if got := setMode(t, p, "a", "on"); !strings.Contains(got, "on") {
		t.Fatalf("/voice on: %q", got)
	}
	s, err = p.MessageSending(ctx, hook.SendingRequest{CallID: "3", Conversation: conv("a", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Here:\n```\nsecret code\n```\nDone.", Format: channel.FormatMarkdown})
	if err != nil || s.Rewrite || len(s.Media) != 1 {
		t.Fatalf("mode on: %+v %v", s, err)
	}
	m := s.Media[0]
	if m.Filename != "voice.ogg" || m.Kind != channel.MediaVoice || m.MIME != "audio/ogg" {
		t.Fatalf("telegram's voice note: %s %s %s", m.Filename, m.Kind, m.MIME)
	}
	if codec, d := voicetest.Probe(t, m.Data, ".ogg"); codec != "opus" || d <= 0 {
		t.Fatalf("voice note: codec %q, %v s", codec, d)
	}
	// The host asks again after a restart: the same answer, the engine
	// not asked again.
	before, _ := os.ReadFile(spoken)
	_ = os.Remove(spoken)
	again, err := p.MessageSending(ctx, hook.SendingRequest{CallID: "3", Conversation: conv("a", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Here:\n```\nsecret code\n```\nDone.", Format: channel.FormatMarkdown})
	if err != nil || !reflect.DeepEqual(again, s) {
		t.Fatalf("a repeated call got another answer: %v", err)
	}
	if _, err := os.Stat(spoken); err == nil {
		t.Fatal("a repeated call ran the engine again")
	}
	_ = os.WriteFile(spoken, before, 0o600)
	if b, _ := os.ReadFile(spoken); strings.Contains(string(b), "secret code") || !strings.Contains(string(b), "Done.") {
		t.Fatalf("read aloud: %q", b)
	}

	setMode(t, p, "d", "on")
	s, _ = p.MessageSending(ctx, hook.SendingRequest{CallID: "4", Conversation: conv("d", "discord"), Text: "Hello Discord."})
	if len(s.Media) != 1 || s.Media[0].Filename != "voice.mp3" || s.Media[0].Kind != channel.MediaAudio {
		t.Fatalf("discord: %+v", s.Media)
	}
	if codec, d := voicetest.Probe(t, s.Media[0].Data, ".mp3"); codec != "mp3" || d <= 0 {
		t.Fatalf("discord's audio: codec %q, %v s", codec, d)
	}

	// auto: a voice answer only to a voice note.
	setMode(t, p, "b", "auto")
	if s, _ := p.MessageSending(ctx, hook.SendingRequest{CallID: "5", Conversation: conv("b", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Typed answer."}); len(s.Media) != 0 {
		t.Fatal("auto spoke without a voice note")
	}
	_, _ = p.MessageReceived(ctx, hook.ReceivedRequest{CallID: "6", Conversation: conv("b", "telegram"), Attachments: []hook.Attachment{voiceNote(audio)}})
	if s, _ := p.MessageSending(ctx, hook.SendingRequest{CallID: "6", Conversation: conv("b", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Spoken answer."}); len(s.Media) != 1 {
		t.Fatal("auto did not speak after a voice note")
	}
	_, _ = p.MessageReceived(ctx, hook.ReceivedRequest{CallID: "7", Conversation: conv("b", "telegram"), Text: "typed again"})
	if s, _ := p.MessageSending(ctx, hook.SendingRequest{CallID: "7", Conversation: conv("b", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Typed answer."}); len(s.Media) != 0 {
		t.Fatal("auto spoke after a typed message")
	}

	// The modes are in the data directory; a new process keeps them.
	st, err := os.Stat(filepath.Join(data, "state.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", st, err)
	}
	p2 := start(t, cfg, data)
	if got := setMode(t, p2, "a", ""); !strings.Contains(got, "Voice replies: on") {
		t.Fatalf("after a restart: %q", got)
	}
	if got := setMode(t, p2, "c", ""); !strings.Contains(got, "Voice replies: off") {
		t.Fatalf("a new chat: %q", got)
	}
}

// TestVoiceFailures: a failing text-to-speech engine leaves the text with
// one notice per outage (not on every reply; again after a success); a
// hanging one is cut at tts_timeout; a failing transcription keeps the
// audio, says why to the agent and tells the chat once.
func TestVoiceFailures(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	flag := filepath.Join(t.TempDir(), "fail")
	_ = os.WriteFile(flag, nil, 0o600)
	tts := sdktest.ShellScript(t, "engine.sh", `if [ -e "`+flag+`" ]; then echo "engine down" >&2; exit 3; fi; espeak-ng --stdin -w "$1"`)
	stt := sdktest.ShellScript(t, "engine.sh", `echo "no model" >&2; exit 1`)
	p := start(t, map[string]any{"stt_command": []string{stt, "{file}"}, "tts_command": []string{tts, "{out}"}, "default_mode": "on"}, t.TempDir())
	ctx := context.Background()
	send := func(id string) hook.SendingResponse {
		t.Helper()
		s, err := p.MessageSending(ctx, hook.SendingRequest{CallID: id, Conversation: conv("a", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Answer " + id + "."})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := send("1")
	if len(s.Media) != 0 || !s.Rewrite || !strings.HasPrefix(s.Text, "Answer 1.") || strings.Count(s.Text, "🔇") != 1 || !strings.Contains(s.Text, "engine down") {
		t.Fatalf("first failure: %+v", s)
	}
	if s := send("2"); s.Rewrite || len(s.Media) != 0 {
		t.Fatalf("second failure told again: %+v", s)
	}
	_ = os.Remove(flag)
	if s := send("3"); s.Rewrite || len(s.Media) != 1 {
		t.Fatalf("after recovery: %+v", s)
	}
	_ = os.WriteFile(flag, nil, 0o600)
	if s := send("4"); !strings.Contains(s.Text, "🔇") {
		t.Fatalf("a new outage is not told: %+v", s)
	}

	hang := start(t, map[string]any{"tts_command": []string{sdktest.ShellScript(t, "engine.sh", "sleep 30"), "{out}"}, "tts_timeout": "300ms", "default_mode": "on"}, t.TempDir())
	s, err := hang.MessageSending(ctx, hook.SendingRequest{CallID: "1", Conversation: conv("h", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Slow."})
	if err != nil || len(s.Media) != 0 || !strings.Contains(s.Text, "no result within 300ms") {
		t.Fatalf("a hanging engine: %+v %v", s, err)
	}

	audio := filepath.Join(t.TempDir(), "note.ogg")
	_ = os.WriteFile(audio, []byte("x"), 0o600)
	for i := range 3 {
		// Two messages, the second asked twice (a restart).
		r, err := p.MessageReceived(ctx, hook.ReceivedRequest{CallID: "r" + strconv.Itoa(min(i, 1)), Conversation: conv("s", "telegram"), Attachments: []hook.Attachment{voiceNote(audio)}})
		if err != nil || len(r.Notes) != 1 || r.Notes[0].Replace || !strings.Contains(r.Notes[0].Text, "no model") {
			t.Fatalf("failed transcription %d: %+v %v", i, r, err)
		}
	}
	_ = os.Remove(flag)
	s, _ = p.MessageSending(ctx, hook.SendingRequest{CallID: "s", Conversation: conv("s", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Got a file."})
	if strings.Count(s.Text, "could not be transcribed") != 1 {
		t.Fatalf("the chat is told %d times: %q", strings.Count(s.Text, "could not be transcribed"), s.Text)
	}
}

// TestValidateSaysNoEngine: without a speech-to-text engine validate warns
// (once, as a warning: the block is accepted); two engines of a kind and
// bad values are errors.
func TestValidateSaysNoEngine(t *testing.T) {
	t.Parallel()
	h := sdktest.Start(t, New())
	check := func(cfg map[string]any) schema.Diagnostics {
		js, _ := json.Marshal(cfg)
		d, err := h.Plugin.Validate(context.Background(), schema.Config{Instance: "voice", JSON: js})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := check(map[string]any{})
	n := 0
	for _, x := range d {
		if x.Summary == "No speech-to-text engine" {
			n++
			if !x.Warning {
				t.Errorf("not a warning: %+v", x)
			}
		}
	}
	if n != 1 {
		t.Errorf("diagnostics %+v: want one saying there is no engine", d)
	}
	for _, bad := range []map[string]any{
		{"stt_command": []string{"a"}, "stt_url": "http://127.0.0.1:1/"},
		{"tts_url": "ftp://x"},
		{"default_mode": "loud"},
		{"stt_timeout": "soon"},
	} {
		d := check(bad)
		errs := 0
		for _, x := range d {
			if !x.Warning {
				errs++
			}
		}
		if errs == 0 {
			t.Errorf("%v: accepted (%+v)", bad, d)
		}
	}
}

// TestQuietChatsLeaveNoState: replies in chats that never used voice are
// not written down; a chat whose voice answer is followed by a plain one
// forgets the kept voice note.
func TestQuietChatsLeaveNoState(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	data := t.TempDir()
	p := start(t, map[string]any{}, data)
	ctx := context.Background()
	for i := range 3 {
		id := strconv.Itoa(i)
		if s, err := p.MessageSending(ctx, hook.SendingRequest{CallID: id, Conversation: conv("quiet-"+id, "telegram"), Text: "Hi."}); err != nil || s.Rewrite || len(s.Media) != 0 {
			t.Fatalf("a quiet chat: %+v %v", s, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "state.json")); !os.IsNotExist(err) {
		t.Fatalf("state written for quiet chats: %v", err)
	}
	setMode(t, p, "v", "on")
	if s, _ := p.MessageSending(ctx, hook.SendingRequest{CallID: "1", Conversation: conv("v", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Spoken."}); len(s.Media) != 1 {
		t.Fatal("no voice note")
	}
	kept, _ := filepath.Glob(filepath.Join(data, "last-*"))
	if len(kept) != 1 {
		t.Fatalf("kept voice notes: %q", kept)
	}
	setMode(t, p, "v", "off")
	_, _ = p.MessageSending(ctx, hook.SendingRequest{CallID: "2", Conversation: conv("v", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Typed."})
	if kept, _ := filepath.Glob(filepath.Join(data, "last-*")); len(kept) != 0 {
		t.Fatalf("a voice note kept after a plain answer: %q", kept)
	}
}

// TestEncodingFromTheChannelsDeclaration: the format of a spoken reply comes
// from what the channel declares of its voice notes, not from its name.
func TestEncodingFromTheChannelsDeclaration(t *testing.T) {
	for format, want := range map[string]string{
		channel.VoiceNoteOggOpus: ".ogg",
		"audio/ogg; codecs=opus": ".ogg",
		"":                       ".mp3",
		"audio/mpeg":             ".mp3",
		"not a mime type;;":      ".mp3",
	} {
		if got := encodingFor(format).ext; got != want {
			t.Errorf("encodingFor(%q) = %s, want %s", format, got, want)
		}
	}
}
