package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk/program"
)

// maxOutput bounds what is read of an engine's answer: a transcript, or
// the audio of a spoken reply.
const maxOutput = 32 << 20

// engine runs the configured commands and APIs. Every call is bounded by
// its timeout and runs without a shell, with an environment of PATH and
// the block's env only.
type engine struct {
	ffmpeg string
	env    []string
	client *http.Client
	// work is where temporary audio files are made (the data directory).
	work string
}

// Audio encodings a voice reply is made in.
type encoding struct {
	ext, mime string
	args      []string // ffmpeg's output options
}

var (
	// oggOpus is a voice note: Telegram and WhatsApp show it as one.
	oggOpus = encoding{ext: ".ogg", mime: "audio/ogg", args: []string{"-c:a", "libopus", "-b:a", "32k", "-ac", "1", "-ar", "48000", "-f", "ogg"}}
	// mp3 is an audio file every client plays.
	mp3 = encoding{ext: ".mp3", mime: "audio/mpeg", args: []string{"-c:a", "libmp3lame", "-q:a", "5", "-ac", "1", "-f", "mp3"}}
)

// encodingFor is the encoding for a voice reply to a channel whose voice
// notes take format (channel.Capabilities.VoiceNoteFormat): a voice note
// where the channel has them in Ogg Opus, an MP3 file everywhere else.
func encodingFor(format string) encoding {
	if mt, _, err := mime.ParseMediaType(format); err == nil && mt == oggOpus.mime {
		return oggOpus
	}
	return mp3
}

// tempDir makes a directory for one call's files; the caller removes it.
func (e *engine) tempDir() (string, error) {
	return os.MkdirTemp(e.work, "voice-")
}

// run runs args with stdin, returning its standard output; the error
// (a *program.Error) carries the exit status and the start of its
// standard error.
func (e *engine) run(ctx context.Context, args []string, stdin io.Reader) ([]byte, error) {
	return program.Run(ctx, program.Cmd{Args: args, Env: e.env, Stdin: stdin, MaxOutput: maxOutput})
}

// What ffmpeg may read of an audio file: a chat sent it (a voice note) or
// an engine made it (a spoken answer), so it is untrusted either way.
//
// A file's own bytes choose ffmpeg's demuxer, and some demuxers open other
// files or URLs the file names: an HLS playlist (#EXTM3U) its segments, an
// ffconcat list its files, others sub-files, images, network streams. So
// the demuxer is one of the containers the platforms and engines send,
// none of which opens another file (mov's data references stay off, as is
// ffmpeg's default); the only protocol is file, for this one file (no
// network, no pipe, subfile, concat or data); and what comes out is
// bounded in length and size, so a small file cannot decode into a full
// disk. The caller's context bounds the time.
const (
	// inputFormats are the demuxers ffmpeg may pick for an input: OGG
	// (Telegram, WhatsApp, Discord voice), MP3, WAV, FLAC, MP4/M4A
	// (iOS, Slack), Matroska/WebM (browsers), AAC and AMR (WhatsApp and
	// Signal audio), CAF.
	inputFormats = "ogg,mp3,wav,flac,mov,matroska,aac,amr,amrnb,amrwb,caf"
	// maxInput is the largest audio file ffmpeg is given.
	maxInput = 128 << 20
	// maxSeconds bounds the audio ffmpeg writes: an hour.
	maxSeconds = "3600"
	// maxDecoded bounds the bytes ffmpeg writes (an hour of 16 kHz mono
	// WAV is 115 MB).
	maxDecoded = "268435456"
)

// convert has ffmpeg turn the audio file in into out with the output
// options args, reading in with every path beyond it closed (see
// inputFormats).
func (e *engine) convert(ctx context.Context, in, out string, args ...string) error {
	st, err := os.Stat(in)
	if err != nil {
		return err
	}
	if st.Size() > maxInput {
		return fmt.Errorf("the audio is larger than the %d MB ffmpeg is given", maxInput>>20)
	}
	cmd := []string{e.ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-protocol_whitelist", "file", "-format_whitelist", inputFormats, "-i", "file:" + in}
	cmd = append(append(cmd, args...), "-t", maxSeconds, "-fs", maxDecoded, out)
	_, err = e.run(ctx, cmd, nil)
	return err
}

// stt is a speech-to-text engine: a command or an HTTP API.
type stt struct {
	command []string
	url     string
	model   string
	apiKey  string
	timeout time.Duration
}

// transcribe returns the text spoken in the audio file at path.
func (e *engine) transcribe(ctx context.Context, s *stt, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var out []byte
	var err error
	if s.url != "" {
		out, err = e.transcribeHTTP(ctx, s, path)
	} else {
		out, err = e.transcribeCommand(ctx, s, path)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("no result within %s", s.timeout)
		}
		return "", err
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(out), "\uFFFD")), nil
}

