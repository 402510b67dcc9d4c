package turn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// fetchMedia downloads a message's attachments into the session's own
// directory, <workspace>/media/<key.Dir()>/ (0700), as 0600
// files with random names (128 bits, hex, after the journal entry's id and
// the attachment's index: a turn run again after a restart finds what was
// downloaded for it, see downloaded), so the prompt can name their paths
// and claude can read them, and nobody can guess another chat's.
// core/delivery sends a MEDIA: file from the media directory only when it
// is in the session's own; the media pruner removes old ones. Failures
// are logged; the prompt then says the attachment could not be
// downloaded.
func (t *Turns) fetchMedia(ctx context.Context, set Settings, key sessionkey.Key, m *message.Message, id int64) {
	if len(m.Media) == 0 || set.Workspace == "" {
		return
	}
	media := filepath.Join(set.Workspace, sessionkey.MediaDir)
	dir := filepath.Join(media, key.Dir())
	// media itself is 0700 as well: the names of the sessions are not for
	// other accounts to list.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.log.Error("media directory", "error", err)
		return
	}
	for i := range m.Media {
		md := &m.Media[i]
		if md.Path != "" {
			continue
		}
		if prev := downloaded(dir, id, i, md); prev != "" {
			// Downloaded already for this entry, before a restart (by
			// FetchMedia or an earlier run of the turn): not again.
			md.Path = prev
			continue
		}
		name, err := randomName()
		if err != nil {
			t.log.Error("media file name", "error", err)
			return
		}
		if id > 0 {
			name = mediaPrefix(id, i) + name
		}
		path := filepath.Join(dir, name+mediaExt(md))
		dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		info, err := t.download(dctx, m.Instance, id, md.Ref, path)
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

// FetchMedia downloads m's attachments as a turn of session key would
// (see fetchMedia), before the queue: the message_received hooks see them
// saved on the host, and the turn finds them downloaded.
func (t *Turns) FetchMedia(ctx context.Context, key sessionkey.Key, m *message.Message, id int64) {
	t.fetchMedia(ctx, t.settingsOf(key), key, m, id)
}

// SaveMedia saves data as a file of session key's own media directory,
// as an attachment is saved (0600, a random name with filename's
// extension), and returns its absolute path: a file a message_sending hook
// added to a reply, which delivery sends from there like the agent's own
// MEDIA: files (the media pruner removes it with the others).
func (t *Turns) SaveMedia(key sessionkey.Key, filename string, data []byte) (string, error) {
	set := t.settingsOf(key)
	if set.Workspace == "" {
		return "", errors.New("no workspace is configured")
	}
	dir := filepath.Join(absPath(set.Workspace), sessionkey.MediaDir, key.Dir())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name, err := randomName()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+mediaExt(&message.Media{Filename: filename}))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// mediaPrefix starts the name of journal entry id's attachment i, so a
// run of its turn after a restart finds the file downloaded before it
// instead of downloading it again (a second copy); the random rest keeps
// the name unguessable.
func mediaPrefix(id int64, i int) string { return fmt.Sprintf("%d-%d-", id, i) }

// downloaded is the file entry id's attachment i was downloaded to in dir
// already ("" for none). A download in progress or cut off by a crash is a
// .part file, never matched: only a completed download is renamed to its
// name.
func downloaded(dir string, id int64, i int, md *message.Media) string {
	if id <= 0 {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(dir, mediaPrefix(id, i)+"*"+mediaExt(md)))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// randomName is 128 random bits in hex.
func randomName() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

func (t *Turns) download(ctx context.Context, instance string, entry int64, ref, path string) (channel.MediaInfo, error) {
	// O_EXCL: a name is used once; a file (or link) already there is not
	// written through.
	f, err := os.OpenFile(path+".part", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		// The media pruner removed the directory as it was emptied.
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, err = os.OpenFile(path+".part", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		}
	}
	if err != nil {
		return channel.MediaInfo{}, err
	}
	info, err := t.opts.Channels.Download(ctx, instance, entry, ref, t.opts.MaxMediaBytes, f)
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
