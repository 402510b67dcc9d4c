package voice

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/program"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Version is the plugin's version.
const Version = "0.1.0"

// settings is the decoded config block.
type settings struct {
	STTCommand     []string          `json:"stt_command"`
	STTURL         string            `json:"stt_url"`
	STTModel       string            `json:"stt_model"`
	STTAPIKey      string            `json:"stt_api_key"`
	STTTimeout     string            `json:"stt_timeout"`
	ShowTranscript *bool             `json:"show_transcript"`
	MaxTranscript  float64           `json:"max_transcript"`
	TTSCommand     []string          `json:"tts_command"`
	TTSURL         string            `json:"tts_url"`
	TTSModel       string            `json:"tts_model"`
	TTSVoice       string            `json:"tts_voice"`
	TTSAPIKey      string            `json:"tts_api_key"`
	TTSTimeout     string            `json:"tts_timeout"`
	MaxSpoken      *float64          `json:"max_spoken"`
	DefaultMode    string            `json:"default_mode"`
	FFmpeg         string            `json:"ffmpeg"`
	Env            map[string]string `json:"env"`
}

// defaultTTS is espeak-ng from Debian: real speech, offline.
var defaultTTS = []string{"espeak-ng", "--stdin", "-w", "{out}"}

// config is the checked settings.
type config struct {
	stt            *stt // nil: no speech-to-text engine
	tts            *tts
	showTranscript bool
	maxTranscript  int
	maxSpoken      int
	defaultMode    Mode
	ffmpeg         string
	env            []string
	// warnings are said by validate (no engine, a program not found).
	warnings schema.Diagnostics
}

// parse decodes and checks the block: the one check of the plugin, shared
// by Validate and Configure.
func parse(cfg schema.Config) (*config, error) {
	var v settings
	if err := cfg.Decode(&v); err != nil {
		return nil, err
	}
	c := &config{showTranscript: v.ShowTranscript == nil || *v.ShowTranscript, maxTranscript: int(v.MaxTranscript), maxSpoken: 1000,
		ffmpeg: v.FFmpeg, env: program.Environ(v.Env)}
	if v.MaxSpoken != nil {
		c.maxSpoken = int(*v.MaxSpoken)
	}
	if c.ffmpeg == "" {
		c.ffmpeg = "ffmpeg"
	}
	var diags schema.Diagnostics
	duration := func(attr, s, def string) time.Duration {
		if s == "" {
			s = def
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			diags = append(diags, schema.Diagnostic{Attribute: attr, Summary: "Invalid duration",
				Detail: fmt.Sprintf("%q is not a positive duration such as %q", s, def)})
		}
		return d
	}
	checkURL := func(attr, s string) {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			diags = append(diags, schema.Diagnostic{Attribute: attr, Summary: "Invalid URL", Detail: "an http:// or https:// URL of the API"})
		}
	}
	sttTimeout := duration("stt_timeout", v.STTTimeout, "60s")
	ttsTimeout := duration("tts_timeout", v.TTSTimeout, "30s")
	m := ModeOff
	if v.DefaultMode != "" {
		var ok bool
		if m, ok = parseMode(v.DefaultMode); !ok {
			diags = append(diags, schema.Diagnostic{Attribute: "default_mode", Summary: "Invalid mode", Detail: `one of "off", "on", "auto"`})
		}
	}
	c.defaultMode = m

	switch {
	case len(v.STTCommand) > 0 && v.STTURL != "":
		diags = append(diags, schema.Diagnostic{Attribute: "stt_url", Summary: "Two speech-to-text engines", Detail: "set stt_command or stt_url, not both"})
	case len(v.STTCommand) > 0:
		if strings.TrimSpace(v.STTCommand[0]) == "" {
			diags = append(diags, schema.Diagnostic{Attribute: "stt_command", Summary: "No program", Detail: "the first element is the program to run"})
		} else {
			c.stt = &stt{command: v.STTCommand, timeout: sttTimeout}
			c.lookPath("stt_command", v.STTCommand[0])
		}
	case v.STTURL != "":
		checkURL("stt_url", v.STTURL)
		c.stt = &stt{url: v.STTURL, model: v.STTModel, apiKey: v.STTAPIKey, timeout: sttTimeout}
	default:
		c.warnings = append(c.warnings, schema.Diagnostic{Warning: true, Summary: "No speech-to-text engine",
			Detail: "voice notes arrive as audio files; set stt_command (whisper.cpp's whisper-cli, say) or stt_url to have them transcribed"})
	}

	switch {
	case len(v.TTSCommand) > 0 && v.TTSURL != "":
		diags = append(diags, schema.Diagnostic{Attribute: "tts_url", Summary: "Two text-to-speech engines", Detail: "set tts_command or tts_url, not both"})
	case v.TTSURL != "":
		checkURL("tts_url", v.TTSURL)
		c.tts = &tts{url: v.TTSURL, model: v.TTSModel, voice: v.TTSVoice, apiKey: v.TTSAPIKey, timeout: ttsTimeout}
	default:
		cmd, attr := v.TTSCommand, "tts_command"
		if len(cmd) == 0 {
			cmd, attr = defaultTTS, "" // not written: the block as a whole
		}
		if strings.TrimSpace(cmd[0]) == "" {
			diags = append(diags, schema.Diagnostic{Attribute: "tts_command", Summary: "No program", Detail: "the first element is the program to run"})
		} else {
			c.tts = &tts{command: cmd, timeout: ttsTimeout}
			c.lookPath(attr, cmd[0])
		}
	}
	if v.FFmpeg != "" {
		c.lookPath("ffmpeg", c.ffmpeg)
	} else {
		c.lookPath("", c.ffmpeg)
	}
	if len(diags) > 0 {
		return nil, diags
	}
	return c, nil
}

