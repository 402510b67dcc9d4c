package mcpchannel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Send implements channel.Channel through the server's reply tool:
// chat_id, text, reply_to and files (the media's paths). What the outcome
// means for delivery:
//   - no server running (it is restarting): channel.CodeUnavailable, the
//     call was never written and the host sends it again later;
//   - the call written and the server gone or silent before its answer:
//     channel.CodeUncertain, the platform may have the message; the host
//     does not repeat it and tells the chat a part may be missing;
//   - the tool's own error (isError): a recognised platform refusal
//     (chat not found, not allowlisted, unauthorized) gets its code,
//     anything else is channel.CodeUncertain — a reply the server splits
//     may have posted its first part.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	s, err := a.current(ctx)
	if err != nil {
		return channel.SendResponse{}, channel.Errorf(channel.CodeUnavailable, "the channel server is not running (restarting)")
	}
	if n := channel.TextLen(req.Text, channel.LengthUTF16); n > a.textLimit() {
		// The host splits to the limit; the server would split on its own
		// and post parts the host does not know of.
		return channel.SendResponse{}, channel.Errorf(channel.CodeMessageTooLong, "%d UTF-16 units, over the limit of %d", n, a.textLimit())
	}
	tool := s.tools[toolReply]
	text := req.Text
	args := map[string]any{}
	put(tool, args, "chat_id", req.ChatID)
	put(tool, args, "reply_to", req.ReplyToMessageID)
	if len(req.Media) > 0 {
		if !declares(tool, "files") {
			return channel.SendResponse{}, channel.Errorf(channel.CodeUnsupported, "the channel server's reply tool takes no files")
		}
		files := make([]string, 0, len(req.Media))
		var captions []string
		for _, m := range req.Media {
			files = append(files, m.Path)
			if m.Caption != "" {
				captions = append(captions, m.Caption)
			}
		}
		args["files"] = files
		if text == "" {
			text = strings.Join(captions, "\n")
		}
	}
	allow, deny, question := allowDeny(req.Buttons)
	if len(req.Buttons) > 0 {
		text = withLabels(text, req.Buttons)
	}
	args["text"] = text
	res, err := s.call(ctx, toolReply, args)
	if err != nil {
		return channel.SendResponse{}, sendError(err)
	}
	ids := messageIDs(res)
	if question && a.relaying() && s.permission {
		a.ask(ctx, s, req, ids, allow, deny)
	}
	return channel.SendResponse{MessageIDs: ids}, nil
}

// Edit implements channel.Editor through the server's edit_message tool.
// An edit is idempotent: a call whose answer was lost fails with
// channel.CodeUnavailable, so the host may repeat it.
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	s, err := a.current(ctx)
	if err != nil {
		return channel.Errorf(channel.CodeUnavailable, "the channel server is not running (restarting)")
	}
	if n := channel.TextLen(req.Text, channel.LengthUTF16); n > a.textLimit() {
		return channel.Errorf(channel.CodeMessageTooLong, "%d UTF-16 units, over the limit of %d", n, a.textLimit())
	}
	tool := s.tools[toolEdit]
	if tool == nil {
		return channel.Errorf(channel.CodeUnsupported, "the channel server has no %s tool", toolEdit)
	}
	args := map[string]any{"message_id": req.MessageID, "text": withLabels(req.Text, req.Buttons)}
	put(tool, args, "chat_id", req.ChatID)
	_, err = s.call(ctx, toolEdit, args)
	return idempotentError(err)
}

// React implements channel.Reactor through the server's react tool. The
// contract has no way to take a reaction back: Remove is unsupported.
func (a *Adapter) React(ctx context.Context, req channel.ReactRequest) error {
	s, err := a.current(ctx)
	if err != nil {
		return channel.Errorf(channel.CodeUnavailable, "the channel server is not running (restarting)")
	}
	tool := s.tools[toolReact]
	if tool == nil || req.Remove {
		return channel.Errorf(channel.CodeUnsupported, "the channel server cannot do this reaction")
	}
	args := map[string]any{"message_id": req.MessageID, "emoji": req.Emoji}
	put(tool, args, "chat_id", req.ChatID)
	_, err = s.call(ctx, toolReact, args)
	return idempotentError(err)
}

// Media references of inbound attachments (InboundMessage.Media's Ref).
const (
	// refPath: a file the server wrote and named in meta (image_path,
	// file_path, …).
	refPath = "path:"
	// refFile: an attachment the server's download_attachment tool
	// fetches by its attachment_file_id.
	refFile = "file:"
)

// DownloadMedia implements channel.MediaDownloader: the host copies an
// attachment into its media store and checks it like any upload. A path
// must name a regular file; a file id is fetched with the server's
// download_attachment tool first.
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	path, ok := strings.CutPrefix(req.Ref, refPath)
	if id, isFile := strings.CutPrefix(req.Ref, refFile); isFile {
		s, err := a.current(ctx)
		if err != nil {
			return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeUnavailable, "the channel server is not running (restarting)")
		}
		if s.tools[toolDownload] == nil {
			return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeUnsupported, "the channel server has no %s tool", toolDownload)
		}
		res, err := s.call(ctx, toolDownload, map[string]any{"file_id": id})
		if err != nil {
			return nil, channel.MediaInfo{}, idempotentError(err)
		}
		path, ok = strings.TrimSpace(resultText(res)), true
	}
	if !ok || !filepath.IsAbs(path) {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "not an attachment of this channel")
	}
	max := req.MaxBytes
	if max <= 0 || max > int64(a.cfg.MaxDownloadBytes) {
		max = int64(a.cfg.MaxDownloadBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeChatNotFound, "the attachment is gone: %v", err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "the attachment is not a regular file")
	}
	if st.Size() > max {
		f.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "the attachment has %d bytes, over the limit of %d", st.Size(), max)
	}
	return f, channel.MediaInfo{MIME: mimeOf(path), Size: st.Size()}, nil
}

