package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Upload limits of the cloud Bot API.
const (
	maxPhotoBytes    = 10 << 20
	maxDocumentBytes = 50 << 20
)

// Send implements channel.Channel. The text (if any) goes first, then each
// media file: images with sendPhoto, everything else with sendDocument
// (multipart upload of the local file). Only the first message replies to
// ReplyToMessageID. Markdown becomes Telegram HTML; if Telegram refuses the
// HTML ("can't parse entities"), or its visible text would exceed the
// limit, the same text is sent without parse_mode. Text longer than the
// limit is refused with message_too_long before any request.
//
// On failure the response lists the messages already posted and the error
// is a *channel.Error.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	var resp channel.SendResponse
	if a.api == nil {
		return resp, channel.Errorf(channel.CodeInternal, "send before configure")
	}
	base, err := a.baseParams(req.ChatID, req.ThreadID)
	if err != nil {
		return resp, err
	}
	if req.Silent {
		base["disable_notification"] = "true"
	}
	reply := req.ReplyToMessageID
	replyParams := func(p tgbotapi.Params) error {
		if reply == "" {
			return nil
		}
		id, err := strconv.Atoi(reply)
		if err != nil {
			return channel.Errorf(channel.CodeInvalidRequest, "reply_to message id %q is not a Telegram message id", reply)
		}
		p["reply_parameters"] = fmt.Sprintf(`{"message_id":%d,"allow_sending_without_reply":true}`, id)
		reply = ""
		return nil
	}
	if strings.TrimSpace(req.Text) == "" && len(req.Media) == 0 {
		return resp, channel.Errorf(channel.CodeInvalidRequest, "nothing to send: empty text and no media")
	}
	if strings.TrimSpace(req.Text) != "" {
		p := clone(base)
		if err := replyParams(p); err != nil {
			return resp, err
		}
		if a.cfg.DisableWebPagePreview || req.DisableLinkPreview {
			p["link_preview_options"] = `{"is_disabled":true}`
		}
		id, err := a.sendText(ctx, "sendMessage", p, req.Text, req.Format)
		if err != nil {
			return resp, err
		}
		resp.MessageIDs = append(resp.MessageIDs, id)
	}
	for _, m := range req.Media {
		p := clone(base)
		if err := replyParams(p); err != nil {
			return resp, err
		}
		ids, err := a.sendMedia(ctx, p, m)
		resp.MessageIDs = append(resp.MessageIDs, ids...)
		if err != nil {
			return resp, err
		}
	}
	return resp, nil
}

func clone(p tgbotapi.Params) tgbotapi.Params {
	out := make(tgbotapi.Params, len(p)+4)
	for k, v := range p {
		out[k] = v
	}
	return out
}

func (a *Adapter) baseParams(chatID, threadID string) (tgbotapi.Params, error) {
	if chatID == "" {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "chat id is empty")
	}
	p := tgbotapi.Params{"chat_id": chatID}
	if threadID != "" {
		if _, err := strconv.Atoi(threadID); err != nil {
			return nil, channel.Errorf(channel.CodeInvalidRequest, "thread id %q is not a Telegram topic id", threadID)
		}
		p["message_thread_id"] = threadID
	}
	return p, nil
}

func (a *Adapter) textLimit() int {
	if a.cfg.TextLimit > 0 {
		return int(a.cfg.TextLimit)
	}
	return MaxTextLength
}

// sendText posts text with method (sendMessage or editMessageText) and
// returns the message id. It tries HTML first for markdown and falls back
// to plain text.
func (a *Adapter) sendText(ctx context.Context, method string, p tgbotapi.Params, text, format string) (string, error) {
	limit := a.textLimit()
	if format == channel.FormatMarkdown {
		html, vis := MarkdownToHTML(text)
		if strings.TrimSpace(vis) != "" && utf16Len(vis) <= limit {
			p["text"], p["parse_mode"] = html, "HTML"
			id, err := a.postText(ctx, method, p)
			if channel.CodeOf(err) != channel.CodeFormattingRejected {
				return id, err
			}
			a.log.Debug("telegram refused the HTML; sending plain text", "method", method, "error", err)
		}
		delete(p, "parse_mode")
	}
	if n := utf16Len(text); n > limit {
		return "", channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units, the limit is %d", n, limit)
	}
	p["text"] = text
	return a.postText(ctx, method, p)
}

