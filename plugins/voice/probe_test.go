package voice

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/voice/voicetest"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// TestProbe: doctor's checks say when no speech-to-text engine is set (a
// warning), make a real voice note with espeak-ng and ffmpeg, and fail a
// missing program with what to do; an API is named by its host only.
func TestProbe(t *testing.T) {
	t.Parallel()
	voicetest.NeedTools(t)
	run := func(cfg map[string]any) map[string]probe.Check {
		js, _ := json.Marshal(cfg)
		rep, err := runProbe(context.Background(), schema.Config{Instance: "voice", JSON: js})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]probe.Check{}
		for _, c := range rep.Checks {
			out[c.Name] = c
		}
		return out
	}
	got := run(map[string]any{})
	if c := got["speech to text"]; c.Verdict != probe.Warn || !strings.Contains(c.Found, "audio files") || c.Do == "" {
		t.Errorf("no engine: %+v", c)
	}
	if c := got["text to speech"]; c.Verdict != probe.OK || !strings.Contains(c.Found, "espeak-ng made a voice note") {
		t.Errorf("espeak-ng: %+v", c)
	}
	got = run(map[string]any{"stt_command": []string{"/nonexistent/whisper"}, "tts_command": []string{"/nonexistent/tts", "{out}"},
		"stt_url": ""})
	if c := got["speech to text"]; c.Verdict != probe.Fail {
		t.Errorf("a missing transcriber: %+v", c)
	}
	if c := got["text to speech"]; c.Verdict != probe.Fail || c.Do == "" {
		t.Errorf("a missing speaker: %+v", c)
	}
	got = run(map[string]any{"stt_url": "https://stt.example/v1/audio/transcriptions?key=SECRET", "stt_api_key": "k"})
	if c := got["speech to text"]; c.Verdict != probe.OK || c.Found != "the API at stt.example" {
		t.Errorf("an API: %+v", c)
	}
	if c := got["ffmpeg"]; c.Verdict != probe.OK {
		t.Errorf("ffmpeg: %+v", c)
	}
}
