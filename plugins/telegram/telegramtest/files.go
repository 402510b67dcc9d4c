package telegramtest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// UploadedFile is a file received in a multipart request.
type UploadedFile struct {
	Field    string
	Filename string
	Data     []byte
}

type file struct {
	path string
	data []byte
	// size is the file_size getFile announces; < 0 omits it (and the
	// download is sent without Content-Length).
	size int64
}

// AddFile makes fileID known to getFile, stored at filePath with data.
func (s *Server) AddFile(fileID, filePath string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = file{path: filePath, data: data, size: int64(len(data))}
}

// AddFileWithSize is AddFile with the file_size getFile announces set to
// size instead of len(data): larger to stand for a huge file without
// holding it in memory (getFile refuses files over MaxGetFileBytes, as
// Telegram does), smaller to model a size Telegram got wrong, or < 0 to
// omit file_size and stream the download without Content-Length.
func (s *Server) AddFileWithSize(fileID, filePath string, data []byte, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[fileID] = file{path: filePath, data: data, size: size}
}

func (s *Server) getFile(p url.Values) (any, *apiError) {
	id := p.Get("file_id")
	s.mu.Lock()
	f, ok := s.files[id]
	s.mu.Unlock()
	if !ok {
		return nil, badRequest("invalid file_id")
	}
	if f.size > MaxGetFileBytes || len(f.data) > MaxGetFileBytes {
		return nil, badRequest("file is too big")
	}
	out := map[string]any{"file_id": id, "file_unique_id": "u" + id, "file_path": f.path}
	if f.size >= 0 {
		out["file_size"] = f.size
	}
	return out, nil
}

func (s *Server) serveFile(w http.ResponseWriter, rest string) {
	token, path, ok := strings.Cut(rest, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: DownloadMethod, Params: url.Values{"file_path": {path}}, Time: time.Now(), Unauthorized: !ok || token != s.token})
	if !ok || token != s.token {
		writeError(w, &apiError{code: 401, desc: "Unauthorized"})
		return
	}
	for _, f := range s.files {
		if f.path == path {
			w.Header().Set("Content-Type", "application/octet-stream")
			if f.size >= 0 {
				w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
				_, _ = w.Write(f.data)
				return
			}
			// Unknown size: chunked, in pieces.
			fl, _ := w.(http.Flusher)
			for b := f.data; len(b) > 0; {
				n := min(len(b), 512)
				_, _ = w.Write(b[:n])
				if fl != nil {
					fl.Flush()
				}
				b = b[n:]
			}
			return
		}
	}
	writeError(w, &apiError{code: 404, desc: "Not Found"})
}

func (s *Server) sendFile(method, field string, req Request) (any, *apiError) {
	p := req.Params
	chat, aerr := checkChat(p)
	if aerr != nil {
		return nil, aerr
	}
	var up *UploadedFile
	for i := range req.Files {
		if req.Files[i].Field == field {
			up = &req.Files[i]
		}
	}
	if up == nil {
		if ref := p.Get(field); ref != "" {
			up = &UploadedFile{Field: field, Filename: ref}
		} else {
			return nil, badRequest("there is no %s in the request", field)
		}
	}
	if up.Data != nil && len(up.Data) == 0 {
		return nil, badRequest("file must be non-empty")
	}
	caption := p.Get("caption")
	vis, aerr := visible(caption, p.Get("parse_mode"))
	if aerr != nil {
		return nil, aerr
	}
	if UTF16Len(vis) > MaxCaptionLength {
		return nil, badRequest("message caption is too long")
	}
	return s.post(p, Sent{Method: method, ChatID: chat, Text: caption, Visible: vis, File: up})
}
