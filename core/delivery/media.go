package delivery

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
)

// extractMedia removes "MEDIA:<path>" lines from a reply and returns the
// files to attach: only regular files inside the workspace (symlinks
// resolved) are sent; others are logged and dropped.
func (d *Dispatcher) extractMedia(text string) (string, []channel.OutboundMedia) {
	if !strings.Contains(text, "MEDIA:") {
		return text, nil
	}
	ws := d.settings().Workspace
	var keep []string
	var media []channel.OutboundMedia
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "MEDIA:") {
			keep = append(keep, line)
			continue
		}
		p := strings.Trim(strings.TrimSpace(strings.TrimPrefix(t, "MEDIA:")), "`\"'")
		if path, ok := insideWorkspace(ws, p); ok {
			media = append(media, channel.OutboundMedia{Path: path, Kind: mediaKind(path)})
		} else {
			d.log.Warn("MEDIA path outside the workspace or not a file; not sent", "path", p)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n")), media
}

func insideWorkspace(ws, p string) (string, bool) {
	if ws == "" || p == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

func mediaKind(path string) channel.MediaKind {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return channel.MediaImage
	case ".mp4", ".mov", ".webm":
		return channel.MediaVideo
	case ".mp3", ".m4a", ".wav", ".flac":
		return channel.MediaAudio
	case ".ogg", ".oga", ".opus":
		return channel.MediaVoice
	}
	return channel.MediaDocument
}