// toolError is a tool's own error result (isError), with its text.
type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }

// callError: the call was written, and no answer came (the server died,
// the connection broke, ctx ended).
type callError struct{ err error }

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// call calls a tool of s. errNotSent: s was gone before the call; a
// *callError: written but unanswered; a *toolError: the tool failed.
func (s *server) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if !s.alive() {
		return nil, errNotSent
	}
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, &callError{err: err}
	}
	if res.IsError {
		return nil, &toolError{text: resultText(res)}
	}
	return res, nil
}

// sendError maps a failed reply to its code (see Send).
func sendError(err error) error {
	var te *toolError
	var ce *callError
	switch {
	case errors.Is(err, errNotSent):
		return channel.Errorf(channel.CodeUnavailable, "%v", err)
	case errors.As(err, &te):
		if code, ok := refusal(te.text); ok {
			return channel.Errorf(code, "the channel server refused the reply: %s", te.text)
		}
		return channel.Errorf(channel.CodeUncertain, "the channel server's reply failed, perhaps after a part was posted: %s", te.text)
	case errors.As(err, &ce):
		return channel.Errorf(channel.CodeUncertain, "the channel server took the reply and did not answer: %v", ce.err)
	}
	return channel.Errorf(channel.CodeInternal, "%v", err)
}

// idempotentError maps a failed edit, reaction or download: an unanswered
// call may be repeated.
func idempotentError(err error) error {
	if err == nil {
		return nil
	}
	var te *toolError
	if errors.As(err, &te) {
		if code, ok := refusal(te.text); ok {
			return channel.Errorf(code, "the channel server refused: %s", te.text)
		}
		return channel.Errorf(channel.CodeInvalidRequest, "the channel server refused: %s", te.text)
	}
	return channel.Errorf(channel.CodeUnavailable, "%v", err)
}

// refusal recognises a tool error that certainly posted nothing: the
// official servers' allowlist check and the platforms' refusals as their
// libraries word them.
func refusal(text string) (channel.Code, bool) {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "not allowlisted"), strings.Contains(t, "forbidden"), statusRE("403").MatchString(t):
		return channel.CodeForbidden, true
	case strings.Contains(t, "chat not found"), strings.Contains(t, "unknown channel"), strings.Contains(t, "unknown chat"):
		return channel.CodeChatNotFound, true
	case strings.Contains(t, "unauthorized"), statusRE("401").MatchString(t):
		return channel.CodeUnauthorized, true
	case strings.Contains(t, "unknown tool"):
		return channel.CodeUnsupported, true
	}
	return "", false
}

// statusRE matches an HTTP status as the platforms' libraries write it in
// their errors ("(403: Forbidden…", "403 Forbidden"), not a number that
// merely contains it (a message id).
func statusRE(code string) *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^0-9a-z])` + code + `(?:[: ]|$)`)
}

// resultText joins a result's text contents.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// idsRE finds the ids in the official servers' answers: "sent (id: 42)",
// "sent 2 parts (ids: 42, 43)", fakechat's "sent (m17-1)".
var idsRE = regexp.MustCompile(`\((?:ids?: )?([^()]+)\)`)

// messageIDs reads the posted messages' ids from a reply's result: a
// structured message_ids (or message_id), else the text. None when the
// server names none (iMessage's "sent"): the host then cannot edit it.
func messageIDs(res *mcp.CallToolResult) []string {
	if m, ok := res.StructuredContent.(map[string]any); ok {
		switch v := m["message_ids"].(type) {
		case []any:
			var ids []string
			for _, x := range v {
				ids = append(ids, fmt.Sprint(x))
			}
			return ids
		}
		if v, ok := m["message_id"]; ok {
			return []string{fmt.Sprint(v)}
		}
	}
	m := idsRE.FindStringSubmatch(resultText(res))
	if m == nil {
		return nil
	}
	var ids []string
	for _, id := range strings.Split(m[1], ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// put sets args[name] to a non-empty v when the tool takes name (or says
// nothing of its arguments).
func put(tool *mcp.Tool, args map[string]any, name, v string) {
	if v != "" && (declares(tool, name) || properties(tool) == nil) {
		args[name] = v
	}
}

// declares reports whether the tool's input schema names the property.
func declares(tool *mcp.Tool, name string) bool {
	_, ok := properties(tool)[name]
	return ok
}

// properties are the properties of the tool's input schema; nil when it
// names none.
func properties(tool *mcp.Tool) map[string]json.RawMessage {
	if tool == nil || tool.InputSchema == nil {
		return nil
	}
	b, err := json.Marshal(tool.InputSchema)
	if err != nil {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return s.Properties
}
