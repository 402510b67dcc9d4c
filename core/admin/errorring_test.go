package admin

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// newTestRing returns a ring whose clock advances one second per entry.
func newTestRing(n int) *ErrorRing {
	r := NewErrorRing(n)
	tick := t0
	r.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	return r
}

func TestErrorRingOrderAndBound(t *testing.T) {
	t.Parallel()
	r := newTestRing(3)
	if got := r.List(); len(got) != 0 {
		t.Fatalf("new ring lists %d entries", len(got))
	}
	for i, msg := range []string{"one", "two", "three", "four", "five"} {
		r.Accept("n", hclog.Error, msg)
		if got := len(r.List()); got != min(i+1, 3) {
			t.Errorf("after %d entries List has %d", i+1, got)
		}
	}
	got := r.List()
	var msgs []string
	for _, e := range got {
		msgs = append(msgs, e.Message)
	}
	if strings.Join(msgs, ",") != "five,four,three" {
		t.Errorf("List = %v, want newest first and bounded to 3", msgs)
	}
	if !got[0].At.After(got[1].At) || !got[0].At.Equal(t0.Add(5*time.Second)) {
		t.Errorf("timestamps %v, %v not from the clock, newest first", got[0].At, got[1].At)
	}
	got[0].Message = "changed"
	if r.List()[0].Message != "five" {
		t.Error("List returns the ring's own storage")
	}
	if n := len(NewErrorRing(0).entries); n != DefaultErrorRingSize {
		t.Errorf("NewErrorRing(0) capacity %d", n)
	}
}

func TestErrorRingLevels(t *testing.T) {
	t.Parallel()
	r := newTestRing(10)
	for _, l := range []hclog.Level{hclog.NoLevel, hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error, hclog.Off} {
		r.Accept("pluginhost.tg", l, l.String())
	}
	got := r.List()
	if len(got) != 2 || got[0].Level != "error" || got[1].Level != "warn" {
		t.Fatalf("List = %+v, want the error and the warning only", got)
	}
	if got[0].Source != "pluginhost.tg" {
		t.Errorf("Source = %q", got[0].Source)
	}
}

func TestErrorRingMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		msg  string
		args []interface{}
		want string
	}{
		{"plain", "send failed", nil, "send failed"},
		{"args", "send failed", []interface{}{"instance", "tg", "attempt", 3, "error", errors.New("rate limited")},
			`send failed instance=tg attempt=3 error="rate limited"`},
		{"token", "configure", []interface{}{"bot_token", "123:ABC", "instance", "tg"},
			"configure bot_token=[redacted] instance=tg"},
		{"secret mixed case", "x", []interface{}{"ClientSecret", "s3cr3t"}, "x ClientSecret=[redacted]"},
		{"password", "x", []interface{}{"db-password", "hunter2"}, "x db-password=[redacted]"},
		{"api key", "x", []interface{}{"api_key", "sk-ant-1"}, "x api_key=[redacted]"},
		{"odd args", "x", []interface{}{"a", 1, "dangling"}, "x a=1 EXTRA_VALUE_AT_END=dangling"},
		{"format", "x", []interface{}{"n", hclog.Fmt("%d items", 4)}, `x n="4 items"`},
		{"empty value", "x", []interface{}{"v", ""}, `x v=""`},
		{"nil error", "x", []interface{}{"error", error(nil)}, "x error=<nil>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRing(1)
			r.Accept("n", hclog.Warn, c.msg, c.args...)
			if got := r.List()[0].Message; got != c.want {
				t.Errorf("Message = %q, want %q", got, c.want)
			}
		})
	}
}

func TestErrorRingNeverRecordsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "123456:SECRET-TOKEN-VALUE"
	r := newTestRing(10)
	root := hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: io.Discard, Level: hclog.Trace})
	root.RegisterSink(r)
	log := root.Named("pluginhost").Named("tg").With("token", secret)
	log.Info("started")
	log.Warn("getUpdates failed", "status", 409, "Authorization", "Bearer "+secret, "password", secret)
	log.Error("giving up", "TELEGRAM_BOT_TOKEN", secret)

	got := r.List()
	if len(got) != 2 {
		t.Fatalf("List = %+v, want the warning and the error", got)
	}
	if got[0].Source != "pluginhost.tg" || !strings.HasPrefix(got[0].Message, "giving up") {
		t.Errorf("newest entry %+v", got[0])
	}
	if !strings.Contains(got[1].Message, "status=409") {
		t.Errorf("warning lost its arguments: %q", got[1].Message)
	}
	for _, e := range got {
		if strings.Contains(e.Message, "SECRET") {
			t.Errorf("secret recorded: %q", e.Message)
		}
		if !strings.Contains(e.Message, "token=[redacted]") {
			t.Errorf("implied With argument not redacted or missing: %q", e.Message)
		}
	}
}

func TestErrorRingTruncates(t *testing.T) {
	t.Parallel()
	r := newTestRing(1)
	r.Accept("n", hclog.Error, strings.Repeat("é", 3000))
	msg := r.List()[0].Message
	if len(msg) > maxMessageLen || !strings.HasSuffix(msg, "…") {
		t.Errorf("message of %d bytes not cut to %d with a marker", len(msg), maxMessageLen)
	}
	if !strings.HasPrefix(msg, "éé") || strings.ContainsRune(msg, '\uFFFD') {
		t.Error("cut is not on a rune boundary")
	}
}
