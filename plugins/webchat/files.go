package webchat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Files both ways. A file the user picks in the page is uploaded (POST
// /upload, multipart: file, text, client_id) and reaches the host as an
// attachment of the message (MediaIn; the host downloads it through
// DownloadMedia). A file the host sends (SendRequest.Media: a MEDIA: line,
// claude's send_file) is copied next to the history and shown under the
// message as a link that downloads it (GET /files/{id}), an image also
// inline. Files live in <data_dir>/files, named by a random id; a page gets
// only the files of its own chat.

// Limits of the files.
const (
	// MaxUploadBytes is the largest file a page may upload.
	MaxUploadBytes = 20 << 20
	// MaxFileBytes is the largest file the host may send.
	MaxFileBytes = 50 << 20
)

// filesDir is where the files are kept.
const filesDir = "files"

// File is a file of a message, as the page shows it.
type File struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	MIME string `json:"mime"`
	Size int64  `json:"size"`
}

// fileID is a new random file id.
func fileID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "f" + hex.EncodeToString(b)
}

// validFileID: ids are fileID's, never a path.
func validFileID(id string) bool {
	if len(id) != 33 || id[0] != 'f' {
		return false
	}
	_, err := hex.DecodeString(id[1:])
	return err == nil
}

func (a *Adapter) filePath(id string) string { return filepath.Join(a.store.dir, filesDir, id) }

// saveFile copies at most limit bytes of r into a new file; more is an
// error (and nothing is kept).
func (a *Adapter) saveFile(r io.Reader, name, mimeType string, limit int64) (File, error) {
	if a.store.dir == "" {
		return File{}, errors.New("no data directory for files")
	}
	if err := os.MkdirAll(filepath.Join(a.store.dir, filesDir), 0o700); err != nil {
		return File{}, err
	}
	f := File{ID: fileID(), Name: cleanName(name), MIME: mimeType}
	path := a.filePath(f.ID)
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return File{}, err
	}
	n, err := io.Copy(out, io.LimitReader(r, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("the file is larger than %s", humanBytes(int(limit)))
	}
	if err != nil {
		_ = os.Remove(path)
		return File{}, err
	}
	f.Size = n
	if f.MIME == "" || f.MIME == "application/octet-stream" {
		if t := mime.TypeByExtension(filepath.Ext(f.Name)); t != "" {
			f.MIME = t
		}
	}
	if f.MIME == "" {
		f.MIME = "application/octet-stream"
	}
	return f, nil
}

// cleanName is a file name safe to show and to offer as a download's name.
func cleanName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' || r == '/' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, ""))
	if name == "" || name == "." || name == ".." {
		return "file"
	}
	return name
}

// findFile is the file id of chat's messages; ok is false for another
// chat's file or an unknown one. Called with a.mu held.
func (a *Adapter) findFileLocked(chatID, id string) (File, bool) {
	c := a.chats[chatID]
	if c == nil {
		return File{}, false
	}
	for _, r := range c.msgs {
		for _, f := range r.Files {
			if f.ID == id {
				return f, true
			}
		}
	}
	return File{}, false
}

