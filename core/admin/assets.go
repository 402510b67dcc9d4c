package admin

import (
	"embed"
	"mime"
	"net/http"
	"path"
)

// assets are the operator's page's scripts and styles, served from the
// binary (GET /assets/{name}): the page loads nothing from the internet.
// uPlot.iife.min.js and uPlot.min.css are uPlot (MIT, its licence in
// uPlot.LICENSE) as published on npm; the version and the hash of its
// package are in the Makefile's uplot target, which fetches it again and
// checks it. ops.js and ops.css are the page's own.
//
//go:embed assets/uPlot.iife.min.js assets/uPlot.min.css assets/uPlot.LICENSE assets/ops.js assets/ops.css
var assets embed.FS

// serveAsset serves GET /assets/{name}.
func serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := assets.ReadFile(path.Join("assets", path.Base(name)))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}
