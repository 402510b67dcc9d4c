package delivery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// DefaultMaxMediaBytes caps a file a MEDIA: line sends to a channel that
// declares no limit (channel.Capabilities.MaxFileBytes) when
// Settings.MaxMediaBytes is zero: the most a Telegram bot may upload, and
// what a file relayed between hosts may have.
const DefaultMaxMediaBytes = 50 << 20

// MaxFileBytes is the largest file that may be sent to instance: what its
// channel declares (channel.Capabilities.MaxFileBytes), else
// Settings.MaxMediaBytes, else DefaultMaxMediaBytes.
func (d *Dispatcher) MaxFileBytes(instance string) int64 {
	if desc, ok := d.ch.Ready(instance); ok && desc.Capabilities.MaxFileBytes > 0 {
		return desc.Capabilities.MaxFileBytes
	}
	if n := d.settings().MaxMediaBytes; n > 0 {
		return n
	}
	return DefaultMaxMediaBytes
}

// extractMedia removes "MEDIA:<path>" lines from a reply of session key
// to instance and returns the files to attach, read from ws (the
// agent's workspace; "": the one Settings have for the key's agent). A line whose file may not be sent (see
// checkMedia) is replaced by a short note saying which file was not sent
// and why, so the chat is never left believing it got it.
func (d *Dispatcher) extractMedia(key sessionkey.Key, ws, instance, text string) (string, []channel.OutboundMedia) {
	if !strings.Contains(text, "MEDIA:") {
		return text, nil
	}
	if ws == "" {
		ws = d.settings().workspace(key.Agent)
	}
	var keep []string
	var media []channel.OutboundMedia
	limit := d.MaxFileBytes(instance)
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "MEDIA:") {
			keep = append(keep, line)
			continue
		}
		p := strings.Trim(strings.TrimSpace(strings.TrimPrefix(t, "MEDIA:")), "`\"'")
		path, err := checkMedia(ws, key, p, limit)
		if err != nil {
			shown := shownPath(ws, p)
			d.log.Warn("MEDIA file not sent", "session", key.String(), "path", shown, "reason", err)
			keep = append(keep, fmt.Sprintf("(File not sent: %s — %v.)", shown, err))
			continue
		}
		media = append(media, channel.OutboundMedia{Path: path, Kind: mediaKind(path)})
	}
	return strings.TrimSpace(strings.Join(keep, "\n")), media
}

// CheckFile decides whether the file at path (relative to the workspace of
// session key's agent, or absolute) may be sent to the chat on instance,
// as a MEDIA: line's file is checked (checkMedia, within the channel's
// MaxFileBytes), and returns it resolved. The agent's send_file tool asks
// it before the file is queued for the reply.
func (d *Dispatcher) CheckFile(key sessionkey.Key, instance, path string) (string, error) {
	return checkMedia(d.settings().workspace(key.Agent), key, strings.TrimSpace(path), d.MaxFileBytes(instance))
}

// workspace is the workspace of agent.
func (s Settings) workspace(agent string) string {
	if ws := s.AgentWorkspaces[agent]; ws != "" {
		return ws
	}
	return s.Workspace
}

// Why a MEDIA: file is not sent; the chat reads them.
var (
	errNoWorkspace  = errors.New("no workspace is configured")
	errEmptyPath    = errors.New("no file named")
	errOutside      = errors.New("it is outside the workspace")
	errOtherSession = errors.New("it is another conversation's attachment")
	errNotFound     = errors.New("no such file")
	errNotRegular   = errors.New("it is not a regular file")
)

