package slacktest

import (
	"net/http"
	"net/url"
	"strconv"
)

// replies answers conversations.replies: the thread's parent and its
// replies (oldest first) up to latest (exclusive unless inclusive is
// true or "1").
func (s *Server) replies(w http.ResponseWriter, form url.Values) {
	ch, ts, latest := form.Get("channel"), form.Get("ts"), form.Get("latest")
	inclusive := form.Get("inclusive") == "true" || form.Get("inclusive") == "1"
	s.mu.Lock()
	var out []answer
	for _, m := range s.msgs {
		if m.Channel != ch || (m.TS != ts && m.ThreadTS != ts) {
			continue
		}
		if latest != "" && (tsAfter(m.TS, latest) || (m.TS == latest && !inclusive)) {
			continue
		}
		a := answer{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS}
		if m.ThreadTS != "" {
			a["thread_ts"] = m.ThreadTS
		}
		if m.User == BotUserID {
			a["bot_id"] = BotID
		}
		out = append(out, a)
	}
	s.mu.Unlock()
	if len(out) == 0 {
		fail(w, "thread_not_found")
		return
	}
	writeJSON(w, answer{"ok": true, "messages": out, "has_more": false})
}

// tsAfter reports whether Slack ts a is later than b.
func tsAfter(a, b string) bool {
	x, _ := strconv.ParseFloat(a, 64)
	y, _ := strconv.ParseFloat(b, 64)
	return x > y
}
