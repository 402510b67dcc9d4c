package telegramtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// send posts sendMessage to srv with ctx and returns the HTTP status and
// the decoded answer (nil when the answer is not JSON), or the error.
func send(ctx context.Context, srv *Server, text string) (int, map[string]any, error) {
	form := url.Values{"chat_id": {"1001"}, "text": {text}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/bot"+srv.Token()+"/sendMessage", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return resp.StatusCode, nil, nil
	}
	return resp.StatusCode, v, nil
}

// TestFailures: each scripted failure answers as documented and carries
// the call out (a message in Sent) exactly when it says so.
func TestFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		f       Failure
		timeout time.Duration // the client's deadline; 0: 5 s
		status  int           // 0: no HTTP answer at all
		ok      bool          // answer decoded with "ok": true
		sent    bool          // the message was carried out
	}{
		{name: "ServerError", f: ServerError(502), status: 502},
		{name: "TooManyRequests", f: TooManyRequests(3), status: 429},
		{name: "AcceptedThenDropped", f: AcceptedThenDropped(), sent: true},
		{name: "AcceptedMalformed", f: AcceptedMalformed(), status: 200, sent: true},
		{name: "AcceptedSilence", f: AcceptedSilence(), timeout: 300 * time.Millisecond, sent: true},
		{name: "Slow", f: Slow(300 * time.Millisecond), status: 200, ok: true, sent: true},
		{name: "SlowClientGivesUp", f: Slow(5 * time.Second), timeout: 200 * time.Millisecond},
		{name: "SlowThenServerError", f: Failure{Delay: 200 * time.Millisecond, Code: 503, Description: "Service Unavailable"}, status: 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer("1:T")
			defer srv.Close()
			srv.Fail("sendMessage", 1, tc.f)
			timeout := tc.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			status, v, err := send(ctx, srv, "first")
			if tc.f.Delay > 0 && tc.status != 0 && time.Since(start) < tc.f.Delay {
				t.Errorf("answered after %v, before the silence of %v ended", time.Since(start), tc.f.Delay)
			}
			if tc.status == 0 && err == nil {
				t.Errorf("got an answer (status %d, %v), want none", status, v)
			}
			if tc.status != 0 && status != tc.status {
				t.Errorf("status %d (err %v), want %d", status, err, tc.status)
			}
			if got := v != nil && v["ok"] == true; got != tc.ok {
				t.Errorf("answer %v: ok = %v, want %v", v, got, tc.ok)
			}
			if tc.f.RetryAfter > 0 {
				p, _ := v["parameters"].(map[string]any)
				if p["retry_after"] != float64(tc.f.RetryAfter) {
					t.Errorf("answer %v lacks retry_after %d", v, tc.f.RetryAfter)
				}
			}
			// A silence the client gave up on ends with the request's
			// context; give the handler a moment to see it.
			time.Sleep(50 * time.Millisecond)
			if got := len(srv.Sent()) == 1; got != tc.sent {
				t.Errorf("carried out = %v, want %v (sent %+v)", got, tc.sent, srv.Sent())
			}
			// The script is used up: the next call is answered normally.
			if status, v, err := send(context.Background(), srv, "second"); err != nil || status != 200 || v["ok"] != true {
				t.Errorf("next call: status %d, %v, %v; want a normal answer", status, v, err)
			}
		})
	}
}
