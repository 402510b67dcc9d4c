package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/plugins/voice/voicetest"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// makeVoiceNote speaks text with espeak-ng and encodes it with ffmpeg as
// Telegram's voice notes are: OGG/Opus, mono, 48 kHz.
func makeVoiceNote(t *testing.T, text string) []byte {
	t.Helper()
	dir := t.TempDir()
	wav, ogg := filepath.Join(dir, "note.wav"), filepath.Join(dir, "note.oga")
	if out, err := exec.Command("espeak-ng", "-w", wav, text).CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", wav, "-c:a", "libopus", "-ac", "1", "-ar", "48000", "-f", "ogg", ogg).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
	b, err := os.ReadFile(ogg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// voiceHost is clawhost with the real claude CLI (echoing through the fake
// API), the telegram plugin on a fake Bot API and the voice plugin: a stub
// speech-to-text command that prints a fixed transcript when it gets a
// real WAV file ({wav}: ffmpeg's conversion of the voice note), and
// espeak-ng behind a wrapper that logs each call and fails while the
// file fail exists.
type voiceHost struct {
	d        *daemon
	srv      *telegramtest.Server
	api      *anthropictest.Server
	ttsCalls string // one line per text-to-speech call
	fail     string
}

const voiceTranscript = "please book a table for two transcript-marker"

// voicePlugin writes the stub engines into dir and returns the voice
// plugin's block using them, the engine's call log and its failure flag.
func voicePlugin(t *testing.T, dir string) (p Plugin, ttsCalls, fail string) {
	t.Helper()
	ttsCalls, fail = filepath.Join(dir, "tts.log"), filepath.Join(dir, "tts-fail")
	stt := filepath.Join(dir, "stt.sh")
	tts := filepath.Join(dir, "tts.sh")
	scripts := map[string]string{
		stt: "#!/bin/sh\n[ \"$(head -c 4 \"$1\")\" = RIFF ] || { echo \"not a wav: $1\" >&2; exit 2; }\necho '" + voiceTranscript + "'\n",
		tts: "#!/bin/sh\necho call >> '" + ttsCalls + "'\n[ -e '" + fail + "' ] && { echo 'engine down' >&2; exit 3; }\nexec espeak-ng --stdin -w \"$1\"\n",
	}
	for p, body := range scripts {
		sdktest.WriteExecutable(t, p, []byte(body), 0o700)
	}
	return Plugin{Name: "voice", Source: "voice",
		Config: Attrs{"stt_command": []string{stt, "{wav}"}, "tts_command": []string{tts, "{out}"}, "stt_timeout": "20s", "tts_timeout": "20s"}}, ttsCalls, fail
}

// withVoice needs the voice tools and returns a host modifier that makes
// the agent the real claude CLI against a new fake API (it echoes) and adds
// the voice plugin (voicePlugin); calls, if not nil, is set to the
// engine's call log.
func withVoice(t *testing.T, calls *string) func(*Host) {
	t.Helper()
	voicetest.NeedTools(t)
	bin := clClaudeBin(t)
	api := anthropictest.New()
	t.Cleanup(api.Close)
	return func(h *Host) {
		h.Agent = RealClaude(bin, filepath.Join(h.Dir, "home"), api.URL(), Attrs{"workspace": filepath.Join(h.Dir, "workspace"), "timeout": "60s"})
		h.Messages = Attrs{"streaming": "off", "turn_card": "off", "hook_timeout": "40s"}
		voice, log, _ := voicePlugin(t, h.Dir)
		if calls != nil {
			*calls = log
		}
		h.Plugins = append(h.Plugins, voice)
	}
}

func startVoiceHost(t *testing.T) *voiceHost {
	t.Helper()
	voicetest.NeedTools(t)
	dir := t.TempDir()
	h := &voiceHost{srv: telegramtest.NewServer(tgToken), api: anthropictest.New()}
	t.Cleanup(h.api.Close)
	var voice Plugin
	voice, h.ttsCalls, h.fail = voicePlugin(t, dir)
	bin := clClaudeBin(t)
	cfg := Host{
		Dir:      dir,
		Agent:    RealClaude(bin, filepath.Join(dir, "home"), h.api.URL(), Attrs{"workspace": filepath.Join(dir, "workspace"), "timeout": "60s"}),
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001", "tg:1003"}},
		Admin:    Attrs{"listen": ""},
		Messages: Attrs{"streaming": "off", "turn_card": "off", "hook_timeout": "40s"},
		Plugins:  []Plugin{tgPlugin(h.srv.APIEndpoint()), voice},
	}
	t.Cleanup(h.srv.Close)
	h.d = Launch(t, cfg.Write(t))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bot API requests:\n%s", tgRequestLog(h.srv))
		}
	})
	sdktest.WaitFor(t, "the plugin's first getUpdates", func() bool { return len(h.srv.Requests("getUpdates")) > 0 })
	return h
}

