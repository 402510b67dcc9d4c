package telegram_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/clawhost/clawhost/plugins/telegram"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance drives the plugin over real gRPC (sdktest) against the
// fake Bot API.
func TestConformance(t *testing.T) {
	srv := telegramtest.NewServer("42:CONFORMANCE")
	t.Cleanup(srv.Close)
	cfg, _ := json.Marshal(map[string]any{
		"token": srv.Token(), "api_endpoint": srv.APIEndpoint(), "poll_timeout": 1,
	})
	user := telegramtest.User{ID: 1001, FirstName: "Alice", Username: "alice"}
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			srv.DropPending() // each sub-test is a fresh bot process
			return telegram.Plugin()
		},
		Config: cfg,
		Inject: func(t *testing.T, text string) string {
			srv.PushText(telegramtest.PrivateChat(user.ID), user, text)
			return strconv.FormatInt(user.ID, 10)
		},
	})
}
