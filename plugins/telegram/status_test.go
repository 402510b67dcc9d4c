package telegram

import (
	"context"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// TestReportedStatus: what the receive loop reports for each outcome of
// its calls, and that the report never carries the token.
func TestReportedStatus(t *testing.T) {
	t.Parallel()
	downAddr := sdktest.FreeAddr(t) // connection refused from now on

	cases := []struct {
		name    string
		extra   map[string]any
		fail    func(*telegramtest.Server)
		state   status.State
		message string
		link    string
	}{
		{"token rejected", map[string]any{"token": "999:WRONG"}, nil, status.NeedsAttention, "@BotFather", botFatherURL},
		{"not found", nil, func(s *telegramtest.Server) {
			s.Fail("getMe", -1, telegramtest.Failure{Code: 404, Description: "Not Found"})
		}, status.NeedsAttention, "api_endpoint", ""},
		{"api down", map[string]any{"api_endpoint": "http://" + downAddr + "/bot%s/%s"}, nil, status.Degraded, "connection refused", ""},
		{"bad gateway", nil, func(s *telegramtest.Server) {
			s.Fail("getMe", -1, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
		}, status.Degraded, "502", ""},
		{"conflict", nil, func(s *telegramtest.Server) { s.Fail("getUpdates", -1, telegramtest.Conflict()) }, status.Degraded, "409 Conflict", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			if c.fail != nil {
				c.fail(srv)
			}
			a := newTestAdapter(t, srv, c.extra)
			rep := &sdktest.Statuses{}
			a.status = rep
			ctx, cancel := context.WithCancel(context.Background())
			rec := &sleepRecorder{limit: 2, cancel: cancel}
			a.sleep = rec.sleep
			if err := a.Run(ctx, &sdktest.Inbox{}); err != nil {
				t.Fatal(err)
			}
			st := rep.Last()
			if st.State != c.state || !strings.Contains(st.Message, c.message) {
				t.Fatalf("reported %+v, want %s with %q", st, c.state, c.message)
			}
			if c.link != "" && (st.Attention == nil || st.Attention.Kind != status.Link || st.Attention.Data != c.link) {
				t.Fatalf("attention %+v, want a link to %s", st.Attention, c.link)
			}
			for _, r := range rep.All() {
				if strings.Contains(r.Message, "TEST-token") || strings.Contains(r.Message, "WRONG") {
					t.Fatalf("a report shows the token: %q", r.Message)
				}
			}
		})
	}
}

// TestReportedStatusRecovers: the API comes back after failures; the
// plugin reports ready again, and 429 changes nothing.
func TestReportedStatusRecovers(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	srv.Fail("getMe", 1, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	srv.Fail("getUpdates", 1, telegramtest.TooManyRequests(1))
	a := newTestAdapter(t, srv, nil)
	rep := &sdktest.Statuses{}
	a.status = rep
	a.sleep = (&sleepRecorder{}).sleep
	runUntilStored(t, a, func() { srv.PushText(telegramtest.PrivateChat(1001), alice, "back") })
	var states []status.State
	for _, r := range rep.All() {
		if len(states) == 0 || states[len(states)-1] != r.State {
			states = append(states, r.State)
		}
	}
	if len(states) != 2 || states[0] != status.Degraded || states[1] != status.Ready {
		t.Fatalf("states %v, want [degraded ready]", states)
	}
}
