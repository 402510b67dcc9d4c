// Command clawhost-transcribe-hook is a before_agent_start hook that turns
// voice notes into text claude can read: for each audio attachment of the
// turn it runs a configured command (whisper.cpp's CLI, say) and prepends
// the transcript to the prompt.
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
// or outlives its timeout gives a short note instead: a voice note never
// blocks the turn. The host bounds the whole hook with messages.hook_timeout
// (5s by default): raise it for transcription.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/hook"
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
		env: []string{"PATH=" + os.Getenv("PATH")}}
	for k, val := range v.Env {
		t.env = append(t.env, k+"="+val)
	}
	return t, nil
}

type plug struct{ t *transcriber }

func (p *plug) BeforeAgentStart(ctx context.Context, req hook.Request) (hook.Response, error) {
	t := p.t
	if t == nil {
		return hook.Response{}, nil
	}
	var notes []string
	for _, a := range req.Attachments {
		if !slices.Contains(t.kinds, string(a.Kind)) {
			continue
		}
		if t.maxBytes > 0 && a.Size > t.maxBytes {
			notes = append(notes, fmt.Sprintf("(not transcribed: %d bytes, over max_bytes)", a.Size))
			continue
		}
		notes = append(notes, t.transcribe(ctx, a.Path))
	}
	switch len(notes) {
	case 0:
		return hook.Response{}, nil
	case 1:
		return hook.Response{PrependContext: "[Voice note transcript]\n" + notes[0]}, nil
	}
	var b strings.Builder
	for i, n := range notes {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[Voice note %d transcript]\n%s", i+1, n)
	}
	return hook.Response{PrependContext: b.String()}, nil
}

// transcribe runs the command for the file at path and returns its
// output, or a note saying why there is none.
func (t *transcriber) transcribe(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	args := make([]string, len(t.command))
	for i, a := range t.command {
		args[i] = strings.ReplaceAll(a, "{file}", path)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = t.env
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	var out, errb limited
	out.max, errb.max = maxOutput, 4096
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("(transcription failed: no result within %s)", t.timeout)
	case err != nil:
		why := strings.TrimSpace(errb.String())
		if why == "" {
			why = err.Error()
		}
		if r := []rune(why); len(r) > 200 {
			why = string(r[:200]) + "…"
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			why = fmt.Sprintf("exit %d: %s", ee.ExitCode(), why)
		}
		return "(transcription failed: " + why + ")"
	}
	text := strings.TrimSpace(strings.ToValidUTF8(out.String(), "\uFFFD"))
	if text == "" {
		return "(no speech recognized)"
	}
	if t.maxTranscript > 0 && utf8.RuneCountInString(text) > t.maxTranscript {
		text = string([]rune(text)[:t.maxTranscript]) + "…"
	}
	return text
}

// limited keeps the first max bytes written to it and drops the rest.
type limited struct {
	bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
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
		Hook: p,
	}
}

func main() { os.Exit(sdk.Serve(plugin())) }