// pushVoice sends a voice note from user in its DM.
func (h *voiceHost) pushVoice(user int64, fileID string, ogg []byte) {
	h.srv.AddFile(fileID, "voice/"+fileID+".oga", ogg)
	h.srv.PushUpdate(map[string]any{"message": map[string]any{
		"message_id": 100 + len(h.srv.Sent()), "date": time.Now().Unix(), "chat": telegramtest.PrivateChat(user), "from": tgUser(user, "Alice"),
		"voice": map[string]any{"file_id": fileID, "file_unique_id": fileID + "u", "duration": 2, "mime_type": "audio/ogg", "file_size": len(ogg)},
	}})
}

// voices returns the voice notes the bot sent to chat.
func (h *voiceHost) voices(chat int64) []telegramtest.Sent {
	var out []telegramtest.Sent
	for _, s := range h.srv.Sent() {
		if s.ChatID == strconv.FormatInt(chat, 10) && s.Method == "sendVoice" {
			out = append(out, s)
		}
	}
	return out
}

// ttsCount is how many times the text-to-speech engine ran.
func (h *voiceHost) ttsCount() int { return engineCalls(h.ttsCalls) }

// engineCalls is how many calls the engine's log has.
func engineCalls(log string) int {
	b, _ := os.ReadFile(log)
	return strings.Count(string(b), "call")
}

// waitVoice waits for voice note n (1-based) in chat.
func (h *voiceHost) waitVoice(t *testing.T, chat int64, n int) telegramtest.Sent {
	t.Helper()
	sdktest.WaitFor(t, fmt.Sprintf("voice note %d in chat %d", n, chat), func() error {
		got := len(h.voices(chat))
		return sdktest.Saw(got >= n, "%d voice notes", got)
	})
	return h.voices(chat)[n-1]
}

// TestVoiceTelegram: through the real binary, the real claude CLI and the
// fake Bot API. A real voice note (espeak-ng + ffmpeg, OGG/Opus) reaches
// claude as the transcript of the stub speech-to-text command (which
// checks it got ffmpeg's WAV), and the chat sees "🎙 transcript"; with
// /voice on the next answer arrives with a voice note (sendVoice) whose
// audio decodes as Opus with a duration, the text as its caption; a
// failing engine leaves the text with one notice, not one per reply.
func TestVoiceTelegram(t *testing.T) {
	t.Parallel()
	h := startVoiceHost(t)
	h.pushVoice(tgAlice, "voice-1", makeVoiceNote(t, "please book a table for two"))
	m := tgWaitMessage(t, h.srv, tgAlice, "🎙 "+voiceTranscript)
	saw := false
	for _, r := range h.api.Requests() {
		for _, u := range r.UserTexts() {
			if strings.Contains(u, voiceTranscript) {
				saw = true
				if strings.Contains(u, ".oga") {
					t.Errorf("claude got the audio file beside its transcript: %q", u)
				}
			}
		}
	}
	if !saw {
		t.Fatalf("claude never got the transcript; the chat shows %q", m.Visible)
	}
	if n := len(h.voices(tgAlice)); n != 0 || h.ttsCount() != 0 {
		t.Fatalf("voice is off by default, yet %d voice notes, %d engine calls", n, h.ttsCount())
	}

	h.srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "/voice on")
	tgWaitMessage(t, h.srv, tgAlice, "Voice replies: on")
	h.srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "say it aloud speak-marker")
	v := h.waitVoice(t, tgAlice, 1)
	if v.File == nil || !strings.HasSuffix(v.File.Filename, ".ogg") {
		t.Fatalf("voice note: %+v", v)
	}
	if codec, d := voicetest.Probe(t, v.File.Data, ""); codec != "opus" || d <= 0 {
		t.Fatalf("the voice note does not decode as Opus with a duration: codec %q, %v s", codec, d)
	}
	if !strings.Contains(v.Visible, "speak-marker") {
		// The text is sent with it: as its caption, or on its own.
		tgWaitMessage(t, h.srv, tgAlice, "speak-marker")
	}
	// /status says what speech-to-text and text-to-speech took.
	h.srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "/status")
	tgWaitMessage(t, h.srv, tgAlice, "Hooks: 🎙 transcribed in ", " s · 🔊 spoken in ")

	// The engine fails: the text, with one notice; the next failure is
	// not told again; once it works again, voice notes come back.
	if err := os.WriteFile(h.fail, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "first failure fail1-marker")
	f := tgWaitMessage(t, h.srv, tgAlice, "fail1-marker")
	if !strings.Contains(f.Visible, "🔇 No voice reply") || !strings.Contains(f.Visible, "engine down") {
		t.Fatalf("the failure is not told: %q", f.Visible)
	}
	h.srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "second failure fail2-marker")
	f = tgWaitMessage(t, h.srv, tgAlice, "fail2-marker")
	if strings.Contains(f.Visible, "🔇") {
		t.Fatalf("the same outage told twice: %q", f.Visible)
	}
	if n := len(h.voices(tgAlice)); n != 1 {
		t.Fatalf("%d voice notes while the engine failed", n)
	}
	_ = os.Remove(h.fail)
	h.srv.PushText(telegramtest.PrivateChat(tgAlice), tgUser(tgAlice, "Alice"), "working again back-marker")
	h.waitVoice(t, tgAlice, 2)
}

