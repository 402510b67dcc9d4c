package turn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// fetchMedia downloads a message's attachments into
// <workspace>/media/<instance>/ (0600 files), so the prompt can name their
// paths and claude can read them. Failures are logged; the prompt then says
// the attachment could not be downloaded.
func (t *Turns) fetchMedia(ctx context.Context, set Settings, m *message.Message, id int64) {
	if len(m.Media) == 0 || set.Workspace == "" {
		return
	}
	dir := filepath.Join(set.Workspace, "media", m.Instance)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.log.Error("media directory", "error", err)
		return
	}
	for i := range m.Media {
		md := &m.Media[i]
		if md.Path != "" {
			continue
		}
		path := filepath.Join(dir, fmt.Sprintf("%d-%d%s", id, i, mediaExt(md)))
		dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		info, err := t.download(dctx, m.Instance, md.Ref, path)
		cancel()
		if err != nil {
			t.log.Warn("media download failed", "instance", m.Instance, "kind", md.Kind, "error", err)
			continue
		}
		md.Path = path
		if md.MIME == "" {
			md.MIME = info.MIME
		}
	}
}

func (t *Turns) download(ctx context.Context, instance, ref, path string) (channel.MediaInfo, error) {
	f, err := os.OpenFile(path+".part", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return channel.MediaInfo{}, err
	}
	info, err := t.opts.Channels.Download(ctx, instance, ref, t.opts.MaxMediaBytes, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path + ".part")
		return info, err
	}
	return info, os.Rename(path+".part", path)
}

func mediaExt(md *message.Media) string {
	if e := filepath.Ext(md.Filename); e != "" && len(e) <= 8 {
		return strings.ToLower(e)
	}
	switch {
	case strings.Contains(md.MIME, "jpeg"):
		return ".jpg"
	case strings.Contains(md.MIME, "png"):
		return ".png"
	case strings.Contains(md.MIME, "ogg"):
		return ".ogg"
	case strings.Contains(md.MIME, "mp4"):
		return ".mp4"
	case strings.Contains(md.MIME, "pdf"):
		return ".pdf"
	}
	return ".bin"
}
