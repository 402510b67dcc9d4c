// Files on the fake: the external upload (files.getUploadURLExternal, the
// upload, files.completeUploadExternal) and a file's download.

package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// serveUpload takes the bytes of a file announced with
// files.getUploadURLExternal (multipart, field "file").
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, id string) {
	st := s.record("upload", url.Values{"file": {id}})
	if st != 0 {
		s.scripted(w, "upload", st)
		return
	}
	s.mu.Lock()
	f, ok := s.files[id]
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	var data []byte
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if p.FormName() == "file" {
				data, _ = io.ReadAll(p)
				if p.Header.Get("Content-Type") != "" && p.Header.Get("Content-Type") != "application/octet-stream" {
					f.Mimetype = p.Header.Get("Content-Type")
				}
			}
		}
	} else {
		data, _ = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	f.Data = data
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintf(w, "OK - %d", len(data))
}

func (s *Server) completeUpload(w http.ResponseWriter, form url.Values) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(form.Get("files")), &files); err != nil || len(files) == 0 {
		fail(w, "invalid_arguments")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	target := form.Get("channel_id")
	if target == "" {
		target = form.Get("channels")
	}
	c, errCode := s.channelForLocked(target)
	if errCode != "" {
		fail(w, errCode)
		return
	}
	var out []answer
	var shared []File
	for _, x := range files {
		f, ok := s.files[x.ID]
		if !ok || f.Data == nil {
			fail(w, "file_not_found")
			return
		}
		if len(f.Data) != f.Size {
			fail(w, "file_upload_size_mismatch")
			return
		}
		f.Channel, f.ThreadTS = c.ID, form.Get("thread_ts")
		if x.Title != "" {
			f.Title = x.Title
		}
		shared = append(shared, *f)
		out = append(out, answer{"id": f.ID, "title": f.Title})
	}
	m := &Message{Channel: c.ID, TS: s.tsLocked(), ThreadTS: form.Get("thread_ts"), User: BotUserID,
		Text: form.Get("initial_comment"), Files: shared}
	s.msgs = append(s.msgs, m)
	s.notifyLocked()
	writeJSON(w, answer{"ok": true, "files": out})
}

// serveFile serves a file's bytes to the bot token (Bearer); without it
// Slack answers with its sign-in page, here a 302 to one.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/files/"), "/", 2)
	st := s.record("file", url.Values{"file": {parts[0]}})
	if st != 0 {
		s.scripted(w, "file", st)
		return
	}
	s.mu.Lock()
	f, ok := s.files[parts[0]]
	bot := s.botToken
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+bot {
		http.Error(w, "sign in", http.StatusForbidden)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.Mimetype)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Data)))
	_, _ = w.Write(f.Data)
}