// checkMedia decides whether the file p named in a MEDIA: line of session
// key's reply may be sent, and returns its resolved path. p is taken
// relative to the workspace ws; the result with every symlink resolved
// must lie inside the workspace (itself resolved), and not in the media
// directory (sessionkey.MediaDir) other than in the session's own
// key.Dir() there: the attachments of other chats never leave
// through a reply. It must be a regular file of at most maxBytes (zero:
// DefaultMaxMediaBytes).
//
// The path returned is the resolved one, so a link changed after the
// check cannot redirect the upload; a file replaced in place between the
// check and the channel's read is not guarded against (that takes writing
// to the workspace, which the agent may do anyway).
func checkMedia(ws string, key sessionkey.Key, p string, maxBytes int64) (string, error) {
	if ws == "" {
		return "", errNoWorkspace
	}
	if p == "" {
		return "", errEmptyPath
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxMediaBytes
	}
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return "", errNoWorkspace
	}
	if root, err = filepath.Abs(root); err != nil {
		return "", errNoWorkspace
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	real, err := filepath.EvalSymlinks(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Refuse what lies outside before saying whether it exists.
		wsAbs, _ := filepath.Abs(ws)
		if c := filepath.Clean(p); !inside(root, c) && !inside(wsAbs, c) {
			return "", errOutside
		}
		return "", errNotFound
	case err != nil:
		return "", errNotFound
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", errNotFound
	}
	if !inside(root, real) {
		return "", errOutside
	}
	media := filepath.Join(root, sessionkey.MediaDir)
	own := filepath.Join(media, key.Dir())
	if inside(media, real) && !inside(own, real) {
		return "", errOtherSession
	}
	if realMedia, err := filepath.EvalSymlinks(media); err == nil && realMedia != media && inside(realMedia, real) {
		// The media directory was replaced by a link within the
		// workspace: what it holds is still only the session's own.
		if !inside(filepath.Join(realMedia, key.Dir()), real) {
			return "", errOtherSession
		}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", errNotFound
	}
	if !fi.Mode().IsRegular() {
		return "", errNotRegular
	}
	if fi.Size() > maxBytes {
		return "", fmt.Errorf("it has %s, more than the %s a file sent may have", sizeText(fi.Size()), sizeText(maxBytes))
	}
	return real, nil
}

// inside reports whether path is dir or below it (both clean and
// absolute).
func inside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// shownPath is how a refused file is named in the chat: relative to the
// workspace when it is written below it, as written when relative, and
// by its base name otherwise (no host path outside the workspace).
func shownPath(ws, p string) string {
	if p == "" {
		return `""`
	}
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if ws != "" {
		if abs, err := filepath.Abs(ws); err == nil && inside(abs, filepath.Clean(p)) {
			if rel, err := filepath.Rel(abs, filepath.Clean(p)); err == nil {
				return rel
			}
		}
	}
	return filepath.Base(p)
}

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
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

// checkFiles keeps the files of a command's reply that may be sent to
// instance: an absolute path to a regular file of at most MaxFileBytes
// (the plugin vouches for the path, as the sdk's OutboundMedia says; the
// host still checks what the channel would be asked to read). For each
// file left out, notes has a line saying which and why.
func (d *Dispatcher) checkFiles(instance string, media []channel.OutboundMedia) (ok []channel.OutboundMedia, notes []string) {
	maxBytes := d.MaxFileBytes(instance)
	for _, m := range media {
		err := checkFile(m.Path, maxBytes)
		if err != nil {
			d.log.Warn("a command's file was not sent", "instance", instance, "file", filepath.Base(m.Path), "error", err)
			notes = append(notes, fmt.Sprintf("(%s was not sent: %v.)", filepath.Base(m.Path), err))
			continue
		}
		if m.Kind == "" {
			m.Kind = mediaKind(m.Path)
		}
		ok = append(ok, m)
	}
	return ok, notes
}

// checkFile checks one file of a command's reply (see checkFiles).
func checkFile(p string, maxBytes int64) error {
	if p == "" || !filepath.IsAbs(p) {
		return errors.New("its path is not absolute")
	}
	fi, err := os.Stat(p)
	if err != nil {
		return errNotFound
	}
	if !fi.Mode().IsRegular() {
		return errNotRegular
	}
	if fi.Size() > maxBytes {
		return fmt.Errorf("it has %s, more than the %s a file sent may have", sizeText(fi.Size()), sizeText(maxBytes))
	}
	return nil
}