// transcribeCommand runs the command: {file} is the audio as received,
// {wav} the same converted to 16 kHz mono WAV (what whisper.cpp reads).
func (e *engine) transcribeCommand(ctx context.Context, s *stt, path string) ([]byte, error) {
	args := make([]string, len(s.command))
	wav := ""
	for i, a := range s.command {
		if strings.Contains(a, "{wav}") && wav == "" {
			dir, err := e.tempDir()
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(dir)
			wav = filepath.Join(dir, "audio.wav")
			if err := e.convert(ctx, path, wav, "-ar", "16000", "-ac", "1", "-c:a", "pcm_s16le"); err != nil {
				return nil, fmt.Errorf("convert to wav: %w", err)
			}
		}
		a = strings.ReplaceAll(a, "{file}", path)
		args[i] = strings.ReplaceAll(a, "{wav}", wav)
	}
	return e.run(ctx, args, nil)
}

// transcribeHTTP posts the file as multipart field "file" (with "model"
// when set), the form of OpenAI-compatible transcription APIs
// (whisper.cpp's server, faster-whisper servers, hosted ones). The answer
// is JSON with "text", or the text itself.
func (e *engine) transcribeHTTP(ctx context.Context, s *stt, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if s.model != "" {
		_ = w.WriteField("model", s.model)
	}
	part, err := w.CreateFormFile("file", filepath.Base(path))
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(part, io.LimitReader(f, maxOutput)); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	out, ctype, err := e.post(ctx, s.url, s.apiKey, w.FormDataContentType(), &body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(ctype, "application/json") {
		var v struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			return nil, fmt.Errorf("speech-to-text API: answer is not JSON with text: %w", err)
		}
		return []byte(v.Text), nil
	}
	return out, nil
}

// post sends body to endpoint and returns the answer of a 2xx status. The API
// key goes in an Authorization header and never into an error.
func (e *engine) post(ctx context.Context, endpoint, apiKey, ctype string, body io.Reader) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, body)
	if err != nil {
		return nil, "", errors.New("invalid API URL")
	}
	req.Header.Set("Content-Type", ctype)
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// Not the url.Error's text: the URL may carry a key.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", fmt.Errorf("%s: %w", req.URL.Host, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", req.URL.Host, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, "", fmt.Errorf("%s: %s", req.URL.Host, resp.Status)
	}
	return out, resp.Header.Get("Content-Type"), nil
}

// tts is a text-to-speech engine: a command or an HTTP API.
type tts struct {
	command []string
	url     string
	model   string
	voice   string
	apiKey  string
	timeout time.Duration
}

// speak returns text spoken, encoded as enc.
func (e *engine) speak(ctx context.Context, t *tts, text string, enc encoding) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	b, err := e.speakEncoded(ctx, t, text, enc)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("no result within %s", t.timeout)
	}
	return b, err
}

func (e *engine) speakEncoded(ctx context.Context, t *tts, text string, enc encoding) ([]byte, error) {
	dir, err := e.tempDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	raw := filepath.Join(dir, "speech")
	if t.url != "" {
		body := map[string]string{"input": text}
		if t.model != "" {
			body["model"] = t.model
		}
		if t.voice != "" {
			body["voice"] = t.voice
		}
		j, _ := json.Marshal(body)
		audio, _, err := e.post(ctx, t.url, t.apiKey, "application/json", bytes.NewReader(j))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(raw, audio, 0o600); err != nil {
			return nil, err
		}
	} else {
		// The text on stdin; the audio in {out}, else on stdout.
		args := make([]string, len(t.command))
		toFile := false
		for i, a := range t.command {
			if strings.Contains(a, "{out}") {
				toFile = true
			}
			args[i] = strings.ReplaceAll(a, "{out}", raw)
		}
		out, err := e.run(ctx, args, strings.NewReader(text))
		if err != nil {
			return nil, err
		}
		if !toFile {
			if err := os.WriteFile(raw, out, 0o600); err != nil {
				return nil, err
			}
		}
	}
	if st, err := os.Stat(raw); err != nil || st.Size() == 0 {
		return nil, errors.New("the engine made no audio")
	}
	encoded := filepath.Join(dir, "voice"+enc.ext)
	if err := e.convert(ctx, raw, encoded, enc.args...); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return os.ReadFile(encoded)
}