func (a *Adapter) postText(ctx context.Context, method string, p tgbotapi.Params) (string, error) {
	raw, err := a.callTimeout(ctx, method, p, callTimeout)
	if err != nil {
		return "", toChannelError("send", err)
	}
	return messageID(raw), nil
}

// messageID reads message_id from a Message result ("" for true).
func messageID(raw json.RawMessage) string {
	var m struct {
		MessageID int `json:"message_id"`
	}
	if json.Unmarshal(raw, &m) != nil || m.MessageID == 0 {
		return ""
	}
	return strconv.Itoa(m.MessageID)
}

// sendMedia uploads one file. A caption longer than Telegram's caption
// limit is sent as a separate text message after the file.
func (a *Adapter) sendMedia(ctx context.Context, p tgbotapi.Params, m channel.OutboundMedia) ([]string, error) {
	f, err := os.Open(m.Path)
	if err != nil {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "open media: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "media %s is not a regular file", filepath.Base(m.Path))
	}
	if st.Size() == 0 {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "media %s is empty", filepath.Base(m.Path))
	}
	method, field := "sendDocument", "document"
	if m.Kind == channel.MediaImage && st.Size() <= maxPhotoBytes {
		method, field = "sendPhoto", "photo"
	}
	if st.Size() > maxDocumentBytes {
		return nil, channel.Errorf(channel.CodeMessageTooLong, "media %s is %d bytes, Telegram takes at most %d", filepath.Base(m.Path), st.Size(), maxDocumentBytes)
	}
	caption := strings.TrimSpace(m.Caption)
	late := ""
	if utf16Len(caption) > maxCaptionLength {
		caption, late = "", caption
	}
	if caption != "" {
		p["caption"] = caption
	}
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	raw, err := a.api.upload(ctx, method, p, []tgbotapi.RequestFile{{
		Name: field, Data: tgbotapi.FileReader{Name: filepath.Base(m.Path), Reader: f},
	}})
	if err != nil {
		return nil, toChannelError("send media", err)
	}
	ids := []string{messageID(raw)}
	if late != "" {
		tp := tgbotapi.Params{"chat_id": p["chat_id"]}
		if t, ok := p["message_thread_id"]; ok {
			tp["message_thread_id"] = t
		}
		id, err := a.sendText(ctx, "sendMessage", tp, late, channel.FormatPlain)
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// SetTyping implements channel.Typer with sendChatAction "typing". Telegram
// clears the indicator by itself after about 5 seconds or when the bot
// sends, so On=false is a no-op.
func (a *Adapter) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	if !req.On {
		return nil
	}
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "typing before configure")
	}
	p, err := a.baseParams(req.ChatID, req.ThreadID)
	if err != nil {
		return err
	}
	p["action"] = "typing"
	_, err = a.callTimeout(ctx, "sendChatAction", p, callTimeout)
	return toChannelError("typing", err)
}

// Edit implements channel.Editor with editMessageText (HTML, falling back to
// plain text). Telegram's "message is not modified" counts as success.
func (a *Adapter) Edit(ctx context.Context, req channel.EditRequest) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "edit before configure")
	}
	if req.ChatID == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "chat id is empty")
	}
	if _, err := strconv.Atoi(req.MessageID); err != nil {
		return channel.Errorf(channel.CodeInvalidRequest, "message id %q is not a Telegram message id", req.MessageID)
	}
	if strings.TrimSpace(req.Text) == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "edit to empty text")
	}
	p := tgbotapi.Params{"chat_id": req.ChatID, "message_id": req.MessageID}
	if a.cfg.DisableWebPagePreview {
		p["link_preview_options"] = `{"is_disabled":true}`
	}
	_, err := a.sendText(ctx, "editMessageText", p, req.Text, req.Format)
	var ce *channel.Error
	if errors.As(err, &ce) && ce.Code == channel.CodeInvalidRequest && strings.Contains(ce.Message, "message is not modified") {
		return nil
	}
	return err
}

