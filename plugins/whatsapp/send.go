package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/clawhost/clawhost/sdk/channel"
)

// maxUploadBytes bounds a file sent (WhatsApp's limit for documents is
// 2 GB, for media far less; the platform refuses what is too big).
const maxUploadBytes = 100 << 20

// client returns the connected client, or unavailable.
func (a *Adapter) client() (*whatsmeow.Client, error) {
	s := a.sess.Load()
	if s == nil || !s.cli.IsLoggedIn() {
		return nil, channel.Errorf(channel.CodeUnavailable, "not connected to WhatsApp")
	}
	return s.cli, nil
}

// parseChat turns a chat id of InboundMessage.ChatID back into a JID:
// "+<phone number>", "<lid>@lid", "<group>@g.us" or "<number>@s.whatsapp.net".
func parseChat(id string) (types.JID, error) {
	if strings.HasPrefix(id, "+") {
		digits, ok := phoneDigits(id)
		if !ok {
			return types.EmptyJID, channel.Errorf(channel.CodeChatNotFound, "%q is not a phone number", id)
		}
		return types.NewJID(digits, types.DefaultUserServer), nil
	}
	j, err := types.ParseJID(id)
	if err != nil || !strings.Contains(id, "@") || j.User == "" {
		return types.EmptyJID, channel.Errorf(channel.CodeChatNotFound, "%q is not a WhatsApp chat", id)
	}
	switch j.Server {
	case types.DefaultUserServer, types.HiddenUserServer, types.GroupServer:
		return j.ToNonAD(), nil
	}
	return types.EmptyJID, channel.Errorf(channel.CodeChatNotFound, "%q is not a WhatsApp chat this plugin writes to", id)
}

// Send implements channel.Channel: text (markdown rendered in WhatsApp's
// formatting, markup.Lightweight), then each file. A text longer than
// MaxTextLength once rendered is refused with message_too_long before
// anything is sent: the host splits by that measure. The first message
// quotes ReplyToMessageID. Each message waits its turn in the pacing.
// Markdown is sent as the host rendered it (SendRequest.Rendered, and a
// caption's OutboundMedia.CaptionRendered, markup.Lightweight), or as it
// is when the host sent no rendering: the plugin links no markdown parser.
func (a *Adapter) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	to, err := parseChat(req.ChatID)
	if err != nil {
		return channel.SendResponse{}, err
	}
	text := req.Text
	if out, _, ok := req.Rendered.Of(channel.MarkupLightweight); ok && req.Format == channel.FormatMarkdown {
		text = out
	}
	if n := channel.TextLen(text, channel.LengthUTF16); n > MaxTextLength {
		return channel.SendResponse{}, channel.Errorf(channel.CodeMessageTooLong, "text is %d UTF-16 units once rendered, the limit is %d", n, MaxTextLength)
	}
	cli, err := a.client()
	if err != nil {
		return channel.SendResponse{}, err
	}
	quote := a.quote(to, req.ReplyToMessageID)
	var ids []string
	if strings.TrimSpace(text) != "" {
		msg := &waE2E.Message{Conversation: proto.String(text)}
		if quote != nil {
			msg = &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(text), ContextInfo: quote}}
			quote = nil
		}
		id, err := a.send(ctx, cli, to, msg)
		if err != nil {
			return channel.SendResponse{MessageIDs: ids}, err
		}
		ids = append(ids, id)
	}
	for _, m := range req.Media {
		msg, err := a.mediaMessage(ctx, cli, m, req.Format == channel.FormatMarkdown, quote)
		if err != nil {
			return channel.SendResponse{MessageIDs: ids}, err
		}
		quote = nil
		id, err := a.send(ctx, cli, to, msg)
		if err != nil {
			return channel.SendResponse{MessageIDs: ids}, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return channel.SendResponse{}, channel.Errorf(channel.CodeInvalidRequest, "nothing to send")
	}
	return channel.SendResponse{MessageIDs: ids}, nil
}

// send paces and sends one message, recording its id first so that an
// echo is never taken for inbound.
func (a *Adapter) send(ctx context.Context, cli *whatsmeow.Client, to types.JID, msg *waE2E.Message) (string, error) {
	if err := a.pace.wait(ctx); err != nil {
		return "", channel.Errorf(channel.CodeUnavailable, "canceled while pacing: %v", err)
	}
	id := cli.GenerateMessageID()
	if err := a.sent.add(ctx, id); err != nil {
		a.log.Warn("could not record a sent message id", "error", err)
	}
	resp, err := cli.SendMessage(ctx, to, msg, whatsmeow.SendRequestExtra{ID: id})
	if err != nil {
		return "", sendError(err)
	}
	return resp.ID, nil
}