// lookPath warns when program is not found: the hooks then fail and fall
// back to text and files.
func (c *config) lookPath(attr, program string) {
	if _, err := exec.LookPath(program); err != nil {
		hint := ""
		switch filepath.Base(program) {
		case "ffmpeg", "espeak-ng":
			hint = " (apt-get install " + filepath.Base(program) + ")"
		}
		c.warnings = append(c.warnings, schema.Diagnostic{Attribute: attr, Warning: true, Summary: "Program not found",
			Detail: fmt.Sprintf("%s is not on PATH%s; voice falls back to text", filepath.Base(program), hint)})
	}
}

// Plugin is the voice plugin: a message_received hook (voice notes in), a
// message_sending hook (voice replies out) and the /voice command.
type Plugin struct {
	mu      sync.Mutex
	cfg     *config
	eng     *engine
	st      *store
	dataDir string
	// audio holds kept voice notes when there is no data directory.
	audio map[string][]byte
	log   func(msg string, args ...any)
}

var (
	_ hook.Received = (*Plugin)(nil)
	_ hook.Sending  = (*Plugin)(nil)
)

// New returns the plugin as sdk.Serve runs it.
func New() sdk.Plugin {
	p := &Plugin{log: func(string, ...any) {}, audio: map[string][]byte{}}
	return sdk.Plugin{
		Name:    "voice",
		Version: Version,
		Schema:  Schema(),
		Validate: func(_ context.Context, cfg schema.Config) error {
			c, err := parse(cfg)
			if err != nil {
				return err
			}
			if len(c.warnings) > 0 {
				return c.warnings
			}
			return nil
		},
		Configure:       p.configure,
		Probe:           runProbe,
		Command:         p,
		MessageReceived: p,
		MessageSending:  p,
	}
}

