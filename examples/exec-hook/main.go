// Command clawhost-exec-hook runs a program of yours as a lifecycle hook:
// the host's message_received, message_sending and agent_end calls become
// one run of a configured command each, with the call as JSON on its
// standard input and its decision as JSON on its standard output. Any
// language that reads and writes JSON — a shell script with jq — can so
// filter, rewrite or answer messages without a plugin of its own.
//
//	plugin "gate" {
//	  source   = "exec-hook"
//	  on_error = "drop"          # a failing message_received drops the message
//	  config {
//	    message_received = ["/etc/clawhost/gate.sh"]
//	    message_sending  = ["/etc/clawhost/footer.sh"]
//	    agent_end        = ["/etc/clawhost/log-turn.sh"]
//	    timeout          = "5s"
//	  }
//	}
//
// A hook without a command passes everything through (agent_end: nothing
// runs). The command runs without a shell, with an environment of PATH,
// CLAWHOST_HOOK (the hook's name) and the block's env only. Exit status 0
// with empty output means "no change"; a non-zero exit or output that is
// not the JSON below is the hook failing (the host skips it, or drops the
// message when on_error = "drop").
//
// message_received reads {"call_id", "conversation", "sender", "text",
// "attachments": [{"kind", "path", "mime", "filename", "size"}],
// "message_id"} and may answer {"rewrite": true, "text": "...", "notes":
// [{"attachment", "label", "text", "replace"}], "drop": true,
// "drop_reason": "..."}.
//
// message_sending reads {"call_id", "conversation", "agent", "text",
// "format"} and may answer {"rewrite": true, "text": "...", "suppress":
// true, "media": [{"path", "mime", "kind"}]} (each file is read and sent
// with the reply).
//
// agent_end reads {"call_id", "conversation", "sender", "agent",
// "outcome", "reply_text", "input_tokens", "output_tokens", "cost_usd",
// "tool_steps": [{"name", "summary"}], "duration_ms", "session_id"};
// exit 0 acknowledges it. It is delivered at least once: key what it does
// on call_id.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/program"
	"github.com/clawhost/clawhost/sdk/schema"
)

// settings is the decoded config block.
type settings struct {
	Received []string          `json:"message_received"`
	Sending  []string          `json:"message_sending"`
	End      []string          `json:"agent_end"`
	Timeout  string            `json:"timeout"`
	Env      map[string]string `json:"env"`
	MaxMedia float64           `json:"max_media_bytes"`
}

// runner holds the checked settings.
type runner struct {
	received, sending, end []string
	timeout                time.Duration
	env                    []string
	maxMedia               int64
}

// maxOutput bounds what is read of a command's output.
const maxOutput = 1 << 20

// parse decodes and checks the block, for validate and configure alike.
func parse(cfg schema.Config) (*runner, error) {
	var v settings
	if err := cfg.Decode(&v); err != nil {
		return nil, err
	}
	if v.Timeout == "" {
		v.Timeout = "30s"
	}
	var diags schema.Diagnostics
	for name, c := range map[string][]string{"message_received": v.Received, "message_sending": v.Sending, "agent_end": v.End} {
		if len(c) > 0 && !filepath.IsAbs(c[0]) {
			diags = append(diags, schema.Diagnostic{Attribute: name, Summary: "Not an absolute path",
				Detail: fmt.Sprintf("%q: the program is named by its absolute path (there is no shell and no search of PATH)", c[0])})
		}
	}
	d, err := time.ParseDuration(v.Timeout)
	if err != nil || d <= 0 {
		diags = append(diags, schema.Diagnostic{Attribute: "timeout", Summary: "Invalid duration",
			Detail: fmt.Sprintf("%q is not a positive duration such as \"5s\"", v.Timeout)})
	}
	if len(diags) > 0 {
		return nil, diags
	}
	r := &runner{received: v.Received, sending: v.Sending, end: v.End, timeout: d, maxMedia: int64(v.MaxMedia),
		env: program.Environ(v.Env)}
	if r.maxMedia <= 0 {
		r.maxMedia = 50 << 20
	}
	return r, nil
}

