package admin

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Exporter writes a session's export (/export's Markdown file) for the
// operator's page's export link.
type Exporter interface {
	// ExportSession writes session key's export and returns its path.
	// The error wraps [ErrNoExport] when the session has nothing to
	// export (unknown, or no claude session yet).
	ExportSession(ctx context.Context, key string) (path string, err error)
}

// ErrNoExport: the session has nothing to export.
var ErrNoExport = errors.New("this session has no claude session to export")

// exportTimeout bounds writing one export.
const exportTimeout = 30 * time.Second

// exportSession serves GET /sessions/export?session=<key>: the session's
// export as a Markdown download (the file /export would send in the chat;
// it stays in the session's media directory until agent.media_keep).
func (h *handler) exportSession(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("session")
	switch {
	case h.exporter == nil:
		http.Error(w, "export is not available", http.StatusNotFound)
		return
	case key == "":
		http.Error(w, "missing session", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), exportTimeout)
	defer cancel()
	path, err := h.exporter.ExportSession(ctx, key)
	if errors.Is(err, ErrNoExport) {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	var b []byte
	if err == nil {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		h.log.Error("export a session", "session", key, "error", err)
		http.Error(w, "the export failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h.log.Info("session exported from the status page", "session", key, "file", path)
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+filepath.Base(path)+`"`)
	_, _ = w.Write(b)
}
