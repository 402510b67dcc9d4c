package matrix

import (
	"context"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/channel"
)

var _ channel.MediaDownloader = (*Adapter)(nil)

// sendFile uploads f to the media repository and posts it as an m.image,
// m.audio, m.video or m.file event with its caption as the body.
func (a *Adapter) sendFile(ctx context.Context, cli *mautrix.Client, room id.RoomID, req channel.SendRequest, f channel.OutboundMedia) (id.EventID, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return "", err
	}
	if len(data) > MaxFileBytes {
		return "", &channel.Error{Code: channel.CodeMessageTooLong, Message: fmt.Sprintf("%s is %d bytes, over the %d the plugin sends", filepath.Base(f.Path), len(data), MaxFileBytes)}
	}
	typ := f.MIME
	if typ == "" {
		typ = mime.TypeByExtension(filepath.Ext(f.Path))
	}
	if typ == "" {
		typ = "application/octet-stream"
	}
	name := filepath.Base(f.Path)
	var up *mautrix.RespMediaUpload
	if err := a.call(ctx, func(ctx context.Context) error {
		var err error
		up, err = cli.UploadMedia(ctx, mautrix.ReqUploadMedia{ContentBytes: data, ContentLength: int64(len(data)), ContentType: typ, FileName: name})
		return err
	}); err != nil {
		return "", sendError(err)
	}
	c := &event.MessageEventContent{MsgType: msgType(f.Kind), Body: name, FileName: name, URL: up.ContentURI.CUString(),
		Info: &event.FileInfo{MimeType: typ, Size: len(data)}, Mentions: &event.Mentions{}}
	if f.Caption != "" {
		c.Body = f.Caption
	}
	c.RelatesTo = relation(req.ThreadID, req.ReplyToMessageID)
	return a.sendEvent(ctx, cli, room, event.EventMessage, c)
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
	if c.URL == "" {
		return nil // an encrypted attachment (c.File): not yet supported
	}
	m := channel.Media{Kind: kind, Ref: string(c.URL), Filename: c.FileName}
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

// DownloadMedia implements channel.MediaDownloader: the bytes of an mxc://
// URI from the authenticated media endpoint.
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	cli := a.client()
	if cli == nil {
		return nil, channel.MediaInfo{}, &channel.Error{Code: channel.CodeUnavailable, Message: "not connected to the homeserver yet"}
	}
	uri, err := id.ParseContentURI(req.Ref)
	if err != nil {
		return nil, channel.MediaInfo{}, &channel.Error{Code: channel.CodeInvalidRequest, Message: "not an mxc:// URI: " + req.Ref}
	}
	resp, err := cli.Download(ctx, uri)
	if err != nil {
		return nil, channel.MediaInfo{}, sendError(err)
	}
	if req.MaxBytes > 0 && resp.ContentLength > req.MaxBytes {
		resp.Body.Close()
		return nil, channel.MediaInfo{}, &channel.Error{Code: channel.CodeMessageTooLong, Message: fmt.Sprintf("the file is %d bytes, over %d", resp.ContentLength, req.MaxBytes)}
	}
	return resp.Body, channel.MediaInfo{MIME: resp.Header.Get("Content-Type"), Size: resp.ContentLength}, nil
}
