package core

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestAnnounceLink: the link with its token goes to the terminal only; the
// log gets the address and, without a terminal, where the token is.
func TestAnnounceLink(t *testing.T) {
	t.Parallel()
	const tok = "5ecret5ecret5ecret5ecret"
	for _, c := range []struct {
		name                string
		terminal            bool
		wantTerm, wantInLog string
	}{
		{"terminal", true, "http://127.0.0.1:8791/?token=" + tok, "printed on the terminal"},
		{"service", false, "", "token_file=/d/admin.token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var logBuf, term bytes.Buffer
			log := hclog.New(&hclog.LoggerOptions{Output: &logBuf})
			var w *bytes.Buffer
			if c.terminal {
				w = &term
			}
			if w != nil {
				announceLink(log, w, "status page", "http://127.0.0.1:8791/", tok, "/d/admin.token")
			} else {
				announceLink(log, nil, "status page", "http://127.0.0.1:8791/", tok, "/d/admin.token")
			}
			if strings.Contains(logBuf.String(), tok) {
				t.Errorf("the log holds the token:\n%s", logBuf.String())
			}
			if !strings.Contains(logBuf.String(), c.wantInLog) || !strings.Contains(logBuf.String(), "url=http://127.0.0.1:8791/") {
				t.Errorf("log lacks %q and the address:\n%s", c.wantInLog, logBuf.String())
			}
			if !strings.Contains(term.String(), c.wantTerm) || (!c.terminal && term.Len() > 0) {
				t.Errorf("terminal %q, want %q", term.String(), c.wantTerm)
			}
		})
	}
}

// TestAnnouncePluginLink: a ready plugin's link is printed whole on the
// terminal once per link (a restart with the same link is quiet); the log
// gets it without its query.
func TestAnnouncePluginLink(t *testing.T) {
	t.Parallel()
	var logBuf, term bytes.Buffer
	h := &Host{opts: Options{Terminal: &term}, log: hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: &logBuf})}
	const link = "http://127.0.0.1:8790/?token=5ecret5ecret5ecret"
	h.announcePluginLink("web", link)
	h.announcePluginLink("web", link)
	if got := strings.Count(term.String(), link); got != 1 {
		t.Errorf("terminal shows the link %d times, want once:\n%s", got, term.String())
	}
	if strings.Contains(logBuf.String(), "5ecret") || !strings.Contains(logBuf.String(), "url=http://127.0.0.1:8790/") {
		t.Errorf("log:\n%s", logBuf.String())
	}
	h.announcePluginLink("web", link+"2")
	if !strings.Contains(term.String(), link+"2") {
		t.Error("a new link is not printed")
	}
}