// Schema is the plugin's config block.
func Schema() schema.Schema {
	return schema.Schema{
		{Name: "stt_command", Type: "list(string)", Default: []any{}, Description: `speech-to-text program and arguments; "{file}" is the audio as received, "{wav}" it converted to 16 kHz mono WAV; its output is the transcript`},
		{Name: "stt_url", Type: "string", Default: "", Description: "speech-to-text HTTP API (OpenAI-compatible: multipart \"file\", answer JSON \"text\"), instead of stt_command"},
		{Name: "stt_model", Type: "string", Default: "", Description: "the model field sent to stt_url"},
		{Name: "stt_api_key", Type: "string", Default: "", Sensitive: true, Description: "bearer token for stt_url"},
		{Name: "stt_timeout", Type: "string", Default: "60s", Description: "how long one transcription may take"},
		{Name: "show_transcript", Type: "bool", Default: true, Description: `show the chat "🎙 transcript" above the answer to a voice note`},
		{Name: "max_transcript", Type: "number", Default: 4000, Description: "cut a transcript at this many characters; 0: no limit"},
		{Name: "tts_command", Type: "list(string)", Default: []any{}, Description: `text-to-speech program and arguments, the text on its stdin; the audio written to "{out}" or to stdout; empty: espeak-ng`},
		{Name: "tts_url", Type: "string", Default: "", Description: "text-to-speech HTTP API (OpenAI-compatible: JSON input/model/voice, answer audio), instead of tts_command"},
		{Name: "tts_model", Type: "string", Default: "", Description: "the model field sent to tts_url"},
		{Name: "tts_voice", Type: "string", Default: "", Description: "the voice field sent to tts_url"},
		{Name: "tts_api_key", Type: "string", Default: "", Sensitive: true, Description: "bearer token for tts_url"},
		{Name: "tts_timeout", Type: "string", Default: "30s", Description: "how long speaking one reply may take"},
		{Name: "max_spoken", Type: "number", Default: 1000, Description: "speak at most this many characters of a reply (the text is sent whole); 0: no limit"},
		{Name: "default_mode", Type: "string", Default: "off", Description: `voice replies in a chat that never used /voice: "off", "on" or "auto" (after a voice note)`},
		{Name: "ffmpeg", Type: "string", Default: "ffmpeg", Description: "the ffmpeg program that converts and encodes audio"},
		{Name: "env", Type: "map(string)", Default: map[string]any{}, Description: "environment of the engines' programs besides PATH"},
	}
}

func (p *Plugin) configure(_ context.Context, cfg schema.Config) error {
	c, err := parse(cfg)
	if err != nil {
		return err
	}
	path := ""
	if cfg.DataDir != "" {
		path = filepath.Join(cfg.DataDir, "state.json")
	}
	st, err := openStore(path)
	if err != nil {
		return err
	}
	work := cfg.DataDir
	if work == "" {
		work = os.TempDir()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg, p.st, p.dataDir = c, st, cfg.DataDir
	p.eng = &engine{ffmpeg: c.ffmpeg, env: c.env, work: work, client: &http.Client{}}
	if cfg.Logger != nil {
		p.log = cfg.Logger.Info
	}
	for _, w := range c.warnings {
		p.log("voice: "+w.Summary, "attribute", w.Attribute, "detail", w.Detail)
	}
	return nil
}

// parts returns the configured state; cfg is nil before Configure.
func (p *Plugin) parts() (*config, *engine, *store) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg, p.eng, p.st
}

// isAudio reports whether an attachment is spoken audio.
func isAudio(a hook.Attachment) bool {
	return a.Kind == channel.MediaVoice || a.Kind == channel.MediaAudio
}