// quote is the ContextInfo quoting the message id in chat to: with its
// sender and text when the plugin saw it come in, else with the chat's
// user as sender in a direct chat. Nil when id is empty or unknown in a
// group.
func (a *Adapter) quote(to types.JID, id string) *waE2E.ContextInfo {
	if id == "" {
		return nil
	}
	if q, ok := a.recent.get(id); ok {
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(q.sender.String()),
			QuotedMessage: &waE2E.Message{Conversation: proto.String(q.text)}}
	}
	if to.Server == types.GroupServer {
		return nil
	}
	return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(to.String())}
}

// mediaMessage uploads a file and returns the message carrying it, its
// caption as the host rendered it when markdown.
func (a *Adapter) mediaMessage(ctx context.Context, cli *whatsmeow.Client, m channel.OutboundMedia, markdown bool, quote *waE2E.ContextInfo) (*waE2E.Message, error) {
	f, err := os.Open(m.Path)
	if err != nil {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "open %s: %v", filepath.Base(m.Path), err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxUploadBytes+1))
	f.Close()
	if err != nil {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "read %s: %v", filepath.Base(m.Path), err)
	}
	if len(data) > maxUploadBytes {
		return nil, channel.Errorf(channel.CodeMessageTooLong, "%s is larger than %d bytes", filepath.Base(m.Path), maxUploadBytes)
	}
	mime := m.MIME
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	kind := m.Kind
	if kind == "" {
		kind = channel.MediaKindOf(mime)
	}
	mt := whatsmeow.MediaDocument
	switch kind {
	case channel.MediaImage, channel.MediaSticker:
		mt = whatsmeow.MediaImage
	case channel.MediaVideo:
		mt = whatsmeow.MediaVideo
	case channel.MediaAudio, channel.MediaVoice:
		mt = whatsmeow.MediaAudio
	}
	if kind == channel.MediaVoice && bytes.HasPrefix(data, []byte("OggS")) {
		// WhatsApp plays a voice note (PTT) only with this type; sniffing
		// says application/ogg.
		mime = "audio/ogg; codecs=opus"
	}
	up, err := cli.Upload(ctx, data, mt)
	if err != nil {
		return nil, channel.Errorf(channel.CodeUnavailable, "upload %s: %v", filepath.Base(m.Path), err)
	}
	length := proto.Uint64(up.FileLength)
	var caption *string
	text := m.Caption
	if out, _, ok := m.CaptionRendered.Of(channel.MarkupLightweight); ok && markdown {
		text = out
	}
	if text != "" {
		caption = proto.String(text)
	}
	switch mt {
	case whatsmeow.MediaImage:
		return &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: caption, Mimetype: proto.String(mime), URL: &up.URL, DirectPath: &up.DirectPath,
			MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: quote}}, nil
	case whatsmeow.MediaVideo:
		return &waE2E.Message{VideoMessage: &waE2E.VideoMessage{Caption: caption, Mimetype: proto.String(mime), URL: &up.URL, DirectPath: &up.DirectPath,
			MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: quote}}, nil
	case whatsmeow.MediaAudio:
		return &waE2E.Message{AudioMessage: &waE2E.AudioMessage{Mimetype: proto.String(mime), URL: &up.URL, DirectPath: &up.DirectPath, PTT: proto.Bool(kind == channel.MediaVoice),
			MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: quote}}, nil
	}
	name := filepath.Base(m.Path)
	return &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{Caption: caption, Mimetype: proto.String(mime), URL: &up.URL, DirectPath: &up.DirectPath,
		FileName: proto.String(name), Title: proto.String(name),
		MediaKey: up.MediaKey, FileEncSHA256: up.FileEncSHA256, FileSHA256: up.FileSHA256, FileLength: length, ContextInfo: quote}}, nil
}

