package markup

import (
	"net/url"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// link writes a link or image n to dest: an <a> element in a flavour with
// links when dest is allowed, else "label (url)" (withURL).
func (w *walker) link(dest string, n ast.Node, fallbackLabel string) {
	if w.st.links && w.inLink == 0 && linkAllowed(dest) {
		w.init()
		before := w.vis.Len()
		w.mark(`<a href="` + escapeHTML(dest) + `">`)
		w.inLink++
		w.inlines(n)
		w.inLink--
		if w.vis.Len() == before {
			label := fallbackLabel
			if label == "" {
				label = dest
			}
			w.text(label)
		}
		w.mark("</a>")
		if label := strings.TrimSpace(w.vis.String()[before:]); w.st.elems && label != dest && "mailto:"+label != dest {
			// The plain fallback beside the HTML keeps the link policy.
			w.vis.WriteString(" (" + dest + ")")
		}
		return
	}
	if w.inLink > 0 {
		w.inlines(n)
		return
	}
	if w.st.angle && angleLinkAllowed(dest) {
		sub := &walker{src: w.src, st: style{}, inLink: 1}
		sub.inlines(n)
		sub.init()
		label := strings.TrimSpace(strings.ReplaceAll(sub.vis.String(), "\n", " "))
		u := strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20").Replace(dest)
		u = strings.ReplaceAll(u, "&", "&amp;")
		if label == "" || label == dest || "mailto:"+label == dest {
			w.mark("<" + u + ">")
			return
		}
		w.mark("<" + u + "|" + escapeAngle(strings.ReplaceAll(label, "|", "¦")) + ">")
		return
	}
	sub := &walker{src: w.src, st: style{}, inLink: 1}
	sub.inlines(n)
	sub.init()
	w.text(withURL(sub.vis.String(), dest))
}

// withURL is the link policy: "label (url)", or the url alone when the
// label adds nothing (empty, the url, or the address of a mailto url).
func withURL(label, dest string) string {
	label = strings.TrimSpace(label)
	switch {
	case dest == "":
		return label
	case label == "" || label == dest || "mailto:"+label == dest:
		return dest
	}
	return label + " (" + dest + ")"
}

// angleLinkAllowed: the urls a mrkdwn link may point to (http and https
// with a host, mailto).
func angleLinkAllowed(dest string) bool {
	u, err := url.Parse(dest)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}

// linkAllowed: the urls an HTML-subset link may point to (http and https
// with a host, tg, mailto).
func linkAllowed(dest string) bool {
	u, err := url.Parse(dest)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "tg", "mailto":
		return true
	}
	return false
}
