package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestTypingHoldsThroughALongTurn: through the real binary and the
// telegram plugin, a 40 s turn keeps Telegram's typing indicator on: the
// gaps between sendChatAction calls at the fake Bot API stay under the
// 5 s Telegram shows it for (the plugin declares it; the host refreshes a
// fifth before it lapses).
func TestTypingHoldsThroughALongTurn(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(tgToken)
	h := Host{
		Agent:    Agent{Attrs: Attrs{"workspace": "./workspace", "timeout": "90s"}},
		Access:   Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}},
		Admin:    Attrs{"listen": ""},
		Messages: Attrs{"streaming": "off"},
		Plugins:  []Plugin{tgPlugin(srv.APIEndpoint())},
	}
	t.Cleanup(srv.Close)
	startOnTelegram(t, srv, h)
	chat := telegramtest.PrivateChat(tgAlice)
	srv.PushText(chat, tgUser(tgAlice, "Alice"), "think long #sleep=40s")
	answered := func() bool {
		for _, m := range tgChat(srv, tgAlice) {
			if strings.Contains(m.Visible, "echo:") {
				return true
			}
		}
		return false
	}
	sdktest.WaitFor(t, "the answer", answered)
	var at []time.Time
	for _, r := range srv.Requests("sendChatAction") {
		if r.Params.Get("chat_id") == strconv.FormatInt(tgAlice, 10) && r.Params.Get("action") == "typing" {
			at = append(at, r.Time)
		}
	}
	if len(at) < 8 {
		t.Fatalf("%d typing actions over a 40 s turn", len(at))
	}
	worst := time.Duration(0)
	for i := 1; i < len(at); i++ {
		worst = max(worst, at[i].Sub(at[i-1]))
	}
	t.Logf("%d typing actions, the longest gap %v", len(at), worst)
	if worst >= 5*time.Second {
		t.Errorf("typing lapsed: a gap of %v between sendChatAction calls (Telegram shows it for 5 s)", worst)
	}
}
