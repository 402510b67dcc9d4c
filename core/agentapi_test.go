package core

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// A chat's token schedules into that chat only; a bad time or an empty
// text is refused.
func TestAgentAPIScheduleIsBoundToTheChat(t *testing.T) {
	t.Parallel()
	h := &Host{log: hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: &strings.Builder{}})}
	h.schedules.h = h
	a := &agentAPI{h: h}
	if err := a.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.stop(t.Context()) })
	cfgJSON, tools := a.tools(&message.Message{Instance: "tg", ChatID: "42", ChatType: channel.ChatDirect})
	if len(tools) != 1 || tools[0] != ScheduleTool || !strings.Contains(cfgJSON, `"-chat","tg:42"`) {
		t.Fatalf("tools %q %s", tools, cfgJSON)
	}
	post := func(chat, token string, at time.Time, text string) int {
		b, _ := json.Marshal(map[string]any{"token": token, "chat": chat, "at": at, "text": text})
		resp, err := http.Post(a.url, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tok := a.token("tg:42", false)
	soon := time.Now().Add(time.Hour)
	if code := post("tg:43", tok, soon, "x"); code != http.StatusForbidden {
		t.Errorf("another chat with this token: %d", code)
	}
	if code := post("tg:42", tok, time.Now().Add(-time.Hour), "x"); code != http.StatusBadRequest {
		t.Errorf("a past time: %d", code)
	}
	if code := post("tg:42", tok, soon, " "); code != http.StatusBadRequest {
		t.Errorf("an empty text: %d", code)
	}
	if code := post("tg:42", tok, time.Now().Add(400*24*time.Hour), "x"); code != http.StatusBadRequest {
		t.Errorf("two years ahead: %d", code)
	}
}
