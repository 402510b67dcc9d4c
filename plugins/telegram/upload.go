package telegram

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Upload limits of the cloud Bot API.
const (
	maxPhotoBytes    = 10 << 20
	maxDocumentBytes = 50 << 20
	// sendVoice: "audio must be at most 1 MB" for a voice message shown as one; larger goes as a document.
	maxVoiceBytes = 1 << 20
)

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

// sendMedia uploads one file with caption (in format; pre, when not nil,
// its rendering by the host). A caption too long for a caption is sent as
// a separate text message after the file. markup, when set, is the
// reply_markup of the last message it posts.
func (a *Adapter) sendMedia(ctx context.Context, p tgbotapi.Params, m channel.OutboundMedia, caption string, pre *channel.Rendered, format channel.Format, markup string) ([]string, error) {
	st, err := os.Stat(m.Path)
	if err != nil {
		return nil, channel.Errorf(channel.CodeInvalidRequest, "media %s: %v", filepath.Base(m.Path), errors.Unwrap(err))
	}
	asPhoto := m.Kind == channel.MediaImage && st.Size() <= maxPhotoBytes
	// A voice note is OGG/Opus (Telegram shows other audio of sendVoice
	// as a file anyway).
	asVoice := m.Kind == channel.MediaVoice && isOggOpus(m) && st.Size() <= maxVoiceBytes
	caption = strings.TrimSpace(caption)
	var rs []rendering
	late := ""
	if caption != "" {
		var ok bool
		if rs, _, ok = renderings(caption, format, maxCaptionLength, pre); !ok {
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
		if markup != "" && late == "" {
			q["reply_markup"] = markup
		}
		method, field := "sendDocument", "document"
		switch {
		case asPhoto:
			method, field = "sendPhoto", "photo"
		case asVoice:
			method, field = "sendVoice", "voice"
		}
		id, err = a.uploadFile(ctx, method, field, q, m.Path)
		code := channel.CodeOf(err)
		switch {
		case err == nil:
		case code == channel.CodeFormattingRejected && r.parseMode != "" && i+1 < len(rs):
			a.log.Debug("telegram refused the caption's HTML; sending it plain", "method", method, "error", err)
			i++
			continue
		case asVoice && code == channel.CodeInvalidRequest:
			// VOICE_MESSAGES_FORBIDDEN (the user's privacy setting), …:
			// the audio still goes, as a document.
			a.log.Debug("telegram refused the audio as a voice note; sending it as a document", "error", err)
			asVoice = false
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
		if markup != "" {
			tp["reply_markup"] = markup
		}
		id, err := a.sendText(ctx, "sendMessage", tp, late, format, pre)
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// isOggOpus reports whether m is an OGG file (what sendVoice takes).
func isOggOpus(m channel.OutboundMedia) bool {
	switch strings.ToLower(filepath.Ext(m.Path)) {
	case ".ogg", ".oga", ".opus":
		return true
	}
	return strings.HasPrefix(m.MIME, "audio/ogg")
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
