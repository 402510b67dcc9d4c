package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

const testSecret = "signing-secret-of-the-test"

// signedPost POSTs body to u signed with secret at ts, as Slack does.
func signedPost(t *testing.T, u, contentType, body, secret string, ts time.Time) (int, string) {
	t.Helper()
	stamp := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", stamp, body)
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEventsMode: the Events API server answers url_verification, takes a
// signed event (200 once the host stored it), refuses a wrong signature
// and a request older than the 5-minute replay window, and takes a
// signed button press.
func TestEventsMode(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	dm := srv.AddDM(alice)
	addr := sdktest.FreeAddr(t)
	a := newAdapter(t, srv, map[string]any{"mode": "events", "signing_secret": testSecret, "listen": addr, "app_token": ""})
	inbox := &sdktest.Inbox{}
	a.runReady(t, inbox)
	base := "http://" + addr

	code, body := signedPost(t, base+"/slack/events", "application/json", `{"type":"url_verification","challenge":"c-123"}`, testSecret, time.Now())
	if code != 200 || body != "c-123" {
		t.Errorf("url_verification: %d %q", code, body)
	}
	ev, _ := json.Marshal(map[string]any{"type": "event_callback", "event_id": "Ev1", "event": map[string]any{
		"type": "message", "channel_type": "im", "channel": dm.ID, "user": alice.ID, "text": "over http", "ts": "1700000001.000001"}})
	if code, _ := signedPost(t, base+"/slack/events", "application/json", string(ev), "wrong-secret", time.Now()); code != http.StatusUnauthorized {
		t.Errorf("a wrong signature: %d", code)
	}
	if code, _ := signedPost(t, base+"/slack/events", "application/json", string(ev), testSecret, time.Now().Add(-6*time.Minute)); code != http.StatusUnauthorized {
		t.Errorf("a replay older than 5 minutes: %d", code)
	}
	if n := len(inbox.Stored()); n != 0 {
		t.Fatalf("%d messages taken from refused requests", n)
	}
	if code, _ := signedPost(t, base+"/slack/events", "application/json", string(ev), testSecret, time.Now()); code != 200 {
		t.Errorf("a signed event: %d", code)
	}
	if m := inbox.Wait(t, 1)[0]; m.Text != "over http" || m.ChatID != dm.ID || m.MessageID != "1700000001.000001" {
		t.Errorf("event: %+v", m)
	}

	press, _ := json.Marshal(map[string]any{"type": "block_actions", "trigger_id": "tr1", "user": map[string]string{"id": alice.ID, "name": "alice"},
		"channel": map[string]string{"id": dm.ID}, "message": map[string]any{"ts": "1700000002.000001", "text": "q"},
		"actions": []map[string]any{{"type": "button", "action_id": "yes", "block_id": "b1", "value": "yes", "action_ts": "1700000003.000001",
			"text": map[string]any{"type": "plain_text", "text": "Yes"}}}})
	form := url.Values{"payload": {string(press)}}.Encode()
	if code, _ := signedPost(t, base+"/slack/interactions", "application/x-www-form-urlencoded", form, testSecret, time.Now()); code != 200 {
		t.Errorf("a press: %d", code)
	}
	if m := inbox.Wait(t, 2)[1]; m.Action == nil || m.Action.ButtonID != "yes" || m.Text != "Yes" {
		t.Errorf("press: %+v", m)
	}
}