// TestVoiceKill9BeforeSend: clawhost is SIGKILLed after the voice note
// was made and recorded with the reply, while its upload is under way
// (Telegram has the voice note and has not answered yet); after the
// restart the chat has one voice note, not two, and the engine is not
// asked again: what message_sending returned is recorded in the outbox,
// and a send whose outcome is unknown is not repeated.
func TestVoiceKill9BeforeSend(t *testing.T) {
	t.Parallel()
	h := startVoiceHost(t)
	h.srv.PushText(telegramtest.PrivateChat(tgCarol), tgUser(tgCarol, "Carol"), "/voice on")
	tgWaitMessage(t, h.srv, tgCarol, "Voice replies: on")
	// The upload is carried out and its answer never comes (until the
	// client gives up: the kill).
	h.srv.Fail("sendVoice", 1, telegramtest.AcceptedSilence())
	h.srv.PushText(telegramtest.PrivateChat(tgCarol), tgUser(tgCarol, "Carol"), "survive the kill kill-marker")
	h.waitVoice(t, tgCarol, 1)
	calls := h.ttsCount()
	if calls != 1 {
		t.Fatalf("engine calls before the kill: %d", calls)
	}
	_ = h.d.cmd.Process.Signal(syscall.SIGKILL)
	_ = h.d.cmd.Wait()
	h.d.spawn()
	// The restarted host finds the reply recorded and its send attempted:
	// it tells the chat a part may be missing rather than send it again.
	tgWaitMessage(t, h.srv, tgCarol, "may be missing")
	// Nothing more comes: one voice note, the engine asked once.
	tgSettle(t, h.srv, 3*time.Second)
	if n := len(h.voices(tgCarol)); n != 1 {
		t.Fatalf("%d voice notes after the restart, want one", n)
	}
	if n := h.ttsCount(); n != 1 {
		t.Fatalf("the engine was asked %d times, want once (the shaped reply is recorded)", n)
	}
	if tgCount(h.srv, tgCarol, "kill-marker") != 1 {
		t.Fatalf("the reply's text was sent %d times", tgCount(h.srv, tgCarol, "kill-marker"))
	}
}

// TestPluginTestVoice: the voice plugin passes `clawhost plugin test`, with
// its defaults and with voice replies on (espeak-ng and ffmpeg run; the
// same answer to a repeated call id), and /voice answers.
func TestPluginTestVoice(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	path := filepath.Join(binDir(t), "clawhost-voice")
	for _, args := range [][]string{
		{path},
		{"-config-json", `{"default_mode":"on"}`, "-exec", "/voice auto", path},
	} {
		code, out, errs := runPluginTest(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d, want every check passed:\n%s\nstderr:\n%s", args, code, out, errs)
		}
		for _, check := range []string{"probe", "message_received", "message_sending", "list_commands"} {
			if !strings.Contains(out, "PASS  "+check) {
				t.Errorf("%q: %s did not pass:\n%s", args, check, out)
			}
		}
		if len(args) > 1 && !strings.Contains(out, "1 media") {
			t.Errorf("voice on: no voice note in the message_sending check:\n%s", out)
		}
	}
}