// MessageReceived transcribes the message's voice notes and audio files:
// each transcript becomes a note that replaces its audio, so claude reads
// text. Without an engine the audio stays (a file, as without the
// plugin); a failed transcription keeps the audio and says why in a note,
// and the chat is told once per outage. It remembers whether the person
// spoke (for /voice auto) and the transcripts to show.
func (p *Plugin) MessageReceived(ctx context.Context, req hook.ReceivedRequest) (hook.ReceivedResponse, error) {
	c, eng, st := p.parts()
	if c == nil {
		return hook.ReceivedResponse{}, nil
	}
	var audio []hook.Attachment
	for _, a := range req.Attachments {
		if isAudio(a) {
			audio = append(audio, a)
		}
	}
	var res hook.ReceivedResponse
	var transcripts []string
	failed, succeeded := false, false
	if c.stt != nil {
		for i, a := range audio {
			label := "Voice note transcript"
			if len(audio) > 1 {
				label = fmt.Sprintf("Voice note %d transcript", i+1)
			}
			start := time.Now()
			text, err := eng.transcribe(ctx, c.stt, a.Path)
			if err != nil {
				p.log("voice: transcription failed", "session", req.Conversation.SessionKey, "error", err)
				res.Notes = append(res.Notes, hook.Note{Attachment: a.Path, Label: label, Text: "(transcription failed: " + err.Error() + ")"})
				failed = true
				continue
			}
			succeeded = true
			took := time.Since(start)
			p.log("voice: transcribed", "session", req.Conversation.SessionKey, "took", took.Round(time.Millisecond).String())
			res.Step = strings.TrimPrefix(res.Step+" · ", " · ") + "🎙 transcribed in " + seconds(took)
			if text == "" {
				text = "(no speech recognized)"
			}
			if c.maxTranscript > 0 && utf8.RuneCountInString(text) > c.maxTranscript {
				text = string([]rune(text)[:c.maxTranscript]) + "…"
			}
			res.Notes = append(res.Notes, hook.Note{Attachment: a.Path, Label: label, Text: text, Replace: true})
			transcripts = append(transcripts, text)
		}
	}
	err := st.update(req.Conversation.SessionKey, func(ch *chat) {
		ch.Spoke = len(audio) > 0
		// A repeated call (the host restarted before it recorded the
		// answer) finds its lines there already.
		if !slices.ContainsFunc(ch.Shown, func(s shown) bool { return s.Call == req.CallID }) {
			if c.showTranscript {
				for _, t := range transcripts {
					ch.Shown = append(ch.Shown, shown{Call: req.CallID, Text: "🎙 " + t})
				}
			}
			if failed && !ch.STTDown {
				ch.Shown = append(ch.Shown, shown{Call: req.CallID, Text: "🎙 Your voice note could not be transcribed; it was passed on as an audio file."})
			}
		}
		switch {
		case failed:
			ch.STTDown = true
		case succeeded:
			ch.STTDown = false
		}
	})
	if err != nil {
		p.log("voice: state not saved", "error", err)
	}
	return res, nil
}

