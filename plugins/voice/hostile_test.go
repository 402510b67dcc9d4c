package voice

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/voice/voicetest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// makeAudio has ffmpeg write seconds of a sine tone to path in the format
// its output options args give; ffmpeg here is the test's own, run on
// nothing a chat sent.
func makeAudio(t *testing.T, path string, seconds string, args ...string) {
	t.Helper()
	cmd := append([]string{"-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=" + seconds}, args...)
	if out, err := exec.Command("ffmpeg", append(cmd, path)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v %s", err, out)
	}
}

// TestHostileVoiceNotes: a "voice note" a chat sent is decoded by ffmpeg
// with every path that reaches beyond the file closed. A note that is
// really an HLS playlist naming a file elsewhere on the host, or an
// ffconcat list naming a file beside it, is refused before the
// speech-to-text command sees anything, while the formats the platforms
// send (OGG/Opus, MP3, M4A, WAV, WebM) are still converted to the {wav}
// whisper.cpp reads. A file larger than ffmpeg is given is refused
// unread.
func TestHostileVoiceNotes(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	// The secret: 3 s of audio outside the chat's directory, in MPEG-TS
	// (a segment type HLS accepts), and its copy as WAV beside the note
	// (what a concat list with a relative name reaches).
	secrets := t.TempDir()
	secretTS := filepath.Join(secrets, "secret.ts")
	makeAudio(t, secretTS, "3", "-c:a", "mp2", "-f", "mpegts")
	chat := t.TempDir()
	makeAudio(t, filepath.Join(chat, "other.wav"), "3")

	tests := []struct {
		name    string
		file    string // written into the chat's directory
		content []byte // the note as sent; nil: made by ffmpeg with make
		make    []string
		size    int64 // a sparse file of this size instead
		refused bool
	}{
		{name: "hls playlist naming a file elsewhere", file: "note.ogg", refused: true,
			content: []byte("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3,\n" + secretTS + "\n#EXT-X-ENDLIST\n")},
		{name: "ffconcat list naming a file beside it", file: "list.ogg", refused: true,
			content: []byte("ffconcat version 1.0\nfile other.wav\n")},
		{name: "a file larger than ffmpeg is given", file: "big.ogg", size: maxInput + 1, refused: true},
		{name: "ogg opus voice note", file: "voice.ogg", make: []string{"-c:a", "libopus", "-f", "ogg"}},
		{name: "mp3 audio file", file: "song.mp3", make: []string{"-c:a", "libmp3lame", "-f", "mp3"}},
		{name: "m4a audio file", file: "memo.m4a", make: []string{"-c:a", "aac", "-f", "ipod"}},
		{name: "wav audio file", file: "take.wav", make: []string{"-f", "wav"}},
		{name: "webm audio file", file: "clip.webm", make: []string{"-c:a", "libopus", "-f", "webm"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			note := filepath.Join(chat, tc.file)
			switch {
			case tc.size > 0:
				f, err := os.Create(note)
				if err == nil {
					err = f.Truncate(tc.size)
					f.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
			case tc.content != nil:
				if err := os.WriteFile(note, tc.content, 0o600); err != nil {
					t.Fatal(err)
				}
			default:
				makeAudio(t, note, "1", tc.make...)
			}
			// The engine keeps the {wav} it was given, so the test can
			// hear what ffmpeg decoded.
			heard := filepath.Join(t.TempDir(), "heard.wav")
			s := &stt{command: []string{sdktest.ShellScript(t, "engine.sh", `cp "$1" "`+heard+`"; echo heard`), "{wav}"}, timeout: 30 * time.Second}
			eng := &engine{ffmpeg: "ffmpeg", env: []string{"PATH=" + os.Getenv("PATH")}, work: t.TempDir()}
			text, err := eng.transcribe(context.Background(), s, note)
			if !tc.refused {
				if err != nil || text != "heard" {
					t.Fatalf("a real note is not transcribed: %q %v", text, err)
				}
				data, _ := os.ReadFile(heard)
				if codec, sec := voicetest.Probe(t, data, ".wav"); codec != "pcm_s16le" || sec < 0.9 || sec > 1.5 {
					t.Fatalf("the {wav} holds %s of %.1f s, want 1 s of pcm_s16le", codec, sec)
				}
				return
			}
			if data, rerr := os.ReadFile(heard); rerr == nil {
				_, sec := voicetest.Probe(t, data, ".wav")
				t.Fatalf("ffmpeg followed the note to another file: the engine heard %.1f s (the secret is 3 s); transcript %q", sec, text)
			}
			t.Logf("refused: %v", err)
			if err == nil || !strings.Contains(err.Error(), "convert to wav") {
				t.Fatalf("want the conversion refused, got %q %v", text, err)
			}
		})
	}
}
