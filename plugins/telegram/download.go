package telegram

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"path"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

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