// MessageSending adds what the chat should see above the reply (the
// transcripts of the voice notes it answers, a notice) and, when the
// chat's mode says so, a voice note of the reply. A failing engine leaves
// the text with one notice per outage. A repeated call (same call id: the
// host restarted before recording the answer) gets the same answer.
func (p *Plugin) MessageSending(ctx context.Context, req hook.SendingRequest) (hook.SendingResponse, error) {
	c, eng, st := p.parts()
	if c == nil {
		return hook.SendingResponse{}, nil
	}
	key := req.Conversation.SessionKey
	ch := st.get(key)
	if ch.Last != nil && ch.Last.Call == req.CallID {
		if res, ok := p.recall(*ch.Last); ok {
			return res, nil
		}
	}
	var before []string
	for _, s := range ch.Shown {
		before = append(before, s.Text)
	}
	mode := ch.Mode
	if mode == "" {
		mode = c.defaultMode
	}
	var res hook.SendingResponse
	var after string
	ttsDown := ch.TTSDown
	if c.tts != nil && (mode == ModeOn || (mode == ModeAuto && ch.Spoke)) {
		if text := speakable(req.Text, c.maxSpoken); text != "" {
			enc := encodingFor(req.VoiceNoteFormat)
			start := time.Now()
			audio, err := eng.speak(ctx, c.tts, text, enc)
			if err != nil {
				p.log("voice: speech failed", "session", key, "error", err)
				if !ttsDown {
					after = "🔇 No voice reply: text-to-speech failed (" + err.Error() + ")."
				}
				ttsDown = true
			} else {
				took := time.Since(start)
				p.log("voice: spoken", "session", key, "took", took.Round(time.Millisecond).String(), "bytes", len(audio))
				res.Step = "🔊 spoken in " + seconds(took)
				ttsDown = false
				kind := channel.MediaAudio
				if enc.ext == oggOpus.ext {
					kind = channel.MediaVoice
				}
				res.Media = []hook.MediaFile{{Filename: "voice" + enc.ext, MIME: enc.mime, Data: audio, Kind: kind}}
			}
		}
	}
	if len(before) > 0 || after != "" {
		parts := append(before, req.Text)
		if after != "" {
			parts = append(parts, after)
		}
		res.Rewrite, res.Text = true, strings.Join(parts, "\n\n")
	}
	zero := !res.Rewrite && len(res.Media) == 0
	if zero && ch.Last == nil && len(ch.Shown) == 0 && ttsDown == ch.TTSDown {
		return res, nil // nothing to remember: most replies in most chats
	}
	var last *answer
	if !zero {
		last = p.remember(key, req.CallID, res)
	} else if ch.Last != nil && ch.Last.Audio != "" && p.dataDir != "" {
		_ = os.Remove(filepath.Join(p.dataDir, ch.Last.Audio))
	}
	err := st.update(key, func(x *chat) {
		x.Shown = slices.DeleteFunc(x.Shown, func(s shown) bool { return slices.Contains(ch.Shown, s) })
		x.TTSDown = ttsDown
		x.Last = last
	})
	if err != nil {
		p.log("voice: state not saved", "error", err)
	}
	return res, nil
}

// remember keeps res as the answer to call: the audio in a file of the
// data directory (one per chat, replaced by the chat's next answer), or in
// memory without one.
func (p *Plugin) remember(key, call string, res hook.SendingResponse) *answer {
	a := &answer{Call: call, Rewrite: res.Rewrite, Text: res.Text, Step: res.Step}
	if len(res.Media) == 0 {
		return a
	}
	m := res.Media[0]
	a.Media = m.Filename
	sum := sha256.Sum256([]byte(key))
	a.Audio = "last-" + hex.EncodeToString(sum[:8]) + filepath.Ext(m.Filename)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dataDir == "" {
		p.audio[a.Audio] = m.Data
		return a
	}
	if err := os.WriteFile(filepath.Join(p.dataDir, a.Audio), m.Data, 0o600); err != nil {
		p.log("voice: the voice note was not kept for a repeated call", "error", err)
		a.Audio = ""
	}
	return a
}

// recall rebuilds a kept answer; false when its audio is gone.
func (p *Plugin) recall(a answer) (hook.SendingResponse, bool) {
	res := hook.SendingResponse{Rewrite: a.Rewrite, Text: a.Text, Step: a.Step}
	if a.Media == "" {
		return res, true
	}
	p.mu.Lock()
	data, ok := p.audio[a.Audio]
	dir := p.dataDir
	p.mu.Unlock()
	if !ok && dir != "" && a.Audio != "" {
		b, err := os.ReadFile(filepath.Join(dir, a.Audio))
		data, ok = b, err == nil
	}
	if !ok {
		return res, false
	}
	enc := mp3
	kind := channel.MediaAudio
	if filepath.Ext(a.Media) == oggOpus.ext {
		enc, kind = oggOpus, channel.MediaVoice
	}
	res.Media = []hook.MediaFile{{Filename: a.Media, MIME: enc.mime, Data: data, Kind: kind}}
	return res, true
}

// seconds is d for a person: "1.4 s".
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
