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

// Send implements channel.Channel.
//
// Without media, the text is one sendMessage. With media, each file is a
// multipart upload from its local path: images with sendPhoto (as a
// document when larger than a photo may be, or when Telegram refuses it as
// a photo), everything else with sendDocument. The text becomes the caption
// of the first file when that file has no caption of its own and the text
// fits a caption (1024 UTF-16 units); otherwise it is sent first, as its own
// message. A file caption too long for a caption follows its file as a
// message. Only the first message replies to ReplyToMessageID.
//
// Markdown becomes Telegram HTML. If Telegram refuses the HTML ("can't
// parse entities"), the plugin itself resends the text without parse_mode
// (it never returns formatting_rejected): the raw markdown when it fits the
// limit, else the converted text without markup. The same happens when the
// HTML's visible text would exceed the limit. Plain text longer than the
// limit is refused with message_too_long before any request: the plugin
// never sends more than Capabilities().MaxTextLength.
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
	if reply != "" {
		if _, err := strconv.Atoi(reply); err != nil {
			return resp, channel.Errorf(channel.CodeInvalidRequest, "reply_to message id %q is not a Telegram message id", reply)
		}
	}
	replyParams := func(p tgbotapi.Params) {
		if reply != "" {
			p["reply_parameters"] = fmt.Sprintf(`{"message_id":%s,"allow_sending_without_reply":true}`, reply)
			reply = ""
		}
	}
	hasText := strings.TrimSpace(req.Text) != ""
	if !hasText && len(req.Media) == 0 {
		return resp, channel.Errorf(channel.CodeInvalidRequest, "nothing to send: empty text and no media")
	}
	for _, m := range req.Media {
		if err := checkMedia(m); err != nil {
			return resp, err
		}
	}
	textAsCaption := hasText && len(req.Media) > 0 && strings.TrimSpace(req.Media[0].Caption) == "" &&
		fitsCaption(req.Text, req.Format)
	if hasText && !textAsCaption {
		p := clone(base)
		replyParams(p)
		if a.cfg.DisableWebPagePreview || req.DisableLinkPreview {
			p["link_preview_options"] = `{"is_disabled":true}`
		}
		id, err := a.sendText(ctx, "sendMessage", p, req.Text, req.Format)
		if err != nil {
			return resp, err
		}
		resp.MessageIDs = append(resp.MessageIDs, id)
	}
	for i, m := range req.Media {
		p := clone(base)
		replyParams(p)
		caption := m.Caption
		if i == 0 && textAsCaption {
			caption = req.Text
		}
		ids, err := a.sendMedia(ctx, p, m, caption, req.Format)
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

// rendering is one way of sending a text: with parse_mode HTML or plain.
type rendering struct {
	text, parseMode string
}

// renderings lists the ways to send text within limit, best first: the HTML
// of markdown, then the raw text, then (markdown only) the converted text
// without markup. ok is false when none fits.
func renderings(text, format string, limit int) (out []rendering, ok bool) {
	var vis string
	if format == channel.FormatMarkdown {
		var html string
		html, vis = MarkdownToHTML(text)
		if strings.TrimSpace(vis) != "" && utf16Len(vis) <= limit {
			out = append(out, rendering{html, "HTML"})
		}
	}
	if utf16Len(text) <= limit {
		out = append(out, rendering{text, ""})
	} else if strings.TrimSpace(vis) != "" && utf16Len(vis) <= limit {
		out = append(out, rendering{vis, ""})
	}
	return out, len(out) > 0
}

// fitsCaption reports whether text can be sent as a media caption.
func fitsCaption(text, format string) bool {
	_, ok := renderings(strings.TrimSpace(text), format, maxCaptionLength)
	return ok
}

// sendText posts text with method (sendMessage or editMessageText) and
// returns the message id. It tries HTML first for markdown and falls back
// to plain text when Telegram refuses the HTML.
func (a *Adapter) sendText(ctx context.Context, method string, p tgbotapi.Params, text, format string) (string, error) {
	limit := a.textLimit()
	rs, ok := renderings(text, format, limit)
	if !ok {
		return "", channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units, the limit is %d", utf16Len(text), limit)
	}
	var err error
	for _, r := range rs {
		p["text"] = r.text
		delete(p, "parse_mode")
		if r.parseMode != "" {
			p["parse_mode"] = r.parseMode
		}
		var id string
		id, err = a.postText(ctx, method, p)
		if channel.CodeOf(err) != channel.CodeFormattingRejected || r.parseMode == "" {
			return id, err
		}
		a.log.Debug("telegram refused the HTML; sending plain text", "method", method, "error", err)
	}
	return "", err
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

// checkMedia validates a file before anything is sent.
func checkMedia(m channel.OutboundMedia) error {
	st, err := os.Stat(m.Path)
	if err != nil {
		return channel.Errorf(channel.CodeInvalidRequest, "media %s: %v", filepath.Base(m.Path), errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return channel.Errorf(channel.CodeInvalidRequest, "media %s is not a regular file", filepath.Base(m.Path))
	}
	if st.Size() == 0 {
		return channel.Errorf(channel.CodeInvalidRequest, "media %s is empty", filepath.Base(m.Path))
	}
	if st.Size() > maxDocumentBytes {
		return channel.Errorf(channel.CodeMessageTooLong, "media %s is %d bytes, Telegram takes at most %d", filepath.Base(m.Path), st.Size(), maxDocumentBytes)
	}
	return nil
}

// sendMedia uploads one file with caption (in format). A caption too long
// for a caption is sent as a separate text message after the file.
func (a *Adapter) sendMedia(ctx context.Context, p tgbotapi.Params, m channel.OutboundMedia, caption, format string) ([]string, error) {
	st, err := os.Stat(m.Path)
	if err != nil {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "media %s: %v", filepath.Base(m.Path), errors.Unwrap(err))
	}
	asPhoto := m.Kind == channel.MediaImage && st.Size() <= maxPhotoBytes
	caption = strings.TrimSpace(caption)
	var rs []rendering
	late := ""
	if caption != "" {
		var ok bool
		if rs, ok = renderings(caption, format, maxCaptionLength); !ok {
			late = caption
		}
	}
	if len(rs) == 0 {
		rs = []rendering{{}} // no caption
	}
	ctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	var id string
	for i := 0; ; {
		r := rs[i]
		q := clone(p)
		if r.text != "" {
			q["caption"] = r.text
		}
		if r.parseMode != "" {
			q["parse_mode"] = r.parseMode
		}
		method, field := "sendDocument", "document"
		if asPhoto {
			method, field = "sendPhoto", "photo"
		}
		id, err = a.uploadFile(ctx, method, field, q, m.Path)
		code := channel.CodeOf(err)
		switch {
		case err == nil:
		case code == channel.CodeFormattingRejected && r.parseMode != "" && i+1 < len(rs):
			a.log.Debug("telegram refused the caption's HTML; sending it plain", "method", method, "error", err)
			i++
			continue
		case asPhoto && code == channel.CodeInvalidRequest:
			// PHOTO_INVALID_DIMENSIONS, IMAGE_PROCESS_FAILED, …: a file
			// Telegram cannot show as a photo still goes as a document.
			a.log.Debug("telegram refused the image as a photo; sending it as a document", "error", err)
			asPhoto = false
			continue
		}
		break
	}
	if err != nil {
		return nil, err
	}
	ids := []string{id}
	if late != "" {
		tp := tgbotapi.Params{"chat_id": p["chat_id"]}
		if t, ok := p["message_thread_id"]; ok {
			tp["message_thread_id"] = t
		}
		if v, ok := p["disable_notification"]; ok {
			tp["disable_notification"] = v
		}
		id, err := a.sendText(ctx, "sendMessage", tp, late, format)
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// uploadFile posts the file at path as field of method (multipart).
func (a *Adapter) uploadFile(ctx context.Context, method, field string, p tgbotapi.Params, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", channel.Errorf(channel.CodeInvalidRequest, "open media %s: %v", filepath.Base(path), errors.Unwrap(err))
	}
	defer f.Close()
	raw, err := a.api.upload(ctx, method, p, []tgbotapi.RequestFile{{
		Name: field, Data: tgbotapi.FileReader{Name: filepath.Base(path), Reader: f},
	}})
	if err != nil {
		return "", toChannelError("send media", err)
	}
	return messageID(raw), nil
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
// The read that crosses the cap returns one byte past it together with the
// error, so that a caller counting bytes against the same cap (the sdk's
// media stream, which reports other read errors as unavailable) sees the
// overflow as well.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
	over bool
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.over {
		return 0, errTooBig
	}
	n, err := c.rc.Read(p)
	if int64(n) > c.left {
		c.over = true
		n = int(c.left) + 1
		c.left = -1
		return n, errTooBig
	}
	c.left -= int64(n)
	return n, err
}

var errTooBig = channel.Errorf(channel.CodeMessageTooLong, "media exceeds the download limit")

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
		if !validCommandName(name) {
			a.log.Info("command not shown in the telegram menu: telegram allows only 1-32 of a-z, 0-9 and _", "command", c.Name)
			continue
		}
		if seen[name] {
			a.log.Info("command not shown in the telegram menu: listed twice", "command", c.Name)
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