// TestVoiceWhatsApp: the same through the whatsapp plugin on the fake
// WhatsApp (driving whatsmeow): a voice note (push-to-talk, OGG/Opus)
// reaches the real claude CLI as its transcript; with /voice on the
// answer comes with a push-to-talk voice note of the type WhatsApp plays,
// whose audio decodes as Opus.
func TestVoiceWhatsApp(t *testing.T) {
	t.Parallel()
	var calls string
	e := startWhatsAppDaemon(t, false, withVoice(t, &calls))
	e.link(t, "")
	ann := e.contact(t, waAnn)
	ctx := waCtx(t)
	if _, err := ann.SendVoiceNote(ctx, whatsapptest.VoiceOptions{Data: makeVoiceNote(t, "please book a table for two"), Seconds: 2}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "🎙 "+voiceTranscript)
	if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "/voice on"}); err != nil {
		t.Fatal(err)
	}
	e.waitText(t, waChat(ann), "Voice replies: on")
	if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: "say it aloud wa-speak-marker"}); err != nil {
		t.Fatal(err)
	}
	var note whatsapptest.SentMessage
	sdktest.WaitFor(t, "a voice note to Ann", func() bool {
		for _, m := range e.sentTo(waChat(ann)...) {
			if m.Message.GetAudioMessage() != nil {
				note = m
				return true
			}
		}
		return false
	})
	au := note.Message.GetAudioMessage()
	if !au.GetPTT() || au.GetMimetype() != "audio/ogg; codecs=opus" {
		t.Fatalf("not a voice note WhatsApp plays: ptt %v, type %q", au.GetPTT(), au.GetMimetype())
	}
	data, err := e.srv.DownloadSent(note)
	if err != nil {
		t.Fatal(err)
	}
	if codec, d := voicetest.Probe(t, data, ""); codec != "opus" || d <= 0 {
		t.Fatalf("the voice note does not decode as Opus with a duration: codec %q, %v s", codec, d)
	}
	e.waitText(t, waChat(ann), "wa-speak-marker")
	if n := engineCalls(calls); n != 1 {
		t.Fatalf("the engine ran %d times, want once", n)
	}
}

// TestVoiceDiscord: the same through the discord plugin on the fake
// Discord: a voice message (OGG/Opus) reaches the real claude CLI as its
// transcript; with /voice on the answer comes with an MP3 file that
// ffprobe decodes.
func TestVoiceDiscord(t *testing.T) {
	t.Parallel()
	e := startDiscordDaemon(t, true, nil, withVoice(t, nil))
	e.live(t, 1)
	ogg := makeVoiceNote(t, "please book a table for two")
	at := e.srv.AddFile("voice-message.ogg", "audio/ogg", ogg)
	e.srv.Push(discordtest.Message{ChannelID: e.dm[dcAlice.ID].ID, Author: dcAlice, Flags: 8192, // IS_VOICE_MESSAGE
		Attachments: []discordtest.Attachment{at}})
	e.waitMessage(t, e.dm[dcAlice.ID].ID, "🎙 "+voiceTranscript)
	e.pushDM(dcAlice, "/voice on")
	e.waitMessage(t, e.dm[dcAlice.ID].ID, "Voice replies: on")
	e.pushDM(dcAlice, "say it aloud dc-speak-marker")
	var file discordtest.UploadedFile
	sdktest.WaitFor(t, "an audio file to Alice", func() bool {
		for _, s := range e.srv.Sent() {
			for _, f := range s.Files {
				if s.ChannelID == e.dm[dcAlice.ID].ID && strings.HasSuffix(f.Filename, ".mp3") {
					file = f
					return true
				}
			}
		}
		return false
	})
	if codec, d := voicetest.Probe(t, file.Data, ""); codec != "mp3" || d <= 0 {
		t.Fatalf("the audio file does not decode as MP3 with a duration: codec %q, %v s", codec, d)
	}
	e.waitMessage(t, e.dm[dcAlice.ID].ID, "dc-speak-marker")
}
