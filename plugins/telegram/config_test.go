package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestConfigDiagnostics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   map[string]any
		attrs []string // attributes with diagnostics, in order
	}{
		{"minimal", map[string]any{"token": "1:A"}, nil},
		{"everything wrong", map[string]any{"token": "", "api_endpoint": "ftp://x/%s", "poll_timeout": 99, "text_limit": 5000, "max_download_bytes": -1},
			[]string{"token", "api_endpoint", "file_endpoint", "poll_timeout", "text_limit", "max_download_bytes"}},
		{"custom endpoint needs file endpoint", map[string]any{"token": "1:A", "api_endpoint": "http://h/%s/%s"}, []string{"file_endpoint"}},
		{"webhook without secret", map[string]any{"token": "1:A", "webhook_listen": "127.0.0.1:8443", "webhook_url": "http://insecure"}, []string{"webhook_secret", "webhook_url"}},
		{"secret without listen", map[string]any{"token": "1:A", "webhook_secret": "s"}, []string{"webhook_listen"}},
		{"short secret", map[string]any{"token": "1:A", "webhook_listen": "127.0.0.1:8443", "webhook_secret": "fifteen-chars15"}, []string{"webhook_secret"}},
		{"one-character secret", map[string]any{"token": "1:A", "webhook_listen": "127.0.0.1:8443", "webhook_secret": "s"}, []string{"webhook_secret"}},
		{"16-character secret", map[string]any{"token": "1:A", "webhook_listen": "127.0.0.1:8443", "webhook_secret": "sixteen-chars-16"}, nil},
		{"token without id", map[string]any{"token": "hunter2"}, []string{"token"}},
		{"token with a letter in the id", map[string]any{"token": "12a:hunter2"}, []string{"token"}},
		{"token with a space", map[string]any{"token": "123:hunter 2"}, []string{"token"}},
		{"token without secret", map[string]any{"token": "123:"}, []string{"token"}},
		{"real shape", map[string]any{"token": "123456789:AAHk-x_yZ"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, _ := json.Marshal(tt.cfg)
			err := New().Configure(context.Background(), schema.Config{JSON: b})
			// Validate holds the same checks, without configuring.
			verr := Validate(context.Background(), schema.Config{JSON: b})
			if fmt.Sprint(verr) != fmt.Sprint(err) {
				t.Errorf("Validate says %v, Configure %v", verr, err)
			}
			if tok, _ := tt.cfg["token"].(string); len(tok) > 3 && strings.Contains(fmt.Sprint(err), tok) {
				t.Errorf("a diagnostic shows the token: %v", err)
			}
			var d schema.Diagnostics
			if tt.attrs == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.As(err, &d) {
				t.Fatalf("want diagnostics, got %v", err)
			}
			var got []string
			for _, x := range d {
				got = append(got, x.Attribute)
			}
			if strings.Join(got, ",") != strings.Join(tt.attrs, ",") {
				t.Fatalf("diagnostics on %v, want %v: %v", got, tt.attrs, d)
			}
		})
	}
}

func TestDeriveFileEndpoint(t *testing.T) {
	t.Parallel()
	if got := deriveFileEndpoint(DefaultAPIEndpoint); got != "https://api.telegram.org/file/bot%s/%s" {
		t.Fatal(got)
	}
	if got := deriveFileEndpoint("http://127.0.0.1:8081/bot%s/%s"); got != "http://127.0.0.1:8081/file/bot%s/%s" {
		t.Fatal(got)
	}
}

