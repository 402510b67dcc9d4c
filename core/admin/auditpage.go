package admin

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// AuditPage is the body of GET /audit/search.json: one page of the audit
// rows a search selects, newest first.
type AuditPage struct {
	Rows []AuditEntry `json:"rows"`
	// Total counts every row selected; Page is this page (from 1) of
	// Pages, PerPage rows each.
	Total   int `json:"total"`
	Page    int `json:"page"`
	Pages   int `json:"pages"`
	PerPage int `json:"per_page"`
	// Kinds are the kinds in the trail's period, for the page's filter.
	Kinds []string `json:"kinds"`
}

// auditPerPage is how many rows a page holds unless per= says.
const auditPerPage = 25

// auditQuery is a parsed search of the audit trail.
type auditQuery struct {
	text, who, chat, kind string
	since, until          time.Time
	page, per             int
}

// parseAudit reads q (words every row must hold, in any field), who (the
// actor), chat ("<instance>:<chat id>"), kind, since and until (RFC 3339
// or a day "2026-11-25"; until's day is included), page and per.
func parseAudit(r *http.Request, loc *time.Location) (auditQuery, error) {
	v := r.URL.Query()
	a := auditQuery{text: strings.ToLower(strings.TrimSpace(v.Get("q"))), who: v.Get("who"), chat: v.Get("chat"), kind: v.Get("kind"), page: 1, per: auditPerPage}
	var err error
	if a.since, err = parseWhen(v.Get("since"), loc, false); err != nil {
		return a, fmt.Errorf("since: %w", err)
	}
	if a.until, err = parseWhen(v.Get("until"), loc, true); err != nil {
		return a, fmt.Errorf("until: %w", err)
	}
	for name, p := range map[string]*int{"page": &a.page, "per": &a.per} {
		if s := v.Get(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || (name == "per" && n > 500) {
				return a, fmt.Errorf("%s is not a page number or size: %q", name, s)
			}
			*p = n
		}
	}
	return a, nil
}

// parseWhen reads an RFC 3339 time or a day in loc (end: the day after,
// so the day is included); "" is the zero time.
func parseWhen(s string, loc *time.Location, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := time.ParseInLocation(time.DateOnly, s, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a day (2026-11-25) nor an RFC 3339 time", s)
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}

// matches reports whether the query selects e.
func (a auditQuery) matches(e AuditEntry) bool {
	switch {
	case a.who != "" && e.Actor != a.who:
		return false
	case a.chat != "" && e.Chat != a.chat:
		return false
	case !a.until.IsZero() && !e.At.Before(a.until):
		return false
	}
	if a.text == "" {
		return true
	}
	hay := strings.ToLower(strings.Join([]string{e.Kind, e.Actor, e.Chat, e.Subject, e.Decision, e.Detail}, "\n"))
	for _, w := range strings.Fields(a.text) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// auditSearch serves GET /audit/search.json.
func (h *handler) auditSearch(w http.ResponseWriter, r *http.Request) {
	a, err := parseAudit(r, h.loc)
	switch {
	case h.reports == nil:
		writeJSON(w, http.StatusNotFound, errorBody{"the audit trail is not available"})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	}
	rows, err := h.reports.Audit(r.Context(), a.since, "")
	if err != nil {
		h.log.Error("read the audit trail", "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{"reading the audit trail failed"})
		return
	}
	out := AuditPage{Rows: []AuditEntry{}, Page: a.page, PerPage: a.per, Kinds: []string{}}
	kinds := map[string]bool{}
	var sel []AuditEntry
	for _, e := range rows {
		if !kinds[e.Kind] {
			kinds[e.Kind] = true
			out.Kinds = append(out.Kinds, e.Kind)
		}
		if (a.kind == "" || e.Kind == a.kind) && a.matches(e) {
			sel = append(sel, e)
		}
	}
	slices.Sort(out.Kinds)
	out.Total = len(sel)
	out.Pages = max(1, (len(sel)+a.per-1)/a.per)
	if from := (a.page - 1) * a.per; from < len(sel) {
		out.Rows = append(out.Rows, sel[from:min(len(sel), from+a.per)]...)
	}
	writeJSON(w, http.StatusOK, out)
}