// DownloadMedia implements channel.MediaDownloader: getFile, then a GET of
// the file endpoint. Files larger than the smaller of req.MaxBytes and
// max_download_bytes fail with message_too_long, before the download when
// Telegram reports the size, while reading otherwise.
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	if a.api == nil {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInternal, "download before configure")
	}
	if req.Ref == "" {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "empty media ref")
	}
	limit := int64(a.cfg.MaxDownloadBytes)
	if req.MaxBytes > 0 && req.MaxBytes < limit {
		limit = req.MaxBytes
	}
	raw, err := a.callTimeout(ctx, "getFile", tgbotapi.Params{"file_id": req.Ref}, callTimeout)
	if err != nil {
		return nil, channel.MediaInfo{}, toChannelError("download media", err)
	}
	var f struct {
		FileSize int64  `json:"file_size"`
		FilePath string `json:"file_path"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.FilePath == "" {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeUnavailable, "download media: telegram gave no file path")
	}
	if f.FileSize > limit {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "media is %d bytes, the limit is %d", f.FileSize, limit)
	}
	resp, err := a.api.download(ctx, f.FilePath)
	if err != nil {
		return nil, channel.MediaInfo{}, toChannelError("download media", err)
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "media is %d bytes, the limit is %d", resp.ContentLength, limit)
	}
	info := channel.MediaInfo{Size: -1, MIME: mime.TypeByExtension(strings.ToLower(path.Ext(f.FilePath)))}
	if ct := resp.Header.Get("Content-Type"); info.MIME == "" && ct != "" && ct != "application/octet-stream" {
		info.MIME = ct
	}
	if info.MIME == "" {
		info.MIME = "application/octet-stream"
	}
	switch {
	case f.FileSize > 0:
		info.Size = f.FileSize
	case resp.ContentLength >= 0:
		info.Size = resp.ContentLength
	}
	return &cappedBody{rc: resp.Body, left: limit}, info, nil
}

// cappedBody fails with message_too_long once more than left bytes arrive.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return 0, channel.Errorf(channel.CodeMessageTooLong, "media exceeds the download limit")
	}
	return n, err
}

func (c *cappedBody) Close() error { return c.rc.Close() }

// maxCommands is Telegram's limit of a command menu.
const maxCommands = 100

// SetCommands implements channel.CommandMenu with setMyCommands. Names are
// lowercased and stripped of a leading "/"; names longer than 32 characters
// or with characters outside [a-z0-9_], and duplicates, are skipped (and
// logged). Empty descriptions become the command name; long ones are cut to
// 256 characters. At most 100 commands are set.
func (a *Adapter) SetCommands(ctx context.Context, cmds []channel.MenuEntry) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "set commands before configure")
	}
	type botCommand struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	out := []botCommand{}
	seen := map[string]bool{}
	for _, c := range cmds {
		name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c.Name), "/"))
		if !validCommandName(name) || seen[name] {
			a.log.Debug("command not shown in the telegram menu", "command", c.Name)
			continue
		}
		if len(out) == maxCommands {
			a.log.Warn("telegram shows at most 100 commands; the rest are left out", "first_left_out", name)
			break
		}
		seen[name] = true
		desc := strings.Join(strings.Fields(c.Description), " ")
		if desc == "" {
			desc = name
		}
		out = append(out, botCommand{Command: name, Description: truncateUTF16(desc, 256)})
	}
	b, _ := json.Marshal(out)
	_, err := a.callTimeout(ctx, "setMyCommands", tgbotapi.Params{"commands": string(b)}, callTimeout)
	return toChannelError("set commands", err)
}

func validCommandName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// truncateUTF16 cuts s to at most n UTF-16 units at a rune boundary.
func truncateUTF16(s string, n int) string {
	used := 0
	for i, r := range s {
		used += utf16.RuneLen(r)
		if used > n {
			return s[:i]
		}
	}
	return s
}
