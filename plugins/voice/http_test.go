package voice

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawhost/clawhost/plugins/voice/voicetest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

// TestHTTPEngines: the speech-to-text API gets the audio as multipart
// "file" with the model and the bearer key, and its JSON text is the
// transcript; the text-to-speech API gets input, model and voice as JSON
// and its audio is encoded as a voice note; an API that fails leaves the
// text with a notice naming the host and status, never the key (not even
// one in the URL).
func TestHTTPEngines(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	wav := filepath.Join(t.TempDir(), "speech.wav")
	if out, err := exec.Command("espeak-ng", "-w", wav, "from the api").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v %s", err, out)
	}
	speech, _ := os.ReadFile(wav)
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/stt":
			f, _, err := r.FormFile("file")
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			b, _ := io.ReadAll(f)
			got = append(got, "stt "+r.Header.Get("Authorization")+" "+r.FormValue("model")+" "+string(b))
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"text": " book a table "}`))
		case "/tts":
			var body map[string]string
			_ = json.NewDecoder(r.Body).Decode(&body)
			got = append(got, "tts "+r.Header.Get("Authorization")+" "+body["model"]+" "+body["voice"]+" "+body["input"])
			w.Header().Set("Content-Type", "audio/wav")
			_, _ = w.Write(speech)
		default:
			http.Error(w, "no", http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	p := start(t, map[string]any{"stt_url": srv.URL + "/stt", "stt_model": "whisper-1", "stt_api_key": "k-stt",
		"tts_url": srv.URL + "/tts", "tts_model": "tts-1", "tts_voice": "alloy", "tts_api_key": "k-tts", "default_mode": "on"}, t.TempDir())
	ctx := context.Background()
	audio := filepath.Join(t.TempDir(), "note.ogg")
	_ = os.WriteFile(audio, []byte("opus bytes"), 0o600)
	r, err := p.MessageReceived(ctx, hook.ReceivedRequest{CallID: "1", Conversation: conv("a", "telegram"), Attachments: []hook.Attachment{voiceNote(audio)}})
	if err != nil || len(r.Notes) != 1 || r.Notes[0].Text != "book a table" || !r.Notes[0].Replace {
		t.Fatalf("received: %+v %v", r, err)
	}
	s, err := p.MessageSending(ctx, hook.SendingRequest{CallID: "1", Conversation: conv("a", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Done."})
	if err != nil || len(s.Media) != 1 {
		t.Fatalf("sending: %+v %v", s, err)
	}
	if codec, d := voicetest.Probe(t, s.Media[0].Data, ".ogg"); codec != "opus" || d <= 0 {
		t.Fatalf("the API's speech as a voice note: %q %v", codec, d)
	}
	mu.Lock()
	want := []string{"stt Bearer k-stt whisper-1 opus bytes", "tts Bearer k-tts tts-1 alloy Done."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the APIs got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	mu.Unlock()

	for _, url := range []string{srv.URL + "/down?key=SECRET", "http://127.0.0.1:1/speech?key=SECRET"} {
		bad := start(t, map[string]any{"tts_url": url, "tts_api_key": "k-SECRET", "default_mode": "on"}, t.TempDir())
		s, err := bad.MessageSending(ctx, hook.SendingRequest{CallID: "1", Conversation: conv("b", "telegram"), VoiceNoteFormat: channel.VoiceNoteOggOpus, Text: "Done."})
		if err != nil || len(s.Media) != 0 || !strings.Contains(s.Text, "🔇") || !strings.Contains(s.Text, "127.0.0.1") {
			t.Fatalf("%s: %+v %v", url, s, err)
		}
		if strings.Contains(s.Text, "SECRET") {
			t.Errorf("a key reached the chat: %q", s.Text)
		}
	}
}