// sendError maps whatsmeow's send failures to the sdk's codes. It is the
// one place where they are interpreted.
func sendError(err error) error {
	var disc *whatsmeow.DisconnectedError
	var iq *whatsmeow.IQError
	switch {
	case errors.As(err, &disc) && disc.Action == "message send":
		// The message was written; its acknowledgement was lost.
		return &channel.Error{Code: channel.CodeUncertain, Message: err.Error()}
	case errors.Is(err, whatsmeow.ErrMessageTimedOut), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &channel.Error{Code: channel.CodeUncertain, Message: err.Error()}
	case errors.Is(err, whatsmeow.ErrNotLoggedIn), errors.Is(err, whatsmeow.ErrNotConnected), errors.As(err, &disc):
		return &channel.Error{Code: channel.CodeUnavailable, Message: err.Error()}
	case errors.Is(err, whatsmeow.ErrNotInGroup), errors.Is(err, whatsmeow.ErrGroupNotFound),
		errors.Is(err, whatsmeow.ErrUnknownServer), errors.Is(err, whatsmeow.ErrBroadcastListUnsupported),
		errors.Is(err, whatsmeow.ErrRecipientADJID), strings.Contains(err.Error(), "no LID found"),
		strings.Contains(err.Error(), "failed to get LID for PN"):
		return &channel.Error{Code: channel.CodeChatNotFound, Message: err.Error()}
	case errors.As(err, &iq):
		return iqError(iq.Code, err)
	case errors.Is(err, whatsmeow.ErrServerReturnedError):
		var code int
		if _, scanErr := fmt.Sscanf(strings.TrimPrefix(err.Error(), whatsmeow.ErrServerReturnedError.Error()), " %d", &code); scanErr == nil {
			return iqError(code, err)
		}
		return &channel.Error{Code: channel.CodeInternal, Message: err.Error()}
	}
	return &channel.Error{Code: channel.CodeInternal, Message: err.Error()}
}

// iqError maps a WhatsApp status code.
func iqError(code int, err error) error {
	switch {
	case code == 429 || code == 419:
		return &channel.Error{Code: channel.CodeRateLimited, Message: err.Error(), RetryAfter: 30 * time.Second}
	case code == 401 || code == 403 || code == 463:
		return &channel.Error{Code: channel.CodeForbidden, Message: err.Error()}
	case code == 404 || code == 406:
		return &channel.Error{Code: channel.CodeChatNotFound, Message: err.Error()}
	case code == 400:
		return &channel.Error{Code: channel.CodeInvalidRequest, Message: err.Error()}
	case code >= 500:
		return &channel.Error{Code: channel.CodeUnavailable, Message: err.Error()}
	}
	return &channel.Error{Code: channel.CodeInternal, Message: err.Error()}
}

// SetTyping implements channel.Typer with WhatsApp's chat presence
// (composing, then paused). The account's global presence is never set:
// on a personal number "online" would stop the phone's notifications.
func (a *Adapter) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	to, err := parseChat(req.ChatID)
	if err != nil {
		return err
	}
	cli, err := a.client()
	if err != nil {
		return err
	}
	state := types.ChatPresencePaused
	if req.On {
		state = types.ChatPresenceComposing
	}
	if err := cli.SendChatPresence(ctx, to, state, types.ChatPresenceMediaText); err != nil {
		return sendError(err)
	}
	return nil
}

// DownloadMedia implements channel.MediaDownloader: it fetches and
// decrypts an inbound attachment from WhatsApp's media servers only (see
// media.go), stopping as soon as it exceeds the limit.
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	ref, err := parseRef(req.Ref)
	if err == nil {
		err = checkDirectPath(ref.DirectPath)
	}
	if err != nil {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "%v", err)
	}
	limit := a.set.maxDownloadBytes
	if req.MaxBytes > 0 && req.MaxBytes < limit {
		limit = req.MaxBytes
	}
	if ref.Length > limit {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "the attachment has %d bytes, more than %d", ref.Length, limit)
	}
	cli, err := a.client()
	if err != nil {
		return nil, channel.MediaInfo{}, err
	}
	f, err := download(ctx, cli, ref, limit)
	if err != nil {
		return nil, channel.MediaInfo{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInternal, "download: %v", err)
	}
	mime := ref.MIME
	if mime == "" {
		head := make([]byte, 512)
		n, _ := f.ReadAt(head, 0)
		mime = http.DetectContentType(head[:n])
	}
	return f, channel.MediaInfo{MIME: mime, Size: st.Size()}, nil
}
