// Command clawhost-transcribe-hook is a message_received hook that turns
// voice notes into text claude can read: for each audio attachment of an
// inbound message it runs a configured command (whisper.cpp's CLI, say),
// before the message is queued, and the transcript replaces the audio.
//
//	plugin "transcribe" {
//	  source = "transcribe-hook"
//	  config {
//	    command = ["/usr/local/bin/transcribe.sh", "{file}"]
//	    timeout = "60s"
//	  }
//	}
//
// The command runs without a shell, `{file}` in an argument replaced by the
// attachment's absolute path, with an environment of PATH and the block's
// env only; its standard output is the transcript. A command that fails
// or outlives its timeout gives a short note instead, and the audio stays:
// a voice note is never lost. The host bounds the whole hook with
// messages.hook_timeout (5s by default): raise it for transcription. The
// transcript is recorded with the message, so a restart does not
// transcribe it again.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/program"
	"github.com/clawhost/clawhost/sdk/schema"
)

// settings is the decoded config block.
type settings struct {
	Command       []string          `json:"command"`
	Timeout       string            `json:"timeout"`
	Kinds         []string          `json:"kinds"`
	MaxBytes      float64           `json:"max_bytes"`
	MaxTranscript float64           `json:"max_transcript"`
	Env           map[string]string `json:"env"`
}

// transcriber holds the checked settings.
type transcriber struct {
	command       []string
	timeout       time.Duration
	kinds         []string
	maxBytes      int64
	maxTranscript int
	env           []string
}

// maxOutput bounds what is read of the command's output.
const maxOutput = 1 << 20

// parse decodes and checks the block: the one check of this plugin,
// shared by validate and configure.
func parse(cfg schema.Config) (*transcriber, error) {
	var v settings
	if err := cfg.Decode(&v); err != nil {
		return nil, err
	}
	// The host fills in the schema's defaults; a direct caller may not.
	if v.Timeout == "" {
		v.Timeout = "60s"
	}
	if v.Kinds == nil {
		v.Kinds = []string{"voice", "audio"}
	}
	var diags schema.Diagnostics
	if len(v.Command) == 0 || strings.TrimSpace(v.Command[0]) == "" {
		diags = append(diags, schema.Diagnostic{Attribute: "command", Summary: "No command",
			Detail: `command is the program and its arguments, e.g. ["whisper-cli", "-m", "/models/ggml-base.en.bin", "-nt", "-f", "{file}"]`})
	}
	d, err := time.ParseDuration(v.Timeout)
	if err != nil || d <= 0 {
		diags = append(diags, schema.Diagnostic{Attribute: "timeout", Summary: "Invalid duration",
			Detail: fmt.Sprintf("%q is not a positive duration such as \"60s\"", v.Timeout)})
	}
	if len(diags) > 0 {
		return nil, diags
	}
	t := &transcriber{command: v.Command, timeout: d, kinds: v.Kinds, maxBytes: int64(v.MaxBytes), maxTranscript: int(v.MaxTranscript),
		env: program.Environ(v.Env)}
	return t, nil
}

type plug struct{ t *transcriber }

var _ hook.Received = (*plug)(nil)

// MessageReceived transcribes the message's audio attachments before the
// queue: each transcript becomes a note that replaces its audio, so the
// agent reads text. An attachment over max_bytes, or one whose
// transcription failed, keeps its audio and gets a note saying why.
func (p *plug) MessageReceived(ctx context.Context, req hook.ReceivedRequest) (hook.ReceivedResponse, error) {
	t := p.t
	if t == nil {
		return hook.ReceivedResponse{}, nil
	}
	var audio []hook.Attachment
	for _, a := range req.Attachments {
		if slices.Contains(t.kinds, string(a.Kind)) {
			audio = append(audio, a)
		}
	}
	var res hook.ReceivedResponse
	for i, a := range audio {
		label := "Voice note transcript"
		if len(audio) > 1 {
			label = fmt.Sprintf("Voice note %d transcript", i+1)
		}
		if t.maxBytes > 0 && a.Size > t.maxBytes {
			res.Notes = append(res.Notes, hook.Note{Attachment: a.Path, Label: label, Text: fmt.Sprintf("(not transcribed: %d bytes, over max_bytes)", a.Size)})
			continue
		}
		text, ok := t.transcribe(ctx, a.Path)
		res.Notes = append(res.Notes, hook.Note{Attachment: a.Path, Label: label, Text: text, Replace: ok})
	}
	return res, nil
}

// transcribe runs the command for the file at path and returns its
// output (ok), or a note saying why there is none.
func (t *transcriber) transcribe(ctx context.Context, path string) (text string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	args := make([]string, len(t.command))
	for i, a := range t.command {
		args[i] = strings.ReplaceAll(a, "{file}", path)
	}
	out, err := program.Run(ctx, program.Cmd{Args: args, Env: t.env, MaxOutput: maxOutput})
	var pe *program.Error
	switch {
	case errors.As(err, &pe) && pe.TimedOut:
		return fmt.Sprintf("(transcription failed: no result within %s)", t.timeout), false
	case errors.As(err, &pe):
		why := pe.Stderr
		if pe.ExitCode >= 0 {
			why = strings.TrimSuffix(fmt.Sprintf("exit %d: %s", pe.ExitCode, why), ": ")
		} else if why == "" {
			why = pe.Err.Error()
		}
		return "(transcription failed: " + why + ")", false
	case err != nil:
		return "(transcription failed: " + err.Error() + ")", false
	}
	text = strings.TrimSpace(strings.ToValidUTF8(string(out), "\uFFFD"))
	if text == "" {
		return "(no speech recognized)", true
	}
	if t.maxTranscript > 0 && utf8.RuneCountInString(text) > t.maxTranscript {
		text = string([]rune(text)[:t.maxTranscript]) + "…"
	}
	return text, true
}

func plugin() sdk.Plugin {
	p := &plug{}
	return sdk.Plugin{
		Name:    "transcribe-hook",
		Version: "0.1.0",
		Schema: schema.Schema{
			{Name: "command", Type: "list(string)", Required: true, Description: `the transcriber and its arguments; "{file}" is replaced by the audio file's path; its output is the transcript`},
			{Name: "timeout", Type: "string", Default: "60s", Description: "how long one transcription may take"},
			{Name: "kinds", Type: "list(string)", Default: []any{"voice", "audio"}, Description: "attachment kinds to transcribe"},
			{Name: "max_bytes", Type: "number", Default: 0, Description: "skip larger files; 0: no limit"},
			{Name: "max_transcript", Type: "number", Default: 4000, Description: "cut a transcript at this many characters; 0: no limit"},
			{Name: "env", Type: "map(string)", Default: map[string]any{}, Description: "environment of the command besides PATH"},
		},
		Validate: func(_ context.Context, cfg schema.Config) error {
			_, err := parse(cfg)
			return err
		},
		Configure: func(_ context.Context, cfg schema.Config) error {
			t, err := parse(cfg)
			if err != nil {
				return err
			}
			p.t = t
			return nil
		},
		MessageReceived: p,
	}
}

func main() { os.Exit(sdk.Serve(plugin())) }