func TestSchemaDefaultsMatchConfig(t *testing.T) {
	t.Parallel()
	// Every schema attribute has a Config field, and the token is sensitive.
	b, _ := json.Marshal(Config{})
	var fields map[string]any
	_ = json.Unmarshal(b, &fields)
	for _, a := range Schema {
		if _, ok := fields[a.Name]; !ok {
			t.Errorf("schema attribute %s has no Config field", a.Name)
		}
		if (a.Name == "token" || a.Name == "webhook_secret") && !a.Sensitive {
			t.Errorf("%s must be sensitive", a.Name)
		}
	}
	if len(fields) != len(Schema) {
		t.Errorf("Config has %d fields, schema %d attributes", len(fields), len(Schema))
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	c := newTestAdapter(t, srv, map[string]any{"text_limit": 3000}).Capabilities()
	if c.MaxTextLength != 3000 || c.LengthUnit != channel.LengthUTF16 || c.Markup != channel.MarkupHTMLSubset || !c.Threads || !c.Groups || !c.Buttons {
		t.Fatalf("%+v", c)
	}
	if New().Capabilities().MaxTextLength != 4096 {
		t.Fatal("default limit")
	}
}

func TestWebhookMode(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := newTestAdapter(t, srv, map[string]any{
		"webhook_listen": "127.0.0.1:0", "webhook_secret": "s3cret-s3cret-s3cret", "webhook_url": "https://bot.example.com/hook",
	})
	inbox := &sdktest.Inbox{}
	fail := true
	inbox.Decide = func(context.Context, int, []channel.InboundMessage) error {
		if fail {
			fail = false
			return errors.New("not stored")
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	addr, err := a.webhookListenAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post := func(secret, body string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", strings.NewReader(body))
		req.Header.Set(secretHeader, secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	upd := `{"update_id":1,"message":{"message_id":5,"date":1,"chat":{"id":1,"type":"private"},"from":{"id":1,"first_name":"A"},"text":"via hook"}}`
	if code := post("wrong", upd); code != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d", code)
	}
	if code := post("s3cret-s3cret-s3cret", upd); code != http.StatusServiceUnavailable {
		t.Fatalf("host failed to store: %d, want 503 so Telegram resends", code)
	}
	if code := post("s3cret-s3cret-s3cret", upd); code != http.StatusOK {
		t.Fatalf("stored: %d", code)
	}
	if code := post("s3cret-s3cret-s3cret", `{"update_id":2,"poll":{}}`); code != http.StatusOK {
		t.Fatalf("ignored kind: %d", code)
	}
	if got := inbox.Stored(); len(got) != 1 || got[0].Text != "via hook" {
		t.Fatalf("stored %+v", got)
	}
	sdktest.WaitFor(t, "the webhook set", func() bool { return srv.Webhook() == "https://bot.example.com/hook" })
	if r := srv.Requests("setWebhook"); r[0].Params.Get("secret_token") != "s3cret-s3cret-s3cret" {
		t.Fatalf("setWebhook %v", r[0].Params)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestWebhookLockout: after webhookMaxFails wrong secrets within a minute
// an address gets 429 (the right secret too) until the lockout is over;
// fewer, spread over windows, never lock it out. The clock is injected.
func TestWebhookLockout(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	const secret = "right-secret-0123456789"
	a := newTestAdapter(t, srv, map[string]any{"webhook_listen": "127.0.0.1:0", "webhook_secret": secret})
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	inbox := &sdktest.Inbox{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := runAdapter(t, ctx, cancel, a, inbox)
	addr, err := a.webhookListenAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sdktest.WaitFor(t, "the bot's identity", func() bool { return a.me.Load() != nil })
	id := 0
	post := func(s string) (int, string) {
		id++
		upd := fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,"chat":{"id":1,"type":"private"},"from":{"id":1,"first_name":"A"},"text":"hi"}}`, id, id)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hook", strings.NewReader(upd))
		req.Header.Set(secretHeader, s)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}
	// Spread over two windows: 9 + 9 wrong secrets lock nothing.
	for i := 0; i < webhookMaxFails-1; i++ {
		if code, _ := post("wrong"); code != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d: %d, want 401", i, code)
		}
	}
	advance(webhookFailWindow)
	for i := 0; i < webhookMaxFails-1; i++ {
		if code, _ := post("wrong"); code != http.StatusUnauthorized {
			t.Fatalf("wrong secret %d of the second window: %d, want 401", i, code)
		}
	}
	if code, _ := post(secret); code != http.StatusOK {
		t.Fatalf("right secret below the limit: %d", code)
	}
	// The tenth in one window locks the address out.
	if code, _ := post("wrong"); code != http.StatusUnauthorized {
		t.Fatalf("tenth wrong secret: %d", code)
	}
	code, retry := post(secret)
	if code != http.StatusTooManyRequests || retry != "300" {
		t.Fatalf("during the lockout: %d Retry-After %q, want 429 after 300 s", code, retry)
	}
	advance(webhookLockout - time.Second)
	if code, retry := post(secret); code != http.StatusTooManyRequests || retry != "1" {
		t.Fatalf("a second before the end: %d Retry-After %q", code, retry)
	}
	advance(time.Second)
	if code, _ := post(secret); code != http.StatusOK {
		t.Fatalf("after the lockout: %d", code)
	}
	if got := len(inbox.Stored()); got != 2 {
		t.Errorf("stored %d updates, want the 2 sent with the right secret outside the lockout", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestFakeRejectsBadHTML(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"<b>x":         "Can't find end tag corresponding to start tag b",
		"<br>":         `Unsupported start tag "br" at byte offset 0`,
		"x</b>":        "Unexpected end tag at byte offset 1",
		"<b><i>x</b>":  `Unmatched end tag at byte offset 7, expected "</i>", found "</b>"`,
		"<b":           "Unclosed start tag at byte offset 0",
		"a < b":        "Empty tag name at byte offset 2",
		"fine &amp; &": "",
	}
	for in, want := range tests {
		_, err := telegramtest.ParseHTML(in)
		if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
			t.Errorf("ParseHTML(%q) = %v, want %q", in, err, want)
		}
	}
}
