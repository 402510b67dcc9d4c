package matrix

import (
	"context"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strconv"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/attachment"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

var _ channel.MediaDownloader = (*Adapter)(nil)

// sendFile uploads f to the media repository and posts it as an m.image,
// m.audio, m.video or m.file event with its caption as the body. In an
// encrypted room the bytes are encrypted before they leave (AES-CTR, the
// key in the event's "file", which the event's own encryption hides): the
// media repository never holds them in the clear. A file over the
// homeserver's upload limit is not uploaded: the chat gets a notice that
// says so in its place.
func (a *Adapter) sendFile(ctx context.Context, cli *mautrix.Client, room id.RoomID, req channel.SendRequest, f channel.OutboundMedia) (id.EventID, error) {
	name := filepath.Base(f.Path)
	fi, err := os.Stat(f.Path)
	if err != nil {
		return "", err
	}
	if limit := a.uploadLimit(ctx, cli); fi.Size() > limit {
		a.log.Warn("a file over the homeserver's upload limit was not sent", "file", name, "size", fi.Size(), "limit", limit)
		c := &event.MessageEventContent{MsgType: event.MsgNotice, Mentions: &event.Mentions{},
			Body: fmt.Sprintf("(%s was not sent: it has %s, more than the %s this homeserver accepts.)", name, sizeText(fi.Size()), sizeText(limit))}
		c.RelatesTo = relation(req.ThreadID, req.ReplyToMessageID)
		return a.sendEvent(ctx, cli, room, event.EventMessage, c)
	}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return "", err
	}
	typ := f.MIME
	if typ == "" {
		typ = mime.TypeByExtension(filepath.Ext(f.Path))
	}
	if typ == "" {
		typ = "application/octet-stream"
	}
	size := len(data)
	upType, upName := typ, name
	var ef *attachment.EncryptedFile
	if a.roomEncrypted(ctx, room) {
		// Neither the bytes nor their type nor their name go to the
		// media repository in the clear.
		ef = attachment.NewEncryptedFile()
		ef.EncryptInPlace(data)
		upType, upName = "application/octet-stream", ""
	}
	var up *mautrix.RespMediaUpload
	if err := a.call(ctx, func(ctx context.Context) error {
		var err error
		up, err = cli.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: data, ContentLength: int64(len(data)), ContentType: upType, FileName: upName})
		return err
	}); err != nil {
		return "", sendError(err)
	}
	c := &event.MessageEventContent{MsgType: msgType(f.Kind), Body: name, FileName: name,
		Info: &event.FileInfo{MimeType: typ, Size: size}, Mentions: &event.Mentions{}}
	if ef != nil {
		c.File = &event.EncryptedFileInfo{EncryptedFile: *ef, URL: up.ContentURI.CUString()}
	} else {
		c.URL = up.ContentURI.CUString()
	}
	if f.Caption != "" {
		c.Body = f.Caption
	}
	c.RelatesTo = relation(req.ThreadID, req.ReplyToMessageID)
	return a.sendEvent(ctx, cli, room, event.EventMessage, c)
}

// sizeText is n bytes for a reader: "12.5 MB", "900 KB", "17 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

func msgType(k channel.MediaKind) event.MessageType {
	switch k {
	case channel.MediaImage, channel.MediaSticker:
		return event.MsgImage
	case channel.MediaAudio, channel.MediaVoice:
		return event.MsgAudio
	case channel.MediaVideo:
		return event.MsgVideo
	}
	return event.MsgFile
}

// media is the attachment of a file message; nil for text.
func media(c *event.MessageEventContent) []channel.Media {
	kind := channel.MediaDocument
	switch c.MsgType {
	case event.MsgImage:
		kind = channel.MediaImage
	case event.MsgAudio:
		kind = channel.MediaAudio
	case event.MsgVideo:
		kind = channel.MediaVideo
	case event.MsgFile:
	default:
		return nil
	}
	ref := string(c.URL)
	if c.File != nil {
		r, err := encryptedRef(c.File)
		if err != nil {
			return nil
		}
		ref = r
	}
	if ref == "" {
		return nil
	}
	m := channel.Media{Kind: kind, Ref: ref, Filename: c.FileName}
	if m.Filename == "" {
		m.Filename = c.Body
	} else if c.Body != c.FileName {
		m.Caption = c.Body
	}
	if c.Info != nil {
		m.MIME, m.Size = c.Info.MimeType, int64(c.Info.Size)
	}
	return []channel.Media{m}
}