// run runs command for hook with in as JSON on its input and decodes its
// output into out; empty output leaves out as it is.
func (r *runner) run(ctx context.Context, name string, command []string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	stdout, err := program.Run(ctx, program.Cmd{Args: command, Env: slices.Concat(r.env, []string{"CLAWHOST_HOOK=" + name}), Stdin: bytes.NewReader(body), MaxOutput: maxOutput})
	var pe *program.Error
	switch {
	case errors.As(err, &pe) && pe.TimedOut:
		return fmt.Errorf("%s: no answer within %s", name, r.timeout)
	case errors.As(err, &pe) && pe.ExitCode >= 0:
		return fmt.Errorf("%s: exit %d: %s", name, pe.ExitCode, pe.Stderr)
	case err != nil:
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(bytes.TrimSpace(stdout)) == 0 {
		return nil
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		return fmt.Errorf("%s: the output is not the JSON answer: %w", name, err)
	}
	return nil
}

// The JSON the commands read and write.
type (
	conversationJSON struct {
		SessionKey string `json:"session_key"`
		Instance   string `json:"instance"`
		Channel    string `json:"channel"`
		ChatType   string `json:"chat_type"`
		ChatID     string `json:"chat_id"`
		ThreadID   string `json:"thread_id,omitempty"`
	}
	senderJSON struct {
		ID       string `json:"id"`
		Name     string `json:"name,omitempty"`
		Username string `json:"username,omitempty"`
	}
	attachmentJSON struct {
		Kind     string `json:"kind"`
		Path     string `json:"path"`
		MIME     string `json:"mime,omitempty"`
		Filename string `json:"filename,omitempty"`
		Size     int64  `json:"size,omitempty"`
	}
	receivedIn struct {
		CallID       string           `json:"call_id"`
		Conversation conversationJSON `json:"conversation"`
		Sender       senderJSON       `json:"sender"`
		Text         string           `json:"text"`
		Attachments  []attachmentJSON `json:"attachments"`
		MessageID    string           `json:"message_id,omitempty"`
	}
	noteJSON struct {
		Attachment string `json:"attachment"`
		Label      string `json:"label"`
		Text       string `json:"text"`
		Replace    bool   `json:"replace"`
	}
	receivedOut struct {
		Rewrite    bool       `json:"rewrite"`
		Text       string     `json:"text"`
		Notes      []noteJSON `json:"notes"`
		Drop       bool       `json:"drop"`
		DropReason string     `json:"drop_reason"`
	}
	sendingIn struct {
		CallID       string           `json:"call_id"`
		Conversation conversationJSON `json:"conversation"`
		Agent        string           `json:"agent"`
		Text         string           `json:"text"`
		Format       string           `json:"format"`
	}
	mediaJSON struct {
		Path string `json:"path"`
		MIME string `json:"mime"`
		Kind string `json:"kind"`
	}
	sendingOut struct {
		Rewrite  bool        `json:"rewrite"`
		Text     string      `json:"text"`
		Suppress bool        `json:"suppress"`
		Media    []mediaJSON `json:"media"`
	}
	stepJSON struct {
		Name    string `json:"name"`
		Summary string `json:"summary"`
	}
	endIn struct {
		CallID       string           `json:"call_id"`
		Conversation conversationJSON `json:"conversation"`
		Sender       senderJSON       `json:"sender"`
		Agent        string           `json:"agent"`
		Outcome      string           `json:"outcome"`
		ReplyText    string           `json:"reply_text"`
		InputTokens  int64            `json:"input_tokens"`
		OutputTokens int64            `json:"output_tokens"`
		CostUSD      float64          `json:"cost_usd"`
		ToolSteps    []stepJSON       `json:"tool_steps"`
		DurationMS   int64            `json:"duration_ms"`
		SessionID    string           `json:"session_id"`
	}
)

func conversationOf(c command.Conversation) conversationJSON {
	return conversationJSON{SessionKey: c.SessionKey, Instance: c.Instance, Channel: c.Channel, ChatType: string(c.ChatType), ChatID: c.ChatID, ThreadID: c.ThreadID}
}

// plug implements the three hooks over the runner set by Configure.
type plug struct{ r *runner }

var (
	_ hook.Received = (*plug)(nil)
	_ hook.Sending  = (*plug)(nil)
	_ hook.Ender    = (*plug)(nil)
)

func (p *plug) MessageReceived(ctx context.Context, req hook.ReceivedRequest) (hook.ReceivedResponse, error) {
	if p.r == nil || len(p.r.received) == 0 {
		return hook.ReceivedResponse{}, nil
	}
	in := receivedIn{CallID: req.CallID, Conversation: conversationOf(req.Conversation),
		Sender: senderJSON{ID: req.Sender.ID, Name: req.Sender.Name, Username: req.Sender.Username}, Text: req.Text, MessageID: req.MessageID,
		Attachments: []attachmentJSON{}}
	for _, a := range req.Attachments {
		in.Attachments = append(in.Attachments, attachmentJSON{Kind: string(a.Kind), Path: a.Path, MIME: a.MIME, Filename: a.Filename, Size: a.Size})
	}
	var out receivedOut
	if err := p.r.run(ctx, "message_received", p.r.received, in, &out); err != nil {
		return hook.ReceivedResponse{}, err
	}
	res := hook.ReceivedResponse{Rewrite: out.Rewrite, Text: out.Text, Drop: out.Drop, DropReason: out.DropReason}
	for _, n := range out.Notes {
		res.Notes = append(res.Notes, hook.Note(n))
	}
	return res, nil
}

func (p *plug) MessageSending(ctx context.Context, req hook.SendingRequest) (hook.SendingResponse, error) {
	if p.r == nil || len(p.r.sending) == 0 {
		return hook.SendingResponse{}, nil
	}
	in := sendingIn{CallID: req.CallID, Conversation: conversationOf(req.Conversation), Agent: req.Agent, Text: req.Text, Format: string(req.Format)}
	var out sendingOut
	if err := p.r.run(ctx, "message_sending", p.r.sending, in, &out); err != nil {
		return hook.SendingResponse{}, err
	}
	res := hook.SendingResponse{Rewrite: out.Rewrite, Text: out.Text, Suppress: out.Suppress}
	for _, m := range out.Media {
		data, err := readFile(m.Path, p.r.maxMedia)
		if err != nil {
			return hook.SendingResponse{}, fmt.Errorf("message_sending: media %s: %w", m.Path, err)
		}
		res.Media = append(res.Media, hook.MediaFile{Filename: filepath.Base(m.Path), MIME: m.MIME, Data: data, Kind: channel.MediaKind(m.Kind)})
	}
	return res, nil
}

// readFile reads a file of at most max bytes.
func readFile(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%d bytes, over max_media_bytes (%d)", fi.Size(), max)
	}
	return os.ReadFile(path)
}