// serveFile sends a file of the page's own chat as a download.
func (a *Adapter) serveFile(w http.ResponseWriter, r *http.Request) {
	chatID, ok := identity(r)
	id := r.PathValue("id")
	if !ok || !validFileID(id) {
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	f, ok := a.findFileLocked(chatID, id)
	a.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	fh, err := os.Open(a.filePath(id))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer fh.Close()
	disposition := "attachment"
	if (strings.HasPrefix(f.MIME, "image/") || strings.HasPrefix(f.MIME, "audio/")) && r.URL.Query().Get("inline") == "1" {
		disposition = "inline"
	}
	w.Header().Set("Content-Type", f.MIME)
	w.Header().Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": f.Name}))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(w, r, "", time.Time{}, fh)
}

// upload takes a file from the page: it is saved, shown as the user's
// message with the text typed beside it, and handed to the host as that
// message's attachment. The answer is JSON {"id": message id} or
// {"error": why}.
func (a *Adapter) upload(w http.ResponseWriter, r *http.Request) {
	chatID, ok := identity(r)
	if o := r.Header.Get("Origin"); !ok || (o != "" && !strings.HasSuffix(o, "://"+r.Host)) {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	reply := func(code int, v map[string]string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBytes+MaxInboundBytes+64<<10)
	mr, err := r.MultipartReader()
	if err != nil {
		reply(http.StatusBadRequest, map[string]string{"error": "not a file upload"})
		return
	}
	var text, clientID string
	var file *File
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			reply(http.StatusRequestEntityTooLarge, map[string]string{"error": "the file is larger than " + humanBytes(MaxUploadBytes)})
			return
		}
		switch part.FormName() {
		case "text":
			b, _ := io.ReadAll(io.LimitReader(part, MaxInboundBytes+1))
			text = string(b)
		case "client_id":
			b, _ := io.ReadAll(io.LimitReader(part, 64))
			clientID = string(b)
		case "file":
			if file != nil {
				continue
			}
			f, err := a.saveFile(part, part.FileName(), part.Header.Get("Content-Type"), MaxUploadBytes)
			if err != nil {
				reply(http.StatusRequestEntityTooLarge, map[string]string{"error": "not sent: " + err.Error()})
				return
			}
			file = &f
		}
		part.Close()
	}
	if file == nil {
		reply(http.StatusBadRequest, map[string]string{"error": "no file"})
		return
	}
	if len(text) > MaxInboundBytes {
		_ = os.Remove(a.filePath(file.ID))
		reply(http.StatusRequestEntityTooLarge, map[string]string{"error": "message too long"})
		return
	}
	id, err := a.deliver(r.Context(), chatID, strings.ToValidUTF8(text, "\uFFFD"), clientID, []File{*file})
	if err != nil {
		reply(http.StatusServiceUnavailable, map[string]string{"error": "not delivered: clawhost did not take the message; try again"})
		return
	}
	reply(http.StatusOK, map[string]string{"id": id})
}

// DownloadMedia implements channel.MediaDownloader: the host fetches a file
// a page uploaded (Ref is its id).
func (a *Adapter) DownloadMedia(ctx context.Context, req channel.DownloadRequest) (io.ReadCloser, channel.MediaInfo, error) {
	if !validFileID(req.Ref) {
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeInvalidRequest, "not a webchat file: %q", req.Ref)
	}
	a.mu.Lock()
	var f File
	found := false
	for id := range a.chats {
		if f, found = a.findFileLocked(id, req.Ref); found {
			break
		}
	}
	a.mu.Unlock()
	fh, err := os.Open(a.filePath(req.Ref))
	if err != nil || !found {
		if fh != nil {
			fh.Close()
		}
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeChatNotFound, "file %s is gone", req.Ref)
	}
	if req.MaxBytes > 0 && f.Size > req.MaxBytes {
		fh.Close()
		return nil, channel.MediaInfo{}, channel.Errorf(channel.CodeMessageTooLong, "the file has %d bytes, more than %d", f.Size, req.MaxBytes)
	}
	return fh, channel.MediaInfo{MIME: f.MIME, Size: f.Size}, nil
}

// sendFiles copies the files of a SendRequest next to the history.
func (a *Adapter) sendFiles(media []channel.OutboundMedia) ([]File, error) {
	var out []File
	for _, m := range media {
		fh, err := os.Open(m.Path)
		if err != nil {
			return nil, channel.Errorf(channel.CodeInvalidRequest, "file: %v", err)
		}
		f, err := a.saveFile(fh, filepath.Base(m.Path), m.MIME, MaxFileBytes)
		fh.Close()
		if err != nil {
			for _, done := range out {
				_ = os.Remove(a.filePath(done.ID))
			}
			return nil, channel.Errorf(channel.CodeMessageTooLong, "file %s: %v", filepath.Base(m.Path), err)
		}
		out = append(out, f)
	}
	return out, nil
}

// removeFiles deletes the files of records leaving the history.
func (a *Adapter) removeFiles(rs []*record) {
	for _, r := range rs {
		for _, f := range r.Files {
			_ = os.Remove(a.filePath(f.ID))
		}
	}
}