func (p *plug) AgentEnd(ctx context.Context, end hook.End) error {
	if p.r == nil || len(p.r.end) == 0 {
		return nil
	}
	in := endIn{CallID: end.CallID, Conversation: conversationOf(end.Conversation),
		Sender: senderJSON{ID: end.Sender.ID, Name: end.Sender.Name, Username: end.Sender.Username}, Agent: end.Agent, Outcome: string(end.Outcome),
		ReplyText: end.ReplyText, InputTokens: end.InputTokens, OutputTokens: end.OutputTokens, CostUSD: end.CostUSD,
		DurationMS: end.Duration.Milliseconds(), SessionID: end.SessionID, ToolSteps: []stepJSON{}}
	for _, s := range end.ToolSteps {
		in.ToolSteps = append(in.ToolSteps, stepJSON(s))
	}
	var ignored struct{}
	return p.r.run(ctx, "agent_end", p.r.end, in, &ignored)
}

func plugin() sdk.Plugin {
	p := &plug{}
	return sdk.Plugin{
		Name:    "exec-hook",
		Version: "0.1.0",
		Schema: schema.Schema{
			{Name: "message_received", Type: "list(string)", Default: []any{}, Description: "the program (absolute path) and arguments run for each inbound message before the queue; empty: pass"},
			{Name: "message_sending", Type: "list(string)", Default: []any{}, Description: "the program and arguments run for each reply before the outbox; empty: send as is"},
			{Name: "agent_end", Type: "list(string)", Default: []any{}, Description: "the program and arguments run after each turn (at least once per call_id); empty: none"},
			{Name: "timeout", Type: "string", Default: "30s", Description: "how long one run may take (the host's messages.hook_timeout bounds it too)"},
			{Name: "env", Type: "map(string)", Default: map[string]any{}, Description: "environment of the programs besides PATH and CLAWHOST_HOOK"},
			{Name: "max_media_bytes", Type: "number", Default: 0, Description: "largest file message_sending may add; 0: 50 MiB"},
		},
		Validate: func(_ context.Context, cfg schema.Config) error {
			_, err := parse(cfg)
			return err
		},
		Configure: func(_ context.Context, cfg schema.Config) error {
			r, err := parse(cfg)
			if err != nil {
				return err
			}
			p.r = r
			return nil
		},
		MessageReceived: p,
		MessageSending:  p,
		AgentEnd:        p,
	}
}

func main() { os.Exit(sdk.Serve(plugin())) }
